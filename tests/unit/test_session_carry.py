"""Sessions opened through a ``SessionCarry`` (the state kept from the last session of a cluster, brought up to
date) decide exactly what sessions built from scratch decide.

Each case is a random cluster and a random sequence of changes to it, made the way a caller that keeps a cluster
in memory makes them: unchanged pods, podgroups and nodes keep their objects, changed ones are new objects. The
changes: pods that start, finish, fail, are released, pipelined or bound elsewhere; new pods (new podgroups, or
joining one, some of them in the middle of the snapshot's order), pods gone; podgroups whose phase, minMember or
queue changes, new podgroups, podgroups gone (their pods orphaned); requests with resource names in different
orders, zero amounts, new resource names; now and then a node or the quota groups change, or the whole result of
the last session is applied. After every change, the opened state (tasks, jobs, node rows, their orders, the
snapshot indexes, the quota values) and the session's result (bindings, evictions, podgroup statuses in order,
queue / namespace / quota values, warnings) are compared with a session on a fresh copy of the snapshot.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import random
from typing import Any

import pytest

from engine.amounts import raw
from engine.fairshare.namespace import NamespaceShares, _pair_jobs
from engine.fairshare.queues import JobSummary
from engine.objects import (
    NamespaceInfo,
    NodeInfo,
    NodeSelectorRequirement,
    PodGroupInfo,
    PodGroupPhase,
    QueueSpec,
    QuotaGroupSpec,
    Snapshot,
    Taint,
    TaskInfo,
    TaskStatus,
    Toleration,
)
from engine.policy.policy import Policy
from engine.replay.recorded import compact_decisions
from engine.resources import ResourceList
from engine.session.carry import SessionCarry
from engine.session.run import apply_result, run_actions, run_session
from engine.session.session import Placement, Session, TaskState
from engine.values import group_usage

GiB = 2**30
S = TaskStatus

POLICIES = [
    (
        "enqueue, allocate, backfill",
        ["priority", "gang", "conformance"],
        ["drf", "predicates", "proportion", "nodeorder"],
    ),
    (
        "enqueue, allocate, backfill, reclaim, preempt",
        ["priority", "gang", "conformance"],
        ["overcommit", "drf", "predicates", "proportion", "binpack"],
    ),
    ("allocate, backfill, preempt", ["priority", "gang"], ["predicates", "capacity", "nodeorder", "elasticquota"]),
    ("enqueue, allocate, reclaim", ["priority", "gang"], ["drf", "proportion", "elasticquota"]),
]
SHAPES = [
    {"cpu": 500, "memory": GiB},
    {"cpu": 1000, "memory": 2 * GiB},
    {"memory": GiB, "cpu": 250},  # the names in the other order
    {"cpu": 2000},
    {"cpu": 1000, "memory": 0},  # a zero amount
    {"cpu": 1000, "memory": 2 * GiB, "nvidia.com/gpu": 1000},
    {},  # best effort
]
# required node affinities (a pod of each keeps its own predicate mask): zone b or node n01; not zone a
AFFINITIES = [
    (
        (NodeSelectorRequirement("zone", "In", ("b",)),),
        (NodeSelectorRequirement("metadata.name", "In", ("n01",), match_field=True),),
    ),
    ((NodeSelectorRequirement("zone", "NotIn", ("a",)),),),
]
STATUSES = [S.PENDING, S.PENDING, S.RUNNING, S.RUNNING, S.BOUND, S.RELEASING, S.SUCCEEDED, S.FAILED, S.PIPELINED]


def _policy(rng: random.Random) -> Policy:
    actions, first, second = POLICIES[rng.randrange(len(POLICIES))]
    tiers: list[dict[str, Any]] = [
        {"plugins": [{"name": n} for n in first]},
        {
            "plugins": [
                {"name": n, **({"enableNamespaceOrder": True} if n == "drf" and rng.random() < 0.5 else {})}
                for n in second
            ]
        },
    ]
    return Policy.from_dict({"actions": actions, "tiers": tiers})


def _node(rng: random.Random, i: int) -> NodeInfo:
    alloc = {"cpu": rng.choice([2000, 4000, 8000]), "memory": rng.choice([4, 8, 16]) * GiB}
    if rng.random() < 0.5:
        alloc["pods"] = rng.choice([3000, 8000, 110_000])
    if i == 0:
        alloc["nvidia.com/gpu"] = 2000
    return NodeInfo(
        name=f"n{i:02d}",
        allocatable=ResourceList(alloc),
        labels={"zone": rng.choice(["a", "b"])},
        taints=(Taint("gpu", "yes"),) if i == 0 and rng.random() < 0.5 else (),
        unschedulable=rng.random() < 0.05,
        ready=rng.random() > 0.05,
    )


class World:
    """A random cluster and the random changes made to it."""

    def __init__(self, seed: int) -> None:
        self.rng = rng = random.Random(seed)
        self.n = 0
        nodes = [_node(rng, i) for i in range(rng.randint(2, 6))]
        queues = [QueueSpec(name="root", parent=None, reclaimable=False)]
        for i in range(rng.randint(1, 4)):
            queues.append(
                QueueSpec(
                    name=f"q{i}",
                    weight=rng.randint(1, 3),
                    deserved=ResourceList({"cpu": rng.choice([1000, 4000]), "memory": 4 * GiB}),
                    capability=ResourceList({"cpu": 8000}) if rng.random() < 0.3 else ResourceList(),
                    reclaimable=rng.random() < 0.7,
                )
            )
        self.queues = [q.name for q in queues if q.name != "root"] + ["missing"]
        groups = [
            QuotaGroupSpec(
                name="eq-a",
                min=ResourceList({"cpu": 2000, "memory": 4 * GiB}),
                max=ResourceList({"cpu": 8000, "memory": 16 * GiB}),
            ),
            QuotaGroupSpec(
                name="eq-b", min=ResourceList({"cpu": 1000}), max=ResourceList({"cpu": 4000, "memory": 8 * GiB})
            ),
        ]
        self.snap = Snapshot.build(
            nodes=nodes,
            queues=queues,
            quota_groups=groups if rng.random() < 0.7 else (),
            namespaces=[NamespaceInfo(name=f"ns{i}", weight=rng.randint(1, 3)) for i in range(3)],
            policy=_policy(rng),
            quota_namespaces={"eq-a": ["ns0"]} if rng.random() < 0.5 else None,
        )
        for _ in range(rng.randint(1, 6)):
            self.add_podgroup()

    # -- objects ---------------------------------------------------------------------------------------------
    def podgroup(self, ns: str, name: str) -> PodGroupInfo:
        rng = self.rng
        min_member = rng.randint(0, 3)
        roles = {"worker": 1} if rng.random() < 0.2 else {}
        return PodGroupInfo(
            namespace=ns,
            name=name,
            queue=rng.choice(self.queues) if rng.random() < 0.9 else "missing",
            min_member=min_member,
            min_task_member=roles,
            min_resources=ResourceList({"cpu": 500 * min_member}) if rng.random() < 0.5 else None,
            priority=rng.choice([0, 0, 10]),
            phase=rng.choice([PodGroupPhase.PENDING, PodGroupPhase.INQUEUE, PodGroupPhase.RUNNING]),
            creation_timestamp=float(rng.randint(0, 5)),
            requeues=rng.choice([0, 0, 1]),
            backoff_until=rng.choice([None, None, 3.0]),
        )

    def task(self, ns: str, podgroup: str, name: str) -> TaskInfo:
        rng = self.rng
        status = rng.choice(STATUSES)
        nodes = list(self.snap.nodes)
        node = rng.choice(nodes) if status not in (S.PENDING,) or rng.random() < 0.1 else None
        if status == S.PIPELINED and node is None:
            node = nodes[0]
        shape = dict(rng.choice(SHAPES))
        if rng.random() < 0.03:
            shape["example.com/fpga"] = 1000  # a resource name no other pod asks for
        return TaskInfo(
            namespace=ns,
            name=name,
            podgroup=podgroup,
            request=ResourceList(shape),
            priority=rng.choice([0, 0, 5, 20]),
            volcano_preemptable=rng.choice([None, None, False]),
            quota_preemptible=rng.random() < 0.9,
            quota_group=rng.choice([None, None, "eq-a", "eq-b", "nope"]),
            status=status,
            node=node,
            node_selector={"zone": "a"} if rng.random() < 0.15 else {},
            tolerations=(Toleration(key="gpu", operator="Exists"),) if rng.random() < 0.2 else (),
            node_affinity=rng.choice(AFFINITIES) if rng.random() < 0.15 else (),
            task_role="worker" if rng.random() < 0.3 else "",
            creation_timestamp=float(rng.randint(0, 5)),
            pipelined=status == S.PENDING and rng.random() < 0.1,
        )

    def fresh_name(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}-{self.n}"

    # -- changes ---------------------------------------------------------------------------------------------
    def add_podgroup(self) -> None:
        rng = self.rng
        ns = f"ns{rng.randrange(3)}"
        pg = self.podgroup(ns, self.fresh_name("j"))
        tasks = [self.task(ns, pg.key, f"{pg.name}-{k}") for k in range(rng.randint(0, 4))]
        snap = self.snap.with_podgroups([pg]) if rng.random() < 0.95 else self.snap  # else: pods without podgroup
        self.snap = snap.with_tasks(tasks)

    def change(self) -> None:
        rng = self.rng
        snap = self.snap
        kind = rng.choices(
            ["status", "add", "join", "insert", "remove", "pg", "pg-gone", "node", "node-gone", "quota", "resize"],
            weights=[30, 10, 8, 4, 8, 8, 3, 6, 1, 2, 8],
        )[0]
        tasks = list(snap.tasks.values())
        if kind == "status" and tasks:
            picked = rng.sample(tasks, min(len(tasks), rng.randint(1, 4)))
            changed = []
            for t in picked:
                status = rng.choice(STATUSES)
                node = t.node or rng.choice(list(snap.nodes)) if status != S.PENDING else None
                changed.append(
                    dataclasses.replace(
                        t, status=status, node=node, pipelined=status == S.PENDING and rng.random() < 0.2
                    )
                )
            self.snap = snap.with_tasks(changed)
        elif kind == "add":
            self.add_podgroup()
        elif kind == "resize" and tasks:  # a pod's request replaced (its resource names may change)
            t = rng.choice(tasks)
            self.snap = snap.with_tasks([dataclasses.replace(t, request=ResourceList(dict(rng.choice(SHAPES))))])
        elif kind == "join" and snap.podgroups:
            pg = rng.choice(list(snap.podgroups.values()))
            self.snap = snap.with_tasks([self.task(pg.namespace, pg.key, self.fresh_name(f"{pg.name}-x"))])
        elif kind == "insert" and tasks:
            pg = rng.choice(list(snap.podgroups.values())) if snap.podgroups else None
            if pg is not None:
                new = self.task(pg.namespace, pg.key, self.fresh_name(f"{pg.name}-i"))
                at = rng.randrange(len(tasks) + 1)
                order = [*tasks[:at], new, *tasks[at:]]  # a pod in the middle of the order
                self.snap = snap.replace(tasks={t.uid: t for t in order})
        elif kind == "remove" and tasks:
            self.snap = snap.without_tasks(t.uid for t in rng.sample(tasks, min(len(tasks), rng.randint(1, 3))))
        elif kind == "pg" and snap.podgroups:
            pg = rng.choice(list(snap.podgroups.values()))
            fields: dict[str, Any] = rng.choice(
                [
                    {"phase": rng.choice(list(PodGroupPhase))},
                    {"min_member": rng.randint(0, 4)},
                    {"queue": rng.choice(self.queues)},
                    {"unplaced_sessions": pg.unplaced_sessions + 1},
                ]
            )
            self.snap = snap.with_podgroups([dataclasses.replace(pg, **fields)])
        elif kind == "pg-gone" and snap.podgroups:
            self.snap = snap.without_podgroups([rng.choice(list(snap.podgroups))])
        elif kind == "node":
            old = rng.choice(list(snap.nodes.values()))
            alloc = dict(old.allocatable.raw)
            if "pods" in alloc:
                alloc["pods"] = rng.choice([3000, 8000])
            fields = rng.choice(
                [
                    {"ready": not old.ready},
                    {"unschedulable": not old.unschedulable},
                    {"allocatable": ResourceList({**alloc, "cpu": rng.choice([1000, 2000, 8000])})},
                    {"allocatable": ResourceList({**alloc, "memory": 0})},
                    {"labels": {"zone": "b" if old.labels.get("zone") == "a" else "a"}},
                    {"taints": () if old.taints else (Taint("gpu", "yes"),)},
                    {},  # an equal copy: not a change
                ]
            )
            self.snap = snap.with_nodes([dataclasses.replace(old, **fields)])
        elif kind == "node-gone" and len(snap.nodes) > 1:
            self.snap = snap.without_nodes([rng.choice(list(snap.nodes))])
        elif kind == "quota":
            groups = list(snap.quota_groups.values())
            if groups and rng.random() < 0.5:
                self.snap = snap.without_quota_groups([groups[0].name])
            else:
                self.snap = snap.with_quota_groups(
                    [QuotaGroupSpec(name=f"ns{rng.randrange(3)}", max=ResourceList({"cpu": 4000}))]
                )

    def apply(self, result: Any, now: float) -> None:
        """The session's decisions taken effect, with unchanged objects kept (as the mirror keeps them)."""
        after = apply_result(self.snap, result, now=now)
        podgroups = {
            key: old
            if (old := self.snap.podgroups[key]).phase == pg.phase and old.unplaced_sessions == pg.unplaced_sessions
            else pg
            for key, pg in after.podgroups.items()
        }
        self.snap = after.replace(podgroups=podgroups)


def _state(ssn: Session) -> dict[str, Any]:
    """Everything a session opens with, orders included."""
    t = ssn.nodes
    return {
        "tasks": [
            (u, x.status, x.node, x.job, x.pg.key if x.pg else None, x.quota_group, x.vec.tolist(), x.vkey)
            for u, x in ssn.tasks.items()
        ],
        # every other slot of the pods' states (the carry makes a changed pod's from its old one: ``TaskState.moved``)
        "task_slots": [_slots(x) for x in ssn.tasks.values()],
        "jobs": [
            (k, j.phase, sorted(j.counts.items()), j.pending_be, list(j.allocated.items()), [x.uid for x in j.tasks])
            for k, j in ssn.jobs.items()
        ],
        "rows": [list(d) for d in t.tasks],
        "arrays": [a.tolist() for a in (t.alloc, t.idle, t.releasing, t.pipelined, t.evictable, t.ready)],
        "table": (t.names, t.resources, t.future_ops, ssn.has_pods),
        "ns_allocated": _ns_allocated(ssn),
        # the podgroups per queue (kept by the carry: ``JobIndex``), the session's own states, and the holds
        "by_queue": [
            (q, [j.key for j in js], all(j is ssn.jobs[j.key] for j in js)) for q, js in ssn.jobs_by_queue.items()
        ],
        "holds": [(k, [(t.uid, row) for t, row in held]) for k, held in ssn.holds.items()],
        "values": ssn.values,
        "jobs_usage": [repr(j) for j in ssn.values.aggregates.jobs] if ssn.values.aggregates else None,
        "groups": repr(ssn.values.aggregates.groups) if ssn.values.aggregates else None,
        # the per-queue sums of the jobs (kept per queue by the carry), every dict's order included
        "summary": _summary(ssn.values.aggregates.summary) if ssn.values.aggregates else None,
        "reservations": repr(ssn.values.reservations),
        # the namespaces' pairs (kept by the carry: ``NamespacePairs``), every dict's order included
        "namespaces": _namespaces(ssn.values.namespaces),
        # what the podgroups reserve at open for overcommit (kept by the carry: ``KeptDerived``; a resource whose
        # kept sum came back to zero may stay listed with 0, which the plugin reads as absent)
        "reserved": _reserved(ssn),
    }


_SLOTS = ("info", "name", "namespace", "orig_status", "orig_node", "priority", "best_effort", "role", "preemptable")
_SLOTS += ("quota_preemptible", "critical", "sig", "start", "fallback_key")


def _slots(task: TaskState) -> tuple[Any, ...]:
    return (*(getattr(task, name) for name in _SLOTS), list(task.req.items()))


def _reserved(ssn: Session) -> list[Any] | None:
    plugin = ssn.framework.plugin("overcommit")
    return None if plugin is None else sorted((r, v) for r, v in plugin.inqueue.items() if v)  # type: ignore[attr-defined]


def _namespaces(shares: NamespaceShares) -> list[Any]:
    """A ``compute_namespace_shares`` result as plain lists, in its orders (pairs, resource names)."""
    return [
        (
            key,
            q.weight,
            [list(raw(a).items()) for a in (q.request, q.allocated, q.deserved)],
            q.share,
            q.dominant_resource,
        )
        for key, q in shares.items()
    ]


def _ns_allocated(ssn: Session) -> list[Any]:
    """What each namespace's podgroups hold, by name: decisions look namespaces up by name and take the largest of
    a namespace's resource shares, so neither order is read (the carry keeps the sums in another order)."""
    return sorted((ns, sorted(a.items())) for ns, a in ssn.ns_allocated.items())


def _summary(summary: JobSummary) -> list[Any]:
    """A ``summarize_jobs`` result as plain lists, in its orders (queues, resource names)."""
    return [
        (queue, [(f.name, _ordered(getattr(totals, f.name))) for f in dataclasses.fields(totals)])
        for queue, totals in summary.totals.items()
    ] + [summary.job_count]


def _ordered(value: Any) -> Any:
    return list(value.items()) if isinstance(value, dict) else value


_INDEXES = ("resource_names", "task_quota_groups", "tasks_by_podgroup", "tasks_by_quota_group")


QUIET: list[int] = []  # per session opened through a carry: the podgroups it left out of its passes (quiet)
INDEXED: list[bool] = []  # per session opened through a carry: whether its podgroup indexes were the kept ones
RESERVED: list[bool] = []  # per session with overcommit opened through a carry: whether its reservations were kept


def _compare(world: World, carry: SessionCarry, now: float) -> Any:
    snap = world.snap
    plain = Session(dataclasses.replace(snap), snap.policy, now)
    kept_snap = dataclasses.replace(snap)
    reopened = carry.written
    memo = carry.derived.get("overcommit")
    kept_reserved = memo is not None and memo.opened == carry.opened
    kept = Session(kept_snap, snap.policy, now, carry=carry)
    if kept.framework.plugin("overcommit") is not None:  # whether the reservations were the kept ones, moved
        RESERVED.append(kept_reserved and carry.moved_jobs is not None)
    assert _state(kept) == _state(plain), (carry.last, reopened)
    QUIET.append(len(kept.jobs) - len(kept.live_keys()))
    reuse = carry.settled_under == kept._context
    INDEXED.append(reuse and carry.index is not None and carry.unsettled is not None)
    awake = [key for key, job in kept.jobs.items() if not (reuse and job.settled is not None)]
    assert (kept._active, kept._quiet) == (sorted(awake), kept.jobs.keys() - set(awake))
    if carry.index is not None:  # the podgroups with a pending pod at open, in snapshot order, as a full pass finds
        assert list(carry.index.pending) == [key for key, job in kept.jobs.items() if job.counts[S.PENDING]]
    for key in _INDEXES:  # what the carry put in the snapshot's caches is what the snapshot computes
        ours = kept_snap._cache.get(key)
        if ours is not None:
            theirs = getattr(dataclasses.replace(snap), key)
            assert list(ours.items()) == list(theirs.items()) if isinstance(ours, dict) else ours == theirs, key
    run_actions(plain)
    run_actions(kept)
    assert _ns_allocated(kept) == _ns_allocated(plain)  # the session's own changes, on its copy of the kept sums
    a, b = plain.close(), kept.close()
    _check_status_changes(carry, b, kept_snap)
    assert b.bindings == a.bindings
    assert b.evictions == a.evictions
    assert list(b.podgroups.items()) == list(a.podgroups.items())
    assert (b.queue_values, b.namespace_values, b.quota_values) == (a.queue_values, a.namespace_values, a.quota_values)
    assert b.warnings == a.warnings
    return a


COMPACT: dict[int, tuple[Any, Any]] = {}  # per carry (by id): its last result's statuses and their compact form
COMPACTED: list[bool] = []  # per session with ``StatusChanges``: whether the compact statuses were made from those


def _check_status_changes(carry: SessionCarry, result: Any, snap: Snapshot) -> None:
    """The close's ``StatusChanges``: every status not computed is the very object of the close before, the computed
    keys in the mapping's order; and the decisions as recorded, made from the last ones and the computed statuses,
    are those made from every status."""
    changes = result.status_changes
    previous = COMPACT.get(id(carry))
    made = compact_decisions(result, snap, previous)
    assert made == compact_decisions(result, snap)
    COMPACT[id(carry)] = (result.podgroups, made["podgroups"])
    if changes is None:
        return
    COMPACTED.append(previous is not None and previous[0] is changes.base)
    computed = set(changes.computed)
    assert changes.computed == [key for key in result.podgroups if key in computed]
    assert all(changes.base.get(key) is st for key, st in result.podgroups.items() if key not in computed)


# 60 clusters of 25 changes each keep this file near ten seconds; FAIRWAY_CARRY_SEEDS / FAIRWAY_CARRY_STEPS for more
SEEDS = int(os.environ.get("FAIRWAY_CARRY_SEEDS", "60"))
STEPS = int(os.environ.get("FAIRWAY_CARRY_STEPS", "25"))


@pytest.mark.parametrize("seed", range(SEEDS))
def test_carried_sessions_decide_as_fresh_ones(seed: int) -> None:
    world = World(seed)
    carry = SessionCarry()
    updates = 0
    for step in range(STEPS):
        result = _compare(world, carry, now=float(step))
        updates += carry.last.startswith("update")
        if world.rng.random() < 0.25:
            world.apply(result, now=float(step))
        for _ in range(world.rng.randint(1, 3)):
            world.change()
    assert updates > STEPS // 5  # the incremental path was exercised, not only full builds


@pytest.mark.parametrize("seed", range(12))
def test_a_podgroup_record_changed_alone_decides_as_fresh(seed: int) -> None:
    """A podgroup whose record alone changed (its phase, its condition's time, its minimums) while its pods did not:
    its new state takes its counters, its member list and (when equal) its usage from its last one, and the
    minimums it derives when they are the same objects; the sessions decide as fresh ones, and the kept sums are
    a fresh session's."""
    world = World(5000 + seed)
    carry = SessionCarry()
    for step in range(STEPS):
        result = _compare(world, carry, now=float(step))
        if world.rng.random() < 0.25:
            world.apply(result, now=float(step))
        snap = world.snap
        if not snap.podgroups:
            world.add_podgroup()
            continue
        picked = world.rng.sample(list(snap.podgroups.values()), min(len(snap.podgroups), 3))
        changed = []
        for pg in picked:
            fields: dict[str, Any] = world.rng.choice(
                [
                    {
                        "min_resources": world.rng.choice(
                            [None, ResourceList({"cpu": 250}), ResourceList({"memory": GiB})]
                        )
                    },
                    {"min_task_member": world.rng.choice([{}, {"worker": 1}, {"worker": 2}])},
                    {"phase": world.rng.choice(list(PodGroupPhase))},
                    {"unplaced_sessions": pg.unplaced_sessions + 1},
                    {},  # a new record equal to the last one
                ]
            )
            changed.append(dataclasses.replace(pg, **fields))
        world.snap = snap.with_podgroups(changed)
        if world.rng.random() < 0.3:
            world.change()


def _usage_items(usage: Any) -> list[Any]:
    """A ``GroupUsage`` as lists: every dict's order and every amount's name order compared."""
    return [
        [(group, list(raw(amounts).items())) for group, amounts in part.items()]
        for part in (usage.requests, usage.used, usage.releasing, usage.pipelined)
    ] + [list(usage.pipelined_pods.items())]


@pytest.mark.parametrize("seed", range(16))
def test_the_recycling_pass_usage_from_the_kept_sums_is_a_fresh_one(seed: int) -> None:
    """``SessionCarry.group_usage`` (the quota groups' usage for the recycling pass right after a session, from the
    sums kept at open moved by the pods that differ) is ``group_usage`` of the snapshot, orders included, after the
    session's own result and after random changes of every kind; the kept state is left as it was (the next session
    still decides as a fresh one)."""
    world = World(7000 + seed)
    carry = SessionCarry()
    checked = 0
    for step in range(STEPS):
        result = _compare(world, carry, now=float(step))
        if world.rng.random() < 0.6:
            world.apply(result, now=float(step))
        for _ in range(world.rng.randint(0, 2)):
            world.change()
        moved = carry.group_usage(world.snap)
        if moved is not None:
            fresh = group_usage(dataclasses.replace(world.snap))
            assert _usage_items(moved) == _usage_items(fresh)
            checked += 1
    assert checked > STEPS // 2


def test_a_bound_or_finished_pod_keeps_what_its_state_derives_from_its_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pod whose status, node or start time moved (a binding taking effect, a completion) gets a new state made
    from its old one (``TaskState.moved``: its request's vector, signature and order key kept); the sessions opened
    so, every slot of every pod's state compared, decide as fresh ones; a pod whose request changed is made anew."""
    made: list[tuple[str, bool]] = []
    moved = TaskState.moved

    def counted(self: TaskState, info: TaskInfo, node: int, quota_group: str) -> TaskState:
        made.append((info.uid, self.info.request == info.request))
        return moved(self, info, node, quota_group)

    monkeypatch.setattr(TaskState, "moved", counted)
    for seed in range(SEEDS // 3):
        world = World(3000 + seed)
        carry = SessionCarry()
        for step in range(STEPS):
            result = _compare(world, carry, now=float(step))
            if world.rng.random() < 0.5:
                world.apply(result, now=float(step))
            world.change()
    assert len(made) > 100 and all(same for _, same in made)


@pytest.mark.parametrize("seed", range(SEEDS // 2))
def test_sessions_opened_by_the_callers_notes_decide_as_fresh_ones(seed: int) -> None:
    """The same random changes, the caller noting before each session which pods it changed (``note_tasks``, as the
    cluster's mirror does), now and then with unchanged pods among them, a note lost or a note that says nothing
    is known: the carry looks at the noted pods only and still decides as a fresh session."""
    world = World(1000 + seed)
    rng = random.Random(seed)
    carry = SessionCarry()
    noted = 0
    before = world.snap.tasks
    for step in range(STEPS):
        tasks = world.snap.tasks
        changed = {u for u, t in tasks.items() if before.get(u) is not t} | (before.keys() - tasks.keys())
        if rng.random() < 0.3:  # a superset: the caller re-read pods that had not changed
            changed |= set(rng.sample(sorted(tasks), min(3, len(tasks))))
        roll = rng.random()
        if roll < 0.1:
            carry.note_tasks(before, tasks, None)  # not known: every pod compared
        elif roll < 0.85 or before is tasks:
            carry.note_tasks(before, tasks, changed)
        # else: the note is lost (every pod compared, as without notes)
        result = _compare(world, carry, now=float(step))
        noted += carry.last.endswith("by the caller's notes")
        before = world.snap.tasks
        if world.rng.random() < 0.25:
            world.apply(result, now=float(step))
        for _ in range(world.rng.randint(1, 3)):
            world.change()
    assert noted > STEPS // 5, noted  # the noted path was exercised


@pytest.mark.parametrize("seed", range(SEEDS // 2))
def test_sessions_opened_by_the_callers_notes_of_podgroups_decide_as_fresh_ones(seed: int) -> None:
    """The caller notes the podgroups it changed too (``note_podgroups``, as the mirror does), now and then with
    unchanged ones among them, a note lost or one that says nothing is known: the carry renews the noted podgroups
    and those with a changed pod only, not every podgroup, and still decides as a fresh session."""
    world = World(2000 + seed)
    rng = random.Random(seed)
    carry = SessionCarry()
    noted = 0
    before, before_pgs = world.snap.tasks, world.snap.podgroups
    for step in range(STEPS):
        tasks, podgroups = world.snap.tasks, world.snap.podgroups
        changed = {u for u, t in tasks.items() if before.get(u) is not t} | (before.keys() - tasks.keys())
        carry.note_tasks(before, tasks, changed)
        keys = {k for k, pg in podgroups.items() if before_pgs.get(k) is not pg} | (
            before_pgs.keys() - podgroups.keys()
        )
        if rng.random() < 0.3:  # a superset: the caller re-read podgroups that had not changed
            keys |= set(rng.sample(sorted(podgroups), min(3, len(podgroups))))
        roll = rng.random()
        if roll < 0.1:
            carry.note_podgroups(before_pgs, podgroups, None)  # not known: every podgroup walked
        elif roll < 0.85 or before_pgs is podgroups:
            carry.note_podgroups(before_pgs, podgroups, keys)
        # else: the note is lost
        result = _compare(world, carry, now=float(step))
        noted += "podgroups recounted (those noted)" in carry.last
        before, before_pgs = world.snap.tasks, world.snap.podgroups
        if world.rng.random() < 0.25:
            world.apply(result, now=float(step))
        for _ in range(world.rng.randint(1, 3)):
            world.change()
    assert noted > STEPS // 5, noted  # the noted path was exercised


def test_notes_that_do_not_lead_to_the_kept_pods_are_not_used() -> None:
    """A note from another mapping than the one the carry kept, or a chain with a gap, is not followed."""
    world = World(11)
    for _ in range(4):
        world.add_podgroup()
    carry = SessionCarry()
    _compare(world, carry, 0.0)
    first = world.snap.tasks
    world.change()
    second = world.snap.tasks
    world.change()
    third = world.snap.tasks
    carry.note_tasks(second, third, set(third) ^ set(second) | set(third))  # from `second`, which was never opened
    _compare(world, carry, 1.0)
    assert not carry.last.endswith("by the caller's notes"), carry.last
    world.change()
    carry.note_tasks(first, world.snap.tasks, set(world.snap.tasks) | set(third))
    _compare(world, carry, 2.0)
    assert not carry.last.endswith("by the caller's notes"), carry.last  # the carry kept `third`, not `first`


@pytest.mark.parametrize("seed", range(8))
def test_podgroups_in_another_order_are_summed_again(seed: int) -> None:
    """The carry keeps the jobs' per-queue sums and sums again only the queues a job of which changed; the same
    podgroups handed in another order (the same objects) change the orders of those sums (the queues', the
    resource names'), so every queue is summed again: the summary is a fresh session's, orders included."""
    world = World(2000 + seed)
    for _ in range(3):
        world.add_podgroup()
    carry = SessionCarry()
    _compare(world, carry, 0.0)
    world.snap = world.snap.replace(podgroups=dict(reversed(world.snap.podgroups.items())))
    _compare(world, carry, 1.0)
    assert carry.last.startswith("update"), carry.last


def test_a_session_that_raised_leaves_nothing_behind() -> None:
    """A session stopped half-way (a budget's checkpoint) changed kept tasks; the next one opens as if it had not."""
    world = World(7)
    for _ in range(6):
        world.add_podgroup()
    carry = SessionCarry()

    class Stop(Exception):
        pass

    calls = 0

    def checkpoint() -> None:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise Stop

    ssn = Session(dataclasses.replace(world.snap), world.snap.policy, 0.0, checkpoint, carry=carry)
    with pytest.raises(Stop):
        run_actions(ssn)
    world.change()
    _compare(world, carry, now=1.0)
    _compare(world, carry, now=2.0)


def test_full_build_when_it_cannot_prove_equivalence() -> None:
    world = World(3)
    carry = SessionCarry()
    _compare(world, carry, 0.0)
    assert carry.last == "full build: nothing kept yet"
    _compare(world, carry, 1.0)
    assert carry.last.startswith("update: 0 pods")
    node = next(iter(world.snap.nodes.values()))
    world.snap = world.snap.with_nodes([dataclasses.replace(node, ready=not node.ready)])
    _compare(world, carry, 2.0)
    assert carry.last.endswith("1 node changed")  # a changed node keeps its row
    world.snap = world.snap.without_nodes([node.name])
    _compare(world, carry, 2.5)
    assert carry.last == "full build: nodes were added or removed"
    world.snap = world.snap.with_quota_groups([QuotaGroupSpec(name="ns1")])
    _compare(world, carry, 3.0)
    assert carry.last == "full build: the quota groups changed"
    tasks = list(world.snap.tasks.values())
    world.snap = world.snap.replace(tasks={t.uid: t for t in reversed(tasks)})
    _compare(world, carry, 4.0)
    assert carry.last in (
        "full build: the pods' order moved",
        "update: 0 pods new or changed, 0 gone, 0 podgroups recounted",
    )


@pytest.mark.parametrize("seed", range(20))
def test_kept_fit_failures_are_the_ones_computed_again(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``Placement.failure`` keeps its answer per pod class until a node changes: the same statuses as computing it
    for every pod."""
    world = World(seed)
    for _ in range(8):
        world.add_podgroup()
    for step in range(4):
        snap = world.snap
        kept = Session(dataclasses.replace(snap), snap.policy, float(step))
        run_actions(kept)
        with monkeypatch.context() as m:
            m.setattr(Placement, "failure", Placement._failure)
            again = Session(dataclasses.replace(snap), snap.policy, float(step))
            run_actions(again)
            expected = again.close()
        result = kept.close()
        assert list(result.podgroups.items()) == list(expected.podgroups.items())
        assert result.bindings == expected.bindings
        world.apply(result, float(step))
        world.change()


def _settled_run(seed: int) -> int:
    """A cluster that mostly runs: every session's result takes effect (podgroup phases included, as the store writes
    them), then now and then a few pods or podgroups change; each session compared with one built from scratch.
    Returns in how many sessions only some podgroups reopened."""
    world = World(2000 + seed)
    for _ in range(10):
        world.add_podgroup()
    carry = SessionCarry()
    reopened_some = 0
    for step in range(STEPS):
        reopened_some += carry.written is not None
        result = _compare(world, carry, now=2.0 * step)
        world.apply(result, now=2.0 * step)
        if world.rng.random() < 0.7:
            world.change()
    return reopened_some


@pytest.mark.parametrize("seed", range(SEEDS // 4))
def test_settled_podgroups_decide_as_fresh_sessions(seed: int) -> None:
    """The podgroups the last session settled and nothing changed since are left out of the actions' passes and keep
    their status at close, and only the podgroups the last session could change reopen (``Session.live_keys``,
    ``SessionCarry.written``): the tasks, jobs and statuses are still those of a session built from scratch, over
    time (gangs below their minimum are released after ``gangRepairTimeout``)."""
    _settled_run(seed)


def test_settled_podgroups_are_left_out() -> None:
    """The runs above do leave podgroups out, and reopen only some, in most of their sessions; their statuses say
    which the close computed, and the recorded decisions are made from those in most sessions."""
    QUIET.clear()
    INDEXED.clear()
    COMPACTED.clear()
    reopened = sum(_settled_run(seed) for seed in range(SEEDS // 4, SEEDS // 4 + 6))
    assert sum(INDEXED) > len(INDEXED) // 2, INDEXED  # the kept podgroup indexes, not a pass over every podgroup
    assert sum(1 for n in QUIET if n) > len(QUIET) // 2, QUIET
    assert reopened > len(QUIET) // 8, reopened  # (reclaim and preempt, in half the policies, reopen all)
    assert sum(COMPACTED) > len(COMPACTED) // 2, COMPACTED


@pytest.mark.parametrize("seed", range(4))
def test_namespace_sums_are_kept_and_not_changed_by_a_session(seed: int) -> None:
    """What the podgroups hold per namespace is kept by the carry (the same sums object, moved by the podgroups
    recounted) and a session's own allocations change its copy only: after every session the kept sums are those
    of a fresh session at open."""
    world = World(3000 + seed)
    for _ in range(4):
        world.add_podgroup()
    carry = SessionCarry()
    sums = None
    for step in range(STEPS // 2):
        result = _compare(world, carry, now=float(step))
        kept = carry._kept
        assert kept is not None and kept.ns_sums is not None
        if carry.last.startswith("update"):
            assert kept.ns_sums is sums  # moved, not summed again
        sums = kept.ns_sums
        fresh = Session(dataclasses.replace(world.snap), world.snap.policy, float(step))
        assert sorted((ns, sorted(a.items())) for ns, a in sums.items()) == _ns_allocated(fresh)
        world.apply(result, now=float(step))
        world.change()


def test_namespace_pairs_are_kept_and_match_a_pass_over_the_jobs() -> None:
    """The (queue, namespace) pairs' sums are kept by the carry (the same ``NamespacePairs``, moved by the jobs that
    changed) and give what the pass over every job gives, orders included; when a pair's resource names come in
    orders that depend on its jobs' order, the pairs are added up from the jobs (the table is None). The kept table
    is used in most sessions."""
    tables = [made for seed in range(6) for made in _pairs_run(seed)]
    assert sum(tables) > len(tables) // 2, tables


def _pairs_run(seed: int) -> list[bool]:
    """One random cluster's sessions, the kept pairs compared with a pass over the jobs after each; per session,
    whether the kept pairs gave a table."""
    tables: list[bool] = []
    world = World(4000 + seed)
    for _ in range(4):
        world.add_podgroup()
    carry = SessionCarry()
    pairs = None
    for step in range(STEPS):
        result = _compare(world, carry, now=float(step))
        kept = carry._kept
        assert kept is not None and kept.ns_pairs is not None
        if carry.last.startswith("update"):
            assert kept.ns_pairs is pairs  # moved, not summed again
        pairs = kept.ns_pairs
        jobs = list(kept.usages.values())
        table = pairs.table()
        tables.append(table is not None)
        if table is not None:
            fresh = _pair_jobs(jobs)
            assert (table.queues, table.members, table.starts) == (fresh.queues, fresh.members, fresh.starts)
            assert [list(r.items()) for r in table.requests] == [
                list(fresh.request_at(p).items()) for p in range(len(fresh))
            ]
            assert [list(a.items()) for a in table.allocateds] == [
                list(fresh.allocated_at(p).items()) for p in range(len(fresh))
            ]
            namespaces = {job.namespace for job in jobs}
            assert table.held.keys() == namespaces
            for ns in namespaces:  # exact sums (a share reads them by name: their order is not read)
                ours = {r: v for r, v in table.held[ns].items() if v}
                assert ours == {r: v for r, v in fresh.ns_allocated(ns).items() if v}, ns
        world.apply(result, now=float(step))
        world.change()
    return tables


def test_allocatable_classes_are_made_once_for_the_kept_node_table() -> None:
    """The nodes' classes of allocatable amounts (the scalar scoring's) are made once for the carry's node table and
    read by every session's copy of it, until a node's allocatable changes."""
    world = World(5)
    carry = SessionCarry()
    first = Session(dataclasses.replace(world.snap), world.snap.policy, 0.0, carry=carry).nodes.allocatable_classes()
    again = Session(dataclasses.replace(world.snap), world.snap.policy, 1.0, carry=carry).nodes
    assert again.allocatable_classes() is first
    node = next(iter(world.snap.nodes.values()))
    grown = ResourceList({name: 2 * amount for name, amount in node.allocatable.items()})
    world.snap = world.snap.with_nodes([dataclasses.replace(node, allocatable=grown)])
    table = Session(dataclasses.replace(world.snap), world.snap.policy, 2.0, carry=carry).nodes
    assert carry.last.endswith("1 node changed"), carry.last
    made = table.allocatable_classes()
    assert made is not first and made[0] is table.alloc
    rows = [tuple(row) for row in table.alloc.tolist()]
    assert [tuple(made[2][c]) for c in made[1]] == rows  # each row's class has that row's amounts


def test_predicates_node_filters_are_made_once_for_the_kept_node_table() -> None:
    """The predicates plugin's cordoned rows and taint groups are made once for the carry's node table and read by
    every session's copy of it, until a node changes (then made again: a cordoned node is filtered out)."""
    world = World(5)
    policy = Policy.from_dict({"actions": ["allocate"], "tiers": [{"plugins": [{"name": "predicates"}]}]})
    carry = SessionCarry()

    def filters(now: float) -> Any:
        ssn = Session(dataclasses.replace(world.snap), policy, now, carry=carry)
        return ssn.nodes.derived("predicates", lambda infos: pytest.fail("not made by the plugin"))

    first = filters(0.0)
    assert filters(1.0) is first
    node = next(n for n in world.snap.nodes.values() if not n.unschedulable)
    world.snap = world.snap.with_nodes([dataclasses.replace(node, unschedulable=True)])
    again = filters(2.0)
    assert carry.last.endswith("1 node changed"), carry.last
    assert again is not first
    row = sorted(world.snap.nodes).index(node.name)
    assert again[0][row] and not first[0][row]


def test_overcommit_reservations_are_kept_and_match_a_pass_over_the_podgroups() -> None:
    """What the podgroups reserve at open for overcommit is kept by the carry and moved by the podgroups it
    recounted, made or lost (``KeptDerived``): every session compares it with a fresh session's pass over every
    podgroup (``_state``), and the kept sum is the one used in most sessions with overcommit."""
    RESERVED.clear()
    for seed in range(4000, 4040):
        world = World(seed)
        if "overcommit" not in world.snap.policy.to_yaml():
            continue
        for _ in range(4):
            world.add_podgroup()
        carry = SessionCarry()
        for step in range(STEPS // 2):
            result = _compare(world, carry, now=float(step))
            world.apply(result, now=float(step))
            world.change()
    assert len(RESERVED) > 20 and sum(RESERVED) > len(RESERVED) // 2, RESERVED


@pytest.mark.parametrize("seed", range(6))
def test_what_the_carry_replaces_leaves_no_cycle_for_the_collector(seed: int) -> None:
    """The pods' and podgroups' states the carry replaces or drops are freed by reference counting: session after
    session, with pods and podgroups changing, the cyclic collector finds nothing (so a worker may freeze the
    objects it keeps without keeping dead ones for its life). Everything alive before is frozen for the test."""
    world = World(5000 + seed)
    for _ in range(4):
        world.add_podgroup()
    carry = SessionCarry()
    # No full collection first: the freeze takes everything there is, garbage too, out of the collector's sight
    # (what is found below is what the steps make), and walking the test process's heap took most of this test.
    gc.disable()
    gc.freeze()
    found = []
    try:
        for step in range(STEPS):
            result = run_session(world.snap, now=float(step), carry=carry)
            world.apply(result, now=float(step))
            for _ in range(world.rng.randint(1, 3)):
                world.change()
            del result
            found.append(gc.collect())
    finally:
        gc.unfreeze()
        gc.enable()
    assert found == [0] * STEPS, (found, carry.last)
