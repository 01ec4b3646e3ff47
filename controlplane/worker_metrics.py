"""A Celery worker's own metrics for Prometheus, served on ``FAIRWAY_WORKER_METRICS_PORT`` when it is set.

The web side's ``/metrics`` answers for the whole control plane from the database (trees, session counters,
heartbeats); this is what only the worker knows: the tasks it ran, by outcome, and how long each took. Prometheus
scrapes every worker and sums them (``sum by (task, outcome) (rate(fairway_worker_tasks_total[5m]))``).

With Celery's default prefork pool the tasks run in child processes, so the counters are kept in
prometheus-client's multiprocess files: ``controlplane.celery`` points ``PROMETHEUS_MULTIPROC_DIR`` at a fresh
directory before anything imports prometheus-client (unless the environment already names one), the children
write their samples there, and the worker's main process serves their sum (``start_http_server``) once it is
ready. A child that exits is marked dead, so its gauges go and its counters stay.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from typing import Any

from celery import signals

logger = logging.getLogger(__name__)

PORT_VARIABLE = "FAIRWAY_WORKER_METRICS_PORT"
ADDRESS_VARIABLE = "FAIRWAY_WORKER_METRICS_ADDRESS"
_started: dict[str, float] = {}  # task id -> its start (perf counter), in the process running it


def prepare(argv: list[str]) -> None:
    """Before Django and prometheus-client are imported: a multiprocess directory for a worker that serves
    metrics (prometheus-client decides how to keep values when it is first imported)."""
    if os.environ.get(PORT_VARIABLE) and "worker" in argv and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="fairway-worker-metrics-")


def _metrics() -> tuple[Any, Any]:
    from prometheus_client import Counter, Histogram

    global _TASKS, _SECONDS
    if _TASKS is None:
        _TASKS = Counter(
            "fairway_worker_tasks",
            "Tasks this worker ran, by task and outcome (the task's result: ran, skipped, failed; or error, retry)",
            ("task", "outcome"),
        )
        _SECONDS = Histogram(
            "fairway_worker_task_duration_seconds",
            "How long each task took in this worker, by task",
            ("task",),
            buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0),
        )
    return _TASKS, _SECONDS


_TASKS: Any = None
_SECONDS: Any = None


def _enabled() -> bool:
    return bool(os.environ.get(PORT_VARIABLE))


@signals.task_prerun.connect
def _task_started(task_id: str | None = None, **_: Any) -> None:
    if _enabled() and task_id:
        _started[task_id] = time.perf_counter()


@signals.task_postrun.connect
def _task_finished(task_id: str | None = None, task: Any = None, retval: Any = None, state: str = "", **_: Any) -> None:
    if not _enabled() or task is None:
        return
    tasks, seconds = _metrics()
    begun = _started.pop(task_id or "", None)
    if begun is not None:
        seconds.labels(task.name).observe(time.perf_counter() - begun)
    if state == "SUCCESS":
        outcome = retval if isinstance(retval, str) and retval in ("ran", "skipped", "failed", "forwarded") else "done"
    else:
        outcome = {"FAILURE": "error", "RETRY": "retry"}.get(state, state.lower() or "unknown")
    tasks.labels(task.name, outcome).inc()


@signals.worker_ready.connect
def _serve(**_: Any) -> None:
    port = os.environ.get(PORT_VARIABLE)
    if not port:
        return
    from prometheus_client import REGISTRY, CollectorRegistry, start_http_server
    from prometheus_client.multiprocess import MultiProcessCollector

    registry = REGISTRY
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
    address = os.environ.get(ADDRESS_VARIABLE, "127.0.0.1")
    start_http_server(int(port), addr=address, registry=registry)
    logger.info("worker metrics on http://%s:%s/metrics", address, port)


@signals.worker_process_shutdown.connect
def _child_gone(pid: int | None = None, **_: Any) -> None:
    if _enabled() and os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid or os.getpid())
