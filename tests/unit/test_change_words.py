"""A proposal in words (``engine.changes.describe``): what the list of replays shows for a run automation started
without a summary, each change with its values as written."""

from __future__ import annotations

from engine.changes import describe


def test_each_kind_of_change_reads_as_a_short_phrase_with_its_values() -> None:
    changes = [
        {"op": "update", "kind": "queue", "name": "nlp", "spec": {"weight": 4, "deserved": {"nvidia.com/gpu": "8"}}},
        {"op": "update", "kind": "quota_group", "name": "qa", "spec": {"allow_lent": False, "max": None}},
        {"op": "create", "kind": "queue", "spec": {"name": "vision", "parent": "research"}},
        {"op": "create", "kind": "quota_group", "spec": {"name": "top"}},
        {"op": "move", "kind": "queue", "name": "nlp", "spec": {"parent": "root"}},
        {"op": "delete", "kind": "quota_group", "name": "old", "cascade": True},
        {"op": "delete", "kind": "queue", "name": "spare"},
        {"op": "set_weight", "kind": "namespace", "name": "team-a", "weight": 3},
        {"op": "add", "kind": "node", "name": "gpu-9", "spec": {"allocatable": {"cpu": "64", "memory": "512Gi"}}},
        {"op": "drain", "kind": "node", "name": "gpu-1"},
        {"op": "remove", "kind": "node", "name": "cpu-2"},
        {"op": "add", "kind": "podgroup", "spec": {"namespace": "team-a", "name": "big", "queue": "nlp"}},
    ]
    assert describe(changes).split("; ") == [
        "queue nlp: weight 4, deserved nvidia.com/gpu 8",
        "quota group qa: allow lent no, max unset",
        "new queue vision under research",
        "new quota group top under root",
        "move queue nlp under root",
        "delete quota group old with its subtree",
        "delete queue spare",
        "namespace team-a: weight 3",
        "add node gpu-9: allocatable cpu 64 memory 512Gi",
        "drain node gpu-1",
        "remove node cpu-2",
        "add podgroup team-a/big to queue nlp",
    ]
