"""How long the first ACT training waits on numba's compiler, with and without the warm-up.

Each measurement runs in a fresh Python process with its own numba cache folder
(``NUMBA_CACHE_DIR``), so nothing compiled earlier helps it unless the scenario says so:

  cold       no warm-up: the first ACT fit (the app's default parameters, heart data with
             Turney's prices) compiles its kernels itself; this is what a worker did before;
  setup      ``warm_kernels`` on an empty cache (``bin/run``'s set-up step), then the fit;
  worker     a new process on the cache the set-up filled: ``warm_kernels`` (what each Celery
             pool process does as it starts, on a background thread), then the fit.

    python -m benchmarks.kernel_warmup
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _child(warm: bool) -> dict:
    from datasets import load_known
    from diagnosis.shared import learner_registry
    from diagnosis.training.services.warmup import warm_kernels

    data = load_known("heart")
    result: dict = {}
    if warm:
        started = time.perf_counter()
        warm_kernels()
        result["warm_up_s"] = time.perf_counter() - started
    model = learner_registry.build_estimator(
        "act",
        {},
        cost_model=data.costs,
        cost_matrix=[[0.0, 100.0], [100.0, 0.0]],
        reject_cost=None,
        categorical_features=data.categorical,
        random_state=0,
    )
    started = time.perf_counter()
    model.fit(data.X, data.y)
    result["first_act_fit_s"] = time.perf_counter() - started
    started = time.perf_counter()
    model.fit(data.X, data.y)
    result["second_act_fit_s"] = time.perf_counter() - started
    return result


def _run(mode: str, cache: Path) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.kernel_warmup", "--child", mode],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"{mode} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", choices=["cold", "warm"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(_child(warm=args.child == "warm")))
        return 0
    with tempfile.TemporaryDirectory() as cold, tempfile.TemporaryDirectory() as shared:
        rows = {
            "cold": _run("cold", Path(cold)),
            "setup": _run("warm", Path(shared)),
            "worker": _run("warm", Path(shared)),
        }
    print(f"{'scenario':<8} {'warm-up s':>10} {'first ACT fit s':>16} {'second fit s':>13}")
    for name, row in rows.items():
        warm = f"{row['warm_up_s']:.1f}" if "warm_up_s" in row else "-"
        print(
            f"{name:<8} {warm:>10} {row['first_act_fit_s']:>16.1f} {row['second_act_fit_s']:>13.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
