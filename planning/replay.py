"""Replay runs, one service for the what-if page, the change requests and ``/api/v1/replays/``: "what would these
changes have done to the last days?" (issue 29 item 5; ``docs/replay.md``).

``start`` checks the changes as the what-if does (a team member only inside its subtrees, each change under the same
rules as a write, on the cluster's current tree) and the window, writes a queued ``ReplayRun`` and, once that is
committed, sends ``planning.tasks.run_replay`` on the ``replay`` queue (``CELERY_TASK_ROUTES``): the worker that runs
the sessions never takes it. ``execute`` is that task's body: the trace of the window (``planning.trace.build_trace``),
then the baseline and the proposal on the real engine in virtual time (``engine.replay``), side by side in two
processes unless ``FAIRWAY_REPLAY_PROCESSES`` is 1 (``controlplane.side_by_side``); every
``FAIRWAY_REPLAY_PROGRESS_SECONDS`` it writes the fraction of virtual time done into the row, and the same statement
tells it whether the run was cancelled (the row's state), which stops it before the next session.

What is kept: the report of each run without its per-job part, the time series averaged into at most ``MAX_POINTS``
buckets, for ``FAIRWAY_REPLAY_RETENTION_DAYS`` after the run was asked (older finished runs are deleted when a new
one is started). A team member sees its own runs, and in them only the teams of its subtrees.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from controlplane.side_by_side import BASELINE, BOTH, replay_both
from engine.changes import ProposalError, describe
from engine.replay import ReplayError, compare_reports, tree_roots
from engine.replay.trace import format_time, parse_time
from planning import whatif, whatif_access
from planning.models import ACTIVE_STATES, FINISHED_STATES, ReplayRun, ReplayState
from quotas.access import is_admin
from scheduling.models import Cluster

__all__ = [
    "MAX_POINTS",
    "WINDOW_CHOICES",
    "Cancelled",
    "Refused",
    "cancel",
    "execute",
    "parse_window",
    "prune",
    "runs_for",
    "start",
    "visible_result",
]

logger = logging.getLogger(__name__)

#: the windows the what-if page offers (the API takes any span up to FAIRWAY_REPLAY_MAX_WINDOW_DAYS)
WINDOW_CHOICES = ("1d", "3d", "7d")
#: the most points a kept time series has (utilisation, share): averaged over equal buckets of the window
MAX_POINTS = 300
_SPAN = re.compile(r"^\s*(\d{1,6})\s*([mhd])\s*$")
_SPAN_SECONDS = {"m": 60, "h": 3600, "d": 86400}


class Refused(Exception):
    """A replay that cannot be started; ``errors``: field -> sentences (``changes.<i>.<field>`` for a change)."""

    def __init__(self, errors: Mapping[str, Sequence[str]]) -> None:
        self.errors = {k: list(v) for k, v in errors.items()}
        super().__init__("; ".join(f"{k}: {m}" for k, ms in self.errors.items() for m in ms))


class Cancelled(Exception):
    """The run's row left ``running`` (cancelled) while the task worked on it."""


# -- starting ------------------------------------------------------------------------------------------------------


def parse_window(text: Any) -> timedelta:
    """A span back from now ("30m", "6h", "7d"), at most ``FAIRWAY_REPLAY_MAX_WINDOW_DAYS``; raises ``ValueError``
    with the sentence to show."""
    found = _SPAN.match(text) if isinstance(text, str) else None
    if found is None:
        raise ValueError(f"expected a span back from now such as 6h, 1d or 7d, got {str(text)[:20]!r}")
    span = timedelta(seconds=int(found.group(1)) * _SPAN_SECONDS[found.group(2)])
    most = int(settings.FAIRWAY["REPLAY_MAX_WINDOW_DAYS"])
    if span <= timedelta(0):
        raise ValueError("the window must be longer than nothing")
    if span > timedelta(days=most):
        raise ValueError(f"at most {most} days (FAIRWAY_REPLAY_MAX_WINDOW_DAYS), got {found.group(1)}{found.group(2)}")
    return span


def _cluster(name: Any) -> Cluster:
    if name is not None and not isinstance(name, str):
        raise Refused({"cluster": ["expected a cluster's name"]})
    try:
        return whatif.cluster_named(name or None)
    except Cluster.DoesNotExist:
        raise Refused({"cluster": [f"cluster {str(name)[:63]} does not exist"]}) from None


def _check_changes(user: Any, cluster: Cluster, changes: Any) -> None:
    if not isinstance(changes, list) or not changes:
        raise Refused({"changes": ["expected a non-empty list of changes (the what-if change language)"]})
    if len(changes) > 200:
        raise Refused({"changes": [f"at most 200 changes, got {len(changes)}"]})
    snapshot, _values = whatif.state_of(cluster)
    try:
        scope = whatif_access.scope_of(user)
        if scope is not None:
            whatif_access.check_changes(snapshot, changes, scope)
        whatif.apply(snapshot, changes)
    except ProposalError as exc:
        errors: dict[str, list[str]] = {}
        for e in exc.errors:
            errors.setdefault(e.field or "changes", []).append(e.message)
        raise Refused(errors) from exc


def start(
    user: Any,
    changes: Any,
    *,
    window: Any = "7d",
    cluster: Any = None,
    change_request: Any = None,
    summary: str = "",
) -> ReplayRun:
    """Check and queue a replay of the last ``window`` of ``cluster`` with ``changes``; raises ``Refused`` (nothing
    written). The task is sent once the row is committed."""
    errors: dict[str, list[str]] = {}  # every field's errors at once
    span = timedelta(0)
    try:
        span = parse_window(window)
    except ValueError as exc:
        errors["window"] = [str(exc)]
    target = None
    try:
        target = _cluster(cluster)
        _check_changes(user, target, changes)
    except Refused as exc:
        errors.update(exc.errors)
    if errors or target is None:
        raise Refused(errors)
    now = timezone.now()
    with transaction.atomic():
        prune(now)
        run = ReplayRun.objects.create(
            requester=user if getattr(user, "is_authenticated", False) else None,
            cluster=target,
            change_request=change_request,
            window=re.sub(r"\s+", "", str(window)),  # "7 d" is kept as "7d"
            since=now - span,
            until=now,
            changes=list(changes),
            summary=(summary or describe(changes))[:500],  # automation writes none: its changes in words
        )
        transaction.on_commit(lambda: send(run.pk))
    return run


def send(pk: int) -> None:
    """Send the run's task (routed to the ``replay`` queue by ``CELERY_TASK_ROUTES``). A broker that cannot take it
    leaves the run failed with that sentence, not queued for ever (the request that started it has committed)."""
    from planning.tasks import run_replay

    try:
        run_replay.delay(pk)
    except Exception as exc:  # kombu's and redis' connection errors have no common base worth naming
        logger.exception("replay %s could not be sent", pk)
        ReplayRun.objects.filter(pk=pk, state=ReplayState.QUEUED).update(
            state=ReplayState.FAILED,
            finished=timezone.now(),
            error=f"the replay could not be handed to the replay worker (the broker: {type(exc).__name__}); try again",
        )


def prune(now: datetime | None = None) -> int:
    """Delete the finished runs asked more than ``FAIRWAY_REPLAY_RETENTION_DAYS`` ago; the number deleted."""
    cutoff = (now or timezone.now()) - timedelta(days=float(settings.FAIRWAY["REPLAY_RETENTION_DAYS"]))
    deleted, _ = ReplayRun.objects.filter(created__lt=cutoff, state__in=FINISHED_STATES).delete()
    return deleted


def cancel(run: ReplayRun, user: Any = None) -> bool:
    """Cancel a queued or running run (its task stops before its next session); whether it was still active."""
    done = ReplayRun.objects.filter(pk=run.pk, state__in=ACTIVE_STATES).update(
        state=ReplayState.CANCELLED, finished=timezone.now(), phase="cancelled"
    )
    run.refresh_from_db()
    return bool(done)


# -- reading ---------------------------------------------------------------------------------------------------------


def runs_for(user: Any) -> QuerySet[ReplayRun]:
    """The runs ``user`` may read: an admin's, all; anyone else's, their own."""
    qs = ReplayRun.objects.select_related("cluster", "requester", "change_request")
    return qs if is_admin(user) else qs.filter(requester=user)


def visible_result(run: ReplayRun, user: Any) -> dict[str, Any] | None:
    """The run's result as ``user`` may read it: an admin, all of it; a team member, only the teams (tree nodes) of
    its subtrees, the cluster's totals as they are, the trees' roots' figures with them (the same nodes the what-if
    shows it)."""
    if run.result is None or is_admin(user):
        return run.result
    scope = whatif_access.scope_of(user)
    assert scope is not None
    snapshot, _values = whatif.state_of(run.cluster)
    queues = whatif_access.subtree(snapshot.queues, scope.queue_roots)
    groups = whatif_access.subtree(snapshot.quota_groups, scope.group_roots)

    roots = tree_roots(run.result)  # every job of a tree: the cluster's figures, shown whole

    def mine(team: str) -> bool:
        kind, _, name = team.partition("/")
        return team in roots or name in (queues if kind == "queue" else groups)

    out = dict(run.result)
    for part in ("baseline", "proposal"):
        if isinstance(out.get(part), dict):
            out[part] = {**out[part], "teams": {k: v for k, v in out[part]["teams"].items() if mine(k)}}
    if isinstance(out.get("differences"), dict):
        diff = out["differences"]
        out["differences"] = {**diff, "teams": {k: v for k, v in diff.get("teams", {}).items() if mine(k)}}
    return out


# -- running (the task's body) -------------------------------------------------------------------------------------


class _Progress:
    """Writes the fraction done into the row at most every ``FAIRWAY_REPLAY_PROGRESS_SECONDS`` (and always when
    ``force``d); the same conditional UPDATE finds a cancelled run (no row still ``running``) and raises
    ``Cancelled``."""

    def __init__(self, pk: int) -> None:
        self.pk = pk
        self.every = float(settings.FAIRWAY["REPLAY_PROGRESS_SECONDS"])
        self.last = -float("inf")

    def __call__(self, fraction: float, phase: str, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last < self.every:
            return
        self.last = now
        updated = ReplayRun.objects.filter(pk=self.pk, state=ReplayState.RUNNING).update(
            progress=round(min(1.0, max(0.0, fraction)), 4), phase=phase[:80]
        )
        if not updated:
            raise Cancelled


def _series(points: Sequence[Sequence[Any]], start: float, end: float, buckets: int) -> list[list[Any]]:
    """A step series (``[time, value, ...]``, each held until the next point) as at most ``buckets`` points: the
    time-weighted mean of each value over equal buckets of ``[start, end]``. Short series are kept as they are."""
    if len(points) <= buckets or end <= start:
        return [list(p) for p in points]
    steps = [(parse_time(p[0], "series"), [float(v) for v in p[1:]]) for p in points]
    width = (end - start) / buckets
    out: list[list[Any]] = []
    i = 0
    for b in range(buckets):
        lo, hi = start + b * width, start + (b + 1) * width
        while i + 1 < len(steps) and steps[i + 1][0] <= lo:
            i += 1
        sums = [0.0] * len(steps[0][1])
        covered = 0.0
        j = i
        while j < len(steps) and steps[j][0] < hi:
            seg_lo = max(lo, steps[j][0])
            seg_hi = min(hi, steps[j + 1][0]) if j + 1 < len(steps) else hi
            if seg_hi > seg_lo:
                for k, v in enumerate(steps[j][1]):
                    sums[k] += v * (seg_hi - seg_lo)
                covered += seg_hi - seg_lo
            j += 1
        if covered > 0:
            out.append([format_time(lo), *(round(s / covered, 4) for s in sums)])
    return out


def kept_report(report: Mapping[str, Any]) -> dict[str, Any]:
    """What is kept of one run's report: without its per-job part (its size is the window's job count: ``jobs``
    becomes their number), its time series at most ``MAX_POINTS`` long."""
    window = report["window"]
    start, end = parse_time(window["from"], "window"), parse_time(window["to"], "window")
    out = {k: v for k, v in report.items() if k != "jobs"}
    out["jobCount"] = len(report.get("jobs", {}))
    out["teams"] = {
        name: {**team, "share": _series(team.get("share", []), start, end, MAX_POINTS)}
        for name, team in report["teams"].items()
    }
    cluster = dict(report["cluster"])
    cluster["utilisation"] = {
        r: _series(series, start, end, MAX_POINTS) for r, series in cluster.get("utilisation", {}).items()
    }
    out["cluster"] = cluster
    return out


def execute(pk: int) -> str:
    """Run replay ``pk`` (the task's body): ``"done"``, ``"failed"``, ``"cancelled"`` or ``"gone"``."""
    from planning.trace import build_trace

    now = timezone.now()
    taken = ReplayRun.objects.filter(pk=pk, state__in=ACTIVE_STATES).update(
        state=ReplayState.RUNNING, started=now, progress=0.0, phase="reading the history"
    )
    if not taken:
        return "cancelled" if ReplayRun.objects.filter(pk=pk).exists() else "gone"
    run = ReplayRun.objects.select_related("cluster").get(pk=pk)
    report = _Progress(pk)
    processes = int(settings.FAIRWAY["REPLAY_PROCESSES"])
    try:
        trace = build_trace(run.cluster, run.since, run.until)
        report(0.0, BOTH if processes > 1 else BASELINE, force=True)
        baseline, proposal = replay_both(trace, run.changes, processes=processes, progress=report)
        report(1.0, "writing the report", force=True)
        document = {
            "version": 1,
            "seed": 0,
            "trace": {"jobs": len(trace.jobs), "edits": len(trace.edits), "period": trace.header.period},
            "baseline": kept_report(baseline),
            "proposal": kept_report(proposal),
            "differences": compare_reports(baseline, proposal),
        }
    except Cancelled:
        return "cancelled"
    except ReplayError as exc:
        return _fail(pk, str(exc))
    except Exception as exc:  # a time limit, the database: the row says so rather than staying "running"
        from celery.exceptions import SoftTimeLimitExceeded

        if isinstance(exc, SoftTimeLimitExceeded):
            limit = settings.FAIRWAY["REPLAY_TIME_LIMIT_SECONDS"]
            return _fail(pk, f"the replay took longer than {limit:g} s (FAIRWAY_REPLAY_TIME_LIMIT_SECONDS) and stopped")
        logger.exception("replay %s failed", pk)
        return _fail(pk, f"the replay failed: {type(exc).__name__}: {str(exc)[:300]}")
    finished = ReplayRun.objects.filter(pk=pk, state=ReplayState.RUNNING).update(
        state=ReplayState.DONE, progress=1.0, phase="", result=document, finished=timezone.now()
    )
    return "done" if finished else "cancelled"


def _fail(pk: int, message: str) -> str:
    ReplayRun.objects.filter(pk=pk, state=ReplayState.RUNNING).update(
        state=ReplayState.FAILED, error=message, phase="", finished=timezone.now()
    )
    return "failed"
