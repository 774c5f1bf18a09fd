"""FHIR in and out of /api/v1: a Bundle of Observations recorded as a case's results through
the step service (all or nothing), the case read as FHIR (ServiceRequest, RiskAssessment,
DiagnosticReport), every resource valid for fhir.resources R4B, refusals as OperationOutcomes
naming the resource and field, and a fuzzed Bundle never a 500 and never half-saved."""

from __future__ import annotations

import copy
import json

import pytest
from cds_helpers import GLUCOSE, INSULIN, SEX, bundle, code_toy_dataset, observation
from django.test import Client
from fhir.resources.R4B.bundle import Bundle
from fhir.resources.R4B.operationoutcome import OperationOutcome
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_cds_fuzz import JSON_VALUES, observations

from diagnosis.clinic.models import CaseAccess, DiagnosisCase, DiagnosisStep
from diagnosis.integration.services.api_tokens import issue_api_token

pytestmark = pytest.mark.django_db


@pytest.fixture
def coded(trained_model):
    code_toy_dataset(trained_model.dataset)
    return trained_model


def api_client(user) -> Client:
    _, plain = issue_api_token(issuer=user, owner=user, name="EHR")
    return Client(HTTP_AUTHORIZATION=f"Bearer {plain}", raise_request_exception=False)


@pytest.fixture
def api(clinician, coded):
    """A token client of the clinician and a case of theirs for FHIR patient p1."""
    case = DiagnosisCase.objects.create(
        trained_model=coded, clinician=clinician, patient_reference="FHIR Patient/p1"
    )
    return api_client(clinician), case


def post_bundle(client: Client, case: DiagnosisCase, body, query: str = ""):
    payload = body if isinstance(body, bytes) else json.dumps(body)
    return client.post(
        f"/api/v1/cases/{case.pk}/fhir{query}", data=payload, content_type="application/fhir+json"
    )


def resources(answer) -> dict[str, dict]:
    """The answer's resources by type, the Bundle validated by fhir.resources."""
    assert answer.status_code == 200, answer.content
    document = answer.json()
    Bundle.model_validate(document)
    return {e["resource"]["resourceType"]: e["resource"] for e in document["entry"]}


def refusal(answer, status: int = 422) -> str:
    """The OperationOutcome's expression, the outcome validated by fhir.resources."""
    assert answer.status_code == status, answer.content
    outcome = answer.json()
    OperationOutcome.model_validate(outcome)
    [issue] = outcome["issue"]
    assert issue["severity"] == "error" and issue["diagnostics"]
    return issue["expression"][0]


def test_a_bundle_of_observations_becomes_priced_result_steps(api):
    """Glucose in mg/dL and sex become two result steps (each priced), logged as steps; the
    answer is the case as a valid FHIR Bundle whose subject is the case's patient."""
    client, case = api
    answer = post_bundle(
        client,
        case,
        bundle(observation("g1", GLUCOSE, 120, unit="mg/dL"), observation("s1", SEX, "male")),
    )
    found = resources(answer)
    steps = {s.test.name: s for s in DiagnosisStep.objects.filter(case=case)}
    assert set(steps) == {"glucose", "sex"}
    assert steps["glucose"].value == 120.0
    assert all(s.price > 0 for s in steps.values())
    assert "RiskAssessment" in found
    assert all(r["subject"] == {"reference": "Patient/p1"} for r in found.values())
    assert CaseAccess.objects.filter(case_id=case.pk, action=CaseAccess.RESULTS).exists()


def test_the_case_as_fhir_proposes_the_advised_test_then_reports_the_conclusion(api, clinician):
    """An open case: a ServiceRequest (intent=proposal) of the advised test with its code and
    a RiskAssessment of every class; once concluded, a final DiagnosticReport with the
    class's code and no proposal."""
    from diagnosis.clinic import selectors
    from diagnosis.clinic.services import step

    client, case = api
    found = resources(client.get(f"/api/v1/cases/{case.pk}/fhir"))
    advice = selectors.case_state(user=clinician, case=case).advice
    assert advice.kind == "extract"
    proposal = found["ServiceRequest"]
    assert (proposal["intent"], proposal["status"]) == ("proposal", "draft")
    assert proposal["code"]["coding"][0]["code"] in {"2345-7", "insulin", "46098-0"}
    assert len(found["RiskAssessment"]["prediction"]) == 2
    assert CaseAccess.objects.filter(case_id=case.pk, action=CaseAccess.API_READ).exists()
    step.apply_step(user=clinician, case_id=case.pk, command=step.Classify(label=1))
    closed = resources(client.get(f"/api/v1/cases/{case.pk}/fhir"))
    assert set(closed) == {"DiagnosticReport"}
    report = closed["DiagnosticReport"]
    assert report["status"] == "final"
    assert report["conclusionCode"][0]["coding"][0]["code"] == "E14"


def test_recorded_results_come_out_as_observations_that_read_back_as_the_same_values(
    api, clinician, coded
):
    """Each result that counts is an Observation coded as its test is mapped (glucose in
    mg/dL, sex as a coded choice), which the proposal, the risk and the report rest on; an
    undone result is left out; posted to another case of the patient, they record the same
    values."""
    from diagnosis.clinic.services import step

    client, case = api

    def entries(of: DiagnosisCase) -> list[dict]:
        answer = client.get(f"/api/v1/cases/{of.pk}/fhir")
        resources(answer)  # the Bundle validates
        return [e["resource"] for e in answer.json()["entry"]]

    def resting_on(found: list[dict]) -> dict[str, list]:
        """What each resource built on the results names as its basis."""
        fields = {"ServiceRequest": "supportingInfo", "RiskAssessment": "basis"}
        fields["DiagnosticReport"] = "result"
        return {
            r["resourceType"]: r[fields[r["resourceType"]]]
            for r in found
            if r["resourceType"] in fields
        }

    glucose = bundle(observation("g1", GLUCOSE, 180, unit="mg/dL"))
    assert post_bundle(client, case, glucose).status_code == 200
    found = entries(case)
    [observed] = [r for r in found if r["resourceType"] == "Observation"]
    assert observed["code"]["coding"][0]["code"] == GLUCOSE[1]
    assert observed["valueQuantity"] == {
        "value": 180,
        "unit": "mg/dL",
        "system": "http://unitsofmeasure.org",
        "code": "mg/dL",
    }
    assert observed["status"] == "final" and observed["subject"] == {"reference": "Patient/p1"}
    reference = [{"reference": f"Observation/{observed['id']}"}]
    assert resting_on(found) == {"ServiceRequest": reference, "RiskAssessment": reference}

    assert post_bundle(client, case, bundle(observation("s1", SEX, "male"))).status_code == 200
    found = entries(case)
    observed_both = [r for r in found if r["resourceType"] == "Observation"]
    by_code = {o["code"]["coding"][0]["code"]: o for o in observed_both}
    assert set(by_code) == {GLUCOSE[1], SEX[1]}
    assert by_code[SEX[1]]["valueCodeableConcept"]["coding"][0]["display"] == "male"
    references = [{"reference": f"Observation/{o['id']}"} for o in observed_both]
    assert resting_on(found) and all(r == references for r in resting_on(found).values())

    again = DiagnosisCase.objects.create(
        trained_model=coded, clinician=clinician, patient_reference="FHIR Patient/p1"
    )
    assert post_bundle(client, again, bundle(*observed_both)).status_code == 200

    def values(of: DiagnosisCase) -> dict[str, float]:
        return {s.test.name: s.value for s in DiagnosisStep.objects.filter(case=of)}

    assert values(again) == values(case) and set(values(case)) == {"glucose", "sex"}
    step.apply_step(user=clinician, case_id=again.pk, command=step.Undo(reason="wrong patient"))
    left = [r for r in entries(again) if r["resourceType"] == "Observation"]
    assert [o["code"]["coding"][0]["code"] for o in left] == [GLUCOSE[1]]


@pytest.mark.parametrize(
    ("resource", "named"),
    [
        (observation("x1", ("http://loinc.org", "0000-0"), 5, unit="mg/dL"), "Observation/x1.code"),
        (observation("g1", GLUCOSE, 10, unit="mmol/L"), "Observation/g1.valueQuantity.code"),
        (observation("g1", GLUCOSE, 120), "Observation/g1.valueQuantity.code"),
        (observation("g1", GLUCOSE, 120, unit="mg/dL", patient="p2"), "Observation/g1.subject"),
        (observation("g1", GLUCOSE, 9000, unit="mg/dL"), "Observation/g1"),
        ({"resourceType": "Patient", "id": "p1"}, "Bundle.entry[1].resource"),
        ({"resourceType": "Observation", "id": "x"}, "Bundle.entry.1.resource"),
        ({**observation("g2", GLUCOSE, 99, unit="mg/dL"), "status": "cancelled"}, "g2.status"),
    ],
)
def test_an_unknown_code_or_unit_or_a_bad_observation_is_an_operation_outcome(api, resource, named):
    """An unknown code, another unit or none, another patient, a value outside the test's
    range, a resource that is not an Observation or does not validate, a cancelled one: 422
    OperationOutcome naming the resource and field, and the good entry beside it is not saved
    either (all or nothing)."""
    client, case = api
    good = observation("i1", INSULIN, 150, unit="u[IU]/mL")
    answer = post_bundle(client, case, bundle(good, resource))
    assert named in refusal(answer)
    assert DiagnosisStep.objects.filter(case=case).count() == 0


def test_an_implausible_value_is_refused_until_confirmed(api):
    """A value inside the hard range but outside the plausible one: a 422 OperationOutcome
    naming the Observation; sent again with confirm_implausible=true it is recorded."""
    client, case = api
    case.trained_model.dataset.tests.filter(name="glucose").update(
        plausible_min=40, plausible_max=400
    )
    sent = bundle(observation("g7", GLUCOSE, 450, unit="mg/dL"))
    assert refusal(post_bundle(client, case, sent)).startswith("Observation/g7")
    assert DiagnosisStep.objects.filter(case=case).count() == 0
    resources(post_bundle(client, case, sent, "?confirm_implausible=true"))
    assert DiagnosisStep.objects.get(case=case).implausible_confirmed


def test_a_test_already_recorded_a_stale_version_or_a_closed_case_saves_nothing(api, clinician):
    """The same test again: 422 naming it; seen older than the case: 409; a closed case: 409;
    nothing more saved."""
    from diagnosis.clinic.services import step

    client, case = api
    sent = bundle(observation("g1", GLUCOSE, 120, unit="mg/dL"))
    resources(post_bundle(client, case, sent))
    assert "glucose" in refusal(post_bundle(client, case, sent))
    other = bundle(observation("i1", INSULIN, 150, unit="u[IU]/mL"))
    assert post_bundle(client, case, other, "?seen=0").status_code == 409
    step.apply_step(user=clinician, case_id=case.pk, command=step.Refer())
    assert post_bundle(client, case, other).status_code == 409
    assert DiagnosisStep.objects.filter(case=case).count() == 2  # glucose, the referral


def test_another_clinicians_case_is_404_and_no_token_is_401(api, other_clinician):
    """Tokens act with their user's rights: another clinician's case is 404 for both
    operations (as for the rest of /api/v1), and nothing is saved."""
    _, case = api
    stranger = api_client(other_clinician)
    assert stranger.get(f"/api/v1/cases/{case.pk}/fhir").status_code == 404
    sent = bundle(observation("g1", GLUCOSE, 120, unit="mg/dL"))
    assert post_bundle(stranger, case, sent).status_code == 404
    assert Client().get(f"/api/v1/cases/{case.pk}/fhir").status_code == 401
    assert DiagnosisStep.objects.count() == 0


def test_a_body_that_is_not_json_or_not_a_bundle_is_a_clear_4xx(api):
    """Not JSON: 400 JSON error; JSON that is not a Bundle: 422 OperationOutcome on Bundle."""
    client, case = api
    assert "error" in post_bundle(client, case, b"{not json").json()
    assert refusal(post_bundle(client, case, {"resourceType": "Patient"})).startswith("Bundle")
    assert refusal(post_bundle(client, case, bundle())) == "Bundle.entry"


FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@st.composite
def bundles(draw):
    body = bundle(*draw(st.lists(observations(), min_size=0, max_size=3)))
    mutated = copy.deepcopy(body)
    if draw(st.booleans()):
        mutated[draw(st.sampled_from(["resourceType", "type", "entry", "extra"]))] = draw(
            JSON_VALUES
        )
    return mutated


@FUZZ
@given(body=st.one_of(bundles(), JSON_VALUES, st.binary(max_size=64)))
def test_a_fuzzed_bundle_is_never_a_500_and_never_half_saved(api, body):
    """Any Bundle (mutated Observations, any JSON, any bytes): a 200 with a valid FHIR Bundle
    or a 4xx; a refusal adds no step, and a 200 adds one step per test it recorded."""
    client, case = api
    before = DiagnosisStep.objects.filter(case=case).count()
    payload = body if isinstance(body, bytes) else json.dumps(body).encode()
    answer = post_bundle(client, case, payload)
    after = DiagnosisStep.objects.filter(case=case).count()
    assert answer.status_code in {200, 400, 409, 413, 422}, answer.content
    if answer.status_code == 200:
        Bundle.model_validate(answer.json())
        assert after > before
    else:
        assert after == before
        if answer.status_code == 422:
            OperationOutcome.model_validate(answer.json())
