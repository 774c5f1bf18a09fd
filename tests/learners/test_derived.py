"""The derived-test formula: a safe arithmetic grammar, its evaluation and its tolerance."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from learners.derived import DEFAULT_TOLERANCE, MAX_FORMULA_LENGTH, DerivedFormula


def test_ratio_formula_evaluates_and_lists_its_inputs():
    """'TT4 / T4U' names both inputs in order and divides them."""
    formula = DerivedFormula.parse("TT4 / T4U", allowed=["TT4", "T4U"])
    assert formula.inputs == ("TT4", "T4U")
    assert formula.evaluate({"TT4": 120.0, "T4U": 0.8}) == pytest.approx(150.0)


def test_precedence_parentheses_and_unary_minus():
    """Operator precedence, parentheses and unary minus follow arithmetic."""
    formula = DerivedFormula.parse("-(a + b) * 2 - c / 4")
    assert formula.evaluate({"a": 1, "b": 2, "c": 8}) == pytest.approx(-8.0)


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('true')",
        "a ** 2",
        "a % 2",
        "a // 2",
        "a.real",
        "a[0]",
        "abs(a)",
        "lambda: 1",
        "'text'",
        "True + a",
        "a if b else c",
        "a < b",
        "[a]",
        "1j * a",
        "a; b",
        "a = 1",
        "",
        "   ",
        "a +",
        "x" * (MAX_FORMULA_LENGTH + 1),
        "1e999 * a",
    ],
)
def test_refuses_anything_but_names_numbers_and_four_operations(text):
    """Calls, attributes, powers, strings, booleans, comparisons and junk are ValueErrors."""
    with pytest.raises(ValueError):
        DerivedFormula.parse(text)


def test_refuses_names_outside_the_inputs():
    """A name that is not one of the test's inputs is refused, naming it."""
    with pytest.raises(ValueError, match="TSH"):
        DerivedFormula.parse("TT4 / TSH", allowed=["TT4", "T4U"])


def test_refuses_a_formula_without_any_input():
    """A constant formula is not computed from inputs."""
    with pytest.raises(ValueError, match="no test"):
        DerivedFormula.parse("2 + 3")


@pytest.mark.parametrize("tolerance", [-0.1, 1.5, math.nan, math.inf, "x", True, None])
def test_refuses_a_bad_tolerance(tolerance):
    """The tolerance is a finite fraction in [0, 1]."""
    with pytest.raises(ValueError, match="tolerance"):
        DerivedFormula.parse("a / b", tolerance=tolerance)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"a": 1.0, "b": 0.0}, "divides by zero"),
        ({"a": 1.0}, "b is needed"),
        ({"a": 1.0, "b": None}, "b is needed"),
        ({"a": math.nan, "b": 1.0}, "finite"),
        ({"a": 1e308, "b": 1e-308}, "finite"),
        ({"a": "x", "b": 1.0}, "not a number"),
    ],
)
def test_evaluation_problems_are_value_errors(values, message):
    """Division by zero, missing, non-numeric and overflowing values raise a worded ValueError."""
    with pytest.raises(ValueError, match=message):
        DerivedFormula.parse("a / b").evaluate(values)


def test_agrees_within_the_relative_tolerance_only():
    """A typed value agrees when |typed - computed| <= tolerance * |computed|."""
    formula = DerivedFormula.parse("a / b", tolerance=0.05)
    assert formula.agrees(104.9, 100.0)
    assert formula.agrees(95.1, 100.0)
    assert not formula.agrees(105.1, 100.0)
    assert not formula.agrees(94.9, 100.0)


def test_round_trips_through_plain_json():
    """to_dict / from_dict keep the text and the tolerance, and re-check the names."""
    formula = DerivedFormula.parse("TT4 / T4U", tolerance=0.03)
    again = DerivedFormula.from_dict(formula.to_dict(), allowed=["TT4", "T4U"])
    assert (again.text, again.inputs, again.tolerance) == ("TT4 / T4U", ("TT4", "T4U"), 0.03)
    with pytest.raises(ValueError):
        DerivedFormula.from_dict(formula.to_dict(), allowed=["TT4"])
    with pytest.raises(ValueError):
        DerivedFormula.from_dict(["TT4 / T4U"])


FORMULA_ALPHABET = "abTU4_ 0123456789.+-*/%()[]{}'\",:;=<>!@&|^~\\\nelifxyz"


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet=FORMULA_ALPHABET, max_size=60) | st.text(max_size=60))
def test_fuzz_parse_raises_only_value_error(text):
    """Any text parses to a formula or raises ValueError with a message; nothing else escapes."""
    try:
        formula = DerivedFormula.parse(text)
    except ValueError as error:
        assert str(error)
        return
    values = {name: 1.5 for name in formula.inputs}
    try:
        result = formula.evaluate(values)
    except ValueError as error:
        assert str(error)
    else:
        assert math.isfinite(result)


@settings(max_examples=300, deadline=None)
@given(
    st.from_regex(r"\A[a-z_]{1,6}\((.{0,20})\)\Z") | st.from_regex(r"\A[a-z]{1,4}\.[a-z_]{1,8}\Z")
)
def test_fuzz_calls_and_attributes_never_run(text):
    """Calls and attribute access are refused before anything could run them."""
    calls = []

    class Spy:
        def __getattr__(self, name):
            calls.append(name)
            raise AssertionError("an attribute was looked up")

    with pytest.raises(ValueError):
        DerivedFormula.parse(text).evaluate({"a": Spy()})  # type: ignore[dict-item]
    assert calls == []


def test_default_tolerance_fits_the_ann_thyroid_data(uci_dir):
    """FTI = TT4 / T4U (ann-thyroid scales them: TT4 / (10 T4U)) within 5% for >= 99% of rows."""
    formula = DerivedFormula.parse("TT4 / (10 * T4U)")
    for name in ("ann-train.data", "ann-test.data"):
        table = np.loadtxt(uci_dir / "thyroid-disease" / name)
        tt4, t4u, fti = table[:, 18], table[:, 19], table[:, 20]
        agree = [
            formula.agrees(f, formula.evaluate({"TT4": a, "T4U": b}))
            for a, b, f in zip(tt4, t4u, fti, strict=True)
        ]
        assert np.mean(agree) >= 0.99, name
        assert DEFAULT_TOLERANCE == formula.tolerance
