"""The case screen's several-tests form: free questions together, FTI with its inputs."""

from __future__ import annotations

import pytest
from django.urls import reverse
from test_services_batch import _thyroid

from diagnosis.clinic.selectors.cases import case_state
from diagnosis.clinic.services import cases
from diagnosis.clinic.services import step as step_service


@pytest.fixture
def with_formula(db, model_admin):
    return _thyroid(model_admin, "Thyroid-like with formula", formula=True)


@pytest.fixture
def without_formula(db, model_admin):
    return _thyroid(model_admin, "Thyroid-like, FTI typed", formula=False)


@pytest.fixture
def screen(client, clinician):
    client.force_login(clinician)
    return client


def _url(case, query=""):
    return reverse("case-detail", args=[case.pk]) + query


def _index(trained, name):
    return trained.dataset.tests.get(name=name).index


def test_free_questions_come_in_one_form(screen, clinician, with_formula):
    """The first page asks every free question the model uses, each with "unknown"."""
    case = cases.start_case(user=clinician, trained_model=with_formula)
    page = screen.get(_url(case)).content.decode()
    assert 'name="action" value="results"' in page
    for name in ("age", "on_thyroxine"):
        assert f'name="t{_index(with_formula, name)}"' in page
    assert f'name="t{_index(with_formula, "age")}_unknown"' in page  # numeric: a box
    assert 'value="unknown"' in page  # nominal: a choice
    assert "Save 2 answers" in page


def test_posting_the_form_saves_each_answer_or_nothing(screen, clinician, with_formula):
    """A blank answer returns the form with its message and saves nothing; then all are saved."""
    case = cases.start_case(user=clinician, trained_model=with_formula)
    age, thyroxine = _index(with_formula, "age"), _index(with_formula, "on_thyroxine")
    post = {"action": "results", "test": "age", "tests": ["age", "on_thyroxine"]}
    response = screen.post(_url(case), {**post, f"t{age}": "", f"t{thyroxine}": "1"})
    assert response.status_code == 400
    page = response.content.decode()
    assert "Enter the Age result." in page and 'value="1" selected' in page
    assert not case.steps.exists()
    response = screen.post(_url(case), {**post, f"t{age}_unknown": "on", f"t{thyroxine}": "1"})
    assert response.status_code == 302
    state = case_state(user=clinician, case=case)
    assert state.unavailable == {age} and state.known == {thyroxine: 1.0}


def test_ordering_fti_asks_for_its_inputs_and_says_it_is_computed(screen, clinician, with_formula):
    """With a formula, FTI's form holds TT4 and T4U, not FTI, and says how FTI is computed."""
    case = cases.start_case(user=clinician, trained_model=with_formula)
    page = screen.get(_url(case, "?test=FTI")).content.decode()
    assert f'name="t{_index(with_formula, "TT4")}"' in page
    assert f'name="t{_index(with_formula, "T4U")}"' in page
    assert f'name="t{_index(with_formula, "FTI")}"' not in page
    assert "FTI is computed for you: TT4 / T4U." in page


def test_without_formula_fti_is_typed_in_the_same_form(screen, clinician, without_formula):
    """Without a formula FTI is a field of the form that enters its last input."""
    case = cases.start_case(user=clinician, trained_model=without_formula)
    step_service.record_result(
        user=clinician, case=case, test=without_formula.dataset.tests.get(name="TT4"), value=120
    )
    page = screen.get(_url(case, "?test=T4U")).content.decode()
    assert f'name="t{_index(without_formula, "T4U")}"' in page
    assert f'name="t{_index(without_formula, "FTI")}"' in page
    assert "Save 2 results" in page


def test_computed_fti_is_marked_and_offers_no_correction(screen, clinician, with_formula):
    """The steps table says how FTI was computed and offers no "Correct" for it."""
    case = cases.start_case(user=clinician, trained_model=with_formula)
    step_service.record_results(user=clinician, case=case, results={"TT4": 120, "T4U": 0.8})
    page = screen.get(_url(case)).content.decode()
    assert "computed: TT4 / T4U" in page
    fti = case.steps.get(test__name="FTI")
    assert f"?correct={fti.position}" not in page
    assert f"?correct={fti.position - 1}" in page  # T4U can be corrected
