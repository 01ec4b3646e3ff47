"""The field table of each tree kind (``engine.treefields``, issue 27 item 2): it names every field of the engine's
spec with the spec's own default, the what-if takes every field an edit may set, the free-text fields are checked
for length by the rules with a sentence naming the field, and the annotated ones travel through the Volcano and
Koordinator manifests (Kueue's notes say they are left out).

``SAMPLES`` holds one valid, non-default value per editable field in the API's form and as the spec holds it; the
database tests (``tests/api/test_tree_fields.py``, ``tests/cli/test_tree_fields.py``) send the same values through
the API, the store and the CLI. A field added to the table without a sample here fails ``test_every_editable_field_
has_a_sample``, so that each place is walked for it."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import yaml

from engine import rules, treefields
from engine.changes import ProposalError, apply_changes
from engine.manifests import load_manifests
from engine.manifests.export import export_notes, export_trees, quota_group_manifest
from engine.objects import QueueSpec, QuotaGroupSpec, Snapshot
from engine.resources import ResourceList
from engine.userlimits import UserLimit

SPECS: dict[str, type[Any]] = {"queue": QueueSpec, "quota_group": QuotaGroupSpec}

# kind -> field -> (the API's value, the spec's value); a parent with room for it named in PARENTS
SAMPLES: dict[str, dict[str, tuple[Any, Any]]] = {
    "queue": {
        "weight": (7, 7),
        "capability": ({"cpu": "8"}, ResourceList({"cpu": 8000})),
        "deserved": ({"cpu": "4"}, ResourceList({"cpu": 4000})),
        "guarantee": ({"cpu": "2"}, ResourceList({"cpu": 2000})),
        "borrowing_limit": ({"cpu": "1"}, ResourceList({"cpu": 1000})),
        "lending_limit": ({"cpu": "3"}, ResourceList({"cpu": 3000})),
        "priority": (3, 3),
        "reclaimable": (False, False),
        "min_runtime": (90, 90.0),
        "description": ("Speech models of the NLP team", "Speech models of the NLP team"),
        "user_limits": (
            [{"user": "alice", "max_resources": {"cpu": "2"}, "max_jobs": 3}],
            (UserLimit("user", "alice", ResourceList({"cpu": 2000}), 3),),
        ),
        "kueue": (
            {"queueingStrategy": "StrictFIFO", "preemption": {"reclaimWithinCohort": "Any"}},
            {"queueingStrategy": "StrictFIFO", "preemption": {"reclaimWithinCohort": "Any"}},
        ),
    },
    "quota_group": {
        "is_parent": (True, True),
        "min": ({"cpu": "2"}, ResourceList({"cpu": 2000})),
        "max": ({"cpu": "8"}, ResourceList({"cpu": 8000})),
        "shared_weight": ({"cpu": "4"}, ResourceList({"cpu": 4000})),
        "borrowing_limit": ({"cpu": "1"}, ResourceList({"cpu": 1000})),
        "lending_limit": ({"cpu": "1"}, ResourceList({"cpu": 1000})),
        "allow_lent": (False, False),
        "min_scale_exempt": (True, True),
        "tree_id": ("speech", "speech"),
        "description": ("The speech department's pool", "The speech department's pool"),
        "user_limits": ([{"group": "*", "max_jobs": 2}], (UserLimit("group", "*", ResourceList(), 2),)),
    },
}
PARENTS = {"queue": "dept", "quota_group": "root"}
# the queue ``dept`` the sample queue goes under: room for its deserved and guarantee
DEPT = {"name": "dept", "deserved": {"cpu": "16"}, "guarantee": {"cpu": "8"}}


def sample_api(kind: str) -> dict[str, Any]:
    return {name: api for name, (api, _) in SAMPLES[kind].items()}


def sample_spec(kind: str) -> dict[str, Any]:
    return {name: spec for name, (_, spec) in SAMPLES[kind].items()}


def _default(f: dataclasses.Field[Any]) -> Any:
    return f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default


@pytest.mark.parametrize("kind", treefields.TABLES)
def test_the_table_names_every_field_of_the_spec_with_its_default(kind: str) -> None:
    spec_fields = {f.name: _default(f) for f in dataclasses.fields(SPECS[kind]) if f.name not in ("name", "parent")}
    table = {f.name: f.default for f in treefields.TABLES[kind]}  # type: ignore[index]
    assert table == spec_fields
    for f in treefields.TABLES[kind]:  # type: ignore[index]
        assert f.meaning and f.label, f.name


@pytest.mark.parametrize("kind", treefields.TABLES)
def test_every_editable_field_has_a_sample(kind: str) -> None:
    assert set(SAMPLES[kind]) == set(treefields.editable(treefields.TABLES[kind]))  # type: ignore[index]


@pytest.mark.parametrize("kind", treefields.TABLES)
def test_the_what_if_takes_every_editable_field(kind: str) -> None:
    parent = {"op": "create", "kind": "queue", "spec": DEPT}
    change = {"op": "create", "kind": kind, "spec": {"name": "team", "parent": PARENTS[kind], **sample_api(kind)}}
    after = apply_changes(Snapshot(), [parent, change])
    made = after.queues["team"] if kind == "queue" else after.quota_groups["team"]
    assert {name: getattr(made, name) for name in SAMPLES[kind]} == sample_spec(kind)


def test_the_what_if_refuses_a_field_of_the_wrong_type_naming_it() -> None:
    change = {"op": "create", "kind": "queue", "spec": {"name": "team", "description": 5}}
    with pytest.raises(ProposalError) as caught:
        apply_changes(Snapshot(), [change])
    assert [(e.field, e.message) for e in caught.value.errors] == [
        ("changes.0.spec.description", "description must be a string, got 5")
    ]


@pytest.mark.parametrize(
    ("spec", "field_errors"),
    [
        (QueueSpec(name="team", description="x" * 500), []),
        (
            QueueSpec(name="team", description="x" * 501),
            [("description", "queue team: description is 501 characters long; it may be at most 500", "too_long")],
        ),
        (
            QuotaGroupSpec(name="pool", description="é" * 501),
            [
                (
                    "description",
                    "quota group pool: description is 501 characters long; it may be at most 500",
                    "too_long",
                )
            ],
        ),
    ],
)
def test_a_description_longer_than_its_limit_is_refused_naming_the_field(spec: Any, field_errors: list[Any]) -> None:
    found = rules.queue_field_errors(spec) if isinstance(spec, QueueSpec) else rules.group_field_errors(spec)
    assert [(e.field, e.message, e.code) for e in found] == field_errors


def _load(docs: list[dict[str, Any]]) -> Snapshot:
    return load_manifests([("export.yaml", yaml.safe_dump_all(docs, sort_keys=False))]).snapshot


def test_the_annotated_fields_travel_through_the_volcano_and_koordinator_manifests() -> None:
    queue = QueueSpec(name="team", description="Speech models\nof the NLP team")
    group = QuotaGroupSpec(name="pool", description="The speech pool")
    snap = Snapshot(queues={"team": queue}, quota_groups={"pool": group})
    volcano, koordinator = export_trees(snap, "volcano"), export_trees(snap, "koordinator")
    assert volcano[0]["metadata"]["annotations"] == {treefields.DESCRIPTION_ANNOTATION: queue.description}
    assert quota_group_manifest(group)["metadata"]["annotations"] == {"fairway.io/description": "The speech pool"}
    back = _load(volcano + koordinator)
    assert back.queues["team"] == queue
    assert back.quota_groups["pool"] == group
    assert (
        "annotations" not in export_trees(Snapshot(queues={"plain": QueueSpec(name="plain")}), "volcano")[0]["metadata"]
    )  # a blank description writes nothing


def test_kueue_says_it_has_no_place_for_a_description() -> None:
    snap = Snapshot(queues={"team": QueueSpec(name="team", description="Speech"), "quiet": QueueSpec(name="quiet")})
    notes = export_notes(snap, "kueue")
    assert (
        "description of queues team: Kueue has no place for it (export them with --format volcano, which keeps it "
        "in an annotation)"
    ) in notes
    assert all("quiet" not in n for n in notes if n.startswith("description"))
    for doc in export_trees(snap, "kueue"):
        assert treefields.DESCRIPTION_ANNOTATION not in (doc["metadata"].get("annotations") or {})
