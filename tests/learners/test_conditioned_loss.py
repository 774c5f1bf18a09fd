"""Tests of the conditioned-loss classifier (paper 003, ALGORITHMS.md §5)."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from learners.conditioned_loss import ConditionedLossClassifier
from learners.conditioned_loss._risks import (
    actual_class_belief,
    classify_risk,
    extract_risk,
    reject_risk,
)
from learners.conditioned_loss._subsets import FeatureRoles
from learners.conditioned_loss.parzen import window_average
from learners.costs import CostModel
from learners.serialization import model_from_json

REWARD, PENALTY = 100.0, 1000.0


# ---------------------------------------------------------------- fixtures


def risk_table(action) -> dict[str, float]:
    """The risk of every action the model weighed, keyed "classify" / "reject" / "extract:<k>"."""
    return {r.key: r.risk for r in action.evidence.risks}


def tiny_problem():
    """f0 free (0/1), f1 priced (5.0): class B only where f0 = 0 and f1 = 1."""
    rows = [(0, 0, "A")] * 6 + [(0, 1, "B")] * 3 + [(1, 0, "A")] * 10
    X = np.array([[r[0], r[1]] for r in rows], dtype=float)
    y = np.array([r[2] for r in rows])
    costs = CostModel([0.0, 5.0], free=[0])
    return X, y, costs


def fit_tiny(**params):
    X, y, costs = tiny_problem()
    settings = {
        "test_costs": costs,
        "reward": REWARD,
        "penalty": PENALTY,
        "window_widths": [0.1],
        "min_samples_leaf": 1,
        "random_state": 0,
    }
    settings.update(params)
    return ConditionedLossClassifier(**settings).fit(X, y)


def thyroid_like(n=400, seed=0):
    """Two free answers, two priced labs (one group) and a derived ratio of the labs."""
    rng = np.random.RandomState(seed)
    free = rng.randint(0, 2, size=(n, 2)).astype(float)
    labs = rng.rand(n, 2)
    derived = labs[:, :1] - labs[:, 1:]
    X = np.hstack([free, labs, derived])
    y = np.where(derived[:, 0] > 0.25, 2, np.where(derived[:, 0] < -0.25, 1, 0))
    flip = rng.rand(n) < 0.05
    y[flip] = rng.randint(0, 3, size=flip.sum())
    costs = CostModel(
        [0.0, 0.0, 10.0, 8.0, 0.0],
        discounted=[0.0, 0.0, 7.0, 5.0, 0.0],
        groups=[None, None, "blood", "blood", None],
        derived={4: (2, 3)},
        free=[0, 1],
    )
    return X, y, costs


@pytest.fixture(scope="module")
def thyroid_model():
    X, y, costs = thyroid_like()
    model = ConditionedLossClassifier(
        test_costs=costs, reward=REWARD, penalty=PENALTY, random_state=0
    ).fit(X, y)
    return model, X, y


# ------------------------------------------------------------ risk formulas
def test_risk_formulas_match_a_hand_computation():
    """Classify, reject and extract risks equal the numbers worked out by hand."""
    p, q = np.array([0.7, 0.3]), np.array([0.4, 0.6])
    # classify: 0.7(-70 + 300) + 0.3(-30 + 700) = 161 + 201
    assert classify_risk(p, REWARD, PENALTY) == pytest.approx(362.0)
    # Z = (0.3*0.6, 0.7*0.4) = (0.18, 0.28): 0.7(-18 + 820) + 0.3(-28 + 720)
    assert reject_risk(p, {1: q}, REWARD, PENALTY) == pytest.approx(769.0)
    # a = (0.28, 0.18)/0.46; terms 5 + 600 - 12 = 593 and 5 + 400 - 42 = 363
    assert actual_class_belief(p, q) == pytest.approx([28 / 46, 18 / 46])
    assert extract_risk(p, q, 5.0, REWARD, PENALTY) == pytest.approx((28 * 593 + 18 * 363) / 46)


def test_model_risks_follow_the_formulas_on_a_tiny_problem():
    """next_action's risks use p from the f0-tree and q averaged over the f0 = 0 window."""
    model = fit_tiny()
    action = model.next_action({0: 0.0})
    risks = risk_table(action)
    assert set(risks) == {"classify", "reject", "extract:1"}
    # Laplace leaves: f0 = 0 holds 6 A and 3 B; Y_1 splits on f1 alone: 16 A | 3 B.
    p = np.array([7 / 11, 4 / 11])
    y1_on_a, y1_on_b = np.array([17 / 18, 1 / 18]), np.array([1 / 5, 4 / 5])
    q = (6 * y1_on_a + 3 * y1_on_b) / 9
    assert risks["classify"] == pytest.approx(classify_risk(p, REWARD, PENALTY))
    assert risks["reject"] == pytest.approx(reject_risk(p, {1: q}, REWARD, PENALTY))
    assert risks["extract:1"] == pytest.approx(extract_risk(p, q, 5.0, REWARD, PENALTY))
    best = min(risks, key=risks.get)
    assert action.kind == best.split(":")[0]


def test_empty_window_gives_q_equal_p():
    """With no training case inside the hypercube the estimate falls back to the current p."""
    model = fit_tiny(feature_scaling="range")
    risks = risk_table(model.next_action({0: 0.5}))  # scaled 0.5: 0.5 away from every case
    p = np.array([7 / 11, 4 / 11])
    assert risks["extract:1"] == pytest.approx(extract_risk(p, p, 5.0, REWARD, PENALTY))
    assert risks["reject"] == pytest.approx(reject_risk(p, {1: p}, REWARD, PENALTY))


def test_window_average_falls_back_row_by_row():
    """Only the query whose window is empty takes the fallback; the other gets the mean."""
    distances = np.array([[0.0, 0.05, 0.9], [0.5, 0.6, 0.7]])
    posteriors = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    fallback = np.array([[0.3, 0.7], [0.2, 0.8]])
    q = window_average(distances, 0.1, posteriors, fallback)
    assert q == pytest.approx(np.array([[0.5, 0.5], [0.2, 0.8]]))


# --------------------------------------------------------- features, states
def test_derived_feature_usable_only_once_inputs_known(thyroid_model):
    """The derived ratio enters a state's tree only when both labs are bought."""
    model, _, _ = thyroid_model
    roles = FeatureRoles.from_cost_model(model.cost_model_)
    assert roles.free == (0, 1) and roles.priced == (2, 3)
    for state, tree in enumerate(model.trees_):
        tested = set(tree.feature[tree.feature >= 0].tolist())
        allowed = set(roles.usable(state).tolist())
        assert tested <= allowed
        assert (4 in allowed) == (state == 0b11)
    assert 4 in set(model.trees_[0b11].feature.tolist())  # informative, so actually used


def test_derived_feature_is_fetched_for_free_once_inputs_known(thyroid_model):
    """With both labs known the policy asks for the derived value, at no cost, before deciding."""
    model, X, _ = thyroid_model
    action = model.next_action({0: X[0, 0], 1: X[0, 1], 2: X[0, 2], 3: X[0, 3]})
    assert action.kind == "extract" and action.test == 4 and action.cost == 0.0


def test_derived_feature_is_never_a_bought_candidate(thyroid_model):
    """Risks never list the derived feature as a test to buy."""
    model, X, _ = thyroid_model
    for row in X[:30]:
        action = model.next_action({0: row[0], 1: row[1]})
        assert "extract:4" not in risk_table(action)


def test_too_many_priced_tests_raise_a_clear_error():
    """2^m above max_subsets is refused with a message saying how to raise the bound."""
    X = np.random.RandomState(0).rand(50, 7)
    y = (X[:, 0] > 0.5).astype(int)
    with pytest.raises(ValueError, match=r"2\^7 = 128.*max_subsets=128"):
        ConditionedLossClassifier().fit(X, y)
    ConditionedLossClassifier(max_subsets=128, window_widths=[0.2]).fit(X, y)  # allowed when raised


# ----------------------------------------------------------------- policy
def test_policy_ends_in_classify_or_reject_with_full_risk_tables(thyroid_model):
    """Every case ends in classify or reject; each decision lists every candidate's risk."""
    model, X, _ = thyroid_model
    actions, paths = model.decide_all(X[:60], return_tests=True)
    for action, path in zip(actions, paths, strict=True):
        assert action.kind in {"classify", "reject"}
        assert len(path) == len(set(path))
        names = [r.key for r in action.evidence.risks]
        bought = {t for t in path if t in (2, 3)}
        expected = {"classify", "reject"} | {f"extract:{t}" for t in (2, 3) if t not in bought}
        assert set(names) == expected
        chosen = min(action.evidence.risks, key=lambda r: r.risk).key
        assert chosen == action.kind


def test_classify_expected_cost_uses_the_penalty_matrix(thyroid_model):
    """Classify.expected_cost is sum_i p_i M[i, label] with M = PENALTY off the diagonal."""
    model, X, _ = thyroid_model
    assert model.cost_matrix_ == pytest.approx(PENALTY * (1 - np.eye(3)))
    for action in model.decide_all(X[:40]):
        if action.kind == "classify":
            label = list(model.classes_).index(action.label)
            assert action.expected_cost == pytest.approx(PENALTY * (1 - action.proba[label]))


def test_unavailable_test_is_never_chosen(thyroid_model):
    """A test marked unavailable is neither requested nor listed as a candidate."""
    model, X, _ = thyroid_model
    for blocked in (2, 3):
        actions, paths = model.decide_all(X[:60], unavailable=[blocked], return_tests=True)
        for action, path in zip(actions, paths, strict=True):
            assert blocked not in path
            assert f"extract:{blocked}" not in risk_table(action)


def test_free_features_are_asked_first_at_no_cost(thyroid_model):
    """From an empty case the policy asks the free answers before any priced test."""
    model, X, _ = thyroid_model
    _, paths = model.decide_all(X[:20], return_tests=True)
    for path in paths:
        assert list(path[:2]) == [0, 1]
    assert model.next_action({}).cost == 0.0


def test_predict_returns_known_labels(thyroid_model):
    """predict gives one class per row and predict_proba rows sum to 1."""
    model, X, y = thyroid_model
    predicted = model.predict(X[:50])
    assert set(predicted.tolist()) <= set(model.classes_.tolist())
    assert np.mean(predicted == y[:50]) > 0.5
    assert model.predict_proba(X[:50]).sum(axis=1) == pytest.approx(np.ones(50))


def test_bad_case_input_is_refused(thyroid_model):
    """An out-of-range feature index or a non-numeric value gets a clear error."""
    model, _, _ = thyroid_model
    with pytest.raises(IndexError):
        model.next_action({9: 1.0})
    with pytest.raises(ValueError, match="must be a number"):
        model.next_action({0: "yes"})


# ---------------------------------------------------------- serialization
def test_json_round_trip_gives_identical_actions(thyroid_model):
    """A model reloaded from JSON takes the same actions with the same risks."""
    model, X, _ = thyroid_model
    text = model.to_json()
    json.loads(text)  # plain JSON
    loaded = model_from_json(text)
    assert isinstance(loaded, ConditionedLossClassifier)
    before, paths_before = model.decide_all(X[:80], unavailable=[3], return_tests=True)
    after, paths_after = loaded.decide_all(X[:80], unavailable=[3], return_tests=True)
    assert paths_before == paths_after
    for a, b in zip(before, after, strict=True):
        assert a == b and a.evidence == b.evidence
    assert loaded.window_width_ == pytest.approx(model.window_width_)


# ------------------------------------------------------------- evaluation
def test_evaluate_runs_the_policy(thyroid_model):
    """evaluation.evaluate prices the policy's tests with group discounts and counts referrals."""
    from learners.evaluation import evaluate

    model, X, y = thyroid_model
    report = evaluate(model, X[:80], y[:80])
    assert report.n_cases == 80
    assert report.confusion.sum() == 80
    _, paths = model.decide_all(X[:80], return_tests=True)
    expected = np.mean([model.cost_model_.path_cost(path) for path in paths])
    assert report.mean_test_cost == pytest.approx(expected)


# -------------------------------------------------------- window selection
def test_loss_selection_uses_the_width_with_the_lowest_validation_loss():
    """width_selection='loss' scores every candidate and gives every state the best one."""
    X, y, costs = thyroid_like(seed=1)
    widths = [0.01, 0.1, 0.5]
    model = ConditionedLossClassifier(
        test_costs=costs, window_widths=widths, random_state=0, penalty=PENALTY
    ).fit(X, y)
    assert model.window_validation_.shape == (1, 3)
    best = widths[int(np.argmin(model.window_validation_[0]))]
    assert model.window_width_ == pytest.approx([best] * 4)


def test_posterior_selection_picks_a_width_per_state():
    """width_selection='posterior' takes, per state, the width with the lowest squared error."""
    X, y, costs = thyroid_like(seed=2)
    widths = np.array([0.01, 0.1, 0.5])
    model = ConditionedLossClassifier(
        test_costs=costs, window_widths=widths, width_selection="posterior", random_state=0
    ).fit(X, y)
    scores = model.window_validation_
    assert scores.shape == (4, 3)
    assert np.isnan(scores[0b11]).all()  # nothing left to estimate in the full state
    for state in range(3):
        assert model.window_width_[state] == widths[int(np.argmin(scores[state]))]


def _record_validated_rows(monkeypatch):
    """Spy on the width search: the validation rows of every call to policy_losses."""
    from learners.conditioned_loss import _model

    calls = []
    real = _model.policy_losses

    def spy(model, X_val, y_val, widths):
        calls.append(X_val.copy())
        return real(model, X_val, y_val, widths)

    monkeypatch.setattr(_model, "policy_losses", spy)
    return calls


def test_k_fold_width_search_validates_every_training_case_once_per_repeat(monkeypatch):
    """validation_folds=3, validation_repeats=2: six held-out folds covering each case twice."""
    X, y, costs = thyroid_like(n=150, seed=5)
    X[:, 2] += np.arange(150) * 1e-6  # tell rows apart by one column
    calls = _record_validated_rows(monkeypatch)
    ConditionedLossClassifier(
        test_costs=costs,
        penalty=PENALTY,
        window_widths=[0.05, 0.2],
        validation_folds=3,
        validation_repeats=2,
        random_state=0,
    ).fit(X, y)
    assert len(calls) == 6
    seen = np.concatenate([rows[:, 2] for rows in calls])
    assert np.sort(seen) == pytest.approx(np.sort(np.repeat(X[:, 2], 2)))


def test_single_hold_out_remains_available(monkeypatch):
    """validation_folds=None holds out validation_fraction of the cases once."""
    X, y, costs = thyroid_like(n=120, seed=6)
    calls = _record_validated_rows(monkeypatch)
    ConditionedLossClassifier(
        test_costs=costs,
        window_widths=[0.05, 0.2],
        validation_folds=None,
        validation_fraction=0.25,
        random_state=0,
    ).fit(X, y)
    assert [len(rows) for rows in calls] == [30]


def test_k_fold_score_is_the_case_weighted_mean_of_the_fold_losses(monkeypatch):
    """window_validation_ averages each fold's mean loss weighted by its number of cases."""
    from learners.conditioned_loss import _model

    X, y, costs = thyroid_like(n=101, seed=7)  # folds of 34, 34 and 33 cases
    per_fold = []
    real = _model.policy_losses

    def spy(model, X_val, y_val, widths):
        losses = real(model, X_val, y_val, widths)
        per_fold.append((len(X_val), losses))
        return losses

    monkeypatch.setattr(_model, "policy_losses", spy)
    model = ConditionedLossClassifier(
        test_costs=costs, penalty=PENALTY, window_widths=[0.02, 0.1, 0.4], validation_folds=3
    ).fit(X, y)
    expected = sum(n * losses for n, losses in per_fold) / 101
    assert sorted(n for n, _ in per_fold) == [33, 34, 34]
    assert model.window_validation_[0] == pytest.approx(expected)


def test_width_search_replay_matches_the_policy_run_width_by_width(thyroid_model):
    """policy_losses (one memo per case across widths) equals running decide_all per width."""
    from learners.conditioned_loss._widths import _anyone_right, policy_losses

    model, X, y = thyroid_model
    model = copy.deepcopy(model)
    codes = np.searchsorted(model.classes_, y[:80])
    widths = np.array([0.005, 0.05, 0.3])
    replayed = policy_losses(model, X[:80], codes, widths)
    for w, width in enumerate(widths):
        model.window_width_ = np.full(len(model.trees_), width)
        actions, paths = model.decide_all(X[:80], return_tests=True)
        total = 0.0
        for row, code, action, path in zip(X[:80], codes, actions, paths, strict=True):
            if action.kind == "classify":
                right = action.label == model.classes_[code]
            else:
                right = not _anyone_right(model, row, code, path)
            total += model.cost_model_.path_cost(path) + (-model.reward if right else PENALTY)
        assert replayed[w] == pytest.approx(total / 80)


def test_bad_parameters_are_refused():
    """Bad width selection, penalty, widths, scaling or validation folds give a clear ValueError."""
    X, y, costs = thyroid_like(n=60)
    for params, message in (
        ({"width_selection": "best"}, "width_selection"),
        ({"penalty": -1.0}, "penalty"),
        ({"window_widths": []}, "window_widths"),
        ({"feature_scaling": "zscore"}, "feature_scaling"),
        ({"validation_folds": 1}, "validation_folds"),
        ({"validation_folds": 2.5}, "validation_folds"),
        ({"validation_repeats": 0}, "validation_repeats"),
        ({"validation_folds": 61}, "validation_folds=61 needs at least 61"),
    ):
        with pytest.raises(ValueError, match=message):
            ConditionedLossClassifier(test_costs=costs, **params).fit(X, y)


def test_changing_penalty_after_fit_changes_the_policy_consistently(thyroid_model):
    """set_params(penalty=...) on a fitted model moves cost_matrix_ and the risks with it."""
    model, X, _ = thyroid_model
    other = copy.deepcopy(model).set_params(penalty=5 * PENALTY)
    assert other.cost_matrix_ == pytest.approx(5 * PENALTY * (1 - np.eye(3)))
    known = {0: X[0, 0], 1: X[0, 1]}
    before, after = risk_table(model.next_action(known)), risk_table(other.next_action(known))
    assert after["classify"] != pytest.approx(before["classify"])


def test_zero_price_feature_counts_as_free_without_being_listed():
    """A feature priced 0 is free even when CostModel.free does not name it."""
    roles = FeatureRoles.from_cost_model(CostModel([0.0, 3.0, 0.0, 2.0], derived={2: (1, 3)}))
    assert roles.free == (0,)
    assert roles.priced == (1, 3)
    assert roles.usable(0b01).tolist() == [0, 1]
    assert roles.usable(0b11).tolist() == [0, 1, 2, 3]


def test_unavailable_free_answer_still_reaches_a_decision(thyroid_model):
    """A free answer marked unavailable is skipped and the case is still decided."""
    model, X, _ = thyroid_model
    actions, paths = model.decide_all(X[:20], unavailable=[0], return_tests=True)
    assert all(a.kind in {"classify", "reject"} for a in actions)
    assert all(0 not in path for path in paths)


def test_nominal_features_must_match_exactly_in_the_window():
    """A nominal feature puts every case with another code infinitely far away."""
    from learners.conditioned_loss.parzen import window_distances

    reference = np.array([[0.0, 0.50], [1.0, 0.52], [2.0, 0.9]])
    categorical = np.array([True, False])
    distances = window_distances(np.array([[1.0, 0.5]]), reference, np.array([0, 1]), categorical)
    assert distances[0, 0] == np.inf and distances[0, 2] == np.inf
    assert distances[0, 1] == pytest.approx(0.02)


def test_no_priced_test_means_one_classifier_and_no_extraction():
    """With every feature free the model only asks the answers, then classifies or refers."""
    X, y, _ = thyroid_like(n=120)
    model = ConditionedLossClassifier(test_costs=[0.0] * 5, random_state=0).fit(X, y)
    assert len(model.trees_) == 1
    actions, paths = model.decide_all(X[:10], return_tests=True)
    assert all(a.kind in {"classify", "reject"} for a in actions)
    assert all(set(path) == set(range(5)) for path in paths)
    assert all(set(risk_table(a)) == {"classify", "reject"} for a in actions)


# ------------------------------------------------------ out-of-fold targets
def test_out_of_fold_posteriors_are_not_resubstitution_posteriors():
    """On labels unrelated to X a deep tree is sure of its own cases, but not out of fold."""
    from learners.conditioned_loss._trees import grow_tree, out_of_fold_proba, tree_proba

    rng = np.random.RandomState(0)
    X = rng.rand(300, 3)
    y = rng.randint(0, 2, size=300)
    features = np.arange(3)
    tree = grow_tree(X, y, features, 2, min_samples_leaf=1, max_depth=None, random_state=0)
    resubstitution = tree_proba(tree, X)[np.arange(300), y]
    held_out = out_of_fold_proba(
        X,
        y,
        features,
        2,
        n_folds=5,
        smoothing=0.0,
        min_samples_leaf=1,
        max_depth=None,
        random_state=0,
    )
    assert held_out.shape == (300, 2)
    assert held_out.sum(axis=1) == pytest.approx(np.ones(300))
    assert resubstitution.mean() > 0.95
    assert held_out[np.arange(300), y].mean() < 0.7


def test_out_of_fold_targets_feed_the_parzen_windows():
    """parzen_targets='out_of_fold' averages held-out posteriors, not the trees' own ones."""
    from learners.conditioned_loss._trees import tree_proba

    X, y, costs = thyroid_like(seed=3)
    model = ConditionedLossClassifier(
        test_costs=costs, penalty=PENALTY, random_state=0, parzen_targets="out_of_fold"
    ).fit(X, y)
    resubstitution = [tree_proba(t, model.X_train_, model.leaf_smoothing) for t in model.trees_]
    assert len(model._train_posteriors) == len(model.trees_)
    assert any(
        not np.allclose(a, b) for a, b in zip(model._train_posteriors, resubstitution, strict=True)
    )
    default = ConditionedLossClassifier(test_costs=costs, penalty=PENALTY, random_state=0).fit(X, y)
    for a, b in zip(default._train_posteriors, resubstitution, strict=True):
        assert a == pytest.approx(b)


def test_out_of_fold_model_round_trips_through_json():
    """A model with out-of-fold Parzen targets reloads with identical actions and risks."""
    X, y, costs = thyroid_like(seed=4)
    model = ConditionedLossClassifier(
        test_costs=costs, penalty=PENALTY, random_state=0, parzen_targets="out_of_fold"
    ).fit(X, y)
    loaded = model_from_json(model.to_json())
    assert loaded.parzen_targets == "out_of_fold"
    before = model.decide_all(X[:60])
    after = loaded.decide_all(X[:60])
    assert all(a == b and a.evidence == b.evidence for a, b in zip(before, after, strict=True))


def test_bad_parzen_target_options_are_refused():
    """An unknown parzen_targets or fewer than 2 folds gives a clear ValueError."""
    X, y, costs = thyroid_like(n=60)
    for params, message in (
        ({"parzen_targets": "cv"}, "parzen_targets"),
        ({"parzen_targets": "out_of_fold", "parzen_folds": 1}, "parzen_folds"),
    ):
        with pytest.raises(ValueError, match=message):
            ConditionedLossClassifier(test_costs=costs, **params).fit(X, y)
