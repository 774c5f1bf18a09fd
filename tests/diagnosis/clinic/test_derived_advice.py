"""Advice to order a derived test (FTI, from TT4 and T4U) followed through the API and shown."""

from __future__ import annotations

import pytest
from django.test import Client
from thyroid_like import THYROID_TESTS, thyroid_like_rows
from training_helpers import train

from diagnosis.catalog.services.datasets import create_dataset
from diagnosis.clinic.models import DiagnosisCase
from diagnosis.integration.services.api_tokens import issue_api_token


@pytest.fixture
def fti_model(db, model_admin):
    """EG2 on thyroid-like patients whose class is FTI alone (high above 120): it orders FTI."""
    rows, _ = thyroid_like_rows()
    labels = [int(row[6] > 120) for row in rows]
    dataset = create_dataset(
        name="FTI decides",
        class_labels=["low", "high"],
        tests=THYROID_TESTS,
        rows=rows,
        labels=labels,
        error_matrices=[{"name": "Errors 1000", "matrix": [[0, 1000], [1000, 0]]}],
    )
    trained = train(dataset, model_admin, "eg2", error_matrix=dataset.error_matrices.get())
    return trained, dict(zip([t["name"] for t in THYROID_TESTS], rows[0], strict=True))


def test_a_program_orders_the_advised_fti_by_its_inputs_and_the_summary_says_so(
    fti_model, clinician
):
    """The state names FTI's inputs; entering TT4 and T4U under advice to order FTI counts as
    following it (nothing refused), and the case summary marks those steps as its inputs."""
    trained, patient = fti_model
    _, plain = issue_api_token(issuer=clinician, owner=clinician, name="EHR")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {plain}")
    state = api.post(
        "/api/v1/cases", data={"model": trained.pk}, content_type="application/json"
    ).json()
    assert state["advice"]["test_name"] == "FTI"  # what the data says to order
    inputs = {t["name"]: t["derived_from"] for t in state["tests"]}
    assert inputs["FTI"] == ["TT4", "T4U"]
    steps = f"/api/v1/cases/{state['case']}/steps"
    for name in inputs["FTI"]:
        assert state["advice"]["test_name"] == "FTI"
        body = {"action": "result", "test": name, "value": patient[name], "seen": state["version"]}
        answer = api.post(steps, data=body, content_type="application/json")
        assert answer.status_code == 200, answer.json()
        state = answer.json()
    entered = DiagnosisCase.objects.get(pk=state["case"]).steps.order_by("position")
    assert [(s.test.name, s.followed_advice) for s in entered] == [("TT4", True), ("T4U", True)]
    reader = Client()
    reader.force_login(clinician)
    page = reader.get(f"/cases/{state['case']}/summary/").content.decode()
    assert page.count("(an input of it)") == 2
