"""scikit-learn's estimator checks over every loadable learner.

The learners are those of ``learners.serialization.LEARNERS`` (a new learner
is checked as soon as it is registered there); each is built with the small
settings its class declares in ``_fast_test_params``, and the checks it fails
by design are the ones its class lists, with the reason, in
``_expected_failed_checks``.
"""

import importlib

from sklearn.utils.estimator_checks import parametrize_with_checks

from learners.serialization import LEARNERS


def _learner_class(name):
    return getattr(importlib.import_module(LEARNERS[name]), name)


ESTIMATORS = [
    _learner_class(name)(**_learner_class(name)._fast_test_params) for name in sorted(LEARNERS)
]


def expected_failed_checks(estimator):
    """The checks this learner fails by design, each with its reason."""
    return dict(type(estimator)._expected_failed_checks)


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    """Each scikit-learn estimator check passes (or fails for the reason its class gives)."""
    check(estimator)
