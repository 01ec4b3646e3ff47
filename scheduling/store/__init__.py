"""The only bridge between the database and the engine: rows -> ``Snapshot`` (``read``), decisions -> rows in one
transaction (``write``; the bindings' compare-and-swaps, also streamed while the engine runs, in ``bindings``), the
records' retention and reading back (``records``); ``db`` holds what they share. This face names what the rest of
the project uses; ``scheduling.sessions`` glues it and the process's mirror of the cluster (``scheduling.feed.mirror``)
to the engine for the Celery tasks.
"""

from __future__ import annotations

from scheduling.store.bindings import BindingStream
from scheduling.store.db import ALLOCATED_DB_STATUSES, FINISHED_DB_STATUSES, RowIds, fetched_meanwhile
from scheduling.store.localqueues import (
    LocalQueueSession,
    read_local_queue_usage,
    save_local_queue_usage,
    seed_local_queue_usage,
)
from scheduling.store.read import (
    LIVE_POD_STATUSES,
    NODE_COLUMNS,
    POD_COLUMNS,
    PODGROUP_COLUMNS,
    KueueCount,
    SpecMemo,
    fairness_on,
    job_infos,
    kueue_count,
    load_snapshot,
    node_info,
    own_podgroup,
    pod_task,
    pod_user,
    podgroup_info,
    read_cluster,
    read_local_queues,
    read_past_usage,
    read_resource_flavors,
    with_pod_group_waits,
)
from scheduling.store.records import SAMPLE_FULL_RESOLUTION, compact_records, session_decisions
from scheduling.store.write import (
    apply_decisions,
    record_failure,
    record_skipped,
    save_partial_admissions,
    save_past_usage,
)

__all__ = [
    "ALLOCATED_DB_STATUSES",
    "FINISHED_DB_STATUSES",
    "LIVE_POD_STATUSES",
    "NODE_COLUMNS",
    "PODGROUP_COLUMNS",
    "POD_COLUMNS",
    "SAMPLE_FULL_RESOLUTION",
    "BindingStream",
    "KueueCount",
    "LocalQueueSession",
    "RowIds",
    "SpecMemo",
    "apply_decisions",
    "compact_records",
    "fairness_on",
    "fetched_meanwhile",
    "job_infos",
    "kueue_count",
    "load_snapshot",
    "node_info",
    "own_podgroup",
    "pod_task",
    "pod_user",
    "podgroup_info",
    "read_cluster",
    "read_local_queue_usage",
    "read_local_queues",
    "read_past_usage",
    "read_resource_flavors",
    "record_failure",
    "record_skipped",
    "save_local_queue_usage",
    "save_partial_admissions",
    "save_past_usage",
    "seed_local_queue_usage",
    "session_decisions",
    "with_pod_group_waits",
]
