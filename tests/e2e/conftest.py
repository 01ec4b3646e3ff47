"""Browser tests: Python Playwright driving Debian's chromium (no browser download) against pytest-django's
live server. ``make test`` installs chromium and its headless shell when missing; without them these tests are
skipped.

Playwright's sync API runs an event loop in the test thread, so Django's ORM must be told that this is fine
(``DJANGO_ALLOW_ASYNC_UNSAFE``, for these tests only). Screenshots of every page go to ``tests/artifacts/``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def _chromium() -> str:
    """``FAIRWAY_CHROMIUM``, else Debian's headless shell (the lighter headless build Playwright runs by default; it
    took half the CPU of the full browser over the same tests), else Debian's full chromium in headless mode."""
    if "FAIRWAY_CHROMIUM" in os.environ:
        return os.environ["FAIRWAY_CHROMIUM"]
    shell = Path("/usr/lib/chromium/chromium-headless-shell")
    return str(shell) if shell.exists() else "/usr/bin/chromium"


CHROMIUM = _chromium()
CHROMIUM_ARGS = [
    "--no-sandbox",  # root / containers: no user-namespace sandbox
    "--disable-dev-shm-usage",  # small /dev/shm in containers
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-sync",
    "--metrics-recording-only",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-features=Translate,OptimizationHints,MediaRouter",
]
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing (make test installs Debian's chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    yield ctx
    leave(ctx)
    ctx.close()


def leave(ctx: Any) -> None:
    """Take every tab of ``ctx`` off the site before the test's database is flushed: a live refresh still running
    on the server while the flush truncates the tables can deadlock with it (PostgreSQL then aborts the flush)."""
    for tab in ctx.pages:
        try:
            tab.goto("about:blank")
        except Exception:
            continue
    if ctx.pages:
        ctx.pages[0].wait_for_timeout(500)  # let a request the server already accepted finish


@pytest.fixture
def page(context: Any) -> Iterator[Any]:
    """A page that records the browser's console errors and uncaught exceptions in ``page.problems``."""
    tab = context.new_page()
    # how long a step may wait (a navigation, a selector, a screenshot): a loaded 2-core machine needed more than 15 s
    # for a screenshot once, and more than 30 s for the API reference's whole page; FAIRWAY_E2E_TIMEOUT_MS sets it
    tab.set_default_timeout(int(os.environ.get("FAIRWAY_E2E_TIMEOUT_MS", "90000")))
    tab.problems = []
    tab.on("pageerror", lambda exc: tab.problems.append(f"page error: {exc}"))
    tab.on("console", lambda msg: tab.problems.append(f"console: {msg.text}") if msg.type == "error" else None)
    yield tab


@pytest.fixture
def site(live_server: Any, transactional_db: Any, settings: Any) -> str:
    """The live server's URL, with the built-in tree nodes and the default cluster (transactional tests truncate
    every table), a one-second live refresh, and a fresh value cache."""
    from planning import valuecache
    from quotas import services
    from tests.frontend import builders

    settings.FAIRWAY_LIVE_SECONDS = 1
    services.ensure_builtins()
    builders.cluster()
    valuecache.clear()
    return str(live_server.url)


def shot(page: Any, name: str, *, full_page: bool = True) -> Path:
    """Save a screenshot under tests/artifacts/, the whole page unless ``full_page`` is false (the mouse parked away
    from the figures first)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.mouse.move(0, 0)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


def login(page: Any, site: str, username: str, password: str) -> None:
    page.goto(f"{site}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_load_state()


def charts_ready(page: Any) -> None:
    page.wait_for_selector("body[data-chart-ready='1']", state="attached")
