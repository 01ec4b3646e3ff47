"""First paint of the chart pages (issue 30 item 8): how long from the navigation's start until every chart of the
page is drawn, in a fresh browser context, on the small and on the large demo.

Targets: the overview, the two tree pages and a team's queue page interactive in <= 0.5 s on the small demo and
<= 1.5 s on the large one (median of 10 loads, quiet machine). "Interactive" is the page's
``performance.mark('fairway:charts-ready')`` (``frontend/static/frontend/js/charts.js`` sets it once plotly.js
has drawn every figure that is on screen; a page without it is measured at ``body[data-chart-ready]``, the flag
the same script set before the mark existed, seen by a MutationObserver installed before the page's own scripts).

Setup, per size: a PostgreSQL database ``<prefix>_<size>`` (created when missing), ``migrate``, ``load_demo
--size <size>`` and, when the demo was just loaded, one scheduling session (``run_session``) so that jobs run;
the static files are collected with the production storage (hashed, compressed) into a temporary folder; the app
runs under gunicorn as deployed (WhiteNoise serves the static files). A superuser ``paint-bench`` signs in once;
every measured load is a new browser context that only carries that session cookie (no HTTP cache, so plotly.js
is fetched every time). Two loads of each page warm the server (its value cache) before the 10 that count.
Chromium is Debian's (``/usr/bin/chromium`` or ``FAIRWAY_CHROMIUM``), driven by Python Playwright, with the pages
bench's flags and its omnibox popup turned off (``WebUIOmniboxPopup``): Chromium 156 builds that popup, a WebUI page
of its own, for every new window even headless, and a fresh context is a new window, so each measured load ran
beside 0.7 s of another renderer's work on the same two cores; a person's browser has its windows open already.

Run: ``.venv/bin/python bench/bench_paint.py [--sizes small,large] [--repeat 10]
[--database postgres://postgres@127.0.0.1:5432/fairway_paint]`` (loading the large demo takes several minutes the
first time; the databases are kept for the next run).
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PYTHON = str(Path(sys.executable))
CHROMIUM = os.environ.get("FAIRWAY_CHROMIUM", "/usr/bin/chromium")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_pages import CHROMIUM_ARGS  # noqa: E402 - the same browser flags as the pages bench


def browser_args() -> list[str]:
    """The pages bench's flags with Chromium's omnibox popup WebUI among the disabled features (one
    ``--disable-features``: Chromium reads only the last one given)."""
    out = [arg for arg in CHROMIUM_ARGS if not arg.startswith("--disable-features=")]
    disabled = [arg.split("=", 1)[1] for arg in CHROMIUM_ARGS if arg.startswith("--disable-features=")]
    return [*out, "--disable-features=" + ",".join([*disabled, "WebUIOmniboxPopup"])]


TARGET_S = {"small": 0.5, "large": 1.5}
PAGES = [
    ("overview", "/overview/"),
    ("queue tree", "/trees/queues/"),
    ("quota tree", "/trees/quotas/"),
    ("queue page", "/queues/ml-research/"),
]
MARK = "fairway:charts-ready"
USER = "paint-bench"

# Before the pages had the mark: note when charts.js flags the body (installed before any script of the page).
FLAG_WATCH = """
(() => {
  const seen = () => {
    if (document.body && document.body.dataset.chartReady === "1" && window.__paintFlag === undefined) {
      window.__paintFlag = performance.now();
    }
  };
  new MutationObserver(seen).observe(document, {attributes: true, subtree: true, attributeFilter: ["data-chart-ready"]});
})();
"""
READY = f"""() => {{
  const mark = performance.getEntriesByName("{MARK}")[0];
  if (mark) return {{ready: mark.startTime, how: "mark"}};
  if (window.__paintFlag !== undefined) return {{ready: window.__paintFlag, how: "flag"}};
  return null;
}}"""
NAVIGATION = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  return {responseStart: nav.responseStart, domContentLoaded: nav.domContentLoadedEventEnd,
          bytes: performance.getEntriesByType("resource").reduce((n, r) => n + (r.transferSize || 0), nav.transferSize || 0)};
}"""


def manage(env: dict[str, str], *args: str, capture: bool = False) -> str:
    done = subprocess.run(
        [PYTHON, str(ROOT / "manage.py"), *args],
        env=env,
        cwd=ROOT,
        check=True,
        text=True,
        stdout=subprocess.PIPE if capture else None,
    )
    return done.stdout or ""


def ensure_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            conn.execute(f'CREATE DATABASE "{name}"')


def prepare(size: str, url: str, workdir: Path) -> tuple[dict[str, str], str]:
    """Database, demo, a session, static files and the bench user; returns the server's environment and the
    user's password."""
    ensure_database(url)
    env = dict(os.environ)
    env.update(
        DATABASE_URL=url,
        FAIRWAY_VAR_DIR=str(workdir / "var"),
        STATIC_ROOT=str(workdir / "static"),
        DJANGO_SETTINGS_MODULE="controlplane.settings",
        FAIRWAY_REQUIRE_SECRET_KEY="false",
        SECRET_KEY=secrets.token_urlsafe(40),
    )
    env.pop("STATICFILES_STORAGE", None)  # production storage: hashed and compressed, served by WhiteNoise
    (workdir / "var").mkdir(parents=True, exist_ok=True)
    manage(env, "migrate", "--noinput", "--verbosity", "0")
    probe = "from quotas.models import Queue; print(Queue.objects.filter(name='research').exists())"
    fresh = manage(env, "shell", "-c", probe, capture=True).split()[-1:] != ["True"]
    t0 = time.perf_counter()
    manage(env, "load_demo", "--size", size)
    if fresh:
        manage(env, "run_session")
        print(f"  {size}: demo loaded and one session run in {time.perf_counter() - t0:.0f} s", flush=True)
    manage(env, "collectstatic", "--noinput", "--verbosity", "0")
    password = secrets.token_urlsafe(16)
    make_user = (
        "from django.contrib.auth import get_user_model; U = get_user_model(); "
        f"u = U.objects.filter(username='{USER}').first() or U(username='{USER}'); "
        f"u.is_staff = u.is_superuser = True; u.set_password('{password}'); u.save()"
    )
    manage(env, "shell", "-c", make_user, capture=True)
    return env, password


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(env: dict[str, str], port: int, workers: int, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        server = subprocess.Popen(
            [
                str(Path(PYTHON).parent / "gunicorn"),
                "controlplane.wsgi:application",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                str(workers),
                "--worker-tmp-dir",
                "/tmp",
                "--log-level",
                "warning",
            ],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=out,
        )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=30)
            return server
        except OSError:
            if server.poll() is not None:
                break
            time.sleep(0.3)
    server.terminate()
    server.wait(timeout=30)
    raise RuntimeError(f"gunicorn did not answer: {log.read_text()[-2000:]}")


def load_once(browser: Any, state: dict[str, Any], url: str) -> dict[str, Any]:
    context = browser.new_context(storage_state=state, viewport={"width": 1440, "height": 900})
    try:
        context.add_init_script(FLAG_WATCH)
        page = context.new_page()
        page.goto(url)
        page.wait_for_function(f"({READY})() !== null", timeout=60_000)
        out = page.evaluate(READY)
        out.update(page.evaluate(NAVIGATION))
        return out
    finally:
        context.close()


def measure(base: str, password: str, repeat: int, warmups: int) -> list[tuple[str, list[dict[str, Any]]]]:
    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=browser_args())
        try:
            context = browser.new_context()
            page = context.new_page()
            page.goto(base + "/accounts/login/")
            page.fill("#id_username", USER)
            page.fill("#id_password", password)
            page.click("button[type=submit]")
            page.wait_for_load_state()
            state = context.storage_state()
            context.close()
            for label, path in PAGES:
                for _ in range(warmups):
                    load_once(browser, state, base + path)
                rows.append((label, [load_once(browser, state, base + path) for _ in range(repeat)]))
        finally:
            browser.close()
    return rows


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="small,large", help="comma-separated demo sizes (small, large)")
    parser.add_argument("--repeat", type=int, default=10, help="measured loads per page (default 10)")
    parser.add_argument("--warmups", type=int, default=2, help="loads per page before measuring (default 2)")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers (default 2)")
    parser.add_argument(
        "--database",
        default="postgres://postgres@127.0.0.1:5432/fairway_paint",
        help="database URL prefix; each size uses <prefix>_<size>",
    )
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is missing (make chromium installs Debian's chromium)", file=sys.stderr)
        return 2
    failed = False
    for size in [s.strip() for s in args.sizes.split(",") if s.strip()]:
        with tempfile.TemporaryDirectory(prefix=f"bench-paint-{size}-") as tmp:
            env, password = prepare(size, f"{args.database}_{size}", Path(tmp))
            port = free_port()
            server = start_server(env, port, args.workers, Path(tmp) / "gunicorn.log")
            try:
                rows = measure(f"http://127.0.0.1:{port}", password, args.repeat, args.warmups)
            finally:
                server.terminate()
                server.wait(timeout=30)
        load = os.getloadavg()[0]
        target = TARGET_S[size]
        print(
            f"\n{size} demo: from navigation start to the charts' ready mark, {args.repeat} fresh contexts "
            f"(load average {load:.1f})"
        )
        print(f"  {'page':<12} {'median':>8} {'p90':>8} {'max':>8} {'server':>8} {'DCL':>8} {'bytes':>9}  target")
        for label, loads in rows:
            ready = [r["ready"] / 1000 for r in loads]
            server_s = statistics.median(r["responseStart"] for r in loads) / 1000
            dcl = statistics.median(r["domContentLoaded"] for r in loads) / 1000
            size_kb = statistics.median(r["bytes"] for r in loads) / 1024
            median = statistics.median(ready)
            ok = median <= target
            failed |= not ok
            how = "" if loads[0]["how"] == "mark" else " (body flag: no mark on this page)"
            print(
                f"  {label:<12} {median:7.3f}s {p90(ready):7.3f}s {max(ready):7.3f}s {server_s:7.3f}s "
                f"{dcl:7.3f}s {size_kb:7.0f}KB  <= {target} s {'ok' if ok else 'MISSED'}{how}"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
