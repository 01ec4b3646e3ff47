"""A role's required node affinity in traces (version 3): it reads, round-trips, makes the trace version 3, a bad
entry is refused naming the line and the field, and the replay places the role's pods only on nodes it matches."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.replay import TraceError, read_trace, trace_lines
from engine.replay.loop import replay
from tests.unit.test_replay import HEADER, text


def _node(name: str, cpu: str, zone: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"zone": zone}},
        "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"}},
    }


QUEUE = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "a"}, "spec": {}}
TREE = {"kind": "Tree", "objects": [_node("na", "8", "a"), _node("nb", "2", "b"), QUEUE]}
IN_B = [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]


def job(name: str, submit: str, cpu: int, affinity: Any = None) -> dict[str, Any]:
    role: dict[str, Any] = {"name": "w", "pods": 1, "request": {"cpu": str(cpu)}}
    if affinity is not None:
        role["nodeAffinity"] = affinity
    return {"kind": "Job", "namespace": "ns", "name": name, "queue": "a", "submit": submit, "roles": [role],
            "runtime": 600}  # fmt: skip


# zone b has one node of 2 cpu: "small" (2 cpu, zone b) starts at once; "big" (4 cpu, zone b) never fits there, though
# node na (zone a, 8 cpu) is empty; "free" (4 cpu, no affinity) starts on na
LINES = [
    {**HEADER, "version": 3},
    TREE,
    job("small", "2026-03-02T08:00:00Z", 2, IN_B),
    job("big", "2026-03-02T08:00:00Z", 4, IN_B),
    job("free", "2026-03-02T08:00:00Z", 4),
]


def test_the_replay_places_a_roles_pods_only_where_its_affinity_allows() -> None:
    trace = read_trace(text(LINES))
    out = replay(trace).outcomes
    assert out["ns/small"].start == trace.header.start
    assert out["ns/free"].start == trace.header.start
    assert out["ns/big"].start is None


def test_the_affinity_round_trips_and_makes_the_trace_version_3() -> None:
    trace = read_trace(text(LINES))
    assert [e.key for term in trace.jobs[0].roles[0].node_affinity for e in term] == ["zone"]
    lines = list(trace_lines(trace))
    assert json.loads(lines[0])["version"] == 3
    assert read_trace(lines).jobs == trace.jobs
    assert json.loads(lines[2])["roles"][0]["nodeAffinity"] == IN_B
    plain = read_trace(text([{**HEADER, "version": 3}, TREE, job("free", "2026-03-02T08:00:00Z", 4)]))
    assert json.loads(next(trace_lines(plain)))["version"] == 1  # no affinity, no flavors: the lowest version


def test_a_bad_affinity_is_refused_naming_the_line_and_the_field() -> None:
    bad = [{"matchExpressions": [{"key": "zone", "operator": "Near", "values": ["b"]}]}]
    with pytest.raises(
        TraceError, match=r"line 3 \(Job ns/x\): roles\[0\]: nodeAffinity: \[0\]\.matchExpressions\[0\]"
    ):
        read_trace(text([{**HEADER, "version": 3}, TREE, job("x", "2026-03-02T08:00:00Z", 1, bad)]))
