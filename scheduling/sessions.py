"""A scheduling session and a recycling pass of one cluster, end to end: the cluster read through the process's
mirror of it (``scheduling.feed.mirror``: the snapshot ``store.read_cluster`` gives, brought up to date from the rows
changed since), the engine run on it (``engine.session.run``), its decisions written by ``store.apply_decisions``
in the same transaction, and once committed the session's inputs recorded (``scheduling.recording``). The Celery tasks (``scheduling.tasks``) call these while they hold the cluster's lock; a
failure is recorded as a failed session row (``store.record_failure``) and rolls back everything else it did.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from contextlib import nullcontext
from datetime import UTC, datetime
from time import perf_counter
from typing import Any

from django.db import transaction
from django.utils import timezone

from core.models import Revision
from engine import collector
from engine.flavors import assign_flavors, with_kept_flavors
from engine.partial import PartialAdmission
from engine.session import decisions, run
from engine.session.clock import time_horizon
from scheduling import recording
from scheduling.agent import cluster_disrupted
from scheduling.feed.mirror import ClusterMirror, mirror_of, record_session
from scheduling.models import Cluster, QuotaOverState, SchedulingSession, SessionKind
from scheduling.store import (
    BindingStream,
    apply_decisions,
    read_local_queue_usage,
    record_failure,
    save_local_queue_usage,
    save_partial_admissions,
    save_past_usage,
)
from scheduling.store.flavors import kept_flavors, record_flavors

__all__ = ["load_over_since", "run_recycle_pass", "run_scheduling_session", "save_over_since"]

logger = logging.getLogger(__name__)


def run_scheduling_session(cluster: Cluster) -> SchedulingSession:
    """Load the snapshot, run the engine's session, write its decisions; a failure becomes a failed session row.

    Call it under the cluster's session lock (``scheduling.tasks.run_session`` does).
    """
    started = timezone.now()
    mirror = mirror_of(cluster.pk)
    try:
        # the collector paused for the whole session (``engine.collector``: a fifth of a 50,000-pod session)
        with collector.paused(), transaction.atomic():
            t0 = perf_counter()
            snapshot, ids = mirror.read(cluster, session=True)
            t1 = perf_counter()
            if mirror.last.full:
                logger.info("cluster %s: full read at %s (%s)", cluster.pk, started.isoformat(), mirror.last.reason)
            now = started.timestamp()
            # Admission Fair Sharing: each job's LocalQueue and each LocalQueue's kept usage, sampled now (none: off)
            snapshot, local_queues = read_local_queue_usage(cluster, snapshot, now)
            # The past usage (fairness over time) is an input of the engine too: with it on, the key names the
            # record the result was computed from, and since every session writes a new one, a result is never
            # reused then (the carry still spares rebuilding the state).
            key = cluster.scheduler_policy
            if cluster.kueue_configuration:  # Kueue's Configuration changes the policy the engine runs too
                key += f"\n# kueue configuration\n{cluster.kueue_configuration}"
            if snapshot.past_usage is not None:
                key += f"\n# past usage as of {snapshot.past_usage.updated!r}"
            if local_queues is not None:  # the LocalQueues' usage orders the jobs too
                key += f"\n# local queue usage {sorted(snapshot.admission.local_queues.items())!r}"
            result = mirror.reusable(key, now)  # nothing changed: the same decisions
            known = None if result is None else mirror.phase_counts()  # and their statuses are written
            bound = None
            stream = None
            waited = 0.0  # for the bindings still being written when the engine was done
            if result is None:
                carry = mirror.carry
                # Kueue's Jobs that may be admitted in part, sized as ``fairway simulate`` sizes them, and those an
                # earlier session admitted in part kept to their count (``engine.partial``)
                partial = PartialAdmission(snapshot)
                snapshot = partial.before(snapshot)
                if snapshot.kueue_flavors is not None:
                    # Kueue's ResourceFlavors: each waiting job given its flavors as ``fairway simulate`` gives them
                    # (``engine.flavors``), kept on its row; a pod or podgroup unchanged and given the same flavors
                    # is the same object as in the last session, so the kept state is brought up to date
                    memo = mirror.session_flavors
                    kept = kept_flavors(cluster)  # admitted: theirs, and their pod sets' when these differ
                    snapshot = with_kept_flavors(snapshot, kept.flavors, memo, kept.pod_sets)
                    snapshot, chosen = assign_flavors(snapshot, memo)
                    record_flavors(cluster, snapshot, chosen)
                # the engine's state kept from the last session, brought up to date (``engine.session.carry``);
                # on PostgreSQL its bindings are written while it runs (``store.BindingStream``)
                stream = BindingStream(cluster, started, ids) if BindingStream.usable(ids) else None
                with stream or nullcontext():
                    result = run.run_session(snapshot, now=now, carry=carry, on_bindings=stream)
                    done = perf_counter()
                    bound = stream.finish() if stream is not None else None
                    waited = perf_counter() - done
                mirror.remember(result, key, now, time_horizon(snapshot, now))
                if partial:
                    _keep_partial_admissions(cluster, partial, snapshot, result)
            if result.usage_history is not None:
                save_past_usage(cluster, result.usage_history)
            save_local_queue_usage(cluster, snapshot, result, local_queues)
            t2 = perf_counter()
            pending = mirror.pending_count()
            session = apply_decisions(
                cluster,
                result,
                started,
                started=started,
                pending_pods=pending,
                ids=ids,
                phases=known,
                bound=bound,
                timings={
                    "load_ms": round((t1 - t0) * 1000.0, 3),
                    "engine_ms": round((t2 - t1 - waited) * 1000.0, 3),
                    "bindings_wait_ms": round(waited * 1000.0, 3),
                },
            )
            record_session(cluster.pk, mirror)
            if bound and stream is not None and stream.revision is not None:
                _own_writes_on_commit(cluster, mirror, stream.revision, bound, result)
    except Exception as exc:
        logger.exception("scheduling session of cluster %s failed", cluster.name)
        return record_failure(cluster, SessionKind.SESSION, started, exc)
    # committed: its inputs recorded for ``fairway replay session`` (``scheduling.recording``), outside the
    # session's transaction; a failure there is logged and never the session's
    recording.record(cluster, session, snapshot, result, now, mirror.tasks_note)
    return session


def _keep_partial_admissions(cluster: Cluster, partial: PartialAdmission, snapshot: Any, result: Any) -> None:
    """The session's partial admissions kept: the Jobs it placed a pod of (or admitted without pods: a suspended Job
    sized on its template) keep their cut, the others are whole again, and each Job's count is stored on its row
    (``store.save_partial_admissions``) for the next session and the Kubernetes adapter, which lowers the Job's
    parallelism to it (resuming a suspended one with it)."""
    partial.after_session(snapshot, result.bindings, result.podgroups)
    save_partial_admissions(cluster, partial.cuts())


def _own_writes_on_commit(cluster: Cluster, mirror: ClusterMirror, lo: int, bound: list[Any], result: Any) -> None:
    """Once the session commits, its mirror applies its bindings without reading them back
    (``ClusterMirror.own_writes``): the session held the cluster's revision from ``lo`` (its first binding
    statement) to its commit, so every change the feed logged in between is its own."""
    (hi,) = Revision.objects.values_of(Revision.cluster_key(cluster.pk))
    evicted = [e.task for e in result.evictions]
    transaction.on_commit(lambda: mirror.own_writes(lo, hi, bound, evicted))


def load_over_since(cluster: Cluster) -> dict[str, float]:
    """The recycling debounce state: quota group -> since when it has been over its runtime (epoch seconds)."""
    return {
        name: ts.timestamp()
        for name, ts in QuotaOverState.objects.filter(cluster=cluster).values_list("name", "over_since")
    }


def save_over_since(
    cluster: Cluster, over_since: Mapping[str, float], existing: Mapping[str, float] | None = None
) -> None:
    """Replace the debounce state with ``over_since`` (rows for groups no longer over are deleted). ``existing``:
    the state as ``load_over_since`` read it in this transaction (read again when not given); only what differs
    from it is written."""
    if existing is None:
        existing = load_over_since(cluster)
    if any(name not in over_since for name in existing):
        QuotaOverState.objects.filter(cluster=cluster).exclude(name__in=list(over_since)).delete()
    for name, ts in over_since.items():
        moment = datetime.fromtimestamp(ts, tz=UTC)
        if name not in existing:
            QuotaOverState.objects.create(cluster=cluster, name=name, over_since=moment)
        elif datetime.fromtimestamp(existing[name], tz=UTC) != moment:
            QuotaOverState.objects.filter(cluster=cluster, name=name).update(over_since=moment)


def run_recycle_pass(cluster: Cluster) -> SchedulingSession | None:
    """One overuse-revoke pass (Koordinator's recycling, seed 001) with the debounce state kept in the database.

    Runs only when the cluster's policy enables the ``elasticquota`` plugin with ``monitorAllQuotas: true``
    (Koordinator's controller is off by default) and the cluster is not disrupted (``agent.cluster_disrupted``:
    most nodes NotReady); otherwise it clears the state and returns None. Returns a
    ``recycle`` session row when pods were evicted (or the pass failed), else None: a pass that finds nothing
    to do every second leaves no row.
    """
    args = cluster.policy.elastic_quota_args()
    if not args.monitor_all_quotas:
        QuotaOverState.objects.filter(cluster=cluster).delete()
        return None
    down, total = cluster_disrupted(cluster)
    if down:
        # Most nodes are NotReady: the runtimes shrank with the capacity that left, but evicting what still runs
        # would only add to the outage (as Kubernetes stops evicting in a disrupted zone). The debounce restarts.
        QuotaOverState.objects.filter(cluster=cluster).delete()
        logger.warning("cluster %s: recycling paused, %d of %d nodes NotReady", cluster.name, down, total)
        return None
    started = timezone.now()
    try:
        with transaction.atomic():
            t0 = perf_counter()
            snapshot, _ = mirror_of(cluster.pk).read(cluster)
            over = load_over_since(cluster)
            t1 = perf_counter()
            evictions, new_over = run.run_recycle(snapshot, now=started.timestamp(), over_since=over)
            t2 = perf_counter()
            save_over_since(cluster, new_over, over)
            if not evictions:
                return None
            return apply_decisions(
                cluster,
                decisions.SessionResult(evictions=list(evictions)),
                started,
                kind=SessionKind.RECYCLE,
                started=started,
                timings={"load_ms": round((t1 - t0) * 1000.0, 3), "engine_ms": round((t2 - t1) * 1000.0, 3)},
            )
    except Exception as exc:
        logger.exception("recycling pass of cluster %s failed", cluster.name)
        return record_failure(cluster, SessionKind.RECYCLE, started, exc)
