"""Significance of cost differences between learners (paper 000's tests), through scipy.stats.

* :func:`paired_t_test`: two learners on the same folds of one dataset (``ttest_rel``, or
  with ``test_train_ratio`` Nadeau and Bengio's corrected resampled t-test through
  ``scipy.stats.t``), with the mean difference, its confidence interval and Cohen's d of the
  differences (d_z).
* :func:`wilcoxon_test`: two learners across datasets, one mean per dataset (``wilcoxon``),
  with the matched-pairs effect size r = z / sqrt(n) from scipy's normal approximation.
* :func:`mean_interval`: a mean and its Student-t confidence interval (``ttest_1samp``).

Every statistic comes from scipy; this module only packs the answers and says when there is
not enough data (fewer than two pairs, or no difference at all) rather than returning NaN
silently.  No Django, no files.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields

import numpy as np
from scipy import stats

__all__ = [
    "ALPHA",
    "MeanInterval",
    "PairedComparison",
    "mean_interval",
    "paired_t_test",
    "wilcoxon_test",
]

#: The significance level the app reports against.
ALPHA = 0.05


@dataclass(frozen=True)
class PairedComparison:
    """One test of ``a`` against ``b`` (differences are ``a - b``; lower cost is better).

    ``p_value`` and ``statistic`` are None when the test cannot be made (``note`` says why).
    """

    test: str
    n: int
    mean_a: float
    mean_b: float
    mean_difference: float
    statistic: float | None
    p_value: float | None
    effect_size: float | None
    effect_size_name: str
    ci_low: float | None = None
    ci_high: float | None = None
    note: str = ""

    @property
    def significant(self) -> bool:
        return self.p_value is not None and self.p_value < ALPHA

    def to_dict(self) -> dict:
        data = asdict(self)
        data["significant"] = self.significant
        return data

    @classmethod
    def from_dict(cls, data: Mapping) -> PairedComparison:
        """The comparison :meth:`to_dict` wrote (other keys, e.g. whose it is, are ignored)."""
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


@dataclass(frozen=True)
class MeanInterval:
    """A mean with its two-sided Student-t confidence interval (None with one value)."""

    mean: float
    low: float | None
    high: float | None
    n: int
    confidence: float

    def to_dict(self) -> dict:
        return asdict(self)


def _pairs(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"need two equally long lists of paired values, got {x.shape}, {y.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("paired values must be finite numbers")
    return x, y


def _packed(test: str, effect_name: str, x: np.ndarray, y: np.ndarray, **rest) -> PairedComparison:
    n = len(x)
    return PairedComparison(
        test=test,
        n=n,
        mean_a=float(np.mean(x)) if n else math.nan,
        mean_b=float(np.mean(y)) if n else math.nan,
        mean_difference=float(np.mean(x - y)) if n else math.nan,
        effect_size_name=effect_name,
        statistic=rest.pop("statistic", None),
        p_value=rest.pop("p_value", None),
        effect_size=rest.pop("effect_size", None),
        **rest,
    )


def _finite(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def paired_t_test(
    a: Sequence[float],
    b: Sequence[float],
    *,
    confidence: float = 0.95,
    test_train_ratio: float = 0.0,
) -> PairedComparison:
    """Paired t-test of ``a`` against ``b``; with ``test_train_ratio``, Nadeau and Bengio's.

    With ``test_train_ratio`` 0 it is Student's paired t-test (``scipy.stats.ttest_rel``).
    Pairs from cross-validation folds are not independent (the folds' training sets
    overlap), so the plain test is overconfident; the corrected resampled t-test (Nadeau &
    Bengio, 2003) widens the variance of the mean difference from ``s^2 / n`` to
    ``(1 / n + n_test / n_train) s^2``, with the t distribution's n - 1 degrees of freedom
    (``scipy.stats.t``).  For k-fold CV the ratio is ``1 / (k - 1)``.

    The effect size is d_z = mean(a - b) / sd(a - b) (``ddof=1``); the interval is that of
    the mean difference, under the same variance.
    """
    if not (math.isfinite(test_train_ratio) and test_train_ratio >= 0):
        raise ValueError(f"test_train_ratio must be a finite number >= 0, got {test_train_ratio}")
    x, y = _pairs(a, b)
    name = "corrected paired t-test" if test_train_ratio else "paired t-test"
    effect = "Cohen's d_z"
    if len(x) < 2:
        return _packed(name, effect, x, y, note="fewer than 2 pairs")
    difference = x - y
    spread = float(np.std(difference, ddof=1))
    scale = max(float(np.max(np.abs(x))), float(np.max(np.abs(y))), 1.0)
    # equal up to rounding (two learners that made the same decisions): no t to speak of
    if spread <= 1e-12 * scale:
        return _packed(name, effect, x, y, note="the differences are all equal: no test possible")
    mean = float(np.mean(difference))
    if test_train_ratio:
        n = len(difference)
        error = spread * math.sqrt(1.0 / n + test_train_ratio)
        t = stats.t(df=n - 1)
        statistic = mean / error
        p_value = float(2.0 * t.sf(abs(statistic)))
        half = float(t.ppf(0.5 + confidence / 2.0)) * error
        low, high = mean - half, mean + half
    else:
        result = stats.ttest_rel(x, y)
        interval = result.confidence_interval(confidence_level=confidence)
        statistic, p_value, low, high = result.statistic, result.pvalue, interval.low, interval.high
    return _packed(
        name,
        effect,
        x,
        y,
        statistic=_finite(statistic),
        p_value=_finite(p_value),
        effect_size=mean / spread,
        ci_low=_finite(low),
        ci_high=_finite(high),
    )


def wilcoxon_test(a: Sequence[float], b: Sequence[float]) -> PairedComparison:
    """Wilcoxon signed-rank test of ``a`` against ``b`` (one value per dataset).

    ``scipy.stats.wilcoxon`` (two-sided; exact for small samples without ties, as scipy
    chooses).  The effect size r = z / sqrt(n) takes z from scipy's normal approximation
    (``method="approx"``), n being the pairs with a non-zero difference.
    """
    x, y = _pairs(a, b)
    n = len(x)
    name, effect = "Wilcoxon signed-rank", "r = z / sqrt(n)"
    nonzero = int(np.count_nonzero(x - y))
    if nonzero < 1 or n < 2:
        return _packed(
            name,
            effect,
            x,
            y,
            note="fewer than 2 datasets" if n < 2 else "no dataset differs: no test possible",
        )
    result = stats.wilcoxon(x, y)
    approx = stats.wilcoxon(x, y, method="approx")
    z = float(approx.zstatistic)
    # scipy's z is the magnitude's sign-free statistic; give r the sign of the mean difference
    sign = -1.0 if np.mean(x - y) < 0 else 1.0
    return _packed(
        name,
        effect,
        x,
        y,
        statistic=_finite(result.statistic),
        p_value=_finite(result.pvalue),
        effect_size=sign * abs(z) / math.sqrt(nonzero),
    )


def mean_interval(values: Sequence[float], *, confidence: float = 0.95) -> MeanInterval:
    """The mean of ``values`` and its t interval (``scipy.stats.ttest_1samp``)."""
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or len(x) == 0 or not np.all(np.isfinite(x)):
        raise ValueError("need at least one finite value")
    mean = float(np.mean(x))
    if len(x) < 2:
        return MeanInterval(mean=mean, low=None, high=None, n=1, confidence=confidence)
    if float(np.std(x)) == 0.0:
        return MeanInterval(mean=mean, low=mean, high=mean, n=len(x), confidence=confidence)
    interval = stats.ttest_1samp(x, 0.0).confidence_interval(confidence_level=confidence)
    return MeanInterval(
        mean=mean,
        low=_finite(interval.low),
        high=_finite(interval.high),
        n=len(x),
        confidence=confidence,
    )
