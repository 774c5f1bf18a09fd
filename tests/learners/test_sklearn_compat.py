"""scikit-learn's estimator checks over every tree learner."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from learners.tree import (
    C45Classifier,
    CSID3Classifier,
    DTMCClassifier,
    EG2Classifier,
    IDXClassifier,
)

ESTIMATORS = [
    C45Classifier(),
    EG2Classifier(),
    IDXClassifier(),
    CSID3Classifier(),
    DTMCClassifier(),
]


_TRAIN_CHECKS = [
    "check_classifiers_train",
    "check_classifiers_train(readonly_memmap=True)",
    "check_classifiers_train(readonly_memmap=True,X_dtype=float32)",
]


def expected_failed_checks(estimator):
    """Checks the learners fail by design, with the reason."""
    failures = {}
    if isinstance(estimator, DTMCClassifier):
        reason = (
            "with the default unit test costs and 0/1 loss no split ever pays "
            "(n * 1 per test > the errors it removes), so DTMC rightly stays a single leaf"
        )
        failures.update(dict.fromkeys(_TRAIN_CHECKS, reason))
    return failures


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    """Each scikit-learn estimator check passes (or fails for a listed reason)."""
    check(estimator)
