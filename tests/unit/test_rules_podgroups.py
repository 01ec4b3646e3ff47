"""PodGroup admission rules of ``engine.rules``.

Queue checks follow Volcano's ``pkg/webhooks/admission/podgroups/validate/validate_podgroup_test.go`` and the
leaf/root checks of ``jobs/validate/admit_job.go``; the namespace quota check is seed 003's PodGroupMinResources
webhook ("the summary of all PodGroups' spec.minResources in a namespace not more than Quota").
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from engine.objects import DEFAULT_QUEUE, ROOT_QUEUE, QueueSpec
from engine.resources import ResourceList
from engine.rules import CODES, FieldError, validate_podgroup


def rl(data: Mapping[str, object] | None = None) -> ResourceList:
    return ResourceList.parse(data or {})


QUEUES: dict[str, QueueSpec] = {
    ROOT_QUEUE: QueueSpec(ROOT_QUEUE, parent=None),
    DEFAULT_QUEUE: QueueSpec(DEFAULT_QUEUE),
    "test-queue": QueueSpec("test-queue"),
    "closed-queue": QueueSpec("closed-queue", state="Closed"),
    "closing-queue": QueueSpec("closing-queue", state="Closing"),
    "unknown-queue": QueueSpec("unknown-queue", state="Unknown"),
    "parent": QueueSpec("parent"),
    "child-a": QueueSpec("child-a", parent="parent"),
    "child-b": QueueSpec("child-b", parent="parent"),
}


def check_pg(
    queue: str = "test-queue",
    *,
    min_member: int = 1,
    min_resources: ResourceList | None = None,
    namespace: str = "team-a",
    hard: Mapping[str, object] | None = None,
    other: Mapping[str, object] | None = None,
    name: str = "",
    queues: Mapping[str, QueueSpec] = QUEUES,
) -> list[FieldError]:
    return validate_podgroup(
        queues,
        queue,
        min_member=min_member,
        min_resources=min_resources if min_resources is not None else ResourceList(),
        namespace=namespace,
        namespace_hard=None if hard is None else rl(hard),
        other_min_resources=rl(other),
        name=name,
    )


def codes(errors: list[FieldError]) -> list[tuple[str, str]]:
    return [(e.field, e.code) for e in errors]


# --------------------------------------------------------------------------------------------------------
# Queue: exists, Open, not root, leaf
# --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("queue", "expected"),
    [
        ("test-queue", []),  # Volcano test: queue Open
        ("closed-queue", [("queue", "queue_not_open")]),  # Volcano test: queue Closed
        ("closing-queue", [("queue", "queue_not_open")]),
        ("unknown-queue", [("queue", "queue_not_open")]),
        ("", []),  # Volcano test: empty queue -> the default queue
        (DEFAULT_QUEUE, []),
        ("missing", [("queue", "not_found")]),  # Volcano test: queue does not exist
        (ROOT_QUEUE, [("queue", "root_queue")]),  # admit_job: not root
        ("parent", [("queue", "not_leaf")]),  # admit_job: leaf queues only
        ("child-a", []),
    ],
)
def test_queue_checks(queue: str, expected: list[tuple[str, str]]) -> None:
    assert codes(check_pg(queue)) == expected


def test_queue_messages() -> None:
    assert check_pg("closed-queue")[0].message == (
        "can only submit podgroup to queue with state Open, queue closed-queue is Closed"
    )
    assert check_pg("parent")[0].message == (
        "can only submit podgroup to a leaf queue, queue parent has 2 child queues: child-a, child-b"
    )
    assert (
        check_pg("missing", name="pg1")[0].message == "podgroup pg1 in namespace team-a: queue missing does not exist"
    )
    assert (
        check_pg(ROOT_QUEUE)[0].message
        == "podgroup in namespace team-a: podgroups cannot be submitted to the root queue"
    )


def test_empty_queue_needs_a_default_queue() -> None:
    queues = {ROOT_QUEUE: QUEUES[ROOT_QUEUE], "test-queue": QUEUES["test-queue"]}
    errors = check_pg("", queues=queues)
    assert codes(errors) == [("queue", "not_found")]
    assert "queue default does not exist" in errors[0].message


# --------------------------------------------------------------------------------------------------------
# Fields: min_member, min_resources, namespace, name
# --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("min_member", "expected"),
    [(0, []), (1, []), (1000, []), (-1, [("min_member", "negative")]), (True, [("min_member", "invalid")])],
)
def test_min_member(min_member: int, expected: list[tuple[str, str]]) -> None:
    assert codes(check_pg(min_member=min_member)) == expected


def test_min_member_message() -> None:
    assert check_pg(min_member=-2, name="pg1")[0].message == (
        "podgroup pg1 in namespace team-a: min_member -2 must be greater than or equal to 0"
    )


def test_negative_min_resources() -> None:
    errors = check_pg(min_resources=ResourceList({"cpu": -500}))
    assert codes(errors) == [("min_resources.cpu", "negative")]
    assert (
        errors[0].message == "podgroup in namespace team-a: min_resources cpu -0.5 must be greater than or equal to 0"
    )


@pytest.mark.parametrize(
    ("namespace", "code"),
    [("team-a", None), ("Team-A", "uppercase"), ("", "required"), ("n" * 64, "too_long"), ("équipe", "non_ascii")],
)
def test_namespace_name(namespace: str, code: str | None) -> None:
    errors = check_pg(namespace=namespace)
    assert [(e.field, e.code) for e in errors] == ([] if code is None else [("namespace", code)])


def test_podgroup_name_is_a_subdomain() -> None:
    assert codes(check_pg(name="job-1.pg")) == []
    assert codes(check_pg(name="Job_1")) == [("name", "uppercase")]


def test_all_problems_are_reported_together() -> None:
    errors = check_pg("closed-queue", min_member=-1, namespace="Bad", min_resources=rl({"cpu": "8"}), hard={"cpu": "4"})
    assert codes(errors) == [
        ("namespace", "uppercase"),
        ("queue", "queue_not_open"),
        ("min_member", "negative"),
        ("min_resources.cpu", "exceeds_namespace_quota"),
    ]
    assert {e.code for e in errors} <= set(CODES)


# --------------------------------------------------------------------------------------------------------
# Seed 003: the namespace's podgroups' minResources within its ResourceQuota
# --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hard", "other", "asked", "expected"),
    [
        # no ResourceQuota in the namespace: nothing to check
        (None, {"cpu": "100"}, {"cpu": "100"}, []),
        # exactly at the quota: 2 + 2 = 4
        ({"cpu": "4", "memory": "8Gi"}, {"cpu": "2", "memory": "4Gi"}, {"cpu": "2", "memory": "4Gi"}, []),
        # one millicore over
        ({"cpu": "4"}, {"cpu": "2"}, {"cpu": "2001m"}, ["min_resources.cpu"]),
        # both resources over, reported per resource in name order
        (
            {"cpu": "4", "memory": "8Gi"},
            {"cpu": "3", "memory": "6Gi"},
            {"cpu": "2", "memory": "4Gi"},
            ["min_resources.cpu", "min_resources.memory"],
        ),
        # a resource the quota does not define is not limited
        ({"cpu": "4"}, {}, {"nvidia.com/gpu": "8"}, []),
        # a resource this podgroup does not ask for is not held against it, even when others overshoot
        ({"cpu": "4", "memory": "1Gi"}, {"memory": "2Gi"}, {"cpu": "1"}, []),
        # requests.* keys mean the same as the plain names (memory parsed as milli-units is converted)
        ({"requests.cpu": "4"}, {"cpu": "3"}, {"cpu": "2"}, ["min_resources.cpu"]),
        ({"requests.memory": "8Gi"}, {"memory": "4Gi"}, {"memory": "4Gi"}, []),
        ({"requests.memory": "8Gi"}, {"memory": "4Gi"}, {"memory": "5Gi"}, ["min_resources.memory"]),
        # limits.* do not constrain requests
        ({"limits.cpu": "1"}, {}, {"cpu": "2"}, []),
        # both spellings: the tighter one binds
        ({"cpu": "10", "requests.cpu": "3"}, {}, {"cpu": "4"}, ["min_resources.cpu"]),
        # extended resources and pod counts defined by the quota are checked like any other
        (
            {"requests.nvidia.com/gpu": "4"},
            {"nvidia.com/gpu": "3"},
            {"nvidia.com/gpu": "2"},
            ["min_resources.nvidia.com/gpu"],
        ),
        ({"pods": "10"}, {"pods": "8"}, {"pods": "3"}, ["min_resources.pods"]),
        # a quota of 0 forbids the resource
        ({"cpu": "0"}, {}, {"cpu": "1m"}, ["min_resources.cpu"]),
    ],
)
def test_namespace_quota(
    hard: dict[str, str] | None, other: dict[str, str], asked: dict[str, str], expected: list[str]
) -> None:
    errors = check_pg(min_resources=rl(asked), hard=hard, other=other)
    assert [e.field for e in errors] == expected
    assert all(e.code == "exceeds_namespace_quota" for e in errors)


def test_namespace_quota_message_names_resource_requested_used_and_hard() -> None:
    errors = check_pg(
        min_resources=rl({"memory": "5Gi"}), hard={"requests.memory": "8Gi"}, other={"memory": "4Gi"}, name="train-1"
    )
    assert errors[0].message == (
        "podgroup train-1 in namespace team-a: min_resources memory 5Gi plus 4Gi already reserved by the namespace's "
        "other podgroups is 9Gi, more than the namespace's resource quota memory 8Gi"
    )
    errors = check_pg(min_resources=rl({"cpu": "2500m"}), hard={"cpu": "4"}, other={"cpu": "2"})
    assert errors[0].message == (
        "podgroup in namespace team-a: min_resources cpu 2.5 plus 2 already reserved by the namespace's other "
        "podgroups is 4.5, more than the namespace's resource quota cpu 4"
    )


def test_inputs_are_not_mutated() -> None:
    queues = dict(QUEUES)
    request = rl({"cpu": "2"})
    check_pg(min_resources=request, hard={"cpu": "1"}, queues=queues)
    assert queues == QUEUES
    assert request.to_dict() == {"cpu": 2000}
