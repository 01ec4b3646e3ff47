"""``TaskInfo.evolve`` and ``PodGroupInfo.evolve`` give the object ``dataclasses.replace`` gives, field for field
(derived and non-compared fields too), for every field a change may name, and stay frozen."""

from __future__ import annotations

import dataclasses
import random

import pytest

from engine.objects import (
    NodeSelectorRequirement,
    PodGroupCondition,
    PodGroupInfo,
    PodGroupPhase,
    TaskInfo,
    TaskStatus,
    Toleration,
)
from engine.resources import ResourceList

_TASK_VALUES: dict[str, list[object]] = {
    "namespace": ["ns-b"],
    "name": ["pod-9"],
    "podgroup": ["ns-b/job-2"],
    "request": [ResourceList({"cpu": 2000}), ResourceList()],
    "priority": [7],
    "priority_class": ["high"],
    "volcano_preemptable": [False, None],
    "quota_preemptible": [False],
    "quota_group": ["team-b"],
    "status": [TaskStatus.RUNNING, TaskStatus.SUCCEEDED, TaskStatus.PENDING],
    "node": ["n2", None],
    "node_selector": [{"zone": "b"}, None],
    "tolerations": [(Toleration(key="gpu", operator="Exists", effect="NoSchedule"),)],
    "labels": [{"app": "x"}, None],
    "task_role": ["worker"],
    "creation_timestamp": [5.0, None],
    "start_timestamp": [9.0, None],
    "preemption_policy": ["Never"],
    "pipelined": [True, False],
    "nominated": ["n3", None],
    "node_affinity": [((NodeSelectorRequirement("zone", "NotIn", ("b",)),),), ()],
}

_PODGROUP_VALUES: dict[str, list[object]] = {
    "namespace": ["ns-b"],
    "name": ["job-9"],
    "queue": ["q2"],
    "min_member": [3],
    "min_task_member": [{"worker": 2}],
    "min_resources": [ResourceList({"cpu": 1000}), None],
    "priority": [4],
    "priority_class": ["low"],
    "phase": [PodGroupPhase.INQUEUE, PodGroupPhase.RUNNING, PodGroupPhase.UNKNOWN],
    "creation_timestamp": [3.0],
    "conditions": [(PodGroupCondition("Scheduled", reason="ok", last_transition_time=60.0),), ()],
    "unplaced_sessions": [2],
    "requeues": [1],
    "backoff_until": [90.0, None],
    "suspended": [True, False],
    "user": ["ann"],
    "user_groups": [("ml",)],
    "pod_sets": [("launcher", "worker"), ()],
}


def _task() -> TaskInfo:
    """A pod with no field at its default (a field the copy forgot would show)."""
    return TaskInfo(
        namespace="ns-a",
        name="pod-0",
        podgroup="ns-a/job-1",
        request=ResourceList({"cpu": 500, "memory": 2**30}),
        priority=1,
        priority_class="mid",
        volcano_preemptable=True,
        quota_preemptible=False,
        quota_group="team-a",
        status=TaskStatus.BOUND,
        node="n0",
        node_selector={"zone": "a"},
        tolerations=(Toleration(key="spot", operator="Exists", effect="NoSchedule"),),
        labels={"k": "v"},
        task_role="ps",
        creation_timestamp=1.0,
        start_timestamp=2.0,
        preemption_policy="Never",
        pipelined=True,
        nominated="n1",
        node_affinity=((NodeSelectorRequirement("zone", "In", ("a",)),),),
    )


def _podgroup(**kw: object) -> PodGroupInfo:
    """A podgroup with no field at its default but those of ``kw``."""
    fields: dict[str, object] = {
        "queue": "q1",
        "min_member": 2,
        "min_task_member": {"ps": 1},
        "min_resources": ResourceList({"cpu": 3000}),
        "priority": 2,
        "priority_class": "mid",
        "phase": PodGroupPhase.RUNNING,
        "creation_timestamp": 1.5,
        "conditions": (PodGroupCondition("Unschedulable", reason="x", last_transition_time=30.0),),
        "unplaced_sessions": 1,
        "requeues": 3,
        "backoff_until": 45.0,
        "user": "bob",
        "user_groups": ("dev",),
        "pod_sets": ("launcher", "worker"),
    }
    fields.update(kw)
    return PodGroupInfo(namespace="ns-a", name="job-1", **fields)  # type: ignore[arg-type]


def test_the_fixtures_set_every_field_away_from_its_default() -> None:
    for obj, unset in ((_task(), set()), (_podgroup(), {"suspended"})):
        for f in dataclasses.fields(obj):
            if not f.init or f.name in unset:
                continue
            if f.default is not dataclasses.MISSING:
                assert getattr(obj, f.name) != f.default, f.name
            elif f.default_factory is not dataclasses.MISSING:
                assert getattr(obj, f.name) != f.default_factory(), f.name


def _same(left: object, right: object) -> None:
    assert type(left) is type(right)
    for f in dataclasses.fields(left):  # type: ignore[arg-type]
        assert getattr(left, f.name) == getattr(right, f.name), f.name  # best_effort and key too (not compared)
    assert left == right


def _changes(values: dict[str, list[object]], rng: random.Random) -> dict[str, object]:
    names = rng.sample(sorted(values), rng.randint(1, 5))
    return {name: rng.choice(values[name]) for name in names}


@pytest.mark.parametrize("name", sorted(_TASK_VALUES))
def test_a_pod_evolved_in_each_field_is_what_replace_gives(name: str) -> None:
    task = _task()
    for value in _TASK_VALUES[name]:
        _same(task.evolve(**{name: value}), dataclasses.replace(task, **{name: value}))


@pytest.mark.parametrize("name", sorted(_PODGROUP_VALUES))
def test_a_podgroup_evolved_in_each_field_is_what_replace_gives(name: str) -> None:
    for pg in (_podgroup(), _podgroup(suspended=True)):
        for value in _PODGROUP_VALUES[name]:
            _same(pg.evolve(**{name: value}), dataclasses.replace(pg, **{name: value}))


def test_several_fields_at_once_as_replace() -> None:
    rng = random.Random(29)
    task, pg = _task(), _podgroup(conditions=(PodGroupCondition("Unschedulable", reason="x"),))
    for _ in range(300):
        changes = _changes(_TASK_VALUES, rng)
        _same(task.evolve(**changes), dataclasses.replace(task, **changes))
        changes = _changes(_PODGROUP_VALUES, rng)
        _same(pg.evolve(**changes), dataclasses.replace(pg, **changes))


def test_a_suspended_podgroup_read_inqueue_is_pending_as_its_constructor_says() -> None:
    pg = _podgroup(suspended=True)
    assert pg.evolve(phase=PodGroupPhase.INQUEUE).phase == PodGroupPhase.PENDING
    assert _podgroup().evolve(phase=PodGroupPhase.INQUEUE).phase == PodGroupPhase.INQUEUE


def test_the_copies_stay_frozen_and_the_original_unchanged() -> None:
    task, pg = _task(), _podgroup()
    moved = task.evolve(status=TaskStatus.RUNNING, node="n1", start_timestamp=4.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        moved.node = "n2"  # type: ignore[misc]
    assert task.status == TaskStatus.BOUND and task.node == "n0"
    with pytest.raises(dataclasses.FrozenInstanceError):
        pg.evolve(phase=PodGroupPhase.RUNNING).phase = PodGroupPhase.PENDING  # type: ignore[misc]


def test_a_field_replace_refuses_is_refused_as_replace_does() -> None:
    with pytest.raises(ValueError):
        _task().evolve(uid="x/y")
    with pytest.raises(TypeError):
        _podgroup().evolve(no_such_field=1)


def test_every_field_is_tried() -> None:
    assert set(_TASK_VALUES) == {f.name for f in dataclasses.fields(TaskInfo) if f.init}
    assert set(_PODGROUP_VALUES) == {f.name for f in dataclasses.fields(PodGroupInfo) if f.init}
