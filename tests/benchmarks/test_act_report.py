"""benchmarks/act_report: the per-cell target, the accuracy it needs, the anytime rise test."""

import numpy as np
import pytest

from benchmarks.act_report import _target, accuracy_needed, rise_p_value


def test_target_is_ten_percent_below_the_peer_at_mc_100_and_1000_above_the_floor():
    """mc 100 / 1000 with the peer above the no-test floor: 0.9 x peer; otherwise the peer."""
    assert _target(34.6, 58.61, 1000) == pytest.approx(31.14)
    assert _target(7.5, 12.40, 100) == pytest.approx(6.75)
    assert _target(32.4, 32.45, 100) == 32.4  # the peer is the floor: only match it
    assert _target(40.3, 93.40, 10000) == 40.3
    assert _target(1.0, 1.04, 10) == 1.0


def test_rise_p_value_is_small_only_when_the_cost_rises_on_most_folds():
    """A cost higher on every one of 10 folds gives p < 0.05; lower or equal gives p near 1."""
    base = np.linspace(10.0, 20.0, 10)
    assert rise_p_value(base, base + 1.0) < 0.05
    assert rise_p_value(base, base - 1.0) > 0.9
    assert rise_p_value(base, base.copy()) == 1.0


def test_accuracy_needed_leaves_the_target_minus_the_tests_to_errors():
    """Target 18.36% of a $143.98 standard with $24.50 of tests leaves $1.93 of errors per
    case: at mc 1000 at most 0.193% of cases wrong; tests above the target need over 100%."""
    assert accuracy_needed(18.36, 143.98, 24.50, 1000.0) == pytest.approx(
        1.0 - (0.1836 * 143.98 - 24.50) / 1000.0
    )
    assert 0.998 < accuracy_needed(18.36, 143.98, 24.50, 1000.0) < 0.9982
    assert accuracy_needed(10.0, 100.0, 12.0, 100.0) > 1.0
