"""benchmarks/act_report: the per-cell target, the accuracy it needs, the anytime rise test."""

import numpy as np
import pytest

from benchmarks.act_report import _print_needs, _target, accuracy_needed, main, rise_p_value


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


def test_needs_lists_only_cells_above_the_target_and_not_ties_within_the_peers_rounding(capsys):
    """heart mc 10000 (45.81 against 40.3) is listed with the accuracy it needs; mc 1000 at
    its target and mc 10 within 0.05 of the rounded peer are not."""
    table = {("heart", 10.0): {"ACT": 1.04}, ("heart", 1000.0): {"ACT": 30.91}}
    table[("heart", 10000.0)] = {"ACT": 45.81}
    floors = {("heart", 10.0): 1.40, ("heart", 1000.0): 58.61, ("heart", 10000.0): 93.40}
    details = {key: {"ACT": (0.7855, 104.80, 2408.0, 303)} for key in table}
    _print_needs(table, floors, details, ["ACT"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("heart")]
    need = accuracy_needed(40.3, 2408.0, 104.80, 10000.0)
    assert len(rows) == 1 and rows[0].split()[:3] == ["heart", "10000", "40.30"]
    assert f"{100 * need:.2f}%" in rows[0] and "78.55" in rows[0]
    # in patients: 8.66% of 303 may be wrong (26 whole ones), 21.45% were (65)
    assert "26 /   65 of 303" in rows[0]


@pytest.mark.parametrize("parts", ["both", "table,anytimes", ","])
def test_unknown_parts_are_refused_before_any_run(parts, capsys):
    """A --parts word that is not table or anytime stops with a usage error (exit 2), instead
    of printing empty headers and no figures."""
    with pytest.raises(SystemExit) as stop:
        main(["--parts", parts, "--datasets", "hepatitis", "--learners", "EG2"])
    assert stop.value.code == 2
    assert "--parts" in capsys.readouterr().err
