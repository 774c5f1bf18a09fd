"""ACT: faithfulness to paper 000 §3 and the shared tree-model contract."""

import json

import numpy as np
import pytest

from learners import evaluate
from learners.act import ACTClassifier
from learners.act import _engine as engine
from learners.act._encoding import encode_prices
from learners.costs import CostModel
from learners.policy import Classify, Extract
from learners.synthetic import make_parity
from learners.tree import C45Classifier, EG2Classifier


def _mixed_data(seed=0, n=160):
    """Numeric + nominal features with missing values and a noisy concept."""
    rng = np.random.default_rng(seed)
    X = np.column_stack(
        [
            rng.normal(size=n),
            rng.integers(0, 3, n).astype(float),
            rng.normal(size=n),
            rng.integers(0, 2, n).astype(float),
            rng.uniform(size=n),
        ]
    )
    y = ((X[:, 0] + (X[:, 1] == 2) + 0.5 * rng.normal(size=n)) > 0.7).astype(int)
    X[rng.random(X.shape) < 0.08] = np.nan
    return X, y


def _grouped_costs():
    return CostModel(
        [1.0, 5.0, 20.0, 8.0, 12.0],
        discounted=[1.0, 5.0, 4.0, 8.0, 3.0],
        groups=[None, None, "blood", None, "blood"],
    )


def _mixed_kwargs(error_cost, **more):
    """ACT's keywords for :func:`_mixed_data`: the grouped prices, both errors at
    ``error_cost``, features 1 and 3 nominal, and ``more``."""
    return dict(
        test_costs=_grouped_costs(),
        cost_matrix=[[0, error_cost], [error_cost, 0]],
        categorical_features=[1, 3],
        **more,
    )


@pytest.fixture(scope="module")
def parity():
    # paper 000's boolean XOR: five relevant attributes, five irrelevant ones
    data = make_parity(
        2000, n_relevant=5, n_irrelevant=5, relevant_cost=10.0, irrelevant_cost=1.0, random_state=3
    )
    half = 1000
    return data, (data.X[:half], data.y[:half]), (data.X[half:], data.y[half:])


def test_r0_reproduces_eg2_tree_and_predictions():
    """r = 0 gives EG2's tree exactly (same arrays, same predictions) with the same w and cf."""
    X, y = _mixed_data()
    kwargs = dict(
        test_costs=_grouped_costs(), cost_matrix=[[0, 30], [60, 0]], categorical_features=[1, 3]
    )
    act = ACTClassifier(r=0, w=0.7, cf=0.3, **kwargs).fit(X, y)
    eg2 = EG2Classifier(w=0.7, cf=0.3, **kwargs).fit(X, y)
    assert act.tree_.to_dict() == eg2.tree_.to_dict()
    np.testing.assert_array_equal(act.predict(X), eg2.predict(X))
    np.testing.assert_allclose(act.predict_proba(X), eg2.predict_proba(X))


def test_finds_the_relevant_attributes_of_a_parity_concept(parity):
    """On XOR plus cheap irrelevant attributes, ACT (r=5, pruned lookahead) tests only XOR's."""
    data, (X, y), _ = parity
    model = ACTClassifier(
        test_costs=data.test_costs,
        cost_matrix=[[0, 200], [200, 0]],
        r=5,
        random_state=0,
        prune_lookahead=True,
    ).fit(X, y)
    used = set(model.tree_.feature[model.tree_.feature >= 0].tolist())
    assert used == set(data.relevant.tolist())


def test_parity_cost_clearly_below_eg2_and_c45(parity):
    """Held-out total cost of ACT on XOR is at least 30% below EG2's and C4.5's."""
    data, (X, y), (X_test, y_test) = parity
    kwargs = dict(test_costs=data.test_costs, cost_matrix=[[0, 200], [200, 0]])
    act = ACTClassifier(r=5, random_state=0, prune_lookahead=True, **kwargs).fit(X, y)
    act_cost = evaluate(act, X_test, y_test).mean_total_cost
    for other in (EG2Classifier(**kwargs), C45Classifier(**kwargs)):
        other_cost = evaluate(other.fit(X, y), X_test, y_test).mean_total_cost
        assert act_cost < 0.7 * other_cost, (type(other).__name__, act_cost, other_cost)


def test_free_errors_shrink_the_tree_to_one_leaf():
    """When misclassification costs almost nothing, no test is worth buying: one leaf."""
    X, y = _mixed_data()
    model = ACTClassifier(
        test_costs=_grouped_costs(),
        cost_matrix=[[0, 0.01], [0.01, 0]],
        categorical_features=[1, 3],
        random_state=0,
    ).fit(X, y)
    assert model.tree_.n_nodes == 1
    assert isinstance(model.next_action({}), Classify)


def test_costly_errors_reach_c45_accuracy():
    """With huge error costs ACT's held-out accuracy is at least close to C4.5's."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(y))
    train, test = order[:380], order[380:]
    kwargs = dict(test_costs=np.linspace(1, 10, X.shape[1]), cost_matrix=[[0, 1e6], [1e6, 0]])
    act = ACTClassifier(r=2, random_state=0, **kwargs).fit(X[train], y[train])
    c45 = C45Classifier(**kwargs).fit(X[train], y[train])
    act_accuracy = np.mean(act.predict(X[test]) == y[test])
    c45_accuracy = np.mean(c45.predict(X[test]) == y[test])
    assert act_accuracy >= c45_accuracy - 0.03


def test_same_seed_same_tree_and_json_round_trip():
    """Fits are reproducible with random_state, and JSON keeps tree, policy and estimated cost."""
    X, y = _mixed_data(1)
    kwargs = dict(
        test_costs=_grouped_costs(),
        cost_matrix=[[0, 50], [80, 0]],
        categorical_features=[1, 3],
        random_state=7,
        r=3,
    )
    a = ACTClassifier(**kwargs).fit(X, y)
    b = ACTClassifier(**kwargs).fit(X, y)
    assert a.tree_.to_dict() == b.tree_.to_dict()
    loaded = ACTClassifier.from_json(a.to_json())
    assert loaded.tree_.to_dict() == a.tree_.to_dict()
    assert loaded.estimated_cost_ == a.estimated_cost_
    np.testing.assert_allclose(loaded.predict_proba(X), a.predict_proba(X))
    assert loaded.next_action({}) == a.next_action({})
    assert json.loads(a.to_json())["learner"] == "ACTClassifier"


def test_policy_asks_for_the_root_test_with_its_marginal_cost():
    """next_action on an empty case asks for the root's test, priced by the cost model."""
    X, y = _mixed_data(2)
    costs = _grouped_costs()
    model = ACTClassifier(
        test_costs=costs,
        cost_matrix=[[0, 500], [500, 0]],
        categorical_features=[1, 3],
        random_state=0,
    ).fit(X, y)
    action = model.next_action({})
    assert isinstance(action, Extract)
    assert action.test == model.tree_.feature[0]
    assert action.cost == costs.marginal_cost(action.test, ())


def test_progress_callback_reaches_one_and_is_not_serialized():
    """The callback sees non-decreasing fractions ending at 1, also while the inner CV
    grows its trees (so a stop request is heard there); to_json still works."""
    X, y = _mixed_data(3)
    seen = []
    messages = []
    model = ACTClassifier(
        cost_matrix=[[0, 100], [100, 0]],
        random_state=0,
        r=2,
        progress_callback=lambda fraction, message: (
            seen.append(fraction),
            messages.append(message),
        ),
    )
    model.fit(X, y)
    assert seen and seen[-1] == 1.0
    assert any(message.startswith("choosing settings") for message in messages)
    assert all(a <= b + 1e-12 for a, b in zip(seen, seen[1:], strict=False))
    text = model.to_json()
    assert "progress_callback" not in text
    restored = ACTClassifier.from_json(text)
    assert restored.progress_callback is None
    np.testing.assert_array_equal(restored.predict_proba(X), model.predict_proba(X))


def test_estimated_cost_is_total_of_the_tree_on_training_data():
    """estimated_cost_ equals tcost + mcost/|E| recomputed independently for a one-leaf tree."""
    X, y = _mixed_data(4)
    model = ACTClassifier(cost_matrix=[[0, 0.01], [0.01, 0]], cf=0.25, random_state=0).fit(X, y)
    counts = np.bincount(y).astype(float)
    n = counts.sum()
    label = int(np.argmin((counts + 1) @ model.cost_matrix_))
    e = n - counts[label]
    coeff = 0.6744897501960817**2
    pr = (e + 0.5 + coeff / 2 + np.sqrt(coeff * ((e + 0.5) * (1 - (e + 0.5) / n) + coeff / 4))) / (
        n + coeff
    )
    expected = n * pr * 0.01 / n  # EE * avgpen / |E|, K = 2 so avgpen = M[other, label]
    assert model.estimated_cost_ == pytest.approx(expected, rel=1e-9)


def test_compiled_pricing_matches_cost_model():
    """The compiled marginal cost agrees with CostModel.marginal_cost (groups, derived, free)."""
    model = CostModel(
        [1.0, 22.78, 11.41, 14.51, 11.41, 0.0],
        discounted=[1.0, 20.68, 9.31, 12.41, 9.31, 0.0],
        groups=[None, "A", "A", "A", "A", None],
        derived={5: (3, 4)},
        free=[0],
    )
    prices = encode_prices(model)
    rng = np.random.default_rng(0)
    for _ in range(200):
        done_set = {int(t) for t in np.flatnonzero(rng.random(6) < 0.3)}
        done = np.zeros(6, dtype=np.int64)
        for t in done_set:
            engine.mark_done(t, done, prices, 1)
        for t in range(6):
            assert engine.marginal_cost(t, done, prices) == pytest.approx(
                model.marginal_cost(t, done_set)
            )


def test_bad_parameters_are_rejected_clearly():
    """Invalid r, stop_rule, cf, threshold_samples, ee, tune, tune_folds or lookahead_score
    raise ValueError naming the parameter."""
    X, y = _mixed_data()
    for params, word in [
        ({"r": -1}, "r"),
        ({"stop_rule": "never"}, "stop_rule"),
        ({"cf": 1.5}, "cf"),
        ({"threshold_samples": "all"}, "threshold_samples"),
        ({"ee": "approx"}, "ee"),
        ({"tune": "maybe"}, "tune"),
        ({"tune_folds": 1}, "tune_folds"),
        ({"lookahead_score": "max"}, "lookahead_score"),
    ]:
        with pytest.raises(ValueError, match=word):
            ACTClassifier(**params).fit(X, y)


def test_parallel_candidates_give_the_same_tree():
    """n_jobs=2 grows the inner-CV trees and scores candidates in threads, yet chooses
    the same settings and grows exactly the n_jobs=1 tree."""
    X, y = _mixed_data(5, n=240)
    kwargs = _mixed_kwargs(300, random_state=11, r=4)
    serial = ACTClassifier(**kwargs).fit(X, y)
    parallel = ACTClassifier(n_jobs=2, **kwargs).fit(X, y)
    assert serial.tree_.n_nodes > 1
    assert parallel.tree_.to_dict() == serial.tree_.to_dict()
    assert serial.selected_ and parallel.selected_ == serial.selected_


def test_larger_r_never_needs_more_samples_to_find_parity():
    """Anytime: on XOR the r=16 tree costs no more on held-out data than the r=1 tree."""
    data = make_parity(1600, n_relevant=4, n_irrelevant=5, random_state=8)
    X, y, X_test, y_test = data.X[:800], data.y[:800], data.X[800:], data.y[800:]
    kwargs = dict(
        test_costs=data.test_costs,
        cost_matrix=[[0, 200], [200, 0]],
        categorical_features=list(range(X.shape[1])),
        random_state=0,
        prune_lookahead=True,
    )
    low = evaluate(ACTClassifier(r=1, **kwargs).fit(X, y), X_test, y_test).mean_total_cost
    high = evaluate(ACTClassifier(r=16, **kwargs).fit(X, y), X_test, y_test).mean_total_cost
    assert high <= low


def test_open_point_variants_grow_valid_trees():
    """stop_rule='prune' and prune_lookahead=True fit; grow-then-prune is no smaller unpruned
    (the paper's single growth: tune='off', so the rules themselves are compared)."""
    X, y = _mixed_data(6, n=200)
    kwargs = _mixed_kwargs(400, random_state=0, r=3, tune="off")
    grown = ACTClassifier(stop_rule="prune", post_prune=False, **kwargs).fit(X, y)
    stopped = ACTClassifier(stop_rule="leaf_cost", post_prune=False, **kwargs).fit(X, y)
    assert grown.tree_.n_leaves >= stopped.tree_.n_leaves
    pruned = ACTClassifier(stop_rule="prune", **kwargs).fit(X, y)
    assert pruned.tree_.n_leaves <= grown.tree_.n_leaves
    assert pruned.estimated_cost_ <= grown.estimated_cost_ + 1e-9
    raw = ACTClassifier(prune_lookahead=True, **kwargs).fit(X, y)
    assert raw.predict_proba(X).shape == (len(y), 2)


def test_exact_ee_matches_the_tree_package():
    """The compiled exact EE equals learners.tree.expected_error; 'exact' fits a valid tree."""
    from learners.tree import expected_error

    for n, e, cf in [(6, 0, 0.25), (10, 2, 0.25), (100, 7.5, 0.3), (3.5, 1.2, 0.2)]:
        assert engine.expected_errors(n, e, -1.0, cf) == pytest.approx(
            expected_error(n, e, cf), rel=1e-9
        )
    X, y = _mixed_data(7)
    model = ACTClassifier(
        ee="exact",
        cost_matrix=[[0, 300], [300, 0]],
        random_state=0,
        test_costs=_grouped_costs(),
        categorical_features=[1, 3],
    ).fit(X, y)
    assert model.estimated_cost_ > 0


def _cheap_distractors(seed, n):
    """Two priced numeric attributes carry the class; six $1 three-valued ones are noise,
    one of them a noisy echo of the class (thyroid's cheap history questions)."""
    rng = np.random.default_rng(seed)
    x0, x1 = rng.normal(size=n), rng.normal(size=n)
    y = ((x0 + 0.6 * x1 + 0.8 * rng.normal(size=n)) > 0.3).astype(int)
    cheap = rng.integers(0, 3, (n, 6)).astype(float)
    cheap[:, 0] = np.where(rng.random(n) < 0.35, cheap[:, 0], y + (rng.random(n) < 0.5))
    return np.column_stack([x0, x1, cheap]), y


@pytest.mark.slow
def test_anytime_cost_does_not_rise_from_r1_to_r8():
    """Anytime: on a concept hidden behind cheap noisy questions, the held-out cost of the
    default ACT at r=8, summed over six sampled datasets, is no higher than at r=1."""
    kwargs = dict(
        test_costs=[25.0, 15.0] + [1.0] * 6,
        cost_matrix=[[0, 150], [150, 0]],
        categorical_features=list(range(2, 8)),
        random_state=0,
    )
    cost = {1: 0.0, 8: 0.0}
    for seed in range(6):
        X, y = _cheap_distractors(seed, 2300)
        for r in cost:
            model = ACTClassifier(r=r, **kwargs).fit(X[:300], y[:300])
            cost[r] += evaluate(model, X[300:], y[300:]).mean_total_cost
    assert cost[8] <= cost[1], cost


def test_inner_cv_chooses_the_no_test_leaf_when_no_test_pays():
    """With attributes unrelated to the class, the inner CV keeps the no-test leaf, which
    costs less on fresh cases than the untuned ACT's tree."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(1400, 4))
    y = (rng.random(1400) < 0.35).astype(int)
    kwargs = dict(test_costs=[0.5, 0.5, 0.5, 0.5], cost_matrix=[[0, 40], [40, 0]], r=3)
    tuned = ACTClassifier(random_state=0, **kwargs).fit(X[:400], y[:400])
    assert tuned.selected_["pruning"] == "leaf"
    assert tuned.tree_.n_nodes == 1
    untuned = ACTClassifier(random_state=0, tune="off", **kwargs).fit(X[:400], y[:400])
    assert untuned.tree_.n_nodes > 1
    tuned_cost = evaluate(tuned, X[400:], y[400:]).mean_total_cost
    assert tuned_cost < evaluate(untuned, X[400:], y[400:]).mean_total_cost


def test_inner_cv_repeats_on_small_training_sets_only():
    """The inner CV is repeated on fresh splits while the training set is small (about 600
    held-out cases in all, at most 5 repeats): every case is held out once per repeat."""
    model = ACTClassifier(random_state=3, tune_folds=3)
    for n, repeats in [(100, 5), (140, 5), (250, 3), (600, 1), (6000, 1)]:
        y = np.arange(n) % 2
        folds = model._tuning_folds(y, 3)
        assert len(folds) == 3 * repeats
        held = np.concatenate([test for _, test in folds])
        assert np.array_equal(np.bincount(held, minlength=n), np.full(n, repeats))
        if repeats > 1:  # fresh splits, not the same one again
            assert not np.array_equal(np.sort(folds[0][1]), np.sort(folds[3][1]))


def test_inner_cv_choice_round_trips_and_a_bad_one_is_refused():
    """selected_ survives JSON; a document whose 'selected' is malformed is refused."""
    from learners._document import ModelDocumentError

    X, y = _mixed_data(8)
    model = ACTClassifier(**_mixed_kwargs(300, random_state=0, r=2)).fit(X, y)
    greedy_fields = {"w", "min_samples_leaf", "criterion"} if model.selected_["r"] == 0 else set()
    lookahead_fields = {"r", "prune_lookahead", "pruning", "pruning_cf"}
    assert set(model.selected_) - {"max_depth"} == lookahead_fields | greedy_fields
    assert ACTClassifier.from_json(model.to_json()).selected_ == model.selected_
    untuned = ACTClassifier(random_state=0, r=2, tune="off").fit(X, y)
    assert ACTClassifier.from_json(untuned.to_json()).selected_ == {}
    document = json.loads(model.to_json())
    for field, value in [
        ("pruning", "some"),
        ("prune_lookahead", 1),
        ("pruning_cf", 2.0),
        ("r", -1),
        ("w", -0.5),
        ("min_samples_leaf", 0.5),
        ("criterion", "gini"),
        ("max_depth", 0),
        ("max_depth", "deep"),
    ]:
        broken = json.loads(json.dumps(document))
        broken["fitted"]["selected"][field] = value
        with pytest.raises(ModelDocumentError, match=field):
            ACTClassifier.from_json(json.dumps(broken))


def test_compiled_held_out_costs_equal_run_case():
    """The inner CV's compiled walk charges every case exactly what learners.evaluation's
    run_case charges (missing values, nominal branches, group prices, referral)."""
    from learners.act._encoding import encode_data
    from learners.act._growth import padded_values, structure_record
    from learners.evaluation import run_case

    X, y = _mixed_data(9, n=300)
    prices = _grouped_costs()
    for reject, r in [(None, 1), (250.0, 3)]:
        model = ACTClassifier(
            test_costs=prices,
            cost_matrix=[[0, 2000], [900, 0]],
            stop_rule="prune",
            reject_cost=reject,
            categorical_features=[1, 3],
            random_state=0,
            r=r,
            tune="off",
            post_prune=False,
            # the inner CV walks trees grown on the indicator columns: one branch per code
            one_vs_rest=False,
        ).fit(X[:200], y[:200])
        assert model.tree_.n_nodes > 3
        data = encode_data(X, model.categories_)
        out = np.zeros(100)
        refer = np.empty(0) if reject is None else np.full(2, reject)
        engine.policy_case_costs(
            structure_record(model.tree_, data),
            data.ranks,
            y.astype(np.int64),
            padded_values(data),
            data.nominal,
            np.arange(200, 300, dtype=np.int64),
            encode_prices(prices),
            model.cost_matrix_,
            refer,
            True,
            out,
        )
        expected = [
            run_case(
                model,
                X[i],
                int(y[i]),
                classes=list(model.classes_),
                cost_model=model.cost_model_,
                cost_matrix=model.cost_matrix_,
                reject_cost=model.reject_cost_,
            ).total_cost
            for i in range(200, 300)
        ]
        np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


def test_inner_cv_offers_accuracy_trees_and_refits_the_one_it_keeps(monkeypatch):
    """The inner CV's candidates end with EG2 and the accuracy-driven trees (w = 0, one per
    leaf size); when one of these is kept, the final tree is that greedy tree grown on all
    the cases, and selected_ (its w and leaf size) survives JSON."""
    import learners.act.act as act_module

    X, y = _mixed_data(12, n=240)
    kwargs = _mixed_kwargs(5000, random_state=2, r=2)
    model = ACTClassifier(**kwargs)
    model.fit(X, y)  # sets the fitted attributes the candidate listing needs
    folds = model._tuning_folds(y, 2)
    settings = model._settings(X.shape[0])
    costs, choices = model._tune_costs(
        X, model.classes_[y], y, folds, settings, encode_prices(model.cost_model_), 2
    )
    greedy = [c for c in choices if isinstance(c, act_module._Greedy)]
    assert greedy == act_module._greedy_grid(model.w_)
    accuracy = [c for c in greedy[1:] if c.criterion == "eg2"]
    assert [c.min_leaf for c in accuracy] == list(act_module._ACCURACY_LEAF_SIZES)
    assert all(c.w == 0.0 for c in accuracy)
    assert len(costs) == len(choices)
    # keep the accuracy tree with leaves of at least 10 cases
    wanted = choices.index(act_module._Greedy(0.0, "error", 10.0))
    monkeypatch.setattr(act_module, "_one_se_choice", lambda costs: wanted)
    kept = ACTClassifier(**kwargs).fit(X, y)
    assert kept.selected_["r"] == 0 and kept.selected_["w"] == 0.0
    assert kept.selected_["min_samples_leaf"] == 10.0
    expected = EG2Classifier(
        w=0.0,
        cf=kept.cf_,
        min_samples_leaf=10.0,
        test_costs=kwargs["test_costs"],
        cost_matrix=kwargs["cost_matrix"],
        categorical_features=[1, 3],
    ).fit(X, y)
    assert kept.tree_.to_dict() == expected.tree_.to_dict()
    assert ACTClassifier.from_json(kept.to_json()).selected_ == kept.selected_


def _rare_code_data():
    """Feature 1 is nominal with codes 0-2, code 2 in four cases only; it carries the class."""
    rng = np.random.default_rng(5)
    n = 200
    X = np.column_stack([rng.normal(size=n), rng.integers(0, 2, n).astype(float)])
    X[:4, 1] = 2.0
    y = (X[:, 1] >= 1).astype(int)
    flip = rng.random(n) < 0.1
    y[flip] = 1 - y[flip]
    return X, y


def test_a_greedy_tree_grown_on_a_part_keeps_a_branch_for_every_category():
    """A greedy learner validated on all the cases and grown on a part that lacks a code
    (as ACT's inner CV grows its greedy candidates) splits on one branch per code of all
    the cases, which structure_record accepts; a tree fitted on the part alone lacks that
    branch, and structure_record refuses it rather than walk branch b for code rank b."""
    from learners.act._encoding import encode_data
    from learners.act._growth import structure_record
    from learners.tree import DTMCClassifier
    from learners.tree._base import check_nominal_splits

    X, y = _rare_code_data()
    part = np.arange(4, 200)  # no case with code 2
    kwargs = dict(test_costs=[1.0, 1.0], cost_matrix=[[0, 100], [100, 0]])
    learner = DTMCClassifier(categorical_features=[1], max_depth=1, **kwargs)
    learner._validate_fit_input(X, y)
    tree, alpha = learner._grow_and_prune(X[part], y[part])
    assert alpha is None and tree.feature[0] == 1
    check_nominal_splits(tree, learner.categories_, "tree", "categories")
    data = encode_data(X, learner.categories_)
    structure_record(tree, data)  # accepted
    alone = DTMCClassifier(categorical_features=[1], max_depth=1, **kwargs).fit(X[part], y[part])
    assert alone.tree_.n_edges[0] == 2
    with pytest.raises(ValueError, match="splits feature 1 on the codes"):
        structure_record(alone.tree_, data)


def test_inner_cv_keeps_the_least_held_out_cost_ties_to_the_simplest():
    """The inner CV keeps the candidate of least mean held-out cost (no standard-error
    margin), and on an exact tie the simplest (first) one."""
    from learners.act.act import _SE_RULE, _one_se_choice

    assert _SE_RULE == 0.0
    rng = np.random.default_rng(0)
    noisy = rng.normal(10.0, 5.0, size=60)
    jitter = rng.normal(0.0, 3.0, size=60)
    # less on average by 0.2, well within one standard error of the paired difference
    slightly_better = noisy - 0.2 + (jitter - jitter.mean())
    diff = noisy - slightly_better
    assert 0.0 < diff.mean() < diff.std(ddof=1) / np.sqrt(60)
    assert _one_se_choice([noisy, slightly_better, noisy + 1.0]) == 1
    assert _one_se_choice([noisy, noisy.copy(), noisy + 1.0]) == 0


def test_inner_cv_offers_least_cost_trees_by_depth_and_refits_the_one_it_keeps(monkeypatch):
    """The inner CV's last candidates are DTMC's least-cost trees, one per depth of
    _COST_DEPTHS; when one is kept, the final tree is DTMC at that depth grown on all the
    cases, and selected_ (criterion and depth) survives JSON."""
    import learners.act.act as act_module
    from learners.tree import DTMCClassifier

    X, y = _mixed_data(13, n=240)
    kwargs = _mixed_kwargs(400, random_state=2, r=2)
    grid = act_module._greedy_grid(0.7)
    cost_trees = [c for c in grid if c.criterion == "dtmc"]
    assert [c.max_depth for c in cost_trees] == list(act_module._COST_DEPTHS)
    assert grid[-len(cost_trees) :] == cost_trees
    model = ACTClassifier(**kwargs)
    model.fit(X, y)
    costs, choices = model._tune_costs(
        X,
        model.classes_[y],
        y,
        model._tuning_folds(y, 2),
        model._settings(X.shape[0]),
        encode_prices(model.cost_model_),
        2,
    )
    stump = act_module._Greedy(0.0, "none", criterion="dtmc", max_depth=1)
    wanted = choices.index(stump)
    monkeypatch.setattr(act_module, "_one_se_choice", lambda costs: wanted)
    kept = ACTClassifier(**kwargs).fit(X, y)
    assert kept.selected_["criterion"] == "dtmc" and kept.selected_["max_depth"] == 1
    expected = DTMCClassifier(
        max_depth=1,
        cf=kept.cf_,
        test_costs=kwargs["test_costs"],
        cost_matrix=kwargs["cost_matrix"],
        categorical_features=[1, 3],
    ).fit(X, y)
    assert expected.tree_.depth() == 1
    assert kept.tree_.to_dict() == expected.tree_.to_dict()
    assert ACTClassifier.from_json(kept.to_json()).selected_ == kept.selected_


@pytest.mark.slow
def test_least_cost_candidates_lower_the_cost_on_turneys_heart_data(monkeypatch):
    """On Turney's priced heart data with errors at 1000, where one $1 question is worth
    buying and deeper trees are not worth theirs, offering DTMC's least-cost trees to the
    inner CV lowers ACT's cross-validated cost (3 folds, not the benchmark's 10) against
    the same ACT without them."""
    import learners.act.act as act_module
    from datasets import load_known
    from learners.evaluation import cross_validate, make_folds

    heart = load_known("heart")
    folds = make_folds(heart.y, n_splits=3, random_state=7)
    kwargs = dict(
        test_costs=heart.costs,
        cost_matrix=1000.0 * (1.0 - np.eye(2)),
        categorical_features=heart.categorical,
        random_state=0,
        r=2,
    )
    offered = act_module._COST_DEPTHS
    cost = {}
    for variant, depths in [("with", offered), ("without", ())]:
        monkeypatch.setattr(act_module, "_COST_DEPTHS", depths)
        report = cross_validate(ACTClassifier(**kwargs), heart.X, heart.y, folds=folds)
        cost[variant] = report.overall.mean_total_cost
    assert cost["with"] < cost["without"], cost
