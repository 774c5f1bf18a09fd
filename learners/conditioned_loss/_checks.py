"""Input checks of the conditioned-loss model, with messages a person can act on.

Parameter types and ranges are the model's ``_parameter_constraints``; these
are the checks that need the data or look inside a value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

__all__ = [
    "candidate_widths",
    "categorical_mask",
    "check_case",
]


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
            checked[index] = np.nan if value is None else float(value)
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
