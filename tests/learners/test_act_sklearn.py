"""scikit-learn's estimator checks over ACT, LSID3 and ICET."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from learners.act import ACTClassifier, ICETClassifier, LSID3Classifier

ESTIMATORS = [
    ACTClassifier(r=2, random_state=0),
    LSID3Classifier(r=2, random_state=0),
    ICETClassifier(population=4, generations=1, random_state=0),
]

_TRAIN_CHECKS = [
    "check_classifiers_train",
    "check_classifiers_train(readonly_memmap=True)",
    "check_classifiers_train(readonly_memmap=True,X_dtype=float32)",
]


def expected_failed_checks(estimator):
    """Checks ACT fails by design, with the reason."""
    if isinstance(estimator, ACTClassifier):
        reason = (
            "with the default unit test costs and 0/1 loss a test costs as much as the "
            "error it can remove, so ACT rightly buys few tests and stays below 0.83 accuracy"
        )
        return dict.fromkeys(_TRAIN_CHECKS, reason)
    return {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    """Each scikit-learn estimator check passes (or fails for a listed reason)."""
    check(estimator)
