"""The building blocks of ``bench/bench_kube.py`` (Fairway side by side with kube-scheduler through the real API
server), run small: every pod gets bound by each scheduler, and the report has a row for each run. Nothing here is
timed: the figures are the benchmark's, not the suite's.

Each run starts a control plane of its own (as the benchmark does), so this needs etcd, kube-apiserver and
kube-scheduler from ``make kube-tools``: skipped when they are not built, failed under CI."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.kube.real.conftest import _under_ci
from tests.support.kube_apiserver import binaries

BENCH = Path(__file__).resolve().parents[3] / "bench" / "bench_kube.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_kube", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def built() -> None:
    bins = binaries()
    missing = [p for p in (*bins.missing(), bins.kube_scheduler) if not os.access(p, os.X_OK)]
    if missing:
        reason = f"not built: {', '.join(map(str, missing))} (`make kube-tools` builds them once per machine)"
        if _under_ci():
            pytest.fail(reason + " (CI is set: make test builds them before the suite)")
        pytest.skip(reason)


def test_the_bench_binds_every_pod_with_each_scheduler(built: None, transactional_db: Any) -> None:
    """The adapter's own thread and the sessions write from threads of their own: their rows must be committed.

    Fairway runs once, with gangs and quotas (``fairway-gangs``): the plain ``fairway`` run goes through the same
    ``run_fairway`` with a workload of single pods, and a third control plane would add a quarter of a minute."""
    from scheduling.models import Cluster, Pod

    bench = _bench()
    rows = bench.run(
        ["--nodes", "20", "--pods", "100", "--gang", "8", "--timeout", "300",  # a bound on a busy machine
         "--schedulers", "kube-scheduler,fairway-gangs"],
        log=lambda _: None,
    )  # fmt: skip
    assert [r.scheduler for r in rows] == ["kube-scheduler", "fairway gangs+quotas"]
    for row in rows:
        assert (row.pods, row.nodes, row.bound) == (100, 20, 100), row
        assert row.notes["create_failures"] == [], row.notes
        assert row.pods_per_second > 0 and row.latency_p50 <= row.latency_p99
    kube, gangs = rows
    assert gangs.notes["sent"]["bound"] == 100 and gangs.notes["problems"] == []
    assert gangs.notes["sent"].get("podgroup_status", 0) >= 13  # 12 gangs of 8 and one of 4, each written back
    assert "--kube-api-qps=5000 --kube-api-burst=10000" in kube.client_limits
    assert "no rate limiter" in gangs.client_limits
    # each Fairway run's cluster is gone again
    assert not Cluster.objects.filter(name__startswith="bench-").exists() and not Pod.objects.exists()
    table = bench.table(rows)
    assert "kube-scheduler" in table and "fairway gangs+quotas" in table
