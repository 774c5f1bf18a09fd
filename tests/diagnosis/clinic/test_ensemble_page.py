"""The forest / ensemble page: member trees as small multiples, and where a case is in each."""

from __future__ import annotations

import pytest
from django.urls import reverse
from login_helpers import login_request
from training_helpers import train

from diagnosis.clinic.selectors.cases import compute_case_state, estimator_for
from diagnosis.clinic.selectors.ensemble import ensemble_view, model_is_ensemble
from diagnosis.clinic.services import cases as case_services
from diagnosis.clinic.services import step as step_service
from diagnosis.training.models import TrainedModel

PASSWORD = "pw-for-tests-123"  # the password tests/diagnosis/conftest.py gives every user


@pytest.fixture
def forest(toy_dataset, model_admin) -> TrainedModel:
    return train(toy_dataset, model_admin, "budget_rf", {"max_trees": 6})


@pytest.fixture
def boosted(toy_dataset, model_admin) -> TrainedModel:
    return train(toy_dataset, model_admin, "boosting", {"n_trials": 4})


def _walk_until_some_finished(case, clinician):
    """Record the advised tests' results (a diseased-looking patient) until at least one tree
    has finished while the case still waits on a test, or the model concludes."""
    values = {"glucose": 190.0, "insulin": 150.0, "sex": 1.0}
    for _ in range(4):
        state = compute_case_state(case)
        if state.advice.kind != "extract":
            return state
        test = case.trained_model.dataset.tests.get(index=state.advice.test_index)
        step_service.record_result(user=clinician, case=case, test=test, value=values[test.name])
        case.refresh_from_db()
    return compute_case_state(case)


@pytest.mark.parametrize("which", ["forest", "boosted"])
def test_members_status_is_the_learners_own_walk(which, request, clinician):
    """Each member's finished/waiting status is its member_reach frontier, and the advised
    test's count equals the advice's Evidence.waiting of members."""
    trained = request.getfixturevalue(which)
    case = case_services.start_case(user=clinician, trained_model=trained)
    state = _walk_until_some_finished(case, clinician)
    view = ensemble_view(user=clinician, trained_model=trained, case=case)
    estimator = estimator_for(trained)
    reaches = estimator.member_reach(state.known, state.unavailable)
    assert view.n_members == len(reaches) == len(view.members)
    for member, reach in zip(view.members, reaches, strict=True):
        assert member.status == ("waiting" if reach.frontier else "finished")
        assert member.layout is not None and member.layout["highlight"] == reach.visited
    assert view.n_finished == sum(1 for r in reaches if not r.frontier)
    assert view.n_finished + view.n_waiting == view.n_members
    if state.advice.kind == "extract":
        advised = state.advice.test_label
        assert view.advised_test == advised
        rows = {label: (count, share) for label, count, share in view.waiting_by_test}
        evidence = state.advice.evidence
        if which == "forest":
            assert rows[advised][0] == evidence.waiting
            assert evidence.members == view.n_members
        else:
            assert rows[advised][1] == pytest.approx(evidence.waiting / evidence.members)
        assert sum(m.waits_on_advised for m in view.members) == rows[advised][0]
    else:
        assert view.n_waiting == 0


def test_boosting_votes_are_its_alphas(boosted, model_admin):
    """A boosted ensemble's member votes are its alphas, and their shares sum to one."""
    view = ensemble_view(user=model_admin, trained_model=boosted)
    alphas = list(estimator_for(boosted).alphas_)
    assert [m.vote for m in view.members] == pytest.approx(alphas)
    assert sum(m.vote_share for m in view.members) == pytest.approx(1.0)
    assert not view.has_patient and all(m.status == "" for m in view.members)


def test_a_single_tree_is_not_an_ensemble(trained_model, model_admin):
    """An EG2 tree has no members page: the selector says so and the page says why."""
    assert not model_is_ensemble(trained_model)
    assert ensemble_view(user=model_admin, trained_model=trained_model) is None


def test_page_draws_every_tree_and_opens_one(client, forest, clinician):
    """The page shows one small multiple per tree, the case's counts, and ?tree=k opens tree k
    in the zoomable viewer; a bad tree number is a 400 naming the range."""
    case = case_services.start_case(user=clinician, trained_model=forest)
    assert client.login(request=login_request(), username=clinician.username, password=PASSWORD)
    url = reverse("model-ensemble", args=[forest.pk])
    page = client.get(url + f"?case={case.pk}")
    assert page.status_code == 200
    html = page.content.decode()
    view = page.context["view"]
    assert html.count('class="tree-thumb"') == view.n_members
    assert f"of {view.n_members} trees" in html
    if view.advice_kind == "extract":
        assert (
            f"{int(view.advised_waiting)} of the {view.n_members} trees are waiting on it" in html
        )
    opened = client.get(url + f"?case={case.pk}&tree=2")
    assert opened.status_code == 200
    assert 'data-tree="tree-details"' in opened.content.decode()
    assert opened.context["chosen"].index == 1
    bad = client.get(url + f"?tree={view.n_members + 1}")
    assert bad.status_code == 400 and f"1 to {view.n_members}" in bad.json()["error"]


def test_another_clinicians_case_is_missing(client, forest, clinician, other_clinician):
    """Someone else's case on the page answers 404, as a missing one does."""
    case = case_services.start_case(user=clinician, trained_model=forest)
    assert client.login(
        request=login_request(), username=other_clinician.username, password=PASSWORD
    )
    url = reverse("model-ensemble", args=[forest.pk]) + f"?case={case.pk}"
    assert client.get(url).status_code == 404


def test_model_page_and_case_link_to_the_trees(client, forest, trained_model, clinician):
    """The model page of a forest and a case using it link to the trees page; a single tree's
    model page does not."""
    assert client.login(request=login_request(), username=clinician.username, password=PASSWORD)
    url = reverse("model-ensemble", args=[forest.pk])
    assert url in client.get(reverse("model-detail", args=[forest.pk])).content.decode()
    assert "model-ensemble" not in str(
        client.get(reverse("model-detail", args=[trained_model.pk])).content
    )
    assert (
        reverse("model-ensemble", args=[trained_model.pk])
        not in client.get(reverse("model-detail", args=[trained_model.pk])).content.decode()
    )
    case = case_services.start_case(user=clinician, trained_model=forest)
    screen = client.get(reverse("case-detail", args=[case.pk])).content.decode()
    assert f"{url}?case={case.pk}" in screen
    page = client.get(reverse("model-ensemble", args=[trained_model.pk]))
    assert page.status_code == 200 and "not a forest or an ensemble" in page.content.decode()


def test_home_card_links_a_forest_to_its_trees(client, forest, trained_model, clinician):
    """On the home page a forest's card links to its trees, a single tree's card to its tree."""
    assert client.login(request=login_request(), username=clinician.username, password=PASSWORD)
    html = client.get(reverse("home")).content.decode()
    forest_card = html.split(f'id="model-{forest.pk}"')[1].split("</article>")[0]
    tree_card = html.split(f'id="model-{trained_model.pk}"')[1].split("</article>")[0]
    assert reverse("model-ensemble", args=[forest.pk]) in forest_card
    assert "view its trees" in forest_card
    assert reverse("model-tree", args=[trained_model.pk]) in tree_card


def test_the_advice_says_how_many_trees_wait_on_the_test(forest, clinician):
    """The forest's advice to order a test words how many of its trees wait on that test."""
    case = case_services.start_case(user=clinician, trained_model=forest)
    state = compute_case_state(case)
    assert state.advice.kind == "extract"
    evidence = state.advice.evidence
    text = " ".join(state.explanation.why)
    waiting, members = int(evidence.waiting), int(evidence.members)
    trees = "tree is" if waiting == 1 else "trees are"
    assert f"{waiting} of the model's {members} {trees} waiting on" in text
