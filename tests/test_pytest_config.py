"""The suite runs with plain ``pytest`` on a clone with nothing beside it: the test settings come from the pytest
configuration (pytest-env) unless the environment already sets them, and the tests that read the peers' manifests
(``../shared/fixtures/manifests``) skip, saying why, when they are absent."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support import migrated_sqlite

REPO = Path(__file__).resolve().parents[1]
SETTINGS = ("DATABASE_URL", "FAIRWAY_TEST_REDIS_URL", "STATICFILES_STORAGE")


def pytest_run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in SETTINGS and not k.startswith(("PYTEST_", "DJANGO_"))}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            *(args if "-n" in args else ("-p", "no:xdist", *args)),
        ],
        cwd=REPO,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_pytest_configuration_sets_the_test_settings() -> None:
    run = pytest_run("--pytest-env-verbose", "--collect-only", "tests/unit/test_resources.py")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "SET   DATABASE_URL=postgres://postgres@127.0.0.1:5432/fairway" in run.stdout
    assert "SET   FAIRWAY_TEST_REDIS_URL=redis://127.0.0.1:6379/15" in run.stdout
    assert "SET   STATICFILES_STORAGE=django.contrib.staticfiles.storage.StaticFilesStorage" in run.stdout


def test_a_variable_already_set_wins(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'mine.sqlite3'}"
    run = pytest_run("--pytest-env-verbose", "--collect-only", "tests/unit/test_resources.py", DATABASE_URL=url)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"SKIP  DATABASE_URL={url}" in run.stdout
    assert "SET   STATICFILES_STORAGE=" in run.stdout


def test_without_the_peers_manifests_their_tests_skip_and_say_why(tmp_path: Path) -> None:
    absent = tmp_path / "shared" / "fixtures" / "manifests"
    run = pytest_run(
        "-rs",
        "tests/acceptance/test_fixture_manifests.py",
        "tests/acceptance/test_simulate_quota_values.py::test_every_fixture_manifest_simulates_or_names_its_problem",
        "tests/unit/test_policy.py::test_volcano_helm_scheduler_conf",
        FAIRWAY_PEER_MANIFESTS=str(absent),
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
    )
    assert run.returncode == 0, run.stdout + run.stderr
    tail = run.stdout.strip().splitlines()[-1]
    assert "passed" not in tail and "failed" not in tail and "error" not in tail, tail
    skipped = int(tail.split(" skipped")[0].split()[-1])
    assert skipped >= 70, tail
    assert f"the peers' manifests are absent ({absent})" in run.stdout


FIRST_MODULE = """
import pytest


@pytest.mark.django_db
def test_a_first() -> None:
    pass


@pytest.mark.django_db(transaction=True)
def test_b_ends_with_a_flush() -> None:
    pass
"""
SECOND_MODULE = """
import pytest


@pytest.mark.django_db
def test_c_needs_the_migrated_rows() -> None:
    from django.contrib.auth.models import Group

    from quotas.models import Queue, QuotaGroup
    from scheduling.models import Cluster

    assert Queue.objects.filter(name="default").exists() and QuotaGroup.objects.filter(name="system").exists()
    assert Cluster.objects.filter(name="default").exists() and Group.objects.filter(name="node-agents").exists()
"""


def test_a_transactional_tests_flush_does_not_take_the_migrated_rows_from_the_next_module(
    tmp_path: Path, migrated_sqlite_template: Path
) -> None:
    """``make test`` deals modules out by scope (xdist ``loadscope``): a module that mixes plain and transactional
    tests runs its transactional ones, which end with a flush, before the next module on that worker; the next
    module's tests still find the built-in tree nodes, the default cluster and the node-agents group. The run's test
    database is a copy of the migrated SQLite file of this run (``tests.support.migrated_sqlite``), with the rows the
    migrations made, as a freshly migrated one has them."""
    (tmp_path / "test_first.py").write_text(FIRST_MODULE)
    (tmp_path / "test_second.py").write_text(SECOND_MODULE)
    run = pytest_run(
        "-p", "tests.conftest", "-c", str(REPO / "pyproject.toml"), "--rootdir", str(tmp_path),
        "-n", "1", "--dist", "loadscope", "-v",
        str(tmp_path / "test_first.py"), str(tmp_path / "test_second.py"),
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", FAIRWAY_VAR_DIR=str(tmp_path / "var"),
        **{migrated_sqlite.ENV: str(migrated_sqlite_template)},
    )  # fmt: skip
    order = [
        line.split("::")[1].split()[0] for line in run.stdout.splitlines() if " PASSED " in line or "FAILED" in line
    ]
    assert order[:3] == ["test_a_first", "test_b_ends_with_a_flush", "test_c_needs_the_migrated_rows"], run.stdout
    assert run.returncode == 0, run.stdout[-3000:]
