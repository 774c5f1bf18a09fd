"""Load time and bytes of the chart pages, first and repeat visit, in headless Chromium.

Starts the app as ``bin/run`` does, in a private folder (SQLite database, migrations, demo users,
datasets and trained models, collectstatic, gunicorn), logs in as the demo clinician and opens
each chart page (a model page, a tree page, a conditioned-loss case page with its risk chart,
the research page) in a fresh browser profile: the first visit, then ``--repeat`` more visits
with the browser's cache warm.  For each it prints the bytes that came over the network, the
server's time to first byte of the page, the time to the load event and the time until every
chart on the page is drawn.

    python -m benchmarks.page_load                 # from the repository root
    python -m benchmarks.page_load --repeat 5 --workers 2 --json var/page_load.json

Needs Debian's /usr/bin/chromium (CHROMIUM_PATH) and the test requirements (Playwright).
Traffic goes to 127.0.0.1 only; the server is stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks._server import free_port, manage, start_gunicorn, wait_until_up

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CLINICIAN = ("clinician", os.environ.get("DEMO_CLINICIAN_PASSWORD", "clinician-demo"))

# Finds the demo models and opens a conditioned-loss case up to its first risk chart.
_SETUP = r"""
import json
from django.contrib.auth.models import User
from diagnosis.catalog.models import TrainedModel
from diagnosis.clinic.selectors import case_state
from diagnosis.clinic.services import cases

ready = [m for m in TrainedModel.objects.order_by("id") if m.is_ready]
tree = next(m for m in ready if m.learner == "eg2" and m.dataset.name.startswith("Heart"))
risk = next(m for m in ready if m.learner == "conditioned_loss")
clinician = User.objects.get(username="clinician")
patient = next(c for c in risk.dataset.cases.order_by("id") if None not in c.values)
case = cases.start_case(user=clinician, trained_model=risk)
state = case_state(user=clinician, case=case)
for _ in range(60):
    if state.advice.kind != "extract" or state.explanation.risks:
        break
    index = state.advice.test_index
    cases.take_step(user=clinician, case=case, action="result",
                    test=state.advice.test_name, value=patient.values[index])
    state = case_state(user=clinician, case=case)
print("SETUP" + json.dumps({"tree_model": tree.pk, "risk_model": risk.pk, "case": case.pk,
                            "risk_chart": bool(state.explanation.risks)}))
"""

# Every [data-figure] holder has its Plotly SVG (or the page has no figure holder).
_CHARTS_DRAWN = (
    "() => [...document.querySelectorAll('[data-figure]')]"
    ".every(el => el.querySelector('.main-svg'))"
)


def _research_figure(folder: Path) -> None:
    """One saved figure of a typical size (two curves of 200 points), as the benchmarks save."""
    folder.mkdir(parents=True, exist_ok=True)
    xs = list(range(200))
    figure = {
        "data": [
            {"type": "scatter", "name": "test cost", "x": xs, "y": [50 - x / 5 for x in xs]},
            {"type": "scatter", "name": "accuracy", "x": xs, "y": [70 + x / 20 for x in xs]},
        ],
        "layout": {"title": {"text": "A saved research figure"}},
    }
    (folder / "page_load_example.json").write_text(json.dumps(figure))


class _Meter:
    """Bytes received over the network (Chromium's encoded lengths), per navigation."""

    def __init__(self, context, page) -> None:
        self.total = 0
        self.responses: list[dict] = []
        session = context.new_cdp_session(page)
        session.send("Network.enable")
        session.on("Network.loadingFinished", self._finished)
        session.on("Network.responseReceived", self._response)

    def _finished(self, event) -> None:
        self.total += int(event.get("encodedDataLength") or 0)

    def _response(self, event) -> None:
        response = event["response"]
        headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
        self.responses.append(
            {
                "url": response["url"],
                "status": response["status"],
                "from_cache": bool(
                    response.get("fromDiskCache") or response.get("fromMemoryCache")
                ),
                "content-encoding": headers.get("content-encoding", ""),
                "cache-control": headers.get("cache-control", ""),
            }
        )

    def reset(self) -> None:
        self.total = 0
        self.responses = []


def _visit(page, meter: _Meter, url: str) -> dict:
    meter.reset()
    started = time.perf_counter()
    page.goto(url, wait_until="load")
    loaded = time.perf_counter() - started
    page.wait_for_function(_CHARTS_DRAWN, timeout=60_000)
    drawn = time.perf_counter() - started
    page.wait_for_timeout(200)  # late loadingFinished events
    timing = page.evaluate(
        "() => { const n = performance.getEntriesByType('navigation')[0];"
        " return {server: n.responseStart - n.requestStart}; }"
    )
    plotly = [r for r in meter.responses if "plotly" in r["url"]]
    return {
        "kb": meter.total / 1024,
        "server_ms": timing["server"],
        "load_ms": loaded * 1000,
        "charts_ms": drawn * 1000,
        "figures": page.locator("[data-figure]").count(),
        "plotly": plotly[0] if plotly else None,
    }


def _log_in(page, base: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", CLINICIAN[0])
    page.fill("input[name=password]", CLINICIAN[1])
    with page.expect_navigation():
        page.locator("form [type=submit]").first.click()
    if "/accounts/login/" in page.url:
        raise SystemExit("could not log in as the demo clinician")


def measure(base: str, pages: dict[str, str], repeat: int) -> dict:
    from playwright.sync_api import sync_playwright

    results = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        for name, path in pages.items():
            # A fresh profile per page: its first visit finds only the login page's assets cached.
            context = browser.new_context(viewport={"width": 1366, "height": 768})
            page = context.new_page()
            _log_in(page, base)
            meter = _Meter(context, page)
            first = _visit(page, meter, base + path)
            again = [_visit(page, meter, base + path) for _ in range(repeat)]
            results[name] = {"path": path, "first": first, "repeat": again}
            context.close()
        browser.close()
    return results


def _median(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def report(results: dict) -> str:
    lines = [
        f"{'page':<10} {'visit':<7} {'KB':>9} {'server ms':>10} {'load ms':>9} {'charts ms':>10}"
        "  plotly.js (encoding, cache-control)"
    ]
    for name, row in results.items():
        first, again = row["first"], row["repeat"]
        plotly = first["plotly"]
        how = (
            f"{plotly['content-encoding'] or 'identity'}, {plotly['cache-control'] or '-'}"
            if plotly
            else "-"
        )
        lines.append(
            f"{name:<10} {'first':<7} {first['kb']:9.1f} {first['server_ms']:10.0f} "
            f"{first['load_ms']:9.0f} {first['charts_ms']:10.0f}  {how}"
        )
        lines.append(
            f"{'':<10} {'repeat':<7} {_median(again, 'kb'):9.1f} "
            f"{_median(again, 'server_ms'):10.0f} {_median(again, 'load_ms'):9.0f} "
            f"{_median(again, 'charts_ms'):10.0f}  (median of {len(again)}; "
            f"max charts {max(r['charts_ms'] for r in again):.0f} ms)"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="repeat visits per page")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    parser.add_argument(
        "--folder",
        type=Path,
        help="set up in this folder and keep it; a folder already set up is reused as it is",
    )
    args = parser.parse_args(argv)
    if not shutil.which(CHROMIUM) and not os.path.exists(CHROMIUM):
        raise SystemExit(f"{CHROMIUM} is missing (apt-get install chromium, or CHROMIUM_PATH)")

    folder = args.folder.resolve() if args.folder else Path(tempfile.mkdtemp(prefix="page-load-"))
    reuse = (folder / "var" / "db.sqlite3").is_file()
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DIAGNOSIS_VAR_DIR=str(folder / "var"),
        DJANGO_STATIC_ROOT=str(folder / "static"),
        RESEARCH_FIGURES_DIR=str(folder / "figures"),
        DJANGO_SECRET_KEY="page-load-benchmark-only",
        DJANGO_DEBUG="false",
        DJANGO_HTTPS="false",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        CELERY_BROKER_URL="filesystem://",
    )
    _research_figure(folder / "figures")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = None
    try:
        print(f"Setting up in {folder} (as bin/run does):", flush=True)
        manage(["migrate", "--noinput"], env, "migrate")
        if not reuse:
            # The heart and thyroid demo datasets and models (the pages below use no other).
            only = ["--only", "Heart disease (Cleveland)", "--only", "Thyroid (ann-thyroid)"]
            manage(["load_demo_data", *only], env, "demo data and models")
        manage(["collectstatic", "--noinput", "--verbosity", "0"], env, "collectstatic")
        out = manage(["shell", "-c", _SETUP], env, "a conditioned-loss case")
        ids = json.loads(out.split("SETUP", 1)[1].splitlines()[0])
        server = start_gunicorn(env, port, args.workers)
        wait_until_up(f"{base}/accounts/login/", server)
        pages = {
            "model": f"/models/{ids['tree_model']}/",
            "tree": f"/models/{ids['tree_model']}/tree/",
            "case": f"/cases/{ids['case']}/",
            "research": "/research/",
        }
        results = measure(base, pages, args.repeat)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        if not args.folder:
            shutil.rmtree(folder, ignore_errors=True)
    print(
        f"\nChart pages, {args.workers} gunicorn workers, 1366x768 (case risk chart: "
        f"{'yes' if ids['risk_chart'] else 'no'}):"
    )
    print(report(results))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
