"""The slowest tests of the last ``bin/test`` run, from its JUnit report (var/test-results.xml).

    python -m benchmarks.slowest_tests            # the 20 slowest, and the whole run's sums
    python -m benchmarks.slowest_tests -n 40 path/to/test-results.xml

A test's time is its set-up, call and tear-down as pytest-xdist's worker measured it, so under
parallel workers it includes waiting for a core. The report's wall time is the run's own.
"""

from __future__ import annotations

import argparse
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

DEFAULT_REPORT = Path(__file__).resolve().parents[1] / "var" / "test-results.xml"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", nargs="?", type=Path, default=DEFAULT_REPORT)
    parser.add_argument("-n", type=int, default=20, help="how many tests to list")
    args = parser.parse_args(argv)
    root = ET.parse(args.report).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None, f"{args.report} holds no testsuite"
    times: list[tuple[float, str]] = []
    by_folder: defaultdict[str, float] = defaultdict(float)
    for case in suite.iter("testcase"):
        seconds = float(case.get("time") or 0.0)
        classname = case.get("classname") or ""
        times.append((seconds, f"{classname.replace('.', '/')}.py::{case.get('name')}"))
        by_folder[classname.rsplit(".", 1)[0].replace(".", "/")] += seconds
    times.sort(reverse=True)
    total = sum(seconds for seconds, _ in times)
    print(
        f"{len(times)} tests, run's wall time {float(suite.get('time') or 0):.1f} s, "
        f"sum of test times {total:.1f} s"
    )
    print(f"slowest {args.n}:")
    for seconds, name in times[: args.n]:
        print(f"  {seconds:7.2f} s  {name}")
    print("by folder:")
    for folder, seconds in sorted(by_folder.items(), key=lambda item: -item[1]):
        print(f"  {seconds:7.1f} s  {folder}")


if __name__ == "__main__":
    main()
