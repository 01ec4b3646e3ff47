"""Capturing what the acceptance tests hand to ``fairway simulate``, for the golden corpus (``tests/support/corpus.py``).

``capture(path)`` runs ``tests/acceptance`` under pytest with a plugin that wraps the two ways those tests call
simulate — ``controlplane.cli.main(["simulate", ...])`` in process (through ``controlplane.simulate_cli.run``) and
``tests.acceptance.simulate_runner.run_simulate`` in a subprocess — and notes, for every call, the test, the files
(``-f``), the ``--policy`` file and the run (``--sessions``, ``--recycle``); the tests themselves run and assert as
always. The seeds' session tests (000 sessions, 001 recycling, 003 enqueue, 004 victims) build engine snapshots, not
manifests: the plugin also wraps ``engine.session.run.run_session`` and ``run_recycle`` and writes each snapshot
they are given (outside a simulate run) as the manifests that read back to it, ``tests.support.manifest_dump.dump_yaml``
(session-internal state such as a podgroup's requeue count has no manifest form and is lost). Left out: runs with ``FAIRWAY_*`` limits changed through the environment (their outcome is the limit's, and
one is a wall-clock budget), files that do not exist, and the peers' manifests beside the repository (the corpus reads
those in place). The fuzz test is not run (its inputs are random mutations); its unmutated seeds are added as they
are, alone and with its policy.

The inputs are kept as they were, one JSON line each, so that the corpus does not follow later edits of the tests.
This module imports the acceptance tests, hence Django; ``corpus.py`` imports it only for ``--capture-acceptance``.
"""

from __future__ import annotations

import argparse
import hashlib
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.support import corpus

SKIPPED_TESTS = ("tests/acceptance/test_simulate_fuzz.py",)


def _slug(nodeid: str) -> str:
    """``tests/acceptance/test_x.py::test_y[a-b]`` -> ``x::test_y[a-b]``, without characters awkward in a shell."""
    name = nodeid.removeprefix("tests/acceptance/").replace(".py::", "::").removeprefix("test_")
    return re.sub(r"[^\w\-\[\]:.,]", "_", name)


class Capture:
    """The pytest plugin: every simulate call made while a test runs, by test."""

    def __init__(self) -> None:
        self.current = ""
        self.inside_simulate = False
        self.inputs: dict[str, dict[str, Any]] = {}  # key: digest of files and policy
        self.order: list[str] = []

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        from controlplane import simulate_cli
        from tests.acceptance import simulate_runner

        self.parser = argparse.ArgumentParser(prog="fairway")
        simulate_cli.add_parser(self.parser.add_subparsers(dest="command"))
        run_in_process: Callable[[argparse.Namespace], int] = simulate_cli.run
        run_in_subprocess = simulate_runner.run_simulate

        def run(args: argparse.Namespace) -> int:
            self.note(args.filename, args.policy, args.sessions, args.recycle)
            self.inside_simulate = True  # its own sessions are not inputs
            try:
                return run_in_process(args)
            finally:
                self.inside_simulate = False

        def run_simulate(args: Sequence[str], *, env: dict[str, str] | None = None, **kw: Any) -> Any:
            if not env:
                parsed = self.parser.parse_args(["simulate", *args])
                self.note(parsed.filename, parsed.policy, parsed.sessions, parsed.recycle)
            return run_in_subprocess(args, env=env, **kw)

        simulate_cli.run = run  # type: ignore[assignment]
        simulate_runner.run_simulate = run_simulate  # the test modules import it after this, at collection

        # The seeds' session tests build engine snapshots, not manifests: each snapshot a session or a recycling
        # pass is run on is written as the manifests that read back to it (``dump_yaml``, its policy included).
        from engine.session import run as engine
        from tests.support import manifest_dump

        session, recycle = engine.run_session, engine.run_recycle

        def run_session(snapshot: Any, *, policy: Any = None, **kw: Any) -> Any:
            self.note_snapshot(snapshot if policy is None else snapshot.with_policy(policy), manifest_dump.dump_yaml)
            return session(snapshot, policy=policy, **kw)

        def run_recycle(snapshot: Any, **kw: Any) -> Any:
            self.note_snapshot(snapshot, manifest_dump.dump_yaml)
            return recycle(snapshot, **kw)

        engine.run_session = run_session  # type: ignore[assignment]
        engine.run_recycle = run_recycle  # type: ignore[assignment]

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self.current = item.nodeid

    def note(self, filenames: Sequence[str], policy: str | None, sessions: int, recycle: bool) -> None:
        paths = [Path(f) for f in filenames]
        if policy:
            paths.append(Path(policy))
        peers = corpus._peer_directory().resolve()
        if any(f == "-" for f in filenames) or not all(p.is_file() for p in paths):
            return
        if any(peers in p.resolve().parents for p in paths):
            return
        files = [(Path(f).name, Path(f).read_bytes()) for f in filenames]
        given = (Path(policy).name, Path(policy).read_bytes()) if policy else None
        self._add(files, given, [sessions, recycle] if 1 <= sessions <= 20 else None)

    def note_snapshot(self, snapshot: Any, dump: Callable[[Any], str]) -> None:
        if self.inside_simulate or not self.current.startswith("tests/acceptance/"):
            return
        self._add([("session.yaml", dump(snapshot).encode("utf-8"))], None, None)

    def _add(self, files: list[tuple[str, bytes]], given: tuple[str, bytes] | None, run: list[Any] | None) -> None:
        h = hashlib.sha256()
        for name, data in (*files, *([given] if given else [])):
            h.update(name.encode() + b"\0" + data + b"\0")
        key = h.hexdigest()
        if key not in self.inputs:
            self.inputs[key] = {
                "test": self.current,
                "files": [[name, corpus._entry(data)] for name, data in files],
                "policy": [given[0], corpus._entry(given[1])] if given else None,
                "runs": [],
            }
            self.order.append(key)
        runs = self.inputs[key]["runs"]
        if run is not None and run not in runs:
            runs.append(run)


def _fuzz_seeds() -> list[dict[str, Any]]:
    from tests.acceptance.test_simulate_fuzz import acceptance_manifests

    seeds = acceptance_manifests()
    policy = seeds.pop("policy.conf")
    out = []
    for name, text in sorted(seeds.items()):
        for given in (None, ["policy.conf", policy]):
            out.append(
                {
                    "test": "tests/acceptance/test_simulate_fuzz.py::acceptance_manifests",
                    "files": [[name, text]],
                    "policy": given,
                    "runs": [],
                    "id": f"acc-fuzz-seed::{name}{'+policy' if given else ''}",
                }
            )
    return out


def capture(path: Path) -> int:
    """Run the acceptance tests with the plugin and write every input they simulate to ``path``."""
    plugin = Capture()
    args = ["-q", "-p", "no:cacheprovider", "tests/acceptance", *(f"--ignore={t}" for t in SKIPPED_TESTS)]
    code = pytest.main(args, plugins=[plugin])
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        raise SystemExit(f"pytest ended with {code!r}: nothing captured")
    records = []
    per_test: dict[str, int] = {}
    for key in plugin.order:
        record = plugin.inputs[key]
        slug = _slug(record["test"])
        per_test[slug] = per_test.get(slug, 0) + 1
        record["id"] = f"acc-{slug}#{per_test[slug]}"
        records.append(record)
    records += _fuzz_seeds()
    return corpus._write_jsonl(path, records)
