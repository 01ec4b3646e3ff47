"""Where the suite's CPU goes, test by test: an opt-in pytest plugin (never loaded by ``make test`` itself).

    CI=true make test PYTEST_ARGS="-p tests.support.cpu_per_test"
    .venv/bin/python -m tests.support.cpu_per_test            # the report of the last run, by folder and module

Each test process appends one line per test to ``FAIRWAY_CPU_PER_TEST`` (default ``var/cpu-per-test``) plus its pid:
the process's own CPU during the test (setup and teardown included, the threads of a live server too), the CPU of the
children it reaped meanwhile, the wall time and the test's id. A child's CPU counts when it is reaped, so a server
that lives across tests lands whole on the test that stops it. The suite is bound by CPU on two cores (docs/testing.md,
"The suite's time"): this says which tests to make cheaper.
"""

from __future__ import annotations

import os
import resource
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

OUT = Path(os.environ.get("FAIRWAY_CPU_PER_TEST", Path(__file__).resolve().parents[2] / "var" / "cpu-per-test"))
_file: IO[str] | None = None


def pytest_configure(config: pytest.Config) -> None:
    """The last run's files go when a run starts (in the main process, before any xdist worker writes)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        for old in OUT.parent.glob(OUT.name + ".*"):
            old.unlink()


def _cpu() -> tuple[float, float]:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time(), children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Any) -> Iterator[None]:
    global _file
    if _file is None:
        OUT.parent.mkdir(parents=True, exist_ok=True)
        _file = open(f"{OUT}.{os.getpid()}", "a", encoding="utf-8")  # noqa: SIM115 - kept open for the run
    own, reaped = _cpu()
    start = time.perf_counter()
    yield
    own_after, reaped_after = _cpu()
    wall = time.perf_counter() - start
    _file.write(f"{own_after - own:.3f}\t{reaped_after - reaped:.3f}\t{wall:.3f}\t{item.nodeid}\n")
    _file.flush()


def report(files: list[Path], top: int = 30) -> str:
    """CPU seconds by folder and by module, the largest first."""
    by_module: Counter[str] = Counter()
    by_folder: Counter[str] = Counter()
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            own, reaped, _wall, nodeid = line.split("\t", 3)
            module = nodeid.split("::")[0]
            parts = module.split("/")
            cpu = float(own) + float(reaped)
            by_module[module] += cpu
            by_folder[f"tests/{parts[1]}/" if len(parts) > 2 else "tests/*.py"] += cpu
    lines = [f"{sum(by_module.values()):.0f} s of CPU in all"]
    lines += [f"{cpu:8.1f}  {folder}" for folder, cpu in by_folder.most_common()]
    lines += [""] + [f"{cpu:8.1f}  {module}" for module, cpu in by_module.most_common(top)]
    return "\n".join(lines)


if __name__ == "__main__":
    found = sorted(OUT.parent.glob(OUT.name + ".*"))
    if not found:
        sys.exit(f"no {OUT}.* files: run the suite with -p tests.support.cpu_per_test first")
    sys.stdout.write(report(found) + "\n")
