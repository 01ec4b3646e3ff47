"""Every PostgreSQL advisory-lock key the apps take, in one table, so that no two locks share a key.

A key is the first int4 of ``pg_advisory_xact_lock(int4, int4)`` (the second is a cluster's id, a slot's number or
0); the apps hold the machinery (``scheduling.locks``, ``quotas.services.lock_tree_writes``, ``planning.slots``).
"""

from __future__ import annotations

__all__ = [
    "AGENT_TICK_LOCK",
    "CLUSTER_LOCK_NAMES",
    "COMPACTION_LOCK",
    "KEYS",
    "NODE_CHECK_LOCK",
    "RECYCLE_LOCK",
    "SCHEDULING_SESSION_LOCK",
    "SIMULATION_SLOT_LOCK",
    "TREE_WRITE_LOCK",
    "WORKER_BEACON_LOCK",
    "WORKLOAD_LOCK",
]

# "FW" and a number. Per cluster (the second int4 is the cluster's id):
SCHEDULING_SESSION_LOCK = 0x4657_0001  # run_session
RECYCLE_LOCK = 0x4657_0002  # recycle (overuse revoke)
AGENT_TICK_LOCK = 0x4657_0003  # the simulated node agent
WORKLOAD_LOCK = 0x4657_0004  # the simulated workload generator
NODE_CHECK_LOCK = 0x4657_0005  # heartbeat timeouts
COMPACTION_LOCK = 0x4657_0006  # sample compaction and record retention
# A slot's number as the second int4 (planning/slots.py, a session-level lock on a connection of its own):
SIMULATION_SLOT_LOCK = 0x4657_0007  # simulate and what-if computations at once in the deployment
# A worker process's own session queue, hashed, as the second int4 (scheduling.feed.affinity: a session-level lock
# on a connection of its own, held for the process's life: free means the process is gone)
WORKER_BEACON_LOCK = 0x4657_0008
# The trees, whole (second int4 0): every tree write (quotas.services.lock_tree_writes)
TREE_WRITE_LOCK = 0x4657_0100

# A cluster's locks, which deleting the cluster takes in this order, with the names people read.
CLUSTER_LOCK_NAMES: dict[int, str] = {
    SCHEDULING_SESSION_LOCK: "scheduling session",
    RECYCLE_LOCK: "recycling",
    AGENT_TICK_LOCK: "simulated agent",
    WORKLOAD_LOCK: "workload generator",
    NODE_CHECK_LOCK: "node heartbeat check",
    COMPACTION_LOCK: "record compaction",
}

# Every key, with what it guards.
KEYS: dict[int, str] = {
    **CLUSTER_LOCK_NAMES,
    SIMULATION_SLOT_LOCK: "simulation slot",
    WORKER_BEACON_LOCK: "worker process alive",
    TREE_WRITE_LOCK: "tree writes",
}
