"""Watched after deployment (issue 27): confirmed diagnoses on closed cases, through the API,
the case screen and a CSV, and the model's realized cost and drift alarm."""

from __future__ import annotations

import io

import numpy as np
import pytest
from django.contrib.auth.models import Group, User
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from scipy import stats
from toy_data import toy_rows

from diagnosis.clinic.models import CaseAccess, ConfirmedDiagnosis, DiagnosisCase, DiagnosisStep
from diagnosis.clinic.selectors.monitoring import model_monitoring
from diagnosis.clinic.services.confirmations import record_confirmed_diagnoses_csv
from diagnosis.integration.services.api_tokens import issue_api_token
from learners.monitoring import look_alpha, realized_cost, sequential_drift


def bearer(user) -> Client:
    _, plain = issue_api_token(issuer=user, owner=user, name="ward EHR")
    return Client(HTTP_AUTHORIZATION=f"Bearer {plain}")


def post(client: Client, url: str, body):
    return client.post(url, data=body, content_type="application/json")


TESTS = ("glucose", "insulin", "sex")


def run_case(client: Client, model_pk: int, reference: str, row) -> dict:
    """A case through /api/v1: each advised test answered from ``row``, then the advice
    followed to its conclusion; the closed case's state."""
    state = post(client, "/api/v1/cases", {"model": model_pk, "patient_reference": reference})
    assert state.status_code == 201, state.json()
    state = state.json()
    for _ in range(len(TESTS) + 1):
        advice = state["advice"]
        if advice["kind"] != "extract":
            break
        name = advice["test_name"]
        answer = post(
            client,
            f"/api/v1/cases/{state['case']}/steps",
            {"action": "result", "test": name, "value": row[TESTS.index(name)]},
        )
        assert answer.status_code == 200, answer.json()
        state = answer.json()
    closing = (
        {"action": "classify", "label": state["advice"]["label"]}
        if state["advice"]["kind"] == "classify"
        else {"action": "refer"}
    )
    state = post(client, f"/api/v1/cases/{state['case']}/steps", closing).json()
    assert not state["is_open"]
    return state


def confirm(client: Client, case_id: int, label):
    return post(client, f"/api/v1/cases/{case_id}/confirmed-diagnosis", {"label": label})


# ---------------------------------------------------------------------- the library
def test_realized_cost_is_the_tests_plus_the_matrix_cell_or_the_referral():
    """A concluded case costs tests + M[confirmed, concluded]; a referral, tests + R."""
    matrix = [[0.0, 40.0], [300.0, 0.0]]
    assert realized_cost(
        test_cost=12.5, concluded=0, confirmed=1, cost_matrix=matrix
    ) == pytest.approx(312.5)
    assert realized_cost(test_cost=3, concluded=1, confirmed=1, cost_matrix=matrix) == 3
    assert realized_cost(
        test_cost=3, concluded=None, confirmed=0, cost_matrix=matrix, reject_cost=[25, 60]
    ) == pytest.approx(28)
    with pytest.raises(ValueError):
        realized_cost(test_cost=0, concluded=None, confirmed=0, cost_matrix=matrix)


def test_the_sequential_test_rarely_alarms_on_the_estimates_own_distribution():
    """Streams drawn from the held-out distribution raise an alarm in at most ~5% of runs,
    however often it is looked at; shifted streams raise it, and early."""
    rng = np.random.default_rng(0)
    reference = rng.normal(50, 20, 200)
    interval = stats.ttest_1samp(reference, 0).confidence_interval()
    common = {
        "reference_mean": float(reference.mean()),
        "reference_sd": float(reference.std(ddof=1)),
        "reference_n": 200,
        "low": float(interval.low),
        "high": float(interval.high),
    }
    alarms = sum(sequential_drift(rng.normal(50, 20, 60), **common).alarm for _ in range(200))
    assert alarms <= 10  # 5% of 200
    shifted = [sequential_drift(rng.normal(80, 20, 60), **common) for _ in range(20)]
    assert all(s.alarm and s.direction == "higher" for s in shifted)
    assert max(s.raised_at for s in shifted) < 30
    assert sum(look_alpha(j) for j in range(1, 100_000)) == pytest.approx(0.05, rel=1e-4)


# ---------------------------------------------------------------------- through the API
@pytest.fixture
def closed_cases(clinician, trained_model):
    """Eight toy patients run through the API to a conclusion, with their true classes."""
    client = bearer(clinician)
    rows, labels = toy_rows(8, seed=11)
    cases = [
        (run_case(client, trained_model.pk, f"p{i}", row)["case"], label)
        for i, (row, label) in enumerate(zip(rows, labels, strict=True))
    ]
    return client, cases


def test_a_confirmed_diagnosis_is_stored_with_who_and_the_audit_and_no_step_changes(
    clinician, trained_model, closed_cases
):
    """POST /confirmed-diagnosis by name or code: 201, the code of the model's vocabulary, who
    and when, one audit row; the case's steps and costs are untouched."""
    client, cases = closed_cases
    case_id, label = cases[0]
    steps_before = list(DiagnosisStep.objects.filter(case_id=case_id).values())
    case_before = DiagnosisCase.objects.filter(pk=case_id).values().get()
    answer = confirm(client, case_id, ["healthy", "disease"][label])
    assert answer.status_code == 201, answer.json()
    body = answer.json()
    assert (body["label"], body["recorded_by"], body["source"]) == (label, "doc", "api")
    stored = ConfirmedDiagnosis.objects.get(case_id=case_id)
    assert (stored.label, stored.recorded_by) == (label, clinician)
    assert CaseAccess.objects.filter(case_id=case_id, action=CaseAccess.CONFIRM).count() == 1
    assert list(DiagnosisStep.objects.filter(case_id=case_id).values()) == steps_before
    after = DiagnosisCase.objects.filter(pk=case_id).values().get()
    assert {k: v for k, v in after.items() if k != "updated_at"} == {
        k: v for k, v in case_before.items() if k != "updated_at"
    }
    # by code, and a correction is a new row (the first kept)
    assert confirm(client, case_id, 1 - label).status_code == 201
    assert ConfirmedDiagnosis.objects.filter(case_id=case_id).count() == 2


def test_the_endpoint_refuses_bad_input_open_cases_and_other_peoples_cases(
    clinician, other_clinician, trained_model, closed_cases
):
    """400 for an unknown class or an extra field, 409 on an open case, 404 for a case not
    yours (as for a missing one), 401 without a token; nothing is saved then."""
    client, cases = closed_cases
    case_id, _ = cases[0]
    unknown = confirm(client, case_id, "flu")
    assert unknown.status_code == 400 and "healthy (0), disease (1)" in unknown.json()["error"]
    assert confirm(client, case_id, 7).status_code == 400
    assert confirm(client, case_id, "\u00b2").status_code == 400  # a digit to str, not to int
    extra = post(client, f"/api/v1/cases/{case_id}/confirmed-diagnosis", {"label": 0, "note": "x"})
    assert extra.status_code == 400
    assert confirm(client, case_id, True).status_code == 400
    opened = post(client, "/api/v1/cases", {"model": trained_model.pk}).json()
    still_open = confirm(client, opened["case"], 0)
    assert still_open.status_code == 409 and "still open" in still_open.json()["error"]
    stranger = confirm(bearer(other_clinician), case_id, 0)
    missing = confirm(client, 999_999, 0)
    assert stranger.status_code == missing.status_code == 404
    assert stranger.json() != {} and missing.json() != {}
    assert (
        post(Client(), f"/api/v1/cases/{case_id}/confirmed-diagnosis", {"label": 0}).status_code
        == 401
    )
    assert not ConfirmedDiagnosis.objects.exists()


def test_a_lead_may_read_but_not_confirm(clinician, trained_model, closed_cases):
    """A lead clinician of the case's clinician's team gets 403, as for a step."""
    from diagnosis.clinic.models import Team

    lead = User.objects.create_user("lead", password="x")
    lead.groups.add(
        Group.objects.get_or_create(name="clinicians")[0],
        Group.objects.get_or_create(name="lead-clinicians")[0],
    )
    team = Team.objects.create(name="Ward")
    team.leads.add(lead)
    team.members.add(clinician)
    _, cases = closed_cases
    assert confirm(bearer(lead), cases[0][0], 0).status_code == 403
    assert not ConfirmedDiagnosis.objects.exists()


def test_no_alarm_for_confirmations_from_the_training_distribution(
    clinician, trained_model, closed_cases
):
    """Patients drawn like the training data, confirmed with their true class through the API:
    realized figures shown beside the estimate, and no alarm."""
    client, cases = closed_cases
    rows, labels = toy_rows(22, seed=12)
    cases += [
        (run_case(client, trained_model.pk, f"q{i}", row)["case"], label)
        for i, (row, label) in enumerate(zip(rows, labels, strict=True))
    ]
    for case_id, label in cases:
        assert confirm(client, case_id, label).status_code == 201
    seen = model_monitoring(user=clinician, trained_model=trained_model)
    assert seen.n_confirmed == len(cases) == 30
    assert seen.drift is not None and not seen.alarm
    assert seen.estimate_mean == trained_model.metrics["mean_total_cost"]
    assert seen.estimate_low < seen.estimate_mean < seen.estimate_high
    correct = sum(DiagnosisCase.objects.get(pk=c).final_label == label for c, label in cases)
    assert seen.realized_accuracy == pytest.approx(correct / 30)


def test_the_alarm_sounds_when_confirmed_diagnoses_come_from_a_shifted_distribution(
    clinician, trained_model, closed_cases
):
    """Confirmed diagnoses drawn from a shifted disease rule (disease whenever glucose > 80),
    recorded through the API: the realized cost leaves the interval and the alarm is raised,
    on the model page and the home card."""
    client, cases = closed_cases
    rows, _ = toy_rows(22, seed=13)
    shifted_rows, _ = toy_rows(8, seed=11)
    cases = [(c, int(r[0] > 80)) for (c, _), r in zip(cases, shifted_rows, strict=True)]
    cases += [
        (run_case(client, trained_model.pk, f"s{i}", row)["case"], int(row[0] > 80))
        for i, row in enumerate(rows)
    ]
    for case_id, label in cases:
        assert confirm(client, case_id, label).status_code == 201
    seen = model_monitoring(user=clinician, trained_model=trained_model)
    assert seen.alarm and seen.drift.direction == "higher", seen.drift
    assert seen.realized_mean_cost > seen.estimate_high
    costs = []
    for case_id, label in cases:
        case = DiagnosisCase.objects.get(pk=case_id)
        paid = sum(DiagnosisStep.objects.filter(case=case).values_list("price", flat=True))
        costs.append(
            realized_cost(
                test_cost=paid,
                concluded=case.final_label,
                confirmed=label,
                cost_matrix=trained_model.matrix_snapshot,
            )
        )
    assert seen.realized_mean_cost == pytest.approx(np.mean(costs))
    web = Client()
    web.force_login(clinician)
    page = web.get(f"/models/{trained_model.pk}/").content.decode()
    assert 'id="drift-alarm"' in page
    home = web.get("/").content.decode()
    assert f'data-drift-alarm="{trained_model.pk}"' in home


# ---------------------------------------------------------------------- screen and CSV
def test_the_case_screen_records_a_confirmed_diagnosis(clinician, trained_model, closed_cases):
    """The closed case's page shows the form; posting a class records it; a bad one is 400."""
    _, cases = closed_cases
    case_id, label = cases[0]
    web = Client()
    web.force_login(clinician)
    summary = web.get(f"/cases/{case_id}/summary/").content.decode()
    assert 'id="confirmed-none"' in summary and 'id="record-confirmed"' in summary
    bad = web.post(f"/cases/{case_id}/confirmed-diagnosis/", {"label": "9"})
    assert bad.status_code == 400 and "is not a class of this model" in bad.content.decode()
    done = web.post(f"/cases/{case_id}/confirmed-diagnosis/", {"label": str(label)})
    assert done.status_code == 302
    stored = ConfirmedDiagnosis.objects.get(case_id=case_id)
    assert (stored.label, stored.source) == (label, ConfirmedDiagnosis.CASE_SCREEN)
    assert 'id="confirmed-now"' in web.get(f"/cases/{case_id}/summary/").content.decode()


def test_a_csv_confirms_all_or_nothing_with_every_bad_line_said(
    clinician, trained_model, closed_cases
):
    """One bad line: nothing saved, each problem with its line; a good file confirms them all."""
    _, cases = closed_cases
    text = "patient_reference,confirmed_label\np0,disease\np1,flu\np9,healthy\np0,healthy\n"
    with pytest.raises(ValidationError) as refused:
        record_confirmed_diagnoses_csv(user=clinician, file=io.BytesIO(text.encode()))
    messages = refused.value.messages
    assert messages[0].startswith("Nothing was saved: 3 of 4 lines")
    assert any(m.startswith("Line 3 (p1)") for m in messages)
    assert any(m.startswith("Line 4: you have no closed case for patient p9") for m in messages)
    assert any(m.startswith("Line 5: p0 is also on line 2") for m in messages)
    assert not ConfirmedDiagnosis.objects.exists()
    good = "patient_reference,confirmed_label\n" + "".join(
        f"p{i},{label}\n" for i, (_, label) in enumerate(cases)
    )
    web = Client()
    web.force_login(clinician)
    upload = SimpleUploadedFile("confirmed.csv", good.encode(), content_type="text/csv")
    answer = web.post("/cases/confirmed-diagnoses/", {"file": upload})
    assert answer.status_code == 200, answer.content.decode()[:2000]
    assert ConfirmedDiagnosis.objects.filter(source=ConfirmedDiagnosis.CSV).count() == len(cases)
    assert sorted(ConfirmedDiagnosis.objects.values_list("case_id", "label")) == sorted(cases)
    wrong_header = SimpleUploadedFile("c.csv", b"reference,label\np0,0\n")
    refused_page = web.post("/cases/confirmed-diagnoses/", {"file": wrong_header})
    assert refused_page.status_code == 400
    assert "patient_reference,confirmed_label" in refused_page.content.decode()
