"""Kueue's LocalQueues in the live sessions: each job's LocalQueue and each LocalQueue's kept usage into the snapshot,
and the usage the session leaves written back (Admission Fair Sharing, ``engine.localqueues``).

Only while the snapshot has Admission Fair Sharing on (a queue's ``admissionScope`` and the cluster's Configuration
``admissionFairSharing``); otherwise nothing is read or written. The usage is kept per cluster and LocalQueue
(``scheduling.LocalQueueUsage``), in the session's transaction, so a restart or a failover to another worker keeps
it: each session samples it (``engine.localqueues.sample``: once the sampling interval has passed, the consumed
resources decay towards what the LocalQueue's admitted jobs hold, and the entry penalties since are dropped), orders
by it, and adds the entry penalties of the jobs it admitted (``with_penalties``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from engine.localqueues import (
    LocalQueueKey,
    LocalQueueState,
    admitted_usage,
    newly_admitted,
    sample,
    usage_table,
    with_penalties,
)
from engine.manifests.kueuestored import with_local_queue_usage
from engine.objects import Snapshot
from engine.session.decisions import SessionResult
from quotas.models import LocalQueue
from scheduling.models import Cluster, LocalQueueUsage, PodGroup

__all__ = ["LocalQueueSession", "read_local_queue_usage", "save_local_queue_usage", "seed_local_queue_usage"]


class LocalQueueSession:
    """What a session's Admission Fair Sharing read: the sampled usage and each podgroup's LocalQueue."""

    def __init__(self, sampled: dict[LocalQueueKey, LocalQueueState], podgroups: Mapping[str, LocalQueueKey]) -> None:
        self.sampled = sampled
        self.podgroups = podgroups


def _usage_on(snapshot: Snapshot) -> bool:
    levers = snapshot.admission
    return levers.fair_sharing is not None and bool(levers.fair_sharing_queues)


def _stored(cluster: Cluster) -> dict[LocalQueueKey, LocalQueueState]:
    rows = LocalQueueUsage.objects.filter(cluster=cluster).values_list(
        "local_queue__namespace__name", "local_queue__name", "consumed", "penalty", "sampled"
    )
    return {
        (ns, name): LocalQueueState(
            {str(r): int(v) for r, v in (consumed or {}).items()},
            {str(r): int(v) for r, v in (penalty or {}).items()},
            sampled.timestamp() if sampled is not None else None,
        )
        for ns, name, consumed, penalty, sampled in rows
    }


def read_local_queue_usage(
    cluster: Cluster, snapshot: Snapshot, now: float
) -> tuple[Snapshot, LocalQueueSession | None]:
    """``snapshot`` with each podgroup's LocalQueue and each LocalQueue's usage sampled at ``now``; the snapshot
    itself and None when Admission Fair Sharing is off (no query then)."""
    if not _usage_on(snapshot):
        return snapshot, None
    levers = snapshot.admission
    fair = levers.fair_sharing
    assert fair is not None
    specs = levers.local_queue_specs
    keys = {s.key for s in specs}
    podgroups: dict[str, LocalQueueKey] = {}
    for ns, name, lq in PodGroup.objects.filter(cluster=cluster, local_queue__isnull=False).values_list(
        "namespace__name", "name", "local_queue"
    ):
        if (ns, lq) in keys:
            podgroups[f"{ns}/{name}"] = (ns, lq)
    jobs = snapshot.podgroups
    held = admitted_usage(
        (lq, jobs[key].phase.value, jobs[key].min_resources) for key, lq in podgroups.items() if key in jobs
    )
    sampled = sample(_stored(cluster), held, keys, now, fair)
    levered = with_local_queue_usage(snapshot, usage_table(sampled, specs), podgroups)
    return levered, LocalQueueSession(sampled, podgroups)


def save_local_queue_usage(
    cluster: Cluster, snapshot: Snapshot, result: SessionResult, read: LocalQueueSession | None
) -> None:
    """Keep the usage the session left (``read``'s sample plus the entry penalties of the jobs it admitted), one row
    per LocalQueue, in the caller's transaction."""
    fair = snapshot.admission.fair_sharing
    if read is None or fair is None:
        return
    before = {key: pg.phase.value for key, pg in snapshot.podgroups.items()}
    after = {key: status.phase for key, status in result.podgroups.items()}
    admissions = [
        (read.podgroups[key], snapshot.podgroups[key].min_resources or {})
        for key in newly_admitted(before, after)
        if key in read.podgroups
    ]
    record = with_penalties(read.sampled, admissions, fair)
    _write(cluster, record)


def _write(cluster: Cluster, record: Mapping[LocalQueueKey, LocalQueueState]) -> None:
    ids = {
        (ns, name): pk
        for pk, ns, name in LocalQueue.objects.values_list("pk", "namespace__name", "name")
        if (ns, name) in record
    }
    rows = {row.local_queue_id: row for row in LocalQueueUsage.objects.filter(cluster=cluster)}
    for key, state in sorted(record.items()):
        pk = ids.get(key)
        if pk is None:
            continue
        values = {
            "consumed": dict(state.consumed),
            "penalty": dict(state.penalty),
            "sampled": datetime.fromtimestamp(state.updated, tz=UTC) if state.updated is not None else None,
        }
        row = rows.get(pk)
        if row is None:
            LocalQueueUsage.objects.create(cluster=cluster, local_queue_id=pk, **values)
        elif any(getattr(row, k) != v for k, v in values.items()):
            LocalQueueUsage.objects.filter(pk=row.pk).update(**values)


def seed_local_queue_usage(cluster: Cluster, consumed: Mapping[LocalQueueKey, Mapping[str, int]]) -> int:
    """Kueue's record of a LocalQueue's past use (its status' consumed resources) as the cluster's kept usage, for
    the LocalQueues it has none of yet (the first time the adapter sees them; afterwards the sessions keep it).
    Returns how many were seeded."""
    have = set(
        LocalQueueUsage.objects.filter(cluster=cluster).values_list("local_queue__namespace__name", "local_queue__name")
    )
    wanted = {key: value for key, value in consumed.items() if key not in have and value}
    if not wanted:
        return 0
    _write(cluster, {key: LocalQueueState(dict(value)) for key, value in wanted.items()})
    return len(wanted)
