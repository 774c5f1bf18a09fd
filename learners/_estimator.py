"""The base of every learner: the shared cost parameters and their declared ranges.

Each learner declares the type and range of every constructor parameter in
scikit-learn's ``_parameter_constraints`` (``Interval``, ``StrOptions``,
``"boolean"``, ...); ``fit`` checks them through scikit-learn's own
machinery (``@_fit_context`` runs ``_validate_params``), so a bad value
raises :class:`sklearn.utils._param_validation.InvalidParameterError` (a
``ValueError``) naming the parameter, its allowed range and the value given.
These constraints are the one statement of each range: the app's training
form reads its bounds from them (``diagnosis/shared/learner_registry.py``).

What a constraint cannot say (a cost matrix's size against the classes,
test prices against the features) is checked in :mod:`._validation` once the
data is known.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval

from .costs import CostModel

__all__ = ["TRAIN_ACCURACY_CHECKS", "CostSensitiveClassifier", "constraints"]


class CostSensitiveClassifier(ClassifierMixin, BaseEstimator):
    """Base of the learners: shared cost parameters, constraints and test hooks.

    Subclasses extend :attr:`_parameter_constraints` with their own
    parameters (every ``__init__`` parameter needs an entry) and decorate
    ``fit`` with ``@_fit_context(prefer_skip_nested_validation=True)``.
    """

    #: Allowed type and range of each shared parameter.  A learner without one
    #: of them (the conditioned-loss model has no ``cost_matrix``) leaves it out.
    _parameter_constraints: ClassVar[dict] = {
        "test_costs": [CostModel, "array-like", None],
        "cost_matrix": ["array-like", None],
        "reject_cost": [Interval(Real, 0, None, closed="left"), "array-like", None],
        "categorical_features": ["array-like", None],
        "random_state": ["random_state"],
    }

    #: Small settings under which scikit-learn's estimator checks run fast
    #: (tests/learners/test_estimator_checks.py instantiates every learner of
    #: ``learners.serialization.LEARNERS`` with them).
    _fast_test_params: ClassVar[dict] = {}

    #: scikit-learn estimator checks this learner fails by design: check name
    #: (as ``parametrize_with_checks`` names it) -> why.
    _expected_failed_checks: ClassVar[dict[str, str]] = {}

    def _random_seed(self) -> int | None:
        """An integer seed for :func:`numpy.random.default_rng` drawn from ``random_state``.

        An int seeds directly (so a given seed grows the same model as
        before); None and a ``RandomState`` go through
        :func:`~sklearn.utils.check_random_state`; a ``Generator`` (where the
        learner's constraints allow one) gives a draw of its own.
        """
        rs = self.random_state
        if isinstance(rs, (Integral, np.integer)) and not isinstance(rs, bool):
            return int(rs)
        if isinstance(rs, np.random.Generator):
            return int(rs.integers(0, 2**31 - 1))
        return int(check_random_state(rs).randint(0, 2**31 - 1))


#: The estimator checks that demand 0.83 training accuracy on scaled blobs
#: with the default parameters (unit test costs, 0/1 loss).
TRAIN_ACCURACY_CHECKS = (
    "check_classifiers_train",
    "check_classifiers_train(readonly_memmap=True)",
    "check_classifiers_train(readonly_memmap=True,X_dtype=float32)",
)


def constraints(base: dict, *, without: tuple[str, ...] = (), **own) -> dict:
    """``base`` less the names in ``without``, plus a learner's ``own`` constraints."""
    merged = {name: rule for name, rule in base.items() if name not in without}
    merged.update(own)
    return merged
