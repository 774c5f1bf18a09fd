"""learners.significance against scipy.stats on hand-made examples."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from learners.significance import (
    ALPHA,
    PairedComparison,
    mean_interval,
    paired_t_test,
    wilcoxon_test,
)

# Normalized costs of two learners on the same 10 folds (made up by hand).
A = [0.42, 0.51, 0.38, 0.47, 0.55, 0.40, 0.44, 0.49, 0.36, 0.46]
B = [0.47, 0.53, 0.45, 0.46, 0.61, 0.48, 0.50, 0.52, 0.41, 0.49]


def test_paired_t_test_matches_scipy_ttest_rel():
    """t, p and the mean difference's interval are scipy's; d_z is mean/sd of the differences."""
    result = paired_t_test(A, B)
    reference = stats.ttest_rel(A, B)
    interval = reference.confidence_interval(0.95)
    assert result.statistic == pytest.approx(reference.statistic)
    assert result.p_value == pytest.approx(reference.pvalue)
    assert (result.ci_low, result.ci_high) == pytest.approx((interval.low, interval.high))
    d = np.subtract(A, B)
    assert result.effect_size == pytest.approx(d.mean() / d.std(ddof=1))
    assert result.mean_difference == pytest.approx(d.mean())
    assert result.n == 10 and result.significant == (reference.pvalue < ALPHA)
    # by hand: the ten differences sum to -0.44, so A is cheaper by 0.044 per fold on average
    assert result.mean_difference == pytest.approx(-0.044)
    assert result.significant


def test_corrected_t_test_widens_the_variance_by_the_test_train_ratio():
    """Nadeau-Bengio: t = mean / (sd * sqrt(1/n + n_test/n_train)), p two-sided on n - 1 df."""
    ratio = 1 / 9  # 10-fold CV: each test fold is a ninth of its training part
    result = paired_t_test(A, B, test_train_ratio=ratio)
    d = np.subtract(A, B)
    error = d.std(ddof=1) * math.sqrt(1 / 10 + ratio)
    t = d.mean() / error
    assert result.test == "corrected paired t-test"
    assert result.statistic == pytest.approx(t)
    assert result.p_value == pytest.approx(2 * stats.t.sf(abs(t), 9))
    half = stats.t.ppf(0.975, 9) * error
    assert (result.ci_low, result.ci_high) == pytest.approx((d.mean() - half, d.mean() + half))
    assert result.effect_size == pytest.approx(paired_t_test(A, B).effect_size)
    # the overlap of training sets makes the plain test overconfident: the corrected p is larger
    assert result.p_value > paired_t_test(A, B).p_value


def test_a_negative_or_infinite_test_train_ratio_is_refused():
    """The ratio of test to training cases cannot be negative or infinite."""
    for ratio in (-0.1, math.inf, math.nan):
        with pytest.raises(ValueError, match="test_train_ratio"):
            paired_t_test(A, B, test_train_ratio=ratio)


def test_wilcoxon_matches_scipy_and_r_uses_scipys_z():
    """Statistic and p-value are scipy.stats.wilcoxon's; r = z / sqrt(n) with scipy's z."""
    per_dataset_a = [0.61, 0.48, 0.72, 0.33, 0.55, 0.49, 0.80, 0.41]
    per_dataset_b = [0.66, 0.47, 0.79, 0.38, 0.59, 0.55, 0.83, 0.49]
    result = wilcoxon_test(per_dataset_a, per_dataset_b)
    reference = stats.wilcoxon(per_dataset_a, per_dataset_b)
    approx = stats.wilcoxon(per_dataset_a, per_dataset_b, method="approx")
    assert result.statistic == pytest.approx(reference.statistic)
    assert result.p_value == pytest.approx(reference.pvalue)
    assert abs(result.effect_size) == pytest.approx(abs(approx.zstatistic) / math.sqrt(8))
    assert result.effect_size < 0  # a is cheaper on 7 of 8 datasets
    assert result.statistic == 1.0  # by hand: the one dataset where b is cheaper has rank 1


def test_mean_interval_matches_scipy_t_interval():
    """The interval of the mean is scipy's Student-t interval (ttest_1samp)."""
    result = mean_interval(A, confidence=0.9)
    low, high = stats.t.interval(0.9, len(A) - 1, loc=np.mean(A), scale=stats.sem(A))
    assert (result.low, result.high) == pytest.approx((low, high))
    assert result.mean == pytest.approx(np.mean(A))


def test_too_little_data_is_said_not_computed():
    """One pair, identical differences, or a single value: no p-value, and a note why."""
    assert paired_t_test([1.0], [2.0]).p_value is None
    flat = paired_t_test([1.0, 2.0, 3.0], [2.0, 3.0, 4.0])
    assert flat.p_value is None and "equal" in flat.note and not flat.significant
    rounding = paired_t_test([0.1 + 0.2, 0.7, 0.9], [0.3, 0.7 + 1e-17, 0.9])
    assert rounding.p_value is None and "equal" in rounding.note
    assert wilcoxon_test([1.0, 2.0], [1.0, 2.0]).p_value is None
    single = mean_interval([3.0])
    assert single.low is None and single.mean == 3.0
    with pytest.raises(ValueError):
        paired_t_test([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        paired_t_test([1.0, float("nan")], [1.0, 2.0])


def test_a_comparison_read_back_from_its_dict_is_the_same_comparison():
    """from_dict(to_dict()) gives back an equal comparison, ignoring keys that are not its own."""
    result = paired_t_test([3.0, 5.0, 4.0, 6.0], [2.0, 4.5, 4.0, 5.0])
    data = {**result.to_dict(), "matrix_index": 1, "a": 0, "b": 1}
    assert PairedComparison.from_dict(data) == result
