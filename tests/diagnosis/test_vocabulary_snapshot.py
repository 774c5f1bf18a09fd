"""History never changes: a case keeps the class names and choices its model was trained with."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from diagnosis.catalog.models import DiagnosticTest
from diagnosis.catalog.selectors.vocabulary import vocabulary_of
from diagnosis.clinic.selectors import case_audit
from diagnosis.clinic.selectors.cases import case_state
from diagnosis.clinic.services import cases as case_services
from diagnosis.clinic.services import step as step_service
from diagnosis.training.models import TrainedModel


def _swap_sex_choices(dataset) -> None:
    """An admin's later edit: the words of codes 0 and 1 exchanged."""
    DiagnosticTest.objects.filter(dataset=dataset, name="sex").update(
        choices=[{"code": 0, "label": "male"}, {"code": 1, "label": "female"}]
    )


def test_a_trained_model_keeps_the_words_of_its_codes(trained_model):
    """Training stores the class names and every nominal test's choices with the prices."""
    stored = trained_model.cost_snapshot["vocabulary"]
    assert stored["class_labels"] == ["healthy", "disease"]
    assert stored["choices"] == {
        "sex": [{"code": 0, "label": "female"}, {"code": 1, "label": "male"}]
    }


def test_reordering_class_labels_never_flips_a_closed_cases_diagnosis(clinician, trained_model):
    """A case classified 'disease' still reads 'disease' after the admin reverses the labels."""
    case = case_services.start_case(user=clinician, trained_model=trained_model)
    step_service.classify(user=clinician, case=case, label="disease")
    trained_model.dataset.class_labels = ["disease", "healthy"]
    trained_model.dataset.save()
    case.refresh_from_db()
    assert case_audit.outcome_text(case) == "Classified as disease"
    state = case_state(user=clinician, case=case)
    assert state.class_labels == ["healthy", "disease"]
    client = Client()
    client.force_login(clinician)
    summary = client.get(reverse("case-summary", args=[case.pk])).content.decode()
    assert "disease" in summary and "Classified as healthy" not in summary
    api = client.get(reverse("api-case-step", args=[case.pk])).json()
    assert api["final_label"] == "disease"


def test_swapped_choices_neither_rewrite_old_values_nor_miscode_new_ones(clinician, trained_model):
    """'male' entered before a swap stays 'male'; 'male' typed after it is stored as code 1."""
    sex = trained_model.dataset.tests.get(name="sex")
    before = case_services.start_case(user=clinician, trained_model=trained_model)
    step_service.take_step(user=clinician, case=before, action="result", test=sex, value="male")
    _swap_sex_choices(trained_model.dataset)
    step = before.steps.get()
    assert step.value == 1.0 and case_audit.step_value_text(step) == "male"
    after = case_services.start_case(user=clinician, trained_model=trained_model)
    sex.refresh_from_db()
    step_service.take_step(user=clinician, case=after, action="result", test=sex, value="male")
    assert after.steps.get().value == 1.0  # the code the model learned for "male"
    state = case_state(user=clinician, case=after)
    option = next(o for o in state.test_options if o.test.name == "sex")
    assert state.vocabulary.choices_for(option.test)[1]["label"] == "male"


def test_the_case_screen_and_api_offer_the_models_choices_after_a_swap(clinician, trained_model):
    """The entry form's select and the API's test list show the choices the model learned."""
    _swap_sex_choices(trained_model.dataset)
    case = case_services.start_case(user=clinician, trained_model=trained_model)
    client = Client()
    client.force_login(clinician)
    tests = client.get(reverse("api-case-step", args=[case.pk])).json()["tests"]
    sex = next(t for t in tests if t["name"] == "sex")
    assert sex["choices"] == [{"code": 0, "label": "female"}, {"code": 1, "label": "male"}]


def test_a_code_the_model_never_learned_is_refused(clinician, trained_model):
    """A choice added after training is not one of the model's results for this case."""
    DiagnosticTest.objects.filter(dataset=trained_model.dataset, name="sex").update(
        choices=[
            {"code": 0, "label": "female"},
            {"code": 1, "label": "male"},
            {"code": 2, "label": "other"},
        ]
    )
    sex = trained_model.dataset.tests.get(name="sex")
    case = case_services.start_case(user=clinician, trained_model=trained_model)
    with pytest.raises(ValidationError, match="not one of the Sex results"):
        step_service.take_step(user=clinician, case=case, action="result", test=sex, value=2)


def test_a_model_without_a_stored_vocabulary_uses_todays_words(trained_model):
    """Models trained before snapshots (and not migrated) fall back to the dataset's words."""
    snapshot = {k: v for k, v in trained_model.cost_snapshot.items() if k != "vocabulary"}
    TrainedModel.objects.filter(pk=trained_model.pk).update(cost_snapshot=snapshot)
    trained_model.refresh_from_db()
    assert vocabulary_of(trained_model).class_labels == ["healthy", "disease"]


def test_the_case_screen_says_what_changed_since_the_model_was_trained(clinician, trained_model):
    """After price and label edits, the case names them and says it keeps the model's values."""
    case = case_services.start_case(user=clinician, trained_model=trained_model)
    client = Client()
    client.force_login(clinician)
    url = reverse("case-detail", args=[case.pk])
    assert "data-catalog-changed" not in client.get(url).content.decode()
    DiagnosticTest.objects.filter(dataset=trained_model.dataset, name="sex").update(price=9.0)
    _swap_sex_choices(trained_model.dataset)
    page = client.get(url).content.decode()
    assert "data-catalog-changed" in page
    assert "test prices changed" in page and "the answers of sex changed" in page
