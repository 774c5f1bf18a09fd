"""The conditioned-loss model's own page: its risks for a patient and the trees it consults."""

from __future__ import annotations

import re

from django.urls import reverse

from diagnosis.clinic.selectors.cases import case_state, estimator_for
from diagnosis.clinic.selectors.decision import diagram_kind
from diagnosis.clinic.services import cases
from diagnosis.clinic.services import step as step_service


def test_every_diagram_link_of_a_conditioned_loss_case_works_and_agrees(
    thyroid_model, clinician, client
):
    """Case, home and model page all send to its decision page; none calls it a forest."""
    client.force_login(clinician)
    case = cases.start_case(user=clinician, trained_model=thyroid_model)
    assert diagram_kind(thyroid_model) == "decision"
    screen = client.get(reverse("case-detail", args=[case.pk])).content.decode()
    decision_url = reverse("model-decision", args=[thyroid_model.pk]) + f"?case={case.pk}"
    assert f'href="{decision_url}"' in screen
    assert "which trees this patient has finished" not in screen
    # the old trees link answers (no 500) and sends to the decision page
    old = client.get(reverse("model-ensemble", args=[thyroid_model.pk]) + f"?case={case.pk}")
    assert old.status_code == 200
    assert reverse("model-decision", args=[thyroid_model.pk]) in old.content.decode()
    model_page = client.get(reverse("model-detail", args=[thyroid_model.pk])).content.decode()
    assert "View how it decides" in model_page and "View its trees" not in model_page
    home = client.get(reverse("home")).content.decode()
    assert "view how it decides" in home and "view the tree" not in home


def test_the_decision_page_shows_the_patients_risks_and_the_trees_it_consults(
    thyroid_model, clinician, client
):
    """After the free questions, the page lists the model's risks and marks the current tree
    and one consulted tree per test still for sale; a drawn tree keeps the page light."""
    from thyroid_like import thyroid_like_rows

    rows, _ = thyroid_like_rows()
    tests = {t.index: t for t in thyroid_model.dataset.tests.all()}
    client.force_login(clinician)
    case = cases.start_case(user=clinician, trained_model=thyroid_model)
    state = case_state(user=clinician, case=case)
    while state.advice.kind == "extract" and not state.explanation.risks:
        test = tests[state.advice.test_index]
        step_service.record_result(user=clinician, case=case, test=test, value=rows[0][test.index])
        state = case_state(user=clinician, case=case)
    assert state.explanation.risks
    url = reverse("model-decision", args=[thyroid_model.pk]) + f"?case={case.pk}"
    response = client.get(url)
    assert response.status_code == 200
    page = response.content.decode()
    for row in state.explanation.risks:
        assert row["money"] in page, row
    priced = [int(f) for f in estimator_for(thyroid_model).priced_tests_]
    for_sale = [f for f in priced if f not in state.known and f not in state.unavailable]
    assert page.count('<tr class="current">') == 1
    assert page.count('<tr class="consulted">') == len(for_sale) > 0
    assert len(re.findall(r"Draw tree \d+", page)) == 2 ** len(priced)
    drawn = client.get(url + "&tree=1")
    assert drawn.status_code == 200 and 'id="chosen"' in drawn.content.decode()
    assert len(drawn.content) < 300_000  # one tree drawn, not every tree
    assert client.get(url + "&tree=0").status_code == 400
    assert client.get(url + "&tree=x").status_code == 400


def test_a_tree_model_has_no_decision_page_and_says_where_its_tree_is(
    trained_model, clinician, client
):
    """An EG2 model's diagram is its tree; its decision page says so and links there."""
    assert diagram_kind(trained_model) == "tree"
    client.force_login(clinician)
    page = client.get(reverse("model-decision", args=[trained_model.pk])).content.decode()
    assert "not a conditioned-loss model" in page
    assert reverse("model-tree", args=[trained_model.pk]) in page
