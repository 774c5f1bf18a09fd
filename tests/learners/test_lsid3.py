"""LSID3: lookahead by stochastic ID3, scored by tree size (cost-blind)."""

import numpy as np

from learners import evaluate
from learners.act import LSID3Classifier
from learners.synthetic import make_parity
from learners.tree import EG2Classifier


def _parity():
    data = make_parity(2000, n_relevant=5, n_irrelevant=5, random_state=3)
    return data, data.X[:1000], data.y[:1000], data.X[1000:], data.y[1000:]


def test_lookahead_finds_the_parity_tree_that_id3_misses():
    """With r=5 LSID3 tests only the relevant attributes and is exact; r=0 (ID3) is not."""
    data, X, y, X_test, y_test = _parity()
    model = LSID3Classifier(r=5, random_state=0).fit(X, y)
    used = set(model.tree_.feature[model.tree_.feature >= 0].tolist())
    assert used == set(data.relevant.tolist())
    assert np.mean(model.predict(X_test) == y_test) == 1.0
    greedy = LSID3Classifier(r=0).fit(X, y)
    assert np.mean(greedy.predict(X_test) == y_test) < 0.95


def test_r0_is_cost_blind_id3():
    """r = 0 is EG2 with w = 0 (information gain only), whatever the test prices."""
    data, X, y, _, _ = _parity()
    model = LSID3Classifier(r=0, test_costs=data.test_costs).fit(X, y)
    reference = EG2Classifier(w=0.0, test_costs=data.test_costs).fit(X, y)
    assert model.tree_.to_dict() == reference.tree_.to_dict()


def test_size_beats_greedy_and_json_round_trip():
    """LSID3's tree is smaller than ID3's on parity, and survives a JSON round trip."""
    _, X, y, X_test, y_test = _parity()
    model = LSID3Classifier(r=3, random_state=1).fit(X, y)
    assert model.tree_.n_leaves < LSID3Classifier(r=0).fit(X, y).tree_.n_leaves
    loaded = LSID3Classifier.from_json(model.to_json())
    np.testing.assert_array_equal(loaded.predict(X_test), model.predict(X_test))
    assert evaluate(loaded, X_test[:50], y_test[:50]).n_cases == 50
