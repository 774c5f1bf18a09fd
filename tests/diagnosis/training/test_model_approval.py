"""Approval before use (issue 27): drafts are invisible to clinicians, approvals are reasoned
and audited, and a retrain replaces nothing before it is compared with the model in use."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.core.exceptions import PermissionDenied, ValidationError
from django.test import Client
from django.urls import reverse
from django.utils.html import escape
from training_helpers import TEST_APPROVAL_REASON

from diagnosis.clinic.selectors.models import models_for_user
from diagnosis.clinic.services import cases as case_services
from diagnosis.integration.services.api_tokens import issue_api_token
from diagnosis.permissions import CLINICIANS, ModelNotFound
from diagnosis.training.models import ModelDecision, TrainedModel
from diagnosis.training.selectors.model_card import model_card
from diagnosis.training.selectors.models import model_warnings
from diagnosis.training.services import approval
from diagnosis.training.services.matrices import SELECTOR_LEARNER, retrain_with_current_values
from diagnosis.training.services.training import create_training, run_training


def _fitted_draft(trained_model, admin, *, error_matrix=None) -> TrainedModel:
    """A new training of the fixture's learner on its dataset, given the fixture's fit (the
    conftest's way of reusing one fit): a draft, as ``create_training`` makes every model."""
    draft = create_training(
        user=admin,
        dataset=trained_model.dataset,
        learner=trained_model.learner,
        params={},
        error_matrix=error_matrix or trained_model.error_matrix,
    )
    fields = ("model_json", "metrics", "fit_seconds")
    TrainedModel.objects.filter(pk=draft.pk).update(
        status=TrainedModel.SUCCEEDED,
        progress=1.0,
        **{f: getattr(trained_model, f) for f in fields},
    )
    draft.refresh_from_db()
    return draft


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_new_training_is_a_draft_and_the_fixture_approval_is_audited(trained_model, model_admin):
    """create_training makes drafts; approving writes who, when, why and one audit row."""
    draft = _fitted_draft(trained_model, model_admin)
    assert draft.approval == TrainedModel.DRAFT
    assert trained_model.approval == TrainedModel.APPROVED
    assert trained_model.approval_by == model_admin
    assert trained_model.approval_reason == TEST_APPROVAL_REASON
    decision = ModelDecision.objects.get(trained_model=trained_model)
    assert (decision.action, decision.username) == (ModelDecision.APPROVE, model_admin.username)


def test_a_clinician_never_sees_a_draft(trained_model, model_admin, clinician):
    """Not in the list, the home page, /api/v1/models, nor by URL: the answers of a missing
    model (404 pages, the API's 400 for starting a case), while the admin sees the draft."""
    draft = _fitted_draft(trained_model, model_admin)
    missing = draft.pk + 1000
    assert list(models_for_user(user=clinician)) == [trained_model]
    assert draft in list(models_for_user(user=model_admin))
    web = _client(clinician)
    home = web.get("/").content.decode()
    assert reverse("model-detail", args=[trained_model.pk]) in home
    assert reverse("model-detail", args=[draft.pk]) not in home
    for name in ("model-detail", "model-card", "model-tree", "model-progress"):
        assert web.get(reverse(name, args=[draft.pk])).status_code == 404, name
        assert web.get(reverse(name, args=[missing])).status_code == 404, name
    for pk in (draft.pk, missing):
        assert web.get(reverse("case-new") + f"?model={pk}").status_code == 404
        assert web.post(reverse("case-new") + f"?model={pk}", {}).status_code == 404
    with pytest.raises(ModelNotFound):
        case_services.start_case(user=clinician, trained_model=draft)

    _, plain = issue_api_token(issuer=None, owner=clinician, name="EHR")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {plain}")
    listed = api.get("/api/v1/models").json()
    assert [m["id"] for m in listed] == [trained_model.pk]
    assert listed[0]["approval"] == "approved"
    answers = [
        api.post("/api/v1/cases", {"model": pk}, content_type="application/json")
        for pk in (draft.pk, missing)
    ]
    assert [a.status_code for a in answers] == [400, 400]
    words = [
        a.json()["error"].replace(str(pk), "N")
        for a, pk in zip(answers, (draft.pk, missing), strict=True)
    ]
    assert words[0] == words[1]  # word for word the answer for a model that does not exist

    admin_page = _client(model_admin).get(reverse("model-detail", args=[draft.pk]))
    assert admin_page.status_code == 200
    assert "Review its model card to approve it" in admin_page.content.decode()


def test_only_model_admins_approve(trained_model, model_admin, clinician):
    """A clinician, a staff member without the group, and a clinician posting the card's form
    are refused; nothing changes."""
    draft = _fitted_draft(trained_model, model_admin)
    staff = User.objects.create_user("staff-only", is_staff=True)
    for user in (clinician, staff):
        with pytest.raises(PermissionDenied):
            approval.approve_model(user=user, trained_model=draft, reason="why not")
    url = reverse("model-card", args=[draft.pk])
    assert _client(staff).post(url, {"action": "approve"}).status_code == 403  # no role at all
    assert _client(clinician).post(url, {"action": "approve"}).status_code == 404  # a draft
    draft.refresh_from_db()
    assert draft.approval == TrainedModel.DRAFT
    assert not ModelDecision.objects.filter(trained_model=draft).exists()


@pytest.fixture
def flagged_model(toy_dataset, model_admin) -> TrainedModel:
    """EG2 trained where an error costs less than any test: flagged "Use with caution"."""
    cheap = toy_dataset.error_matrices.create(name="Errors cost $0.50", matrix=[[0, 0.5], [0.5, 0]])
    requested = create_training(
        user=model_admin, dataset=toy_dataset, learner="eg2", params={}, error_matrix=cheap
    )
    trained = run_training(trained_model_id=requested.pk)
    assert trained.status == TrainedModel.SUCCEEDED, trained.error
    return trained


def test_approving_a_flagged_model_needs_a_written_reason(flagged_model, model_admin, clinician):
    """Refused with the warnings quoted and nothing saved; approved with a reason, kept."""
    warnings = model_warnings(user=model_admin, trained_model=flagged_model)
    assert warnings  # flagged "Use with caution"
    web = _client(model_admin)
    url = reverse("model-card", args=[flagged_model.pk])
    refused = web.post(url, {"action": "approve", "reason": "   "})
    assert refused.status_code == 400
    text = refused.content.decode()
    assert "Use with caution" in text and "Write why clinicians should use it anyway" in text
    flagged_model.refresh_from_db()
    assert flagged_model.approval == TrainedModel.DRAFT
    assert not ModelDecision.objects.filter(trained_model=flagged_model).exists()

    reason = "Teaching model: shows what ordering nothing costs."
    assert web.post(url, {"action": "approve", "reason": reason}).status_code == 302
    flagged_model.refresh_from_db()
    assert (flagged_model.approval, flagged_model.approval_reason) == ("approved", reason)
    decision = ModelDecision.objects.get(trained_model=flagged_model)
    assert decision.reason == reason
    assert [w["code"] for w in decision.basis["warnings"]] == [w.code for w in warnings]
    assert flagged_model in list(models_for_user(user=clinician))
    assert reason in web.get(url).content.decode()  # the card shows the decision


def test_a_training_cut_short_is_approved_only_knowing_it(trained_model, model_admin, clinician):
    """An interrupted training's partial model is a draft no clinician sees; its card offers
    approval, which needs a reason naming nothing less than the cut; once approved it is
    usable, still says it was cut short, and the audit keeps the warning."""
    cut = _fitted_draft(trained_model, model_admin)
    TrainedModel.objects.filter(pk=cut.pk).update(
        status=TrainedModel.INTERRUPTED,
        progress_message="Interrupted: the worker died; round r=1 of 8 was kept",
    )
    cut.refresh_from_db()
    assert not cut.is_ready and cut.holds_partial_model
    assert cut not in list(models_for_user(user=clinician))
    codes = [w.code for w in model_warnings(user=model_admin, trained_model=cut)]
    assert codes[0] == "cut_short"
    card = model_card(user=model_admin, trained_model=cut)
    assert card.can_approve and card.needs_reason

    web = _client(model_admin)
    url = reverse("model-card", args=[cut.pk])
    refused = web.post(url, {"action": "approve", "reason": ""})
    assert refused.status_code == 400
    assert "Cut short: the worker died before this training finished" in refused.content.decode()
    cut.refresh_from_db()
    assert (cut.status, cut.approval) == (TrainedModel.INTERRUPTED, TrainedModel.DRAFT)

    reason = "Round 1 already beats ordering nothing on held-out patients; retraining tonight."
    assert web.post(url, {"action": "approve", "reason": reason}).status_code == 302
    cut.refresh_from_db()
    assert (cut.status, cut.approval, cut.cut_short) == ("succeeded", "approved", True)
    assert cut in list(models_for_user(user=clinician))
    after = [w.code for w in model_warnings(user=clinician, trained_model=cut)]
    assert "cut_short" in after  # the home card and model page keep saying so
    decision = ModelDecision.objects.get(trained_model=cut)
    assert "cut_short" in [w["code"] for w in decision.basis["warnings"]]


def test_a_retired_models_cases_stay_readable(trained_model, model_admin, clinician):
    """Retired: gone from the list and its page, but its clinician reads their case, its
    summary and its path on the tree; no new case starts with it."""
    case = case_services.start_case(user=clinician, trained_model=trained_model)
    approval.retire_model(user=model_admin, trained_model=trained_model, reason="superseded")
    assert list(models_for_user(user=clinician)) == []
    web = _client(clinician)
    assert web.get(reverse("model-detail", args=[trained_model.pk])).status_code == 404
    assert web.get(reverse("model-tree", args=[trained_model.pk])).status_code == 404
    assert web.get(reverse("case-detail", args=[case.pk])).status_code == 200
    assert web.get(reverse("case-summary", args=[case.pk])).status_code == 200
    tree = reverse("model-tree", args=[trained_model.pk]) + f"?case={case.pk}"
    assert web.get(tree).status_code == 200
    other = User.objects.create_user("other-doc")
    other.groups.add(Group.objects.get(name=CLINICIANS))
    assert _client(other).get(tree).status_code == 404  # not their case: not their model either
    assert web.get(reverse("case-new") + f"?model={trained_model.pk}").status_code == 404
    assert [d.action for d in ModelDecision.objects.filter(trained_model=trained_model)] == [
        ModelDecision.RETIRE,
        ModelDecision.APPROVE,
    ]


def test_retrain_compares_before_replacing_and_keeping_the_old_is_one_click(
    trained_model, model_admin, clinician, toy_dataset
):
    """After a matrix edit, the retrain is a draft naming the model in use, scored with it on
    the same held-out patients under the new costs (its own score equals its held-out
    figure); keeping the old one retires the retrain and records the comparison and who."""
    matrix = toy_dataset.error_matrices.get(name="Uniform 100")
    matrix.matrix = [[0, 100], [800, 0]]
    matrix.save()
    web = _client(model_admin)
    response = web.post(reverse("model-detail", args=[trained_model.pk]), {"action": "retrain"})
    retrain = TrainedModel.objects.exclude(pk=trained_model.pk).get()
    assert response["Location"] == reverse("model-detail", args=[retrain.pk])
    assert (retrain.approval, retrain.replaces_id) == (TrainedModel.DRAFT, trained_model.pk)
    assert retrain.learner == SELECTOR_LEARNER  # a retrain runs the selector
    retrain = run_training(trained_model_id=retrain.pk)
    compared = retrain.replacement_comparison
    assert compared["comparable"] and compared["n"] == retrain.metrics["n_test_cases"]
    assert compared["new"]["mean"] == pytest.approx(retrain.metrics["mean_total_cost"])
    assert compared["new"]["low"] <= compared["new"]["mean"] <= compared["new"]["high"]
    assert compared["difference"]["mean"] == pytest.approx(
        compared["new"]["mean"] - compared["old"]["mean"]
    )
    card = web.get(reverse("model-card", args=[retrain.pk])).content.decode()
    assert 'id="retrain-table"' in card and f"${compared['old']['mean']:,.2f}" in card
    assert list(models_for_user(user=clinician)) == [trained_model]  # nothing replaced yet

    kept = web.post(reverse("model-card", args=[retrain.pk]), {"action": "keep-old"})
    assert kept["Location"] == reverse("model-card", args=[trained_model.pk])
    retrain.refresh_from_db()
    trained_model.refresh_from_db()
    assert (retrain.approval, trained_model.approval) == ("retired", "approved")
    decision = ModelDecision.objects.get(trained_model=retrain)
    assert (decision.action, decision.user, decision.other_model) == (
        ModelDecision.KEEP_OLD,
        model_admin,
        trained_model,
    )
    assert decision.basis["comparison"] == compared
    assert list(models_for_user(user=clinician)) == [trained_model]


def test_approving_a_retrain_retires_the_old_and_roll_back_restores_it(
    trained_model, model_admin, clinician
):
    """Approving the retrain swaps the two; roll back approves the old one again and retires
    the retrain; each step is one audit row per model touched."""
    with pytest.raises(ValidationError, match="nothing to roll back to"):
        approval.roll_back(user=model_admin, trained_model=trained_model)  # the first approved
    retrain = retrain_with_current_values(user=model_admin, trained_model=trained_model)
    retrain = run_training(trained_model_id=retrain.pk)
    assert retrain.replacement_comparison["comparable"]
    # unchanged values: the old model's score is its own held-out figure
    assert retrain.replacement_comparison["old"]["mean"] == pytest.approx(
        trained_model.metrics["mean_total_cost"]
    )
    retrain = approval.approve_model(user=model_admin, trained_model=retrain, reason="cheaper")
    trained_model.refresh_from_db()
    assert trained_model.approval == TrainedModel.RETIRED
    assert list(models_for_user(user=clinician)) == [retrain]
    card = model_card(user=model_admin, trained_model=retrain)
    assert card.can_roll_back and card.previous == trained_model

    restored = approval.roll_back(user=model_admin, trained_model=retrain)
    retrain.refresh_from_db()
    assert restored == trained_model and retrain.approval == TrainedModel.RETIRED
    assert list(models_for_user(user=clinician)) == [trained_model]
    actions = {
        (d.trained_model_id, d.action, d.other_model_id) for d in ModelDecision.objects.all()
    }
    assert {
        (retrain.pk, ModelDecision.APPROVE, trained_model.pk),
        (trained_model.pk, ModelDecision.RETIRE, retrain.pk),
        (trained_model.pk, ModelDecision.ROLL_BACK, retrain.pk),
        (retrain.pk, ModelDecision.RETIRE, trained_model.pk),
    } <= actions


def test_the_card_lists_what_an_admin_reviews(trained_model, model_admin):
    """Intended use, data source and class mix, prices, matrix, the three strategies with
    intervals that hold their means, limitations and the decision log."""
    card = model_card(user=model_admin, trained_model=trained_model)
    labels = trained_model.dataset.class_labels
    assert [c.label for c in card.class_mix] == labels
    assert sum(c.n for c in card.class_mix) == trained_model.dataset.cases.count()
    assert [row.key for row in card.performance] == [
        "model",
        "order_nothing",
        "order_everything",
    ]
    for row in card.performance:
        assert row.low <= row.mean_total_cost <= row.high, row.key
    page = _client(model_admin).get(reverse("model-card", args=[trained_model.pk]))
    text = page.content.decode()
    for anchor in (
        "intended-use",
        "training-data",
        "card-prices",
        "card-matrix",
        "performance-table",
        "limitations",
        "decision-log",
    ):
        assert f'id="{anchor}"' in text, anchor
    assert escape(TEST_APPROVAL_REASON) in text


def test_the_selection_report_is_read_by_attribute():
    """Any estimator exposing ``selection_report_`` entries gets rows, cheapest first and
    marked chosen; one without it gets none."""
    from types import SimpleNamespace

    from diagnosis.training.selectors.model_card import selection_report

    entries = [
        SimpleNamespace(
            name="eg2", label="EG2", mean_cost=12.5, standard_error=1.0, fit_seconds=0.2
        ),
        SimpleNamespace(
            name="nothing",
            label="Order nothing",
            mean_cost=9.0,
            standard_error=0.5,
            fit_seconds=0.0,
        ),
    ]
    rows = selection_report(SimpleNamespace(selection_report_=entries))
    assert [r.name for r in rows] == ["nothing", "eg2"]
    assert [r.chosen for r in rows] == [True, False]
    assert selection_report(SimpleNamespace()) is None


def test_demo_approval_is_a_reasoned_approval(trained_model, model_admin):
    """approve_for_demo approves a draft with the demo reason, through the same checks."""
    draft = _fitted_draft(trained_model, model_admin)
    approval.approve_for_demo(user=model_admin, trained_model=draft)
    draft.refresh_from_db()
    assert (draft.approval, draft.approval_reason) == ("approved", approval.DEMO_REASON)
    with pytest.raises(PermissionDenied):
        approval.approve_for_demo(
            user=User.objects.create_user("nobody"),
            trained_model=_fitted_draft(trained_model, model_admin),
        )


@pytest.mark.django_db(transaction=True)
def test_the_migration_approves_every_existing_model():
    """A model that existed before 0013 comes out approved (nothing in use disappears from a
    clinician), with the reason; the field's default afterwards is draft."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before = [("diagnosis", "0012_case_matrix_snapshot")]
    after = [("diagnosis", "0013_model_approval")]
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes()
    try:
        executor.migrate(before)
        old_apps = executor.loader.project_state(before).apps
        OldDataset = old_apps.get_model("diagnosis", "Dataset")
        OldTrainedModel = old_apps.get_model("diagnosis", "TrainedModel")
        dataset = OldDataset.objects.create(name="Old data", class_labels=["a", "b"])
        old = OldTrainedModel.objects.create(dataset=dataset, learner="eg2", status="succeeded")
        executor = MigrationExecutor(connection)
        executor.migrate(after)
        new_apps = executor.loader.project_state(after).apps
        migrated = new_apps.get_model("diagnosis", "TrainedModel").objects.get(pk=old.pk)
    finally:  # the schema back as every other test expects it
        executor = MigrationExecutor(connection)
        executor.migrate(latest)
    assert migrated.approval == "approved"
    assert "before approval existed" in migrated.approval_reason
    assert TrainedModel._meta.get_field("approval").default == TrainedModel.DRAFT
