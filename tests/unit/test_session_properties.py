"""Properties of whole sessions on random small clusters: every podgroup that is not Running has a reason with
numbers and a blocker; bindings never over-fill a node; gangs are all or nothing; evictions only hit running
pods; the same snapshot gives the same decisions."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.objects import PodGroupPhase, Snapshot, TaskStatus
from engine.resources import ResourceList
from engine.session.run import apply_result, run_session
from tests.support.examples import examples
from tests.unit.test_session_support import (
    node,
    plugin,
    pod,
    podgroup,
    policy,
    queue,
    rl,
    running,
    snapshot,
)

ACTION_ORDERS = [
    "enqueue, allocate, backfill",
    "enqueue, allocate, backfill, reclaim, preempt",
    "allocate, reclaim",
    "enqueue, allocate, preempt",
]
QUEUE_PLUGINS = ["proportion", "capacity"]


@st.composite
def clusters(draw: Any) -> Snapshot:
    n_nodes = draw(st.integers(1, 4))
    nodes = [
        node(f"n{i}", str(draw(st.integers(1, 6))), f"{draw(st.integers(1, 8))}Gi", pods=10) for i in range(n_nodes)
    ]
    free = {n.name: [n.allocatable["cpu"], n.allocatable["memory"]] for n in nodes}
    queues = [
        queue(
            f"q{i}",
            draw(st.integers(1, 3)),
            capability=rl(str(draw(st.integers(1, 8)))) if draw(st.booleans()) else None,
            deserved=rl(str(draw(st.integers(0, 4)))),
            reclaimable=draw(st.booleans()),
            priority=draw(st.integers(0, 1)),
        )
        for i in range(draw(st.integers(1, 3)))
    ]
    groups = []
    pods = []
    for j in range(draw(st.integers(1, 6))):
        size = draw(st.integers(0, 4))
        min_member = draw(st.integers(0, max(size, 1)))
        cpu = draw(st.sampled_from([500, 1000, 2000]))
        mem = draw(st.sampled_from([256, 1024, 2048])) * 2**20
        phase = draw(st.sampled_from([PodGroupPhase.PENDING, PodGroupPhase.INQUEUE, PodGroupPhase.RUNNING]))
        min_res = ResourceList({"cpu": cpu * min_member}) if draw(st.booleans()) else None
        q = queues[draw(st.integers(0, len(queues) - 1))].name
        ns = f"ns{draw(st.integers(0, 2))}"
        groups.append(
            podgroup(
                ns,
                f"j{j}",
                q,
                min_member,
                phase=phase,
                min_resources=min_res,
                priority=draw(st.integers(0, 2)),
                created=float(j),
            )
        )
        for k in range(size):
            placed = None
            if phase == PodGroupPhase.RUNNING and draw(st.booleans()):
                for name, (c, m) in free.items():
                    if c >= cpu and m >= mem:
                        free[name] = [c - cpu, m - mem]
                        placed = name
                        break
            request = {"cpu": f"{cpu}m", "memory": f"{mem}"}
            if placed is not None:
                pods.append(
                    running(
                        ns,
                        f"j{j}-{k}",
                        f"j{j}",
                        placed,
                        request["cpu"],
                        request["memory"],
                        priority=draw(st.integers(0, 2)),
                    )
                )
            else:
                pods.append(
                    pod(ns, f"j{j}-{k}", f"j{j}", request["cpu"], request["memory"], priority=draw(st.integers(0, 2)))
                )
    queue_plugin = draw(st.sampled_from(QUEUE_PLUGINS))
    pol = policy(
        draw(st.sampled_from(ACTION_ORDERS)),
        ["priority", "gang", "conformance"],
        [plugin("overcommit"), "drf", "predicates", queue_plugin, "nodeorder"],
    )
    return snapshot(nodes=nodes, queues=queues, podgroups=groups, pods=pods, policy=pol)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_session_properties(snap: Snapshot) -> None:
    result = run_session(snap, now=0.0)

    # every podgroup gets a status; every one that is not Running says why, with numbers, and names a blocker
    assert set(result.podgroups) == set(snap.podgroups)
    for key, status in result.podgroups.items():
        if status.phase == PodGroupPhase.RUNNING:
            continue
        assert status.reason, key
        assert any(ch.isdigit() for ch in status.message), (key, status.message)
        assert status.blocker is not None, key

    # decisions only concern pods that could take them
    for b in result.bindings:
        assert snap.tasks[b.task].status == TaskStatus.PENDING
    for e in result.evictions:
        assert snap.tasks[e.task].status in (TaskStatus.RUNNING, TaskStatus.BOUND)
        assert (e.reason and any(ch.isdigit() for ch in e.message)) or e.action == "preempt"

    # bound pods never over-fill a node (pipelined ones wait for evicted pods to go)
    gone = {e.task for e in result.evictions}
    for name, info in snap.nodes.items():
        held = [t for t in snap.tasks.values() if t.node == name and t.status == TaskStatus.RUNNING]
        held += [snap.tasks[b.task] for b in result.bindings if b.node == name and not b.pipelined]
        bound_and_left = [t for t in held if t.uid not in gone]
        for r in ("cpu", "memory"):
            assert sum(t.request[r] for t in bound_and_left) <= info.allocatable[r]

    # gangs: a podgroup gets bindings only if it reaches minMember with them (or already had). (Evictions later in
    # the session may still take pods of it: when the first tier's victim filters spare every candidate, the next
    # tier chooses, as in Volcano; those pods are counted here as they were when the bindings were made.)
    after = apply_result(snap, result, now=0.0)
    for key, pg in snap.podgroups.items():
        placed = [b for b in result.bindings if snap.tasks[b.task].podgroup == key]
        if not placed:
            continue
        members = [t for t in after.tasks.values() if t.podgroup == key and t.status == TaskStatus.RUNNING]
        taken = [u for u in gone if snap.tasks[u].podgroup == key]
        assert len(members) + len(taken) >= pg.min_member, key

    # queue gates: every queue that got a pod stays within its deserved (proportion) or realCapability (capacity)
    # on each resource its new pods asked for
    book = result.queue_values
    capacity_policy = book.policy == "capacity"
    final: dict[str, dict[str, int]] = {}
    for t in snap.tasks.values():
        placed_now = any(b.task == t.uid for b in result.bindings)
        if (t.status == TaskStatus.RUNNING and t.uid not in gone) or placed_now:
            q = snap.podgroups[t.podgroup].queue
            for r, v in t.request.items():
                final.setdefault(q, {})[r] = final.setdefault(q, {}).get(r, 0) + v
    for b in result.bindings:
        task = snap.tasks[b.task]
        q = snap.podgroups[task.podgroup].queue
        values = book[q]
        limit = values.real_capability if capacity_policy else values.deserved
        for r, v in task.request.items():
            if v and r in limit:
                assert final[q][r] <= limit[r], (q, r, final[q][r], limit[r])

    # bindings are final once handed over (``decisions.BindingSink``): the caller that writes them as the session
    # runs gets exactly the result's, in its order, and nothing later evicts a pod bound in the session
    assert not gone & {b.task for b in result.bindings}

    # determinism (the second run hands its bindings over as they commit)
    sent: list[list[Any]] = []
    again = run_session(snap, now=0.0, on_bindings=lambda batch: sent.append(list(batch)))
    assert all(sent)
    assert [b for batch in sent for b in batch] == result.bindings
    assert again.bindings == result.bindings
    assert again.evictions == result.evictions
    assert again.podgroups == result.podgroups
