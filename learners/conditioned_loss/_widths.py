"""Choosing the Parzen half-width on held-out validation cases."""

from __future__ import annotations

import numpy as np

from ._subsets import FeatureRoles
from ._trees import tree_proba
from .parzen import FeatureScaler, window_average, window_distances

__all__ = ["policy_losses", "posterior_errors"]

_CHUNK = 256  # validation rows per distance matrix (256 x n_fit floats)


def policy_losses(model, X_val, y_val, widths: np.ndarray) -> np.ndarray:
    """Mean realized conditioned loss of ``model``'s policy on validation cases, per width.

    ``model`` must already hold the trees and reference cases grown without
    the validation cases.  The loss is the test cost paid, plus -REWARD for
    a right and PENALTY for a wrong classification; a referral earns -REWARD
    only if neither the final state's classifier nor any classifier one test
    away is right (PENALTY otherwise): the realized form of paper 003's
    Table 1.  Each case is replayed under every width with one memo, so its
    posteriors and window distances are computed once per state visited.
    """
    reward, penalty = float(model.reward), float(model.penalty)
    n_states = model._roles.n_states
    totals = np.zeros(widths.size)
    for row, true in zip(X_val, y_val, strict=True):
        memo: dict = {}
        for w, width in enumerate(widths):
            action, path = model._decide_case(row, frozenset(), np.full(n_states, width), memo)
            if action.kind == "classify":
                right = model.classes_[true] == action.label
            else:
                right = not _anyone_right(model, row, true, path)
            totals[w] += model.cost_model_.path_cost(path) + (-reward if right else penalty)
    return totals / X_val.shape[0]


def _anyone_right(model, row, true: int, path) -> bool:
    """Whether the final state's classifier or one a test away gets ``true``."""
    roles: FeatureRoles = model._roles
    state = roles.state_of(t for t in path if not np.isnan(row[t]))
    reachable = [state] + [roles.with_test(state, k) for k in roles.priced if k not in path]
    return any(
        int(np.argmax(tree_proba(model.trees_[s], row[None, :], model.leaf_smoothing)[0])) == true
        for s in reachable
    )


def posterior_errors(
    trees,
    X_fit,
    X_val,
    roles: FeatureRoles,
    widths,
    *,
    categorical,
    scaling,
    smoothing,
    fit_posteriors=None,
) -> np.ndarray:
    """Per state and width: mean squared error of q_k against Y_k's posterior on X_val.

    ``fit_posteriors``: per state, what the windows average over X_fit
    (None: the trees' resubstitution posteriors).
    Returns an array of shape (n_states, n_widths), NaN for the full state.
    """
    scaler = FeatureScaler(X_fit, categorical, scaling)
    Z_fit, Z_val = scaler.transform(X_fit), scaler.transform(X_val)
    fit_post = (
        [tree_proba(t, X_fit, smoothing) for t in trees]
        if fit_posteriors is None
        else fit_posteriors
    )
    val_post = [tree_proba(t, X_val, smoothing) for t in trees]
    scores = np.full((roles.n_states, widths.size), np.nan)
    for state in range(roles.n_states):
        futures = [roles.with_test(state, k) for k in roles.priced if k not in roles.bought(state)]
        if not futures:
            continue
        dims = roles.usable(state)
        total = np.zeros(widths.size)
        for start in range(0, Z_val.shape[0], _CHUNK):
            rows = slice(start, start + _CHUNK)
            distances = window_distances(Z_val[rows], Z_fit, dims, categorical)
            for w, width in enumerate(widths):
                for future in futures:
                    q = window_average(distances, width, fit_post[future], val_post[state][rows])
                    total[w] += np.sum((q - val_post[future][rows]) ** 2)
        scores[state] = total / (Z_val.shape[0] * len(futures))
    return scores
