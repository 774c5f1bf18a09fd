"""The tree diagram draws the model's own decisions: each node agrees with next_action there."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from thyroid_like import CLASSES, THYROID_TESTS, thyroid_like_rows
from training_helpers import train

from diagnosis.catalog.services.datasets import create_dataset
from diagnosis.clinic.selectors.cases import estimator_for
from diagnosis.clinic.selectors.tree import tree_layout
from diagnosis.shared import learner_registry
from learners.policy import decide
from learners.tree import TreePolicyMixin, other_edge

pytestmark = pytest.mark.django_db

# Missing hypothyroid is dear, a false alarm cheap: frequency and Laplace
# probabilities then disagree on many small leaves, and referral (120) beats
# every class where the leaf is mixed.
SKEWED = [[0, 60, 90], [700, 0, 250], [1500, 300, 0]]
REFER = 120

# Small settings so every learner trains in seconds; the others keep their defaults.
QUICK = {
    "act": {"r": 1},
    "lsid3": {"r": 1},
    "icet": {"generations": 2, "population": 4},
}

TREE_LEARNERS = [
    key
    for key, spec in learner_registry.LEARNERS.items()
    if issubclass(spec.estimator_class(), TreePolicyMixin)
]


def thyroid_like_dataset(name: str, tests: list[dict]):
    """240 thyroid-like patients with ``tests`` and the skewed matrix with referral."""
    rows, labels = thyroid_like_rows(n=240, seed=3)
    return create_dataset(
        name=name,
        class_labels=CLASSES,
        tests=tests,
        rows=rows,
        labels=labels,
        error_matrices=[{"name": "Skewed", "matrix": SKEWED, "reject_cost": REFER}],
    )


@pytest.fixture
def skewed_dataset(db):
    return thyroid_like_dataset("Thyroid-like, skewed", THYROID_TESTS)


def patient_at(tree, node: int, categories) -> dict[int, float] | None:
    """Known values that route a patient from the root to ``node``; None if no value can.

    Numeric edge 0 takes values <= threshold, edge 1 values above it; a test
    met twice on the path narrows the interval.  Nominal edges take their
    branch value; an "other" edge the first of the test's ``categories`` that
    the node names on no edge.
    """
    known: dict[int, float] = {}
    low: dict[int, float] = {}
    high: dict[int, float] = {}
    for parent, edge in tree.path_to(node):
        feature = int(tree.feature[parent])
        threshold = float(tree.threshold[parent])
        if edge == other_edge(tree, parent):
            named = set(tree.branch_value[tree.edges(parent)].tolist())
            known[feature] = next(c for c in categories[feature].tolist() if c not in named)
        elif math.isnan(threshold):
            known[feature] = float(tree.branch_value[edge])
        elif edge == int(tree.edge_start[parent]):
            high[feature] = min(high.get(feature, math.inf), threshold)
        else:
            low[feature] = max(low.get(feature, -math.inf), threshold)
    for feature in set(low) | set(high):
        lo, hi = low.get(feature, -math.inf), high.get(feature, math.inf)
        if not lo < hi or math.isinf(lo) and lo > 0 or math.isinf(hi) and hi < 0:
            return None  # an empty interval: no patient reaches this node
        if math.isinf(hi):
            known[feature] = lo + 1.0
        elif math.isinf(lo):
            known[feature] = hi
        else:
            known[feature] = (lo + hi) / 2.0
    return known


def test_every_registry_tree_learner_is_checked():
    """The tree learners of the registry are found (so the diagram test below covers them)."""
    assert {"eg2", "c45", "act"} <= set(TREE_LEARNERS)


@pytest.mark.parametrize("learner", TREE_LEARNERS)
def test_diagram_decisions_equal_next_action_at_every_node(learner, skewed_dataset, model_admin):
    """For a patient stopping at any node, the drawn decision and probabilities are next_action."""
    trained = train(
        skewed_dataset,
        model_admin,
        learner,
        QUICK.get(learner, {}),
        error_matrix=skewed_dataset.error_matrices.get(),
    )
    assert_diagram_is_the_policy(trained, model_admin, CLASSES)


def assert_diagram_is_the_policy(trained, user, classes) -> dict:
    """Every drawn node's decision and probabilities are next_action's for a patient who
    stops there; returns the layout."""
    layout = tree_layout(user=user, trained_model=trained)
    estimator = estimator_for(trained)
    tree = estimator.tree_
    class_labels = [classes[int(c)] for c in estimator.classes_]
    drawn = {n["id"]: n for n in layout["nodes"]}
    assert sorted(drawn) == list(range(tree.n_nodes))
    checked_leaves = checked_tests = 0
    for node_id, node in drawn.items():
        known = patient_at(tree, node_id, estimator.categories_)
        if known is None:
            continue
        action = estimator.next_action(known)
        if node["is_leaf"]:
            assert action.kind in ("classify", "reject"), (node_id, action)
            conclusion = action
            checked_leaves += 1
        else:
            feature = int(tree.feature[node_id])
            if feature in known:
                continue  # the path already tested it: no patient waits on it here
            assert action.kind == "extract" and action.test == feature, (node_id, action)
            # What the model would conclude for this patient now, by the library's own rule.
            conclusion = decide(
                action.evidence.proba,
                classes=list(estimator.classes_),
                cost_matrix=estimator.cost_matrix_,
                reject_cost=estimator.reject_cost_,
            )
            assert node["expected_cost"] == pytest.approx(action.evidence.conclude_cost)
            checked_tests += 1
        expected_label = "Refer" if conclusion.kind == "reject" else classes[int(conclusion.label)]
        assert node["decision_kind"] == conclusion.kind, node_id
        assert node["decision"] == expected_label, node_id
        assert node["expected_cost"] == pytest.approx(conclusion.expected_cost)
        assert list(node["proba"]) == class_labels
        assert list(node["proba"].values()) == pytest.approx(list(conclusion.evidence.proba))
    assert checked_leaves == tree.n_leaves, "every leaf has a patient who ends there"
    assert checked_tests > 0 or tree.n_nodes == 1
    return layout


def test_a_one_vs_rest_split_is_drawn_as_the_answer_and_not_it(model_admin):
    """ACT sets "asymptomatic" against the other chest pains: the diagram's branches say
    "Chest pain: asymptomatic" and "Chest pain: not asymptomatic", and every node's drawn
    decision is next_action's."""
    rng = np.random.default_rng(0)
    pain = rng.integers(0, 4, 300)
    level = rng.normal(size=300)
    labels = ((pain == 3) ^ (level > 0)).astype(int)
    flip = rng.random(300) < 0.05
    labels[flip] = 1 - labels[flip]
    kinds = ["typical", "atypical", "non-anginal", "asymptomatic"]
    dataset = create_dataset(
        name="Chest pain",
        class_labels=["healthy", "sick"],
        tests=[
            {
                "name": "cp",
                "label": "Chest pain",
                "kind": "nominal",
                "price": 1.0,
                "discounted_price": 1.0,
                "choices": [{"code": c, "label": k} for c, k in enumerate(kinds)],
            },
            {"name": "level", "label": "Level", "price": 10.0, "discounted_price": 10.0},
        ],
        rows=[[float(p), float(v)] for p, v in zip(pain, level, strict=True)],
        labels=labels.tolist(),
        error_matrices=[{"name": "Even", "matrix": [[0, 200], [200, 0]]}],
    )
    trained = train(
        dataset, model_admin, "act", {"r": 1}, error_matrix=dataset.error_matrices.get()
    )
    layout = assert_diagram_is_the_policy(trained, model_admin, ["healthy", "sick"])
    texts = json.dumps(layout)
    assert "Chest pain: asymptomatic" in texts and "Chest pain: not asymptomatic" in texts


@pytest.fixture
def eg2_skewed(skewed_dataset, model_admin):
    return train(
        skewed_dataset, model_admin, "eg2", error_matrix=skewed_dataset.error_matrices.get()
    )


def split_case(trained, clinician):
    """A case with the first advised test answered and the second one unavailable."""
    from diagnosis.clinic.selectors.cases import case_state
    from diagnosis.clinic.services import cases
    from diagnosis.clinic.services import step as step_service

    tests = {t.name: t for t in trained.dataset.tests.all()}
    for row in trained.dataset.cases.order_by("id"):
        case = cases.start_case(user=clinician, trained_model=trained)
        first = case_state(user=clinician, case=case).advice
        if first.kind != "extract":
            continue
        test = tests[first.test_name]
        value = row.values[test.index]
        step_service.take_step(
            user=clinician, case=case, action="result", test=test.name, value=value
        )
        second = case_state(user=clinician, case=case).advice
        if second.kind != "extract":
            continue
        blocked = tests[second.test_name]
        step_service.take_step(user=clinician, case=case, action="unavailable", test=blocked.name)
        return case, test, value, blocked
    raise AssertionError("no patient reaches a second test")


def test_case_path_carries_values_and_shares_from_the_one_walk(eg2_skewed, clinician):
    """The path is the learner's walk; shares are reach's, split by an unavailable test."""
    from diagnosis.clinic.selectors.cases import case_state

    case, test, value, blocked = split_case(eg2_skewed, clinician)
    layout = tree_layout(user=clinician, trained_model=eg2_skewed, case=case)
    estimator = estimator_for(eg2_skewed)
    tree = estimator.tree_
    state = case_state(user=clinician, case=case)
    assert layout["highlight"] == estimator.decision_path_nodes(state.known, state.unavailable)
    reach = tree.reach(state.known, state.unavailable)
    nodes = {n["id"]: n for n in layout["nodes"]}
    # Every end of the walk carries reach's share of the patient; the root carries all of it.
    assert nodes[0]["share"] == pytest.approx(1.0)
    for end, weight in reach.ends.items():
        assert nodes[end]["share"] == pytest.approx(weight)
    assert sum(nodes[end]["share"] for end in reach.ends) == pytest.approx(1.0)
    # At the unavailable test, the patient is split over the branches by their training shares.
    split = [n for n in layout["highlight"] if int(tree.feature[n]) == blocked.index]
    assert split, "the unavailable test is on the path"
    for n in split:
        assert nodes[n]["patient"]["status"] == "unavailable"
        for e in tree.edges(n):
            child = int(tree.child[e])
            if float(tree.branch_weight[e]) > 0:
                assert nodes[child]["share"] == pytest.approx(
                    nodes[n]["share"] * float(tree.branch_weight[e])
                )
    on_path_edges = [e for e in layout["edges"] if e["share"] is not None]
    assert all(e["share"] == nodes[e["target"]]["share"] for e in on_path_edges)
    assert any(e["share"] < 1.0 for e in on_path_edges)
    # The answered test shows the patient's own value, in the test's unit.
    root = nodes[0]
    assert int(tree.feature[0]) == test.index
    unit = f" {test.unit}" if test.unit else ""
    assert root["patient"] == {"status": "known", "text": f"{value:g}{unit}", "value": value}
    assert layout["path"][0]["node"] == 0
    taken = layout["path"][0]["branches"]
    assert len(taken) == 1 and taken[0]["label"] == nodes[layout["highlight"][1]]["edge_label"]
    # Nodes off the path say nothing about the patient.
    off = [n for n in layout["nodes"] if n["id"] not in set(layout["highlight"])]
    assert off and all(n["patient"] is None and n["share"] is None for n in off)


def test_drawing_details_are_the_layouts_decisions(eg2_skewed, clinician):
    """The details panel of every node states the model's own decision and the node's cases."""
    from diagnosis import figures

    case, _, _, _ = split_case(eg2_skewed, clinician)
    layout = tree_layout(user=clinician, trained_model=eg2_skewed, case=case)
    drawing = figures.tree_drawing(layout)
    estimator = estimator_for(eg2_skewed)
    tree = estimator.tree_
    assert len(drawing["nodes"]) == tree.n_nodes
    for node in layout["nodes"]:
        rows = {r["label"]: r["value"] for r in drawing["details"][str(node["id"])]}
        decision = estimator.node_decision(node["id"])
        label = "Refer" if decision.kind == "reject" else CLASSES[int(decision.label)]
        assert rows["Conclusion" if node["is_leaf"] else "If stopped here"] == label
        assert rows["Expected cost of that conclusion"] == f"${decision.expected_cost:,.2f}"
        cases = float(tree.class_weight[node["id"]].sum())
        assert rows["Training cases"].startswith(f"{round(cases):,} case")
        if node["id"] != 0:
            assert rows["Reached by"].endswith(node["edge_label"])


def test_a_test_the_patient_has_had_or_cannot_have_shows_no_price(eg2_skewed, clinician):
    """Nodes of the answered test read "done", of the unavailable one "unavailable"; others a
    price: "$0.00" on a done test read as "free" on the drawing."""
    from diagnosis import figures

    case, test, _, blocked = split_case(eg2_skewed, clinician)
    layout = tree_layout(user=clinician, trained_model=eg2_skewed, case=case)
    drawing = figures.tree_drawing(layout)
    cards = {n["id"]: n for n in drawing["nodes"]}
    statuses = {test.name: "done", blocked.name: "unavailable"}
    tree = estimator_for(eg2_skewed).tree_
    seen = set()
    for node in layout["nodes"]:
        if node["is_leaf"]:
            continue
        above = set(tree.path_tests(node["id"])) - {blocked.index}
        asked_above = "asked above" if int(tree.feature[node["id"]]) in above else None
        status = statuses.get(node["test_name"]) or asked_above
        assert node["test_status"] == status
        price_row = {r["label"]: r["value"] for r in drawing["details"][str(node["id"])]}
        if status is None:
            assert node["text"].endswith(f"(${node['price']:,.2f})")
            assert price_row["Price here"] == f"${node['price']:,.2f}"
            continue
        seen.add(status)
        assert node["text"] == f"{node['test_label']} ({status})"
        assert cards[node["id"]]["subtitle"].startswith(f"{status} · ")
        assert price_row["Price here"].startswith("none: ")
    assert {"done", "unavailable"} <= seen


@pytest.fixture
def grouped_labs_dataset(db):
    """THYROID_TESTS with the four labs in one blood draw: $2.00 each once one is drawn."""
    labs = {"TSH", "T3", "TT4", "T4U"}
    tests = [
        {**t, "group": "blood", "discounted_price": 2.0} if t["name"] in labs else t
        for t in THYROID_TESTS
    ]
    return thyroid_like_dataset("Thyroid-like, one blood draw", tests)


def test_drawn_prices_on_a_path_add_up_to_what_the_walk_charges(
    grouped_labs_dataset, model_admin, clinician
):
    """On every root-to-leaf path the drawn prices sum to the model's CostModel.path_cost of
    the path's tests: a test asked again reads "asked above" (free), a lab after another one
    of its blood draw the group's $2.00, not today's full price."""
    trained = train(
        grouped_labs_dataset,
        model_admin,
        "eg2",
        {"w": 0.0},
        error_matrix=grouped_labs_dataset.error_matrices.get(),
    )
    layout = tree_layout(user=clinician, trained_model=trained)
    tree = estimator_for(trained).tree_
    cost_model = estimator_for(trained).cost_model_
    drawn = {n["id"]: n for n in layout["nodes"]}
    statuses, discounted = set(), 0
    for node_id, node in drawn.items():
        if not node["is_leaf"]:
            continue
        path = [ancestor for ancestor, _ in tree.path_to(node_id)]
        charged = cost_model.path_cost([int(tree.feature[a]) for a in path])
        assert sum(drawn[a]["price"] for a in path) == pytest.approx(charged), node_id
        for a in path:
            statuses.add(drawn[a]["test_status"])
            discounted += drawn[a]["price"] == pytest.approx(2.0)
    assert "asked above" in statuses, "the tree asks some test twice on a path"
    assert discounted > 0, "some lab follows another of its blood draw"
