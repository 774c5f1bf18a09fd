"""Bad input to the tree learners gets a clear exception, never a silent answer."""

import numpy as np
import pytest

from learners.costs import CostModel
from learners.tree import C45Classifier, DTMCClassifier, EG2Classifier


@pytest.fixture
def small():
    """20 cases, 3 features, two classes."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20, 3))
    return X, (X[:, 0] > 0).astype(int)


def test_x_not_two_dimensional(small):
    """A 1-D X is refused."""
    X, y = small
    with pytest.raises(ValueError, match="2D"):
        C45Classifier().fit(X[:, 0], y)


def test_length_mismatch(small):
    """X and y of different lengths are refused."""
    X, y = small
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        C45Classifier().fit(X, y[:-1])


def test_nan_in_y(small):
    """A missing label is refused."""
    X, y = small
    y = y.astype(float)
    y[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        C45Classifier().fit(X, y)


def test_wrong_feature_count_at_predict(small):
    """Predicting on a different number of features is refused."""
    X, y = small
    model = C45Classifier().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :2])


@pytest.mark.parametrize(
    "matrix, message",
    [
        ([[0, 1, 2], [1, 0, 2]], "square"),
        ([[0, 1, 1], [1, 0, 1], [1, 1, 0]], "3x3 but there are 2 classes"),
        ([[0, -1], [1, 0]], "negative"),
        ([[0, np.inf], [1, 0]], "finite"),
    ],
)
def test_bad_cost_matrix(small, matrix, message):
    """A non-square, wrong-size, negative or infinite cost matrix is refused."""
    X, y = small
    with pytest.raises(ValueError, match=message):
        EG2Classifier(cost_matrix=matrix).fit(X, y)


def test_discounted_price_above_full(small):
    """A discounted price above the full price is refused when the cost model is built."""
    with pytest.raises(ValueError, match="above its full price"):
        CostModel([1, 1, 1], discounted=[2, 1, 1], groups=["g", "g", None])


def test_test_costs_size_mismatch(small):
    """Test costs for a different number of features are refused."""
    X, y = small
    with pytest.raises(ValueError, match="describes 2 tests but X has 3"):
        EG2Classifier(test_costs=[1, 2]).fit(X, y)


def test_negative_test_cost(small):
    """A negative price is refused."""
    X, y = small
    with pytest.raises(ValueError, match="non-negative"):
        DTMCClassifier(test_costs=[1, -2, 1]).fit(X, y)


def test_non_integer_category_code(small):
    """A nominal feature must hold whole-number codes."""
    X, y = small
    with pytest.raises(ValueError, match="categorical feature 1 has non-integer code"):
        C45Classifier(categorical_features=[1]).fit(X, y)


def test_categorical_index_out_of_range(small):
    """A categorical feature index beyond X's columns is refused."""
    X, y = small
    with pytest.raises(ValueError, match="not a feature index"):
        C45Classifier(categorical_features=[5]).fit(X, y)


def test_unknown_category_at_predict(small):
    """A category code not seen in training raises, naming the feature and the code."""
    X, y = small
    X = X.copy()
    X[:, 2] = np.arange(20) % 3
    model = C45Classifier(categorical_features=[2]).fit(X, y)
    X[0, 2] = 9
    with pytest.raises(ValueError, match="feature 2 has category code 9"):
        model.predict(X)


@pytest.mark.parametrize(
    "params, message",
    [
        ({"probability": "odds"}, "probability"),
        ({"min_samples_leaf": 0}, "min_samples_leaf"),
        ({"cf": 1.5}, "cf"),
        ({"w": -1}, "'w' parameter of EG2Classifier must be"),
        ({"reject_cost": -1}, "reject_cost"),
    ],
)
def test_bad_parameters(small, params, message):
    """Out-of-range parameters are refused at fit."""
    X, y = small
    with pytest.raises(ValueError, match=message):
        EG2Classifier(**params).fit(X, y)


def test_predict_before_fit(small):
    """Using an unfitted model raises NotFittedError."""
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        C45Classifier().next_action({})
