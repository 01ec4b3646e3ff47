"""The replay's memory (issue 29 item 4, its speed): the sessions run with the cyclic garbage collector paused, the
replay collecting the young generation itself every few sessions, setting the survivors aside and giving the collector
back as it found it; the
values kept per session for the report leave out the pods' aggregates and give the same report; the session state a
full build drops has its cycles cut."""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

import engine.replay.loop as loop
from engine.objects import Snapshot
from engine.replay import Trace, replay, run_report
from engine.replay.loop import tree_snapshot
from engine.replay.workload import generate
from engine.session import run as session_run
from engine.session.carry import SessionCarry
from engine.values import QuotaValues

TREE = """\
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: a}
spec: {weight: 1, deserved: {cpu: "16", memory: 64Gi, nvidia.com/gpu: "2"}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: b}
spec: {weight: 1, deserved: {cpu: "16", memory: 64Gi}}
---
apiVersion: v1
kind: Namespace
metadata: {name: ns-a, annotations: {scheduling.volcano.sh/queue-name: a}}
---
apiVersion: v1
kind: Namespace
metadata: {name: ns-b, annotations: {scheduling.volcano.sh/queue-name: b}}
---
apiVersion: v1
kind: Node
metadata: {name: cpu-1}
status: {allocatable: {cpu: "16", memory: 64Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-1}
spec: {taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]}
status: {allocatable: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "2", pods: "110"}}
"""

START = 1_772_438_400.0  # 2026-03-02T08:00:00Z


@pytest.fixture(scope="module")
def trace() -> Trace:
    """An hour of the demo's workload on a small tree (a session every virtual minute: 60)."""
    objects = [o for o in yaml.safe_load_all(TREE) if o]
    return generate(tree_snapshot(objects), objects, start=START, hours=1, period=60, seed=2)


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_the_sessions_run_with_the_collector_paused_and_it_is_given_back(trace: Trace, collector_on: None) -> None:
    seen: list[bool] = []
    run = replay(trace, checkpoint=lambda: seen.append(gc.isenabled()))
    assert run.sessions == len(seen) > 30
    assert not any(seen)  # paused before every session (the checkpoint runs just before it)
    assert gc.isenabled()  # and on again after
    gc.disable()
    try:
        replay(trace)
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()


def test_the_replay_collects_the_young_generation_every_few_sessions_and_sets_the_survivors_aside(
    trace: Trace, collector_on: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loop, "YOUNG_EVERY", 3)
    generations: list[int] = []
    frozen: list[int] = []
    sessions = [0]

    def record(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            generations.append(info["generation"])

    def count() -> None:
        sessions[0] += 1
        frozen.append(gc.get_freeze_count())

    gc.callbacks.append(record)
    try:
        run = replay(trace, checkpoint=count)
    finally:
        gc.callbacks.remove(record)
    n = run.sessions
    assert n == sessions[0] > 30
    # while the sessions ran nothing but the replay's own collections happened (the collector was paused); after
    # them, automatic collections may start again: only the ones during the sessions are counted here
    assert generations[: n // 3] == [0] * (n // 3)
    # what survived each collection was set aside (no later collection walks it), and given back at the end
    assert frozen[:4] == [0, 0, 0, frozen[3]] and frozen[3] > 0
    assert all(f > 0 for f in frozen[3:])  # (fewer when some die: reference counting still frees them)
    assert gc.get_freeze_count() == 0


def test_objects_set_aside_before_the_replay_stay_so(trace: Trace, collector_on: None) -> None:
    gc.freeze()  # (a process that froze what it loaded before its work, as a forking server may)
    try:
        before = gc.get_freeze_count()
        replay(trace)
        assert gc.get_freeze_count() >= before > 0
    finally:
        gc.unfreeze()


def test_the_values_kept_per_session_leave_the_aggregates_out_and_give_the_same_report(
    trace: Trace, monkeypatch: pytest.MonkeyPatch
) -> None:
    full: list[QuotaValues] = []
    session = session_run.run_session

    def keeping(*args: Any, **kwargs: Any) -> Any:
        result = session(*args, **kwargs)
        if result.values_at_open is not None:
            full.append(result.values_at_open)
        return result

    monkeypatch.setattr(session_run, "run_session", keeping)  # (the loop calls it through the module)
    run = replay(trace)
    kept = [v for _, v in run.values[:-1]]  # (the last entry: the values at the window's end, no session's)
    assert len(kept) == len(full) == run.sessions
    assert all(v.aggregates is None for v in kept) and all(v.aggregates is not None for v in full)
    assert all(k.queues is f.queues and k.quotas is f.quotas for k, f in zip(kept, full, strict=True))
    with_full = dataclasses.replace(run, values=[*zip((t for t, _ in run.values), full, strict=False), run.values[-1]])
    report = run_report(run)
    assert report == run_report(with_full)
    assert report["teams"] and any(team["share"] for team in report["teams"].values())


def test_a_full_build_lets_the_last_kept_state_go_without_cycles(trace: Trace, monkeypatch: pytest.MonkeyPatch) -> None:
    # the carry's podgroup states list their pods' states and those point back: a kept state dropped by a full build
    # (here: a node added) or by ``clear`` has its cycles cut, so reference counting frees it at once
    seen: list[Snapshot] = []
    session = session_run.run_session

    def keeping(snapshot: Snapshot, **kwargs: Any) -> Any:
        seen.append(snapshot)
        return session(snapshot, **kwargs)

    monkeypatch.setattr(session_run, "run_session", keeping)
    replay(trace)
    snap = max(seen, key=lambda s: len(s.tasks))
    carry = SessionCarry()
    first = list(carry.open(snap, [])[2].values())
    assert sum(len(job.tasks) for job in first) == len(snap.tasks) > 5
    node = next(iter(snap.nodes.values()))
    more = snap.replace(nodes={**snap.nodes, "extra": dataclasses.replace(node, name="extra")})
    second = list(carry.open(more, [])[2].values())
    assert carry.last == "full build: nodes were added or removed"
    assert all(job.tasks == [] for job in first)
    assert sum(len(job.tasks) for job in second) == len(snap.tasks)
    carry.clear()
    assert all(job.tasks == [] for job in second)
