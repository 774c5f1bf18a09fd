"""CDS Hooks over HTTP on a live server, the test playing the EHR: discovery, patient-view and
order-select with prefetch and through the EHR's FHIR server, feedback, and a whole case
stepped to a conclusion through hooks alone against the same case stepped on the screen."""

from __future__ import annotations

from types import SimpleNamespace
from urllib.parse import unquote

import pytest
from cds_helpers import (
    GLUCOSE,
    INSULIN,
    LocalServer,
    bundle,
    call,
    code_toy_dataset,
    hook_body,
    new_key,
    observation,
    register,
)
from fhir.resources.R4B.riskassessment import RiskAssessment
from fhir.resources.R4B.servicerequest import ServiceRequest
from step_helpers import post_results, post_step

from diagnosis.clinic import selectors
from diagnosis.clinic.models import CaseAccess, DiagnosisCase
from diagnosis.clinic.services import cases as case_services
from diagnosis.integration.models import CdsCard, CdsFeedback, CdsPatientCase, TestCode
from diagnosis.shared.money import format_money

pytestmark = pytest.mark.django_db(transaction=True)

RESOURCES = {"ServiceRequest": ServiceRequest, "RiskAssessment": RiskAssessment}


@pytest.fixture
def ehr(transactional_db, clinician, trained_model, live_server):
    """The toy model's dataset coded, and an EHR registered with its key, acting as the doc."""
    code_toy_dataset(trained_model.dataset)
    key = new_key()
    client = register(clinician, key)
    service = f"/cds-services/cost-aware-model-{trained_model.pk}"
    return SimpleNamespace(
        key=key,
        client=client,
        model=trained_model,
        base=live_server.url,
        service=service,
        clinician=clinician,
    )


def check_card(card: dict) -> None:
    """The CDS Hooks response rules, and every FHIR resource valid for fhir.resources."""
    assert isinstance(card["summary"], str) and 0 < len(card["summary"]) < 140
    assert card["indicator"] in ("info", "warning", "critical")
    assert card["source"]["label"]
    assert card["uuid"]
    if card.get("suggestions"):
        assert card["selectionBehavior"] in ("at-most-one", "any")
        for suggestion in card["suggestions"]:
            assert suggestion["label"] and suggestion["uuid"]
            for action in suggestion["actions"]:
                assert action["type"] in ("create", "update", "delete")
                if action["type"] == "create":
                    resource = action["resource"]
                    RESOURCES[resource["resourceType"]].model_validate(resource)
                if action["type"] == "delete":
                    assert action["resourceId"]


def the_case(ehr) -> DiagnosisCase:
    return CdsPatientCase.objects.get(client=ehr.client, patient_id="p1").case


def state_of(ehr):
    return selectors.case_state(user=ehr.clinician, case=the_case(ehr))


def test_discovery_lists_both_hooks_of_each_approved_model_with_coded_prefetch(ehr):
    """GET /cds-services names a patient-view and an order-select service per approved model,
    whose Observation prefetch asks for the tests' LOINC (and local) codes."""
    answer = call(ehr.base, "/cds-services", ehr.key)
    assert answer.status_code == 200, answer.text
    services = answer.json()["services"]
    assert {(s["hook"], s["id"]) for s in services} == {
        ("patient-view", f"cost-aware-model-{ehr.model.pk}"),
        ("order-select", f"cost-aware-model-{ehr.model.pk}-order-select"),
    }
    for service in services:
        assert service["prefetch"]["patient"] == "Patient/{{context.patientId}}"
        query = service["prefetch"]["observations"]
        assert query.startswith("Observation?patient={{context.patientId}}&code=")
        assert (
            "http://loinc.org|2345-7" in query and "urn:cost-aware-diagnosis:tests|insulin" in query
        )


def test_a_draft_model_is_not_a_service(ehr):
    """A model taken back to draft is neither listed nor callable (404)."""
    type(ehr.model).objects.filter(pk=ehr.model.pk).update(approval="draft")
    assert call(ehr.base, "/cds-services", ehr.key).json() == {"services": []}
    answer = call(ehr.base, ehr.service, ehr.key, hook_body())
    assert answer.status_code == 404 and "no CDS service" in answer.json()["error"]


def test_patient_view_records_prefetched_observations_and_cards_the_next_test(ehr):
    """A prefetched glucose becomes the case's step at its price; the card orders the model's
    next test at its price for this patient now (group discount), with a ServiceRequest
    proposal resting on that Observation, the expected saving and the cost so far."""
    body = hook_body(observations=[observation("g1", GLUCOSE, 180, unit="mg/dL")])
    answer = call(ehr.base, ehr.service, ehr.key, body)
    assert answer.status_code == 200, answer.text
    [card] = answer.json()["cards"]
    check_card(card)
    state = state_of(ehr)
    [step] = state.steps
    assert (step.test.name, step.value, step.price) == ("glucose", 180.0, 10.0)
    assert state.case.patient_reference == "FHIR Patient/p1"
    advice = state.advice
    assert advice.kind == "extract" and advice.test_name == "insulin"
    option = next(o for o in state.test_options if o.test.name == "insulin")
    assert option.price_now == advice.cost == 3.0 and option.full_price == 12.0  # one blood draw
    assert f"Order Insulin next: {format_money(3.0)} for this patient now" in card["summary"]
    saving = round(advice.evidence.conclude_cost, 2) - round(advice.evidence.cost_after, 2)
    assert f"Expected saving: {format_money(round(saving, 2))}" in card["detail"]
    assert "Cost so far: $10.00" in card["detail"]
    assert "group discount with Glucose done; $12.00 alone" in card["detail"]
    [suggestion] = card["suggestions"]
    [action] = suggestion["actions"]
    request = action["resource"]
    assert request["intent"] == "proposal" and request["status"] == "draft"
    assert request["code"]["coding"][0] | {"display": None} == {
        "system": INSULIN[0],
        "code": INSULIN[1],
        "display": None,
    }
    assert request["supportingInfo"] == [{"reference": "Observation/g1"}]
    assert request["subject"] == {"reference": "Patient/p1"}
    assert CdsCard.objects.get(uuid=card["uuid"]).case == state.case
    assert list(CaseAccess.objects.filter(case=state.case).values_list("action", "detail")) == [
        (CaseAccess.RESULTS, "1 steps")
    ]


def test_a_second_call_joins_the_open_case_and_records_only_what_is_new(ehr):
    """The same patient's next hook call (a new hookInstance) steps the same case: the known
    glucose is not recorded again, the new insulin is, at its discounted price."""
    glucose = observation("g1", GLUCOSE, 180, unit="mg/dL")
    assert call(ehr.base, ehr.service, ehr.key, hook_body(observations=[glucose])).ok
    insulin = observation("i1", INSULIN, 150, unit="u[IU]/mL")
    answer = call(ehr.base, ehr.service, ehr.key, hook_body(observations=[glucose, insulin]))
    assert answer.status_code == 200, answer.text
    assert CdsPatientCase.objects.count() == 1
    state = state_of(ehr)
    assert [(s.test.name, s.price) for s in state.steps] == [("glucose", 10.0), ("insulin", 3.0)]
    [card] = answer.json()["cards"]
    check_card(card)
    assert state.advice.kind == "classify"
    assert card["summary"].startswith(f"Conclude {state.advice.label}: expected cost")
    assert "Cost so far: $13.00" in card["detail"]
    for position, cost in enumerate(state.advice.evidence.class_costs):
        label = state.advice.class_name(position)
        assert f"- Conclude {label}: {format_money(cost)} expected" in card["detail"]
    [suggestion] = card["suggestions"]
    assessment = suggestion["actions"][0]["resource"]
    assert assessment["resourceType"] == "RiskAssessment"
    probabilities = [p["probabilityDecimal"] for p in assessment["prediction"]]
    assert probabilities == pytest.approx(list(state.advice.proba), abs=1e-6)
    assert assessment["prediction"][1]["outcome"]["coding"][0]["code"] == "E14"
    assert {b["reference"] for b in assessment["basis"]} == {"Observation/g1", "Observation/i1"}


def test_order_select_names_the_models_test_and_suggests_the_cheaper_one(ehr):
    """Selecting a dearer test than the model's: the card says the model's choice, both prices
    for this patient now, the expected saving, and suggests swapping for the cheaper test."""
    start = call(ehr.base, ehr.service, ehr.key, hook_body())
    assert start.ok, start.text
    state = state_of(ehr)
    advised = state.advice.test_name
    dearer = [
        o for o in state.test_options if o.test.name != advised and o.price_now > state.advice.cost
    ]
    assert dearer, "the toy model's first test should not be its dearest"
    chosen = dearer[0]
    code = TestCode.objects.get(test=chosen.test)
    draft = {
        "resourceType": "ServiceRequest",
        "id": "draft-1",
        "status": "draft",
        "intent": "order",
        "subject": {"reference": "Patient/p1"},
        "code": {"coding": [{"system": code.system, "code": code.code}]},
    }
    body = hook_body(
        "order-select",
        context={
            "userId": "Practitioner/dr-1",
            "patientId": "p1",
            "selections": ["ServiceRequest/draft-1"],
            "draftOrders": bundle(draft),
        },
    )
    answer = call(ehr.base, ehr.service + "-order-select", ehr.key, body)
    assert answer.status_code == 200, answer.text
    [card] = answer.json()["cards"]
    check_card(card)
    label = state.advice.test_label
    assert card["summary"] == (
        f"The model would order {label} ({format_money(state.advice.cost)}) rather than "
        f"{chosen.test.display_label} ({format_money(chosen.price_now)})"
    )
    assert card["indicator"] == "warning"
    evidence = state.advice.evidence
    saving = round(round(evidence.conclude_cost, 2) - round(evidence.cost_after, 2), 2)
    assert f"({format_money(saving)})" in card["detail"] or (
        f"expected to save {format_money(saving)}" in card["detail"]
    )
    assert f"Difference now: {format_money(chosen.price_now - state.advice.cost)}" in card["detail"]
    [suggestion] = card["suggestions"]
    delete, create = suggestion["actions"]
    assert delete == {
        "type": "delete",
        "description": "Remove ServiceRequest/draft-1",
        "resourceId": ["ServiceRequest/draft-1"],
    }
    assert create["resource"]["code"]["text"] == label


def test_order_select_of_the_models_own_test_says_so(ehr):
    """Selecting the very test the model orders: an info card with its price and saving."""
    call(ehr.base, ehr.service, ehr.key, hook_body())
    state = state_of(ehr)
    option = next(o for o in state.test_options if o.test.name == state.advice.test_name)
    code = TestCode.objects.get(test=option.test)
    draft = {
        "resourceType": "ServiceRequest",
        "id": "d2",
        "status": "draft",
        "intent": "order",
        "subject": {"reference": "Patient/p1"},
        "code": {"coding": [{"system": code.system, "code": code.code}]},
    }
    body = hook_body(
        "order-select",
        context={
            "userId": "Practitioner/dr-1",
            "patientId": "p1",
            "selections": ["ServiceRequest/d2"],
            "draftOrders": bundle(draft),
        },
    )
    [card] = call(ehr.base, ehr.service + "-order-select", ehr.key, body).json()["cards"]
    check_card(card)
    assert card["indicator"] == "info" and "suggestions" not in card
    assert card["summary"].startswith(
        f"{option.test.display_label} is the model's next test: {format_money(option.price_now)}"
    )


def test_feedback_keeps_an_override_and_its_reason_in_the_case_audit(ehr):
    """An overridden card's feedback is stored with its reason, and logged on the case."""
    [card] = call(ehr.base, ehr.service, ehr.key, hook_body()).json()["cards"]
    reason = {"system": "urn:cost-aware-diagnosis:override-reason", "code": "patient-declined"}
    body = {
        "feedback": [
            {
                "card": card["uuid"],
                "outcome": "overridden",
                "overrideReason": {"reason": reason, "userComment": "needle phobia"},
                "outcomeTimestamp": "2026-11-27T09:00:00Z",
            }
        ]
    }
    answer = call(ehr.base, ehr.service + "/feedback", ehr.key, body)
    assert answer.status_code == 200, answer.text
    stored = CdsFeedback.objects.get()
    assert (stored.outcome, stored.override_reason, stored.user_comment) == (
        "overridden",
        reason,
        "needle phobia",
    )
    assert stored.case == the_case(ehr)
    assert CaseAccess.objects.filter(
        case=stored.case, action="cds-feedback", detail="overridden card patient-view"
    ).exists()
    assert the_case(ehr).is_open  # an override takes no step
    unknown = dict(body["feedback"][0], card="7c0b8a43-43f4-4b0c-9a5c-8d3f0b1e7a11")
    refused = call(ehr.base, ehr.service + "/feedback", ehr.key, {"feedback": [unknown]})
    assert refused.status_code == 404 and CdsFeedback.objects.count() == 1


def test_a_whole_case_through_hooks_equals_the_same_case_on_the_screen(ehr, clinician):
    """The EHR performs each proposed test and calls again, then accepts the conclusion card:
    the case's steps, prices and audited changes equal the same case stepped on the screen."""
    patient = {"glucose": 182.0, "insulin": 140.0, "sex": 1.0}
    coding = {
        name: (c.system, c.code)
        for name, c in (
            (t.name, TestCode.objects.get(test=t)) for t in ehr.model.dataset.tests.all()
        )
    }
    units = {"glucose": "mg/dL", "insulin": "u[IU]/mL", "sex": None}
    done: list = []
    for _ in range(5):
        answer = call(ehr.base, ehr.service, ehr.key, hook_body(observations=done))
        assert answer.status_code == 200, answer.text
        [card] = answer.json()["cards"]
        check_card(card)
        advice = state_of(ehr).advice
        if advice.kind != "extract":
            break
        name = advice.test_name
        done.append(observation(f"o{len(done)}", coding[name], patient[name], unit=units[name]))
    else:
        pytest.fail("the hooks never reached a conclusion")
    feedback = {
        "feedback": [
            {
                "card": card["uuid"],
                "outcome": "accepted",
                "acceptedSuggestions": [{"id": card["suggestions"][0]["uuid"]}],
                "outcomeTimestamp": "2026-11-27T09:30:00Z",
            }
        ]
    }
    assert call(ehr.base, ehr.service + "/feedback", ehr.key, feedback).status_code == 200
    hooked = the_case(ehr)
    assert not hooked.is_open

    screen = case_services.start_case(user=clinician, trained_model=ehr.model)
    for resource in done:
        name = next(
            n
            for n, c in coding.items()
            if c == (resource["code"]["coding"][0]["system"], resource["code"]["coding"][0]["code"])
        )
        post_results(user=clinician, case=screen, results={name: patient[name]})
    state = selectors.case_state(user=clinician, case=screen)
    if state.advice.kind == "classify":
        post_step(user=clinician, case=screen, action="classify", label=state.advice.label)
    else:
        post_step(user=clinician, case=screen, action="refer")

    def steps(case):
        return [
            (
                s.kind,
                s.test.name if s.test_id else None,
                s.value,
                s.price,
                s.label,
                s.followed_advice,
                s.advice,
            )
            for s in selectors.case_state(user=clinician, case=case).steps
        ]

    def changes(case):
        return list(
            CaseAccess.objects.filter(case=case, action__in=CaseAccess.CHANGES)
            .order_by("at", "id")
            .values_list("action", "detail")
        )

    assert steps(hooked) == steps(screen)
    assert len(steps(hooked)) == len(done) + 1
    assert changes(hooked) == changes(screen)
    assert (hooked.status, hooked.final_label) == (screen.status, screen.final_label)


def test_without_prefetch_the_observations_come_from_the_fhir_server(ehr):
    """No prefetch: the service searches the EHR's FHIR server with the access token of
    fhirAuthorization, and records what it answers."""
    with LocalServer() as fhir_server:
        ehr.client.fhir_servers = [fhir_server.url]
        ehr.client.save()
        fhir_server.routes["/Observation"] = (
            200,
            bundle(observation("g9", GLUCOSE, 95, unit="mg/dL")),
        )
        body = hook_body(
            prefetch=False,
            fhirServer=fhir_server.url,
            fhirAuthorization={
                "access_token": "tok-123",
                "token_type": "Bearer",
                "expires_in": 300,
                "scope": "patient/Observation.read",
                "subject": "cds-service",
            },
        )
        answer = call(ehr.base, ehr.service, ehr.key, body)
    assert answer.status_code == 200, answer.text
    [(path, headers)] = fhir_server.seen
    assert unquote(path).startswith("/Observation?patient=p1&code=http://loinc.org|2345-7,")
    assert headers["Authorization"] == "Bearer tok-123"
    [step] = state_of(ehr).steps
    assert (step.test.name, step.value) == ("glucose", 95.0)
    [card] = answer.json()["cards"]
    resource = card["suggestions"][0]["actions"][0]["resource"]  # an order or a conclusion
    rests_on = resource[
        "supportingInfo" if resource["resourceType"] == "ServiceRequest" else "basis"
    ]
    assert rests_on == [{"reference": "Observation/g9"}]


def test_a_fhir_server_that_fails_and_no_prefetch_are_412(ehr):
    """Without prefetch and without a usable FHIR server the answer is 412, nothing saved."""
    answer = call(ehr.base, ehr.service, ehr.key, hook_body(prefetch=False))
    assert answer.status_code == 412 and "fhirServer" in answer.json()["error"]
    with LocalServer() as fhir_server:
        ehr.client.fhir_servers = [fhir_server.url]
        ehr.client.save()
        fhir_server.routes["/Observation"] = (401, {"resourceType": "OperationOutcome"})
        failing = call(
            ehr.base, ehr.service, ehr.key, hook_body(prefetch=False, fhirServer=fhir_server.url)
        )
    assert failing.status_code == 412 and "answered 401" in failing.json()["error"]
    assert DiagnosisCase.objects.count() == 0


@pytest.mark.parametrize(
    ("resource", "named"),
    [
        (observation("g1", GLUCOSE, 10, unit="mmol/L"), "Observation/g1.valueQuantity.code"),
        (observation("g1", GLUCOSE, 120, unit="mg/dL", patient="p2"), "Observation/g1.subject"),
        (observation("g1", GLUCOSE, 9000, unit="mg/dL"), "Observation/g1 (glucose)"),
        ({"resourceType": "Observation", "id": "x"}, "prefetch.observations.entry.0.resource"),
    ],
)
def test_bad_observations_are_refused_naming_the_resource_and_nothing_is_saved(
    ehr, resource, named
):
    """A wrong unit, another patient, a value outside the test's range or an Observation that
    does not validate: 400 naming the resource and field; no case, no step, no card."""
    answer = call(ehr.base, ehr.service, ehr.key, hook_body(observations=[resource]))
    assert answer.status_code == 400, answer.text
    assert named in answer.json()["error"]
    assert (DiagnosisCase.objects.count(), CdsCard.objects.count()) == (0, 0)


def test_an_implausible_value_answers_a_warning_card_and_records_nothing(ehr):
    """A glucose inside the test's range but outside its plausible range is not recorded
    unconfirmed: the card warns (to confirm on the screen) and no case or step is saved."""
    ehr.model.dataset.tests.filter(name="glucose").update(plausible_min=40, plausible_max=400)
    body = hook_body(observations=[observation("g1", GLUCOSE, 450, unit="mg/dL")])
    answer = call(ehr.base, ehr.service, ehr.key, body)
    assert answer.status_code == 200, answer.text
    [card] = answer.json()["cards"]
    check_card(card)
    assert card["indicator"] == "warning" and "plausible range" in card["summary"]
    assert "450" in card["detail"] and "Nothing was recorded" in card["detail"]
    assert (DiagnosisCase.objects.count(), CdsCard.objects.count()) == (0, 0)
