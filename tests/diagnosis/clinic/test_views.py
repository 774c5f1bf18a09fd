"""The screens through Django's test client: login, the case flow, validation, permissions."""

from __future__ import annotations

import html
import re

import pytest
from django.templatetags.static import static
from django.urls import reverse
from login_helpers import login_request

from diagnosis.clinic.models import DiagnosisCase, DiagnosisStep
from diagnosis.shared.advice import Advice
from diagnosis.training.models import TrainedModel

pytestmark = pytest.mark.django_db

PASSWORD = "pw-for-tests-123"  # the password tests/diagnosis/conftest.py gives every user


def patient_row(trained_model) -> list:
    """Test values of a real past patient of the model's dataset."""
    return trained_model.dataset.cases.order_by("id").first().values


def login(client, user):
    assert client.login(request=login_request(), username=user.username, password=PASSWORD)
    return client


def start(client, trained_model, ref="p-1") -> DiagnosisCase:
    response = client.post(
        reverse("case-new") + f"?model={trained_model.pk}", {"patient_reference": ref}
    )
    assert response.status_code == 302
    case = DiagnosisCase.objects.get(patient_reference=ref)
    assert response["Location"] == reverse("case-detail", args=[case.pk])
    return case


def advice_of(client, case) -> Advice:
    response = client.get(reverse("case-detail", args=[case.pk]))
    assert response.status_code == 200
    return response.context["advice"]


def text(response) -> str:
    """The page as a person reads it (HTML entities decoded)."""
    return html.unescape(response.content.decode())


def money(value: float) -> str:
    return f"${value:,.2f}"


def test_every_page_requires_login(client, trained_model, clinician):
    """Anonymous visitors are sent to the login page from every screen."""
    case = DiagnosisCase.objects.create(trained_model=trained_model, clinician=clinician)
    urls = [
        reverse("home"),
        reverse("train"),
        reverse("model-detail", args=[trained_model.pk]),
        reverse("model-tree", args=[trained_model.pk]),
        reverse("model-progress", args=[trained_model.pk]),
        reverse("case-new") + f"?model={trained_model.pk}",
        reverse("case-detail", args=[case.pk]),
        reverse("case-summary", args=[case.pk]),
    ]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("login")), url
    response = client.get(reverse("login"))
    assert response.status_code == 200
    assert b'name="password"' in response.content


def test_home_lists_models_and_open_cases(client, clinician, trained_model):
    """The home page offers to start a case with each ready model and to resume open cases."""
    login(client, clinician)
    case = start(client, trained_model, ref="resume-me")
    page = text(client.get(reverse("home")))
    assert str(trained_model) in page
    assert "Start a case" in page
    assert reverse("case-detail", args=[case.pk]) in page
    assert "Train a model" not in page  # clinicians do not train


def test_logout_is_a_post_button(client, clinician):
    """The header's logout is a form posting to the logout URL (GET logout is not allowed)."""
    login(client, clinician)
    page = text(client.get(reverse("home")))
    assert re.search(rf'<form method="post" action="{reverse("logout")}">', page)
    response = client.post(reverse("logout"))
    assert response.status_code == 302
    assert client.get(reverse("home")).status_code == 302


def test_case_flow_follows_advice_to_a_conclusion(client, clinician, trained_model):
    """Entering each recommended result then accepting the conclusion closes the case correctly."""
    login(client, clinician)
    case = start(client, trained_model)
    row = patient_row(trained_model)
    names = trained_model.cost_snapshot["names"]
    prices_shown = []
    for _ in range(len(names) + 1):
        advice = advice_of(client, case)
        if advice.kind != "extract":
            break
        page = client.get(reverse("case-detail", args=[case.pk]))
        prices_shown.append(page.context["recommended"].price_now)
        assert money(page.context["recommended"].price_now) in page.content.decode()
        response = client.post(
            reverse("case-detail", args=[case.pk]),
            {"action": "result", "test": advice.test_name, "value": row[advice.test_index]},
        )
        assert response.status_code == 302  # post/redirect/get
        assert response["Location"] == reverse("case-detail", args=[case.pk])
    assert advice.kind == "classify"
    assert prices_shown, "the model should order at least one test"
    page = text(client.get(reverse("case-detail", args=[case.pk])))
    assert f"Accept: classify as {advice.label}" in page
    # Closing asks first: the confirmation page saves nothing.
    response = client.post(
        reverse("case-detail", args=[case.pk]),
        {"action": "classify", "label": advice.label_index},
    )
    assert response.status_code == 200
    assert f"Yes, classify as {advice.label} and close the case" in text(response)
    assert DiagnosisCase.objects.get(pk=case.pk).is_open
    response = client.post(
        reverse("case-detail", args=[case.pk]),
        {"action": "classify", "label": advice.label_index, "confirm": "yes"},
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("case-summary", args=[case.pk])
    case.refresh_from_db()
    assert case.status == "classified" and case.final_label == advice.label_index
    steps = list(case.steps.all())
    assert all(s.followed_advice for s in steps)
    assert sum(s.price for s in steps) == pytest.approx(sum(prices_shown))
    summary = text(client.get(reverse("case-summary", args=[case.pk])))
    assert money(sum(prices_shown)) in summary
    assert f"Classified as {advice.label}" in summary
    assert "as the model advised" in summary
    # A closed case opens on its summary and accepts no more steps.
    assert client.get(reverse("case-detail", args=[case.pk]))["Location"] == reverse(
        "case-summary", args=[case.pk]
    )
    response = client.post(reverse("case-detail", args=[case.pk]), {"action": "refer"})
    assert response.status_code == 302
    assert case.steps.count() == len(steps)


def test_refresh_after_post_repeats_nothing(client, clinician, trained_model):
    """Reloading the page after saving a result shows the same state and adds no step."""
    login(client, clinician)
    case = start(client, trained_model)
    advice = advice_of(client, case)
    client.post(
        reverse("case-detail", args=[case.pk]),
        {
            "action": "result",
            "test": advice.test_name,
            "value": patient_row(trained_model)[advice.test_index],
        },
    )
    first = client.get(reverse("case-detail", args=[case.pk]))
    second = client.get(reverse("case-detail", args=[case.pk]))
    assert case.steps.count() == 1
    assert first.context["state"].accumulated_cost == second.context["state"].accumulated_cost
    assert first.context["advice"] == second.context["advice"]


@pytest.mark.parametrize(
    "value, message",
    [
        ("600", "at most 500"),
        ("-3", "at least 0"),
        ("abc", "as a number"),
        ("", "Enter the Glucose result"),
    ],
)
def test_bad_numeric_value_shows_message_and_saves_nothing(
    client, clinician, trained_model, value, message
):
    """An out-of-range, non-numeric or empty value is shown inline and nothing is saved."""
    login(client, clinician)
    case = start(client, trained_model)
    response = client.post(
        reverse("case-detail", args=[case.pk]),
        {"action": "result", "test": "glucose", "value": value},
    )
    assert response.status_code == 400
    page = text(response)
    assert message in page
    assert 'class="errorlist"' in page
    assert case.steps.count() == 0


def test_nominal_test_is_a_select_and_rejects_unknown_code(client, clinician, trained_model):
    """A nominal test is entered from a select of its choices; an unknown code is refused."""
    login(client, clinician)
    case = start(client, trained_model)
    page = text(client.get(reverse("case-detail", args=[case.pk]) + "?test=sex"))
    assert re.search(r'<select name="value"[^>]*>', page)
    assert ">female</option>" in page and ">male</option>" in page
    response = client.post(
        reverse("case-detail", args=[case.pk]), {"action": "result", "test": "sex", "value": "7"}
    )
    assert response.status_code == 400
    assert "not one of the Sex results" in text(response)
    assert case.steps.count() == 0
    response = client.post(
        reverse("case-detail", args=[case.pk]), {"action": "result", "test": "sex", "value": "1.0"}
    )
    assert response.status_code == 302  # "1.0" is code 1, as a program might send it
    assert case.steps.get().value == 1.0


def test_the_case_form_refuses_a_padded_choice_as_the_apis_do(client, clinician, trained_model):
    """A choice posted with spaces around it (" male", "1 ") is refused at the field, saying so;
    the exact label is taken."""
    login(client, clinician)
    case = start(client, trained_model)
    for padded in (" male", "male ", " 1", "1\t"):
        response = client.post(
            reverse("case-detail", args=[case.pk]),
            {"action": "result", "test": "sex", "value": padded},
        )
        assert response.status_code == 400, padded
        assert f"The Sex result {padded!r} has spaces before or after it" in text(response)
        assert case.steps.count() == 0
    response = client.post(
        reverse("case-detail", args=[case.pk]), {"action": "result", "test": "sex", "value": "male"}
    )
    assert response.status_code == 302
    assert case.steps.get().value == 1.0


def test_number_input_has_range_unit_and_focus(client, clinician, trained_model):
    """The numeric entry has min/max, shows the unit, and takes the focus with an access key."""
    login(client, clinician)
    case = start(client, trained_model)
    page = text(client.get(reverse("case-detail", args=[case.pk]) + "?test=glucose"))
    field = re.search(r'<input type="number" name="value"[^>]*>', page).group(0)
    assert 'min="0"' in field and 'max="500"' in field
    assert "autofocus" in field and 'accesskey="v"' in field
    assert "mg/dl" in page


def test_unknown_test_and_action_are_refused(client, clinician, trained_model):
    """Posting a test the model does not know, or an unknown action, saves nothing."""
    login(client, clinician)
    case = start(client, trained_model)
    response = client.post(
        reverse("case-detail", args=[case.pk]), {"action": "result", "test": "nope", "value": "1"}
    )
    assert response.status_code == 400
    assert "Choose one of this model's tests" in text(response)
    response = client.post(reverse("case-detail", args=[case.pk]), {"action": "explode"})
    assert response.status_code == 400
    assert case.steps.count() == 0


def test_group_discount_is_shown_and_charged(client, clinician, trained_model):
    """After glucose, insulin (same blood draw) is offered and charged at its discounted price."""
    login(client, clinician)
    case = start(client, trained_model)
    detail = reverse("case-detail", args=[case.pk])
    client.post(detail, {"action": "result", "test": "glucose", "value": "150"})
    response = client.get(detail + "?test=insulin")
    page = text(response)
    assert response.context["entry"].price_now == pytest.approx(3.0)
    assert "discounted from $12.00: same group as Glucose" in page
    client.post(detail, {"action": "result", "test": "insulin", "value": "120"})
    steps = list(case.steps.order_by("position"))
    assert [s.price for s in steps] == [pytest.approx(10.0), pytest.approx(3.0)]
    page = text(client.get(detail))
    assert "$13.00" in page  # accumulated cost
    summary_page = ""
    client.post(detail, {"action": "refer"})
    summary_page = text(client.get(reverse("case-summary", args=[case.pk])))
    assert "discounted: same group as Glucose" in summary_page
    assert "$13.00" in summary_page


def test_order_a_different_test_lists_remaining_tests_with_prices(client, clinician, trained_model):
    """The 'order a different test' table lists every remaining test with its price now."""
    login(client, clinician)
    case = start(client, trained_model)
    response = client.get(reverse("case-detail", args=[case.pk]))
    rows = {r["option"].test.name: r["option"].price_now for r in response.context["option_rows"]}
    assert rows == {"glucose": 10.0, "insulin": 12.0, "sex": 1.0}
    page = text(response)
    assert "?test=insulin#order-entry" in page


def test_mark_unavailable_is_free_and_removes_the_test(client, clinician, trained_model):
    """Marking a test unavailable costs nothing and takes it off the list of tests to order."""
    login(client, clinician)
    case = start(client, trained_model)
    detail = reverse("case-detail", args=[case.pk])
    response = client.post(detail, {"action": "unavailable", "test": "glucose"})
    assert response.status_code == 302
    step = case.steps.get()
    assert step.kind == "unavailable" and step.price == 0
    response = client.get(detail)
    assert "glucose" not in {r["option"].test.name for r in response.context["option_rows"]}
    assert "not available" in text(response)


def test_overrule_and_refer_are_recorded_as_not_followed(client, clinician, trained_model):
    """Classifying against the advice is recorded as overruled; so is an unadvised referral."""
    login(client, clinician)
    case = start(client, trained_model, ref="a")
    advice = advice_of(client, case)
    assert advice.kind == "extract"
    client.post(
        reverse("case-detail", args=[case.pk]),
        {"action": "classify", "label": "1", "confirm": "yes"},
    )
    case.refresh_from_db()
    assert case.status == "classified" and case.final_label == 1
    assert case.steps.get().followed_advice is False
    summary = text(client.get(reverse("case-summary", args=[case.pk])))
    assert "overruled the model" in summary

    other = start(client, trained_model, ref="b")
    client.post(reverse("case-detail", args=[other.pk]), {"action": "refer", "confirm": "yes"})
    other.refresh_from_db()
    assert other.status == "referred"
    assert "Referred" in text(client.get(reverse("case-summary", args=[other.pk])))


def test_classify_requires_a_valid_class(client, clinician, trained_model):
    """Classifying with no class or an unknown class shows a message and keeps the case open."""
    login(client, clinician)
    case = start(client, trained_model)
    for label in ("", "9"):
        response = client.post(
            reverse("case-detail", args=[case.pk]), {"action": "classify", "label": label}
        )
        assert response.status_code == 400
        assert "class" in text(response).lower()
    case.refresh_from_db()
    assert case.is_open and case.steps.count() == 0


def test_another_clinicians_case_is_answered_like_a_missing_one(
    client, clinician, other_clinician, trained_model
):
    """A clinician can neither see nor act on another clinician's case, nor tell it exists."""
    login(client, clinician)
    case = start(client, trained_model)
    client.logout()
    login(client, other_clinician)
    missing = case.pk + 999
    response = client.get(reverse("case-detail", args=[case.pk]))
    nothing = client.get(reverse("case-detail", args=[missing]))
    assert response.status_code == nothing.status_code == 404

    # The same page apart from the number asked for (and the per-response CSRF mask); only
    # the whole number is masked, not a digit of it elsewhere (initial-scale=1, case 1).
    def page(r, pk):
        unmasked = re.sub(r'value="[A-Za-z0-9]{64}"', "", text(r))
        return re.sub(rf"(?<![\w=.-]){pk}(?![\w.])", "N", unmasked)

    assert page(response, case.pk) == page(nothing, missing)
    assert client.get(reverse("case-summary", args=[case.pk])).status_code == 404
    response = client.post(reverse("case-detail", args=[case.pk]), {"action": "refer"})
    assert response.status_code == 404
    tree = reverse("model-tree", args=[trained_model.pk]) + f"?case={case.pk}"
    assert client.get(tree).status_code == 404
    case.refresh_from_db()
    assert case.is_open and case.steps.count() == 0
    assert reverse("case-detail", args=[case.pk]) not in text(client.get(reverse("home")))


def test_model_page_shows_metrics_prices_and_matrix(client, clinician, trained_model):
    """The trust page shows learner, held-out metrics, prices, error matrix and test frequency."""
    login(client, clinician)
    response = client.get(reverse("model-detail", args=[trained_model.pk]))
    assert response.status_code == 200
    page = text(response)
    metrics = trained_model.metrics
    assert f"{round(100 * metrics['accuracy'])}%" in page
    assert money(metrics["mean_test_cost"]) in page
    assert f"{metrics['normalized_cost']:.3f}" in page
    assert "EG2" in page
    assert "Glucose" in page and "$10.00" in page and "$2.00" in page  # full and group price
    assert "Uniform 100" in page
    assert 'id="fig-frequency"' in page
    assert static("vendor/plotly.min.js") in page  # the hashed, long-cached name
    assert "cdn" not in page.lower()


def test_model_progress_json(client, clinician, trained_model):
    """The progress endpoint reports status, progress, elapsed time and error for the live bar."""
    from datetime import timedelta

    from django.utils import timezone

    finished = timezone.now()
    TrainedModel.objects.filter(pk=trained_model.pk).update(
        started_at=finished - timedelta(seconds=5), finished_at=finished
    )
    login(client, clinician)
    data = client.get(reverse("model-progress", args=[trained_model.pk])).json()
    assert data["status"] == "succeeded" and data["finished"] is True
    assert data["progress"] == pytest.approx(1.0)
    assert data["elapsed_seconds"] == pytest.approx(5.0)
    assert data["error"] == ""


def test_running_model_page_polls_progress_and_failed_shows_reason(
    client, model_admin, trained_model
):
    """A queued model's page carries the poller; a failed model's page shows why it failed."""
    login(client, model_admin)
    TrainedModel.objects.filter(pk=trained_model.pk).update(
        status="running", progress=0.4, finished_at=None
    )
    page = text(client.get(reverse("model-detail", args=[trained_model.pk])))
    assert 'id="training-progress"' in page and static("js/progress.js") in page and "40%" in page
    TrainedModel.objects.filter(pk=trained_model.pk).update(
        status="failed", error="Out of memory in fit"
    )
    page = text(client.get(reverse("model-detail", args=[trained_model.pk])))
    assert "The training failed" in page and "Out of memory in fit" in page


def test_tree_json_highlights_the_case_path(client, clinician, trained_model):
    """With ?case=, the tree JSON highlights the root and the branch the patient took."""
    login(client, clinician)
    case = start(client, trained_model)
    advice = advice_of(client, case)
    value = patient_row(trained_model)[advice.test_index]
    client.post(
        reverse("case-detail", args=[case.pk]),
        {"action": "result", "test": advice.test_name, "value": value},
    )
    url = reverse("model-tree", args=[trained_model.pk])
    data = client.get(url + f"?case={case.pk}&format=json").json()
    highlight = data["highlight"]
    assert highlight[0] == 0 and len(highlight) >= 2
    nodes = {n["id"]: n for n in data["layout"]["nodes"]}
    for parent, child in zip(highlight, highlight[1:], strict=False):
        assert nodes[child]["parent"] == parent
    assert any(e["on_path"] for e in data["drawing"]["edges"])
    plain = client.get(url + "?format=json").json()
    assert plain["highlight"] == []
    page = text(client.get(url + f"?case={case.pk}"))
    assert 'id="tree-view"' in page and f"case #{case.pk}" in page
    case_page = text(client.get(reverse("case-detail", args=[case.pk])))
    assert "show where this patient is in the tree" in case_page


def test_steps_are_not_saved_by_get(client, clinician, trained_model):
    """Viewing a case (even with ?test=) never records a step: only POSTs change a case."""
    login(client, clinician)
    case = start(client, trained_model)
    client.get(reverse("case-detail", args=[case.pk]) + "?test=insulin")
    assert not DiagnosisStep.objects.filter(case=case).exists()


def test_advice_is_explained_in_words_from_the_model_numbers(client, clinician, trained_model):
    """The "why" names the test, its price and the model's expected costs; no feature indices."""
    login(client, clinician)
    case = start(client, trained_model)
    response = client.get(reverse("case-detail", args=[case.pk]))
    advice = response.context["advice"]
    evidence = advice.evidence
    assert advice.kind == "extract"
    page = text(response)
    why = re.search(r'<div class="why" id="why">(.*?)</div>', page, re.DOTALL).group(1)
    assert f"Order {advice.test_label}: {money(advice.cost)} for this patient now." in why
    now, after = evidence.conclude_cost, evidence.cost_after
    assert f"would cost {money(now)} in expected errors" in why
    assert money(after) in why
    # a saving only when the model expects this result to lower the cost of an error
    if after < now - 0.005:
        assert f"expected to save {money(now - after)}" in why
    else:
        assert "not expected to lower that" in why
    assert "past patients" in why and "training cases" not in why
    assert not re.search(r"feature \d|extract:\d", page)


def test_risks_chart_and_table_come_from_the_model(client, clinician, thyroid_model):
    """A conditioned-loss case draws the model's own risks: one bar per action it weighed."""
    from diagnosis.clinic.services import step as step_service

    login(client, clinician)
    case = start(client, thyroid_model)
    detail = reverse("case-detail", args=[case.pk])
    patient = patient_row(thyroid_model)
    response = client.get(detail)
    for _ in range(len(patient)):
        if response.context["advice"].evidence.risks:
            break
        advice = response.context["advice"]  # free answers first: they carry no risks
        step_service.take_step(
            user=clinician,
            case=case,
            action="result",
            test=advice.test_name,
            value=patient[advice.test_index],
        )
        response = client.get(detail)
    risks = response.context["advice"].evidence.risks
    assert risks, "a priced decision carries the risk of every action"
    names = {t.index: t.display_label for t in thyroid_model.dataset.tests.all()}
    best = response.context["advice"].class_labels[response.context["advice"].evidence.best_class]
    expected = [
        "Refer"
        if r.kind == "reject"
        else f"Order {names[r.test]}"
        if r.kind == "extract"
        else f"Classify as {best}"
        for r in risks
    ]
    figure = response.context["risks_figure"]["data"][0]
    assert figure["y"] == expected
    assert figure["x"] == [r.risk for r in risks]
    page = text(response)
    assert 'id="fig-risks"' in page and "Risk of each action now" in page
    assert page.count("(advised: lowest risk)") == 1


def test_model_page_draws_anytime_checkpoints(client, clinician, trained_model):
    """When an anytime learner stored checkpoints, the model page charts cost against time."""
    from diagnosis.training.models import TrainingCheckpoint

    for seconds, cost in ((1.0, 50.0), (4.0, 42.0)):
        TrainingCheckpoint.objects.create(
            trained_model=trained_model,
            elapsed_seconds=seconds,
            estimated_cost=cost,
            label=f"r={seconds:g}",
        )
    login(client, clinician)
    response = client.get(reverse("model-detail", args=[trained_model.pk]))
    figure = response.context["checkpoints_figure"]
    assert figure["data"][0]["x"] == [1.0, 4.0] and figure["data"][0]["y"] == [50.0, 42.0]
    assert 'id="fig-checkpoints"' in text(response)
    data = client.get(reverse("model-progress", args=[trained_model.pk])).json()
    assert [c["label"] for c in data["checkpoints"]] == ["r=1", "r=4"]


def test_discount_note_follows_the_models_prices_not_todays(client, clinician, trained_model):
    """After the dataset's prices and groups change, the case still quotes the trained prices."""
    from diagnosis.catalog.models import DiagnosticTest

    snapshot = trained_model.cost_snapshot
    insulin = snapshot["names"].index("insulin")
    # Today insulin leaves the blood group and costs more; the model was trained before.
    DiagnosticTest.objects.filter(dataset=trained_model.dataset, name="insulin").update(
        group=None, price=50.0, discounted_price=50.0
    )
    login(client, clinician)
    case = start(client, trained_model)
    detail = reverse("case-detail", args=[case.pk])
    client.post(detail, {"action": "result", "test": "glucose", "value": "150"})
    response = client.get(detail + "?test=insulin")
    entry = response.context["entry"]
    assert entry.price_now == snapshot["discounted"][insulin]
    assert entry.full_price == snapshot["costs"][insulin]
    assert entry.discount_from == "Glucose"
    assert f"discounted from {money(snapshot['costs'][insulin])}: same group as Glucose" in text(
        response
    )
    client.post(detail, {"action": "result", "test": "insulin", "value": "120"})
    step = case.steps.get(test__name="insulin")
    assert step.price == snapshot["discounted"][insulin]
    summary = text(client.get(detail))
    assert "discounted: same group as Glucose" in summary
