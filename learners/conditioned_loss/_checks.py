"""Input checks of the conditioned-loss model, with messages a person can act on."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

__all__ = [
    "as_matrix",
    "candidate_widths",
    "categorical_mask",
    "check_case",
    "check_params",
]


def as_matrix(X) -> np.ndarray:
    """``X`` as a 2-D float array (NaN = missing); infinities are refused."""
    try:
        X = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            "X must be numeric (encode nominal values as numbers; NaN = missing)"
        ) from None
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional, got shape {X.shape}")
    if np.isinf(X).any():
        raise ValueError("X holds an infinite value")
    return X


def _non_negative(name: str, value) -> None:
    if not isinstance(value, (int, float, np.number)) or not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite non-negative number, got {value!r}")


def check_params(model) -> None:
    """Refuse parameter values the model cannot work with."""
    for name in ("reward", "penalty", "leaf_smoothing"):
        _non_negative(name, getattr(model, name))
    folds = model.validation_folds
    if folds is not None and (not isinstance(folds, (int, np.integer)) or folds < 2):
        raise ValueError(f"validation_folds must be None or an integer >= 2, got {folds!r}")
    repeats = model.validation_repeats
    if not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise ValueError(f"validation_repeats must be an integer >= 1, got {repeats!r}")
    if not 0.0 < float(model.validation_fraction) < 1.0:
        raise ValueError(
            f"validation_fraction must be in (0, 1), got {model.validation_fraction!r}"
        )
    if model.width_selection not in ("loss", "posterior"):
        raise ValueError(
            f"width_selection must be 'loss' or 'posterior', got {model.width_selection!r}"
        )
    if model.parzen_targets not in ("resubstitution", "out_of_fold"):
        raise ValueError(
            "parzen_targets must be 'resubstitution' or 'out_of_fold', "
            f"got {model.parzen_targets!r}"
        )
    if not isinstance(model.parzen_folds, (int, np.integer)) or model.parzen_folds < 2:
        raise ValueError(f"parzen_folds must be an integer >= 2, got {model.parzen_folds!r}")
    if int(model.max_subsets) < 1:
        raise ValueError(f"max_subsets must be a positive integer, got {model.max_subsets!r}")


def candidate_widths(widths, default) -> np.ndarray:
    """Sorted candidate half-widths (``default`` when ``widths`` is None)."""
    widths = np.asarray(default if widths is None else widths, dtype=float).ravel()
    if widths.size == 0 or not np.isfinite(widths).all() or (widths <= 0).any():
        raise ValueError("window_widths must be a non-empty list of positive numbers")
    return np.sort(widths)


def categorical_mask(features, n_features: int) -> np.ndarray:
    """Boolean mask of the nominal features."""
    mask = np.zeros(n_features, dtype=bool)
    for f in features or ():
        if not 0 <= int(f) < n_features:
            raise ValueError(f"categorical feature {f} is out of range for {n_features} features")
        mask[int(f)] = True
    return mask


def check_case(
    known: Mapping, unavailable: Iterable, n_features: int
) -> tuple[dict[int, float], frozenset[int]]:
    """``known`` as {int: float} and ``unavailable`` as a frozenset, indices checked."""
    if not isinstance(known, Mapping):
        raise TypeError("known must map feature index -> value")
    checked: dict[int, float] = {}
    for feature, value in known.items():
        index = _feature_index(feature, n_features)
        try:
            checked[index] = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"value of feature {index} must be a number, got {value!r}") from None
    blocked = frozenset(_feature_index(t, n_features) for t in unavailable)
    return checked, blocked


def _feature_index(feature, n_features: int) -> int:
    try:
        index = int(feature)
    except (TypeError, ValueError):
        raise TypeError(f"features are indexed by int, got {feature!r}") from None
    if not 0 <= index < n_features:
        raise IndexError(f"feature {index} is out of range for {n_features} features")
    return index
