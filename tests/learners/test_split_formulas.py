"""One definition of split formulas, zero-cost rule, leaf label and EE (ALGORITHMS.md §2, §3)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import betaincinv

from learners.act import _engine as engine
from learners.costs import CostModel
from learners.policy import best_class
from learners.tree import IDXClassifier, _formulas
from learners.tree._criteria import CSID3, EG2, IDX, Candidate
from learners.tree._structure import smoothed_proba
from learners.tree.pessimistic import expected_error


@st.composite
def leaves(draw):
    """Class weights (whole or fractional, ties likely) and a cost matrix (uniform ones likely)."""
    k = draw(st.integers(2, 5))
    whole = draw(st.booleans())
    weight = st.integers(0, 6).map(float) if whole else st.floats(0.0, 30.0)
    counts = np.array(draw(st.lists(weight, min_size=k, max_size=k)))
    if draw(st.booleans()):
        matrix = draw(st.sampled_from([1.0, 10.0, 300.0])) * (1.0 - np.eye(k))
    else:
        entries = st.floats(0.0, 500.0).map(lambda v: round(v, 1))
        matrix = np.array(draw(st.lists(entries, min_size=k * k, max_size=k * k))).reshape(k, k)
    return counts, matrix


@settings(max_examples=400, deadline=None)
@given(leaf=leaves(), laplace=st.booleans())
def test_leaf_label_is_policy_best_class(leaf, laplace):
    """Node probabilities agree; plain and compiled least_cost_class equal policy.best_class."""
    counts, matrix = leaf
    proba = smoothed_proba(counts, 1.0 if laplace else 0.0)[0]
    # the vectorised node probabilities and the scalar ones are the same bits
    assert proba.tolist() == _formulas.smoothed_row(counts, laplace, np.empty(len(counts))).tolist()
    expected = best_class(proba, matrix)
    assert _formulas.least_cost_class(counts, matrix, laplace) == expected
    assert engine.leaf_label(counts, matrix, laplace) == expected


@settings(max_examples=300, deadline=None)
@given(
    gain=st.floats(0.0, 1.0),
    cost=st.floats(0.0, 200.0) | st.just(0.0),
    w=st.floats(0.0, 1.0),
    criterion=st.sampled_from([_formulas.ID3, _formulas.EG2, _formulas.IDX, _formulas.CSID3]),
)
def test_compiled_ranking_key_is_the_plain_one(gain, cost, w, criterion):
    """The engine's compiled split_key returns the plain function's key, bit for bit."""
    assert engine._split_key(criterion, gain, cost, w) == _formulas.split_key(
        criterion, gain, cost, w
    )


def test_criteria_rank_by_the_formulas():
    """Keys: EG2 (2^g - 1)/(c + 1)^w, IDX g/c, CS-ID3 g^2/c; cost 0 is tier 1 in IDX/CS-ID3 only."""
    cand = Candidate(feature=0, gain=0.3, split_info=1.0, cost=4.0)
    # The formula, to the last bits (computed as expm1/exp/log1p, not as powers).
    assert EG2(0.5).key(cand) == (0, pytest.approx((2**0.3 - 1) / 5**0.5, rel=1e-15))
    assert IDX().key(cand) == (0, 0.3 / 4.0)
    assert CSID3().key(cand) == (0, 0.09 / 4.0)
    free = Candidate(feature=0, gain=0.3, split_info=1.0, cost=0.0, own_price=0.0)
    assert EG2(1.0).key(free) == (0, pytest.approx(2**0.3 - 1, rel=1e-15))
    assert IDX().key(free) == (1, 0.3)


def test_a_re_read_ranks_at_its_shared_price_a_free_test_in_the_zero_tier():
    """IDX/CS-ID3 rank a test done on the path at its shared price; a free test stays first."""
    re_read = Candidate(feature=0, gain=0.2, split_info=1.0, cost=0.0, on_path=True, own_price=10.0)
    priced = Candidate(feature=1, gain=0.4, split_info=1.0, cost=2.0)
    assert IDX().choose([re_read, priced], 0.0, 1.0) is priced
    assert CSID3().choose([re_read, priced], 0.0, 1.0) is priced
    free = Candidate(feature=0, gain=0.05, split_info=1.0, cost=0.0, on_path=True, own_price=0.0)
    assert IDX().choose([free, priced], 0.0, 1.0) is free
    # EG2 keeps the true marginal cost of the re-read: (2^0.2 - 1) / 1 beats (2^0.4 - 1) / 3
    assert EG2(1.0).choose([re_read, priced], 0.0, 1.0) is re_read


def test_idx_does_not_sliver_a_numeric_test_on_the_path():
    """On two informative features IDX uses both, not re-splitting the first for tiny gains."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    model = IDXClassifier(test_costs=CostModel([1.0, 1.0]), pruning="none").fit(X, y)
    used = set(model.tree_.feature[model.tree_.feature >= 0].tolist())
    assert used == {0, 1}
    assert model.score(X, y) > 0.9


@pytest.mark.parametrize(
    "n, e, cf",
    [
        (6, 0, 0.25),
        (10, 2, 0.25),
        (100, 7.5, 0.3),
        (3.5, 1.2, 0.2),
        (10.3, 2.5, 0.1),
        (40, 39.5, 0.25),
    ],
)
def test_engine_exact_ee_is_the_tree_package_ee(n, e, cf):
    """The engine's exact EE and the pruning EE are one function: SciPy's U_CF, to the bit."""
    assert engine.expected_errors(n, e, -1.0, cf) == expected_error(n, e, cf)
    assert expected_error(n, e, cf) == n * betaincinv(e + 1.0, n - e, 1.0 - cf)
