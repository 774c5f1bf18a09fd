"""benchmarks/slowest_tests.py: the slowest tests and the sums, read from a JUnit report."""

from __future__ import annotations

from benchmarks import slowest_tests

REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="3" time="12.5">
<testcase classname="tests.learners.test_act" name="test_slow" time="7.25"/>
<testcase classname="tests.diagnosis.clinic.test_steps" name="test_quick[a]" time="0.5"/>
<testcase classname="tests.diagnosis.clinic.test_steps" name="test_middle" time="2.0"/>
</testsuite></testsuites>
"""


def test_lists_the_slowest_first_with_the_wall_time_and_the_sums_by_folder(tmp_path, capsys):
    """The n slowest tests, slowest first; the run's wall time, the sum, and each folder's."""
    report = tmp_path / "test-results.xml"
    report.write_text(REPORT)
    slowest_tests.main([str(report), "-n", "2"])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "3 tests, run's wall time 12.5 s, sum of test times 9.8 s"
    assert out[2].split() == ["7.25", "s", "tests/learners/test_act.py::test_slow"]
    assert out[3].split() == ["2.00", "s", "tests/diagnosis/clinic/test_steps.py::test_middle"]
    assert "test_quick" not in "\n".join(out[:4])
    assert [line.split() for line in out[-2:]] == [
        ["7.2", "s", "tests/learners"],
        ["2.5", "s", "tests/diagnosis/clinic"],
    ]
