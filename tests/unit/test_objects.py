"""``engine.objects.TaskInfo``'s hand-written ``__init__`` behaves as the dataclass's generated one would: the same
parameters in the same order with the fields' defaults, every field set, the derived ones computed, still frozen."""

from __future__ import annotations

import dataclasses
import inspect
import pickle

import pytest

from engine.objects import NodeSelectorRequirement, TaskInfo, TaskStatus, Toleration
from engine.resources import ResourceList

INIT_FIELDS = [f for f in dataclasses.fields(TaskInfo) if f.init]


def _default(f: dataclasses.Field[object]) -> object:
    if f.default is not dataclasses.MISSING:
        return f.default
    assert f.default_factory is not dataclasses.MISSING, f.name
    return f.default_factory()


def test_the_parameters_are_the_fields_in_order() -> None:
    params = list(inspect.signature(TaskInfo.__init__).parameters.values())[1:]
    assert [p.name for p in params] == [f.name for f in INIT_FIELDS]


def test_defaults_are_the_fields_defaults() -> None:
    task = TaskInfo("ns", "p", "ns/pg")
    for f in INIT_FIELDS[3:]:
        assert getattr(task, f.name) == _default(f), f.name
    assert (task.uid, task.best_effort) == ("ns/p", True)
    assert TaskInfo("ns", "q", "ns/pg").node_selector is not task.node_selector  # a new dict each time


def test_every_field_is_set_from_its_argument() -> None:
    values = {
        "namespace": "team",
        "name": "w-0",
        "podgroup": "team/job",
        "request": ResourceList({"cpu": 500}),
        "priority": 7,
        "priority_class": "high",
        "volcano_preemptable": False,
        "quota_preemptible": False,
        "quota_group": "qa",
        "status": TaskStatus.RUNNING,
        "node": "n1",
        "node_selector": {"zone": "a"},
        "tolerations": (Toleration(key="gpu", operator="Exists"),),
        "labels": {"app": "x"},
        "task_role": "worker",
        "creation_timestamp": 1.5,
        "start_timestamp": 2.5,
        "preemption_policy": "Never",
        "pipelined": True,
        "nominated": "n2",
        "node_affinity": ((NodeSelectorRequirement("zone", "In", ("a",)),),),
    }
    assert set(values) == {f.name for f in INIT_FIELDS}
    by_name = TaskInfo(**values)  # type: ignore[arg-type]
    by_position = TaskInfo(*values.values())  # type: ignore[arg-type]
    for task in (by_name, by_position):
        for name, value in values.items():
            assert getattr(task, name) == value, name
        assert (task.uid, task.best_effort) == ("team/w-0", False)
    assert by_name == by_position


def test_it_stays_frozen_comparable_hashable_replaceable_and_picklable() -> None:
    task = TaskInfo("ns", "p", "ns/pg", request=ResourceList({"cpu": 1}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        task.name = "other"  # type: ignore[misc]
    moved = dataclasses.replace(task, status=TaskStatus.RUNNING, node="n2")
    assert (moved.status, moved.node, moved.uid, moved.request) == (TaskStatus.RUNNING, "n2", "ns/p", task.request)
    assert moved != task and hash(moved) == hash(task)
    assert task.with_status(TaskStatus.BOUND, "n1") == dataclasses.replace(task, status=TaskStatus.BOUND, node="n1")
    assert pickle.loads(pickle.dumps(moved)) == moved
