"""The victim search's shortcuts decide what the plain search decides: reclaim and preempt skip the nodes where even
every pod the plugins' victim tests let through could not make room (``Framework.victim_bound``, kept per session
state by ``VictimRoom``), and ``sort_victims`` sorts on keys instead of comparing pairs. On random mid-size clusters
(hierarchical queues, quota groups, gangs, priorities, critical and non-preemptable pods, Bound and Running pods)
under several policies, the session with the shortcuts gives the same bindings, evictions (with their messages) and
podgroup statuses as the session that tries every node that passes the predicates and sorts pair by pair."""

from __future__ import annotations

import random
import sys
from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.objects import PodGroupPhase, Snapshot, TaskStatus
from engine.policy.policy import Policy
from engine.resources import ResourceList
from engine.session.actions import common
from engine.session.framework import Framework
from engine.session.run import apply_result, run_session
from engine.session.session import TaskState
from tests.support.examples import examples
from tests.unit.test_session_support import group, node, plugin, pod, podgroup, policy, queue, rl, snapshot

ACTIONS = "enqueue, allocate, backfill, reclaim, preempt"

POLICIES: dict[str, Policy] = {
    # the demo's policy: every victim filter in the first tier, hierarchical capacity, elastic quota
    "demo": policy(
        ACTIONS,
        [
            "priority",
            plugin("gang", enablePreemptable=False),
            "conformance",
            plugin("capacity", enableHierarchy=True),
            plugin("elasticquota", arguments={"monitorAllQuotas": True}),
        ],
        ["overcommit", plugin("drf", enablePreemptable=False), "predicates", "nodeorder"],
    ),
    # Volcano's default tiers with the victim actions: drf's preemptable in the second tier has no test
    "default": policy(
        "enqueue, allocate, backfill, preempt, reclaim",
        ["priority", "gang", "conformance"],
        ["overcommit", "drf", "predicates", "proportion", "nodeorder"],
    ),
    # victim filters in two tiers, each with tests: the victims of either tier
    "split": policy(
        ACTIONS,
        ["priority", "gang", "conformance"],
        [plugin("drf", enablePreemptable=False), "predicates", "capacity", "elasticquota", "nodeorder"],
    ),
    "victims only": policy("reclaim, preempt", ["priority", "gang", "conformance", "proportion"]),
}


def random_cluster(rng: random.Random, policy_name: str) -> Snapshot:
    """A busy cluster of 6-16 nodes, a two-level queue tree, a quota tree, and 8-30 jobs, some running."""
    gpu_nodes = rng.randint(0, 3)
    nodes = [
        node(f"n{i:02d}", str(rng.choice([4, 8, 16])), f"{rng.choice([8, 16, 32])}Gi", pods=12)
        for i in range(rng.randint(6, 13))
    ]
    nodes += [node(f"g{i:02d}", "16", "64Gi", pods=12, gpu=4) for i in range(gpu_nodes)]
    free = {n.name: dict(n.allocatable) for n in nodes}
    depts = ["d0", "d1"]
    queues = [
        queue(
            d,
            1,
            capability=rl(str(rng.randint(20, 80))),
            deserved=rl(str(rng.randint(4, 40)), f"{rng.randint(8, 120)}Gi"),
        )
        for d in depts
    ]
    leaves = []
    for i in range(rng.randint(2, 5)):
        name = f"q{i}"
        leaves.append(name)
        guarantee = rl(str(rng.randint(0, 3))) if rng.random() < 0.3 else None
        queues.append(
            queue(
                name,
                rng.randint(1, 3),
                parent=rng.choice(depts),
                capability=rl(str(rng.randint(4, 60))) if rng.random() < 0.5 else None,
                deserved=rl(
                    str(rng.randint(0, 20)),
                    f"{rng.randint(0, 64)}Gi",
                    **({"gpu": rng.randint(0, 4)} if gpu_nodes else {}),
                ),
                guarantee=guarantee,
                reclaimable=rng.random() < 0.8,
                priority=rng.choice([0, 0, 0, 1]),
            )
        )
    groups = [
        group("ga", min=rl(str(rng.randint(2, 20)), "64Gi"), max=rl(str(rng.randint(20, 80)), "256Gi")),
        group("gb", min=rl(str(rng.randint(2, 20)), "64Gi"), max=rl(str(rng.randint(20, 80)), "256Gi")),
    ]
    podgroups = []
    pods = []
    for j in range(rng.randint(8, 30)):
        size = rng.randint(1, 6)
        min_member = rng.randint(1, size)
        cpu = rng.choice([500, 1000, 2000, 4000])
        mem = rng.choice([1, 2, 4, 8]) * 2**30
        gpu = rng.choice([0, 0, 0, 1, 2]) if gpu_nodes else 0
        running_job = rng.random() < 0.55
        phase = PodGroupPhase.RUNNING if running_job else rng.choice([PodGroupPhase.INQUEUE, PodGroupPhase.PENDING])
        ns = rng.choice(["ns0", "ns1", "ns2", "kube-system"] if rng.random() < 0.1 else ["ns0", "ns1", "ns2"])
        q = rng.choice(leaves)
        quota = rng.choice(["ga", "gb", None])
        job_priority = rng.randint(0, 3)
        min_res = ResourceList({"cpu": cpu * min_member}) if rng.random() < 0.5 else None
        podgroups.append(
            podgroup(
                ns,
                f"j{j:02d}",
                q,
                min_member,
                phase=phase,
                min_resources=min_res,
                priority=job_priority,
                created=float(j),
            )
        )
        for k in range(size):
            request: dict[str, Any] = {"gpu": gpu} if gpu else {}
            common_kw: dict[str, Any] = {
                "priority": job_priority + rng.choice([0, 0, 1, -1]),
                "quota": quota,
                "quota_preemptible": rng.random() < 0.9,
                "preemptable": rng.choice([None, None, None, False, True]),
                "priority_class": "system-node-critical" if rng.random() < 0.05 else "",
                "preemption_policy": "Never" if rng.random() < 0.05 else "PreemptLowerPriority",
                "created": float(j * 10 + k),
            }
            placed = None
            if running_job and rng.random() < 0.85:
                want = {"cpu": cpu, "memory": mem, "nvidia.com/gpu": gpu, "pods": 1}
                names = list(free)
                rng.shuffle(names)
                for name in names:
                    have = free[name]
                    if all(have.get(r, 0) >= v for r, v in want.items() if v):
                        for r, v in want.items():
                            if v:
                                have[r] -= v
                        placed = name
                        break
            if placed is not None:
                status = TaskStatus.RUNNING if rng.random() < 0.85 else TaskStatus.BOUND
                pods.append(
                    pod(
                        ns,
                        f"j{j:02d}-{k}",
                        f"j{j:02d}",
                        f"{cpu}m",
                        str(mem),
                        status=status,
                        node=placed,
                        **common_kw,
                        **request,
                    )
                )
            else:
                pods.append(pod(ns, f"j{j:02d}-{k}", f"j{j:02d}", f"{cpu}m", str(mem), **common_kw, **request))
    return snapshot(
        nodes=nodes, queues=queues, podgroups=podgroups, pods=pods, groups=groups, policy=POLICIES[policy_name]
    )


@cache
def seeded_cluster(seed: int, policy_name: str) -> Snapshot:
    """``random_cluster`` for a seed the tests below share, built once per module: the snapshot is frozen and the
    sessions only read it, so each test sees the same cluster it would build itself (with the snapshot's memo of
    derived values, such as the tasks by node, already filled: they are functions of the snapshot alone)."""
    return random_cluster(random.Random(seed), policy_name)


def _everything(self: common.VictimRoom, scope: Any, candidates: Any, preemptor: TaskState, without: Any = ()) -> Any:
    """The plain search: every node that passes the predicates is tried."""
    return np.full_like(self.ssn.nodes.idle, 2**40)


def _everywhere(ssn: Any, room: Any, task: TaskState, job: Any, within: bool) -> Any:
    """Reclaim's plain search: every node that passes the predicates is tried (its room is computed as sums and
    differences of ``VictimRoom.room``, so it is replaced whole)."""
    return np.full_like(ssn.nodes.idle, 2**40)


def _pairwise(self: Framework, preemptor: TaskState) -> Any:
    """Victims sorted pair by pair, every time."""
    return lambda victims: self._sort_victims_pairwise(victims, preemptor)


def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common.VictimRoom, "room", _everything)
    monkeypatch.setattr(sys.modules["engine.session.actions.reclaim"], "_victims_room", _everywhere)
    monkeypatch.setattr(Framework, "victim_sorter", _pairwise)


def _decisions(snap: Snapshot, sessions: int = 2) -> list[Any]:
    out = []
    now = 0.0
    for _ in range(sessions):
        result = run_session(snap, now=now)
        out.append((result.bindings, result.evictions, result.podgroups))
        snap = apply_result(snap, result, now=now)
        now += 1.0
    return out


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(seed=st.integers(0, 2**32 - 1), policy_name=st.sampled_from(sorted(POLICIES)))
def test_shortcuts_decide_as_the_plain_search(monkeypatch: pytest.MonkeyPatch, seed: int, policy_name: str) -> None:
    snap = random_cluster(random.Random(seed), policy_name)
    fast = _decisions(snap)
    with monkeypatch.context() as m:
        _plain(m)
        plain = _decisions(snap)
    assert fast == plain


def test_the_random_clusters_exercise_the_victim_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    """The generator is not idle: across seeds, both actions evict and pipeline, and the shortcuts skip nodes."""
    actions: set[str] = set()
    skipped = 0
    tried = 0
    real_rows = common.rows_with_room

    def counting(ssn: Any, task: TaskState, extra: Any) -> list[int]:
        nonlocal skipped, tried
        rows = real_rows(ssn, task, extra)
        everything = real_rows(ssn, task, np.full_like(ssn.nodes.idle, 2**40))
        skipped += len(everything) - len(rows)
        tried += len(rows)
        return rows

    for module in ("engine.session.actions.reclaim", "engine.session.actions.preempt"):
        monkeypatch.setattr(sys.modules[module], "rows_with_room", counting)
    for seed in range(40):
        for name in ("demo", "default"):
            result = run_session(seeded_cluster(seed, name), now=0.0)
            actions.update(e.action for e in result.evictions)
    assert actions == {"reclaim", "preempt"}
    assert skipped > tried > 0


def test_a_pod_that_passes_the_victim_test_has_a_job_that_passes_the_job_test() -> None:
    """The job tests (``Plugin.victim_job_bound``) let the search ask the pod test only for the pods of the jobs
    that pass them; that is exact only if the pod test implies the job test, which every room computed here checks
    over every candidate, in the state it is computed in."""
    checked = passed = filtered = 0
    real = common.VictimRoom._passing

    def checking(self: common.VictimRoom, scope: Any, pods: Any, preemptor: TaskState, key: Any) -> Any:
        nonlocal checked, passed, filtered
        job_test = self.ssn.framework.victim_job_test(self.hook, preemptor)
        _, test = self.ssn.framework.victim_bound(self.hook, preemptor)
        listed = self._scope(scope, pods).listed
        if job_test is not None:
            for t in listed:
                checked += 1
                if test(t):
                    passed += 1
                    assert t.pg is None or job_test(t.pg), (self.hook, t.uid)
                elif t.pg is not None and not job_test(t.pg):
                    filtered += 1
        return real(self, scope, pods, preemptor, key)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(common.VictimRoom, "_passing", checking)
        for seed in range(30):
            for name in sorted(POLICIES):
                run_session(seeded_cluster(seed, name), now=0.0)
    assert checked and passed and filtered  # the job tests refuse some jobs, and some pods pass


def _rooms_checked(m: pytest.MonkeyPatch, seeds: range) -> tuple[int, int]:
    """Run sessions on random clusters under every policy with each room checked against the sum of the requests of
    the candidates that pass the framework's whole victim test, asked pod by pod in the state the room is for."""
    checked = nonzero = 0
    real = common.VictimRoom._passing

    def checking(self: common.VictimRoom, scope: Any, pods: Any, preemptor: TaskState, key: Any) -> Any:
        nonlocal checked, nonzero
        sums = real(self, scope, pods, preemptor, key)
        _, test = self.ssn.framework.victim_bound(self.hook, preemptor)
        expected = np.zeros_like(sums)
        for t in self._scope(scope, pods).listed:
            if t.status in self.statuses and test(t):
                expected[t.node] += t.vec
        assert (sums == expected).all(), (self.hook, preemptor.uid)
        checked += 1
        nonzero += bool(expected.any())
        return sums

    m.setattr(common.VictimRoom, "_passing", checking)
    for seed in seeds:
        for name in sorted(POLICIES):
            snap = seeded_cluster(seed, name)
            for session in range(3):
                result = run_session(snap, now=float(session))
                snap = apply_result(snap, result, now=float(session))
    return checked, nonzero


@pytest.mark.parametrize("per_pod", ["none", "capacity", "conformance"])
def test_rooms_asked_in_parts_are_the_pod_by_pod_sums(per_pod: str) -> None:
    """``VictimRoom`` asks the job tests once per job whose pods changed status since they were last asked for the
    key, and the pod tests once per pod class present (``Plugin.victim_class``); the sums must be those of asking
    every candidate the whole test. A class that leaves out something a test reads (the request, the queue, the
    criticality, the quota group), a job answer kept after one of the job's pods changed status, or a candidate's
    status read stale, gives other sums on these clusters. ``per_pod``: that plugin has no class (asked pod by
    pod), mixing both ways in one tier."""
    with pytest.MonkeyPatch.context() as m:
        if per_pod != "none":
            from engine.session.registry import PLUGINS

            m.setattr(PLUGINS[per_pod], "victim_class", lambda self, hook: None)
        checked, nonzero = _rooms_checked(m, range(40 if per_pod == "none" else 10))
    assert checked > 1000 and nonzero > 500


def test_sort_victims_keyed_matches_pairwise() -> None:
    """The keyed sort gives the pairwise order on every cluster's victims, from any starting order."""
    from engine.session.session import Session

    rng = random.Random(7)
    checked = 0
    for seed in range(30):
        snap = seeded_cluster(seed, rng.choice(sorted(POLICIES)))
        ssn = Session(snap, snap.policy, 0.0)
        victims = [t for t in ssn.tasks.values() if t.status in (TaskStatus.RUNNING, TaskStatus.BOUND)]
        preemptors = [t for t in ssn.tasks.values() if t.status == TaskStatus.PENDING and t.pg is not None]
        for preemptor in preemptors[:5]:
            rng.shuffle(victims)
            fw = ssn.framework
            assert fw.sort_victims(victims, preemptor) == fw._sort_victims_pairwise(victims, preemptor)
            checked += 1
    assert checked > 50
