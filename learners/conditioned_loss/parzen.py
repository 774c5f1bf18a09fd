"""Parzen-window estimates of a classifier's posterior before buying its test.

``q_k(S)`` — what classifier ``Y_{S+k}`` will say once test k is bought —
is estimated from the training cases that fall in a hypercube around the
case on the features known in state S: the average of ``Y_{S+k}``'s
posteriors on those cases (paper 003 §3).  Features are first scaled to
[0, 1] (by training rank or range) so one half-width fits every axis;
a nominal feature must match exactly.  An empty window gives no
information and the caller falls back to the current posterior.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SCALINGS", "FeatureScaler", "window_average", "window_distances"]

SCALINGS = ("rank", "range")


class FeatureScaler:
    """Maps raw feature values to [0, 1], fitted on the training matrix.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Training values (NaN = missing).
    categorical : ndarray of bool, shape (n_features,)
        Nominal features, left unscaled (compared for equality).
    method : {"rank", "range"}
        "rank": mid-rank of the value among the training values (robust to
        skewed lab values such as TSH); "range": min-max scaling.
    """

    def __init__(self, X: np.ndarray, categorical: np.ndarray, method: str) -> None:
        if method not in SCALINGS:
            raise ValueError(f"feature_scaling must be one of {SCALINGS}, got {method!r}")
        self.method = method
        self.categorical = np.asarray(categorical, dtype=bool)
        self._sorted = [np.sort(col[~np.isnan(col)]) for col in X.T]

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Scaled copy of ``X`` (NaN stays NaN, nominal columns unchanged)."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        out = X.copy()
        for f, values in enumerate(self._sorted):
            if self.categorical[f] or values.size == 0:
                continue
            col = X[:, f]
            if self.method == "rank":
                below = np.searchsorted(values, col, side="left")
                upto = np.searchsorted(values, col, side="right")
                scaled = (below + upto) / (2.0 * values.size)
            else:
                span = values[-1] - values[0]
                scaled = (col - values[0]) / (span if span > 0 else 1.0)
            out[:, f] = np.where(np.isnan(col), np.nan, scaled)
        return out


def window_distances(
    queries: np.ndarray, reference: np.ndarray, dims: np.ndarray, categorical: np.ndarray
) -> np.ndarray:
    """Chebyshev distance from each query to each reference case on ``dims``.

    Parameters
    ----------
    queries : ndarray of shape (n_queries, n_features), scaled
    reference : ndarray of shape (n_reference, n_features), scaled
    dims : ndarray of int
        Features known in the current state.  A query's NaN dimension is
        ignored; a reference case missing a queried value, or differing on a
        nominal feature, is infinitely far.

    Returns
    -------
    ndarray of shape (n_queries, n_reference)
    """
    queries = np.atleast_2d(queries)
    distance = np.zeros((queries.shape[0], reference.shape[0]))
    for f in dims:
        q = queries[:, f][:, None]
        r = reference[:, f][None, :]
        if categorical[f]:
            gap = np.where(q == r, 0.0, np.inf)
        else:
            gap = np.abs(q - r)
        gap = np.where(np.isnan(r), np.inf, gap)
        gap = np.where(np.isnan(q), 0.0, gap)
        np.maximum(distance, gap, out=distance)
    return distance


def window_average(
    distances: np.ndarray, half_width: float, posteriors: np.ndarray, fallback: np.ndarray
) -> np.ndarray:
    """Mean of ``posteriors`` over reference cases within ``half_width``.

    Parameters
    ----------
    distances : ndarray of shape (n_queries, n_reference)
    posteriors : ndarray of shape (n_reference, n_classes)
        The future classifier's posteriors on the reference cases.
    fallback : ndarray of shape (n_queries, n_classes)
        Used for a query whose window is empty (the current posterior p).
    """
    inside = (distances <= half_width).astype(float)
    counts = inside.sum(axis=1)
    sums = inside @ posteriors
    estimate = np.array(fallback, dtype=float, copy=True)
    filled = counts > 0
    estimate[filled] = sums[filled] / counts[filled, None]
    return estimate
