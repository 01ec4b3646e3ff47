"""A queue's minimum runtime outside the API: the tree rule (whole seconds, 0 or more, unset allowed), Volcano Queue
manifests (Fairway's ``fairway.io/min-runtime`` annotation: Volcano's Queue has no such field) read and written."""

from __future__ import annotations

import dataclasses

import pytest
import yaml

from engine import rules
from engine.manifests import ManifestError, load_manifests
from engine.manifests.export import queue_manifest
from engine.objects import QueueSpec


def _queue_doc(annotation: str | None) -> str:
    meta: dict[str, object] = {"name": "team"}
    if annotation is not None:
        meta["annotations"] = {"fairway.io/min-runtime": annotation}
    doc = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": meta, "spec": {"weight": 1}}
    return yaml.safe_dump(doc)


@pytest.mark.parametrize(("text", "seconds"), [("90s", 90.0), ("2m", 120.0), ("0s", 0.0), (None, None)])
def test_a_volcano_queue_reads_its_min_runtime_annotation(text: str | None, seconds: float | None) -> None:
    snap = load_manifests([("q.yaml", _queue_doc(text))]).snapshot
    assert snap.queues["team"].min_runtime == seconds


@pytest.mark.parametrize(("text", "words"), [("soon", "is not a duration"), ("1.5s", "must be whole seconds")])
def test_a_bad_annotation_is_refused_naming_it(text: str, words: str) -> None:
    with pytest.raises(ManifestError) as info:
        load_manifests([("q.yaml", _queue_doc(text))])
    assert "metadata.annotations[fairway.io/min-runtime]" in str(info.value) and words in str(info.value)


def test_the_annotation_is_written_only_when_set_and_reads_back() -> None:
    plain = queue_manifest(QueueSpec(name="team"))
    assert "annotations" not in plain["metadata"]
    doc = queue_manifest(QueueSpec(name="team", min_runtime=90.0))
    assert doc["metadata"]["annotations"] == {"fairway.io/min-runtime": "90s"}
    back = load_manifests([("q.yaml", yaml.safe_dump(doc))]).snapshot.queues["team"]
    assert back.min_runtime == 90.0


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (-1.0, "queue team: min_runtime -1 s must be 0 or more seconds (leave it unset for the policy's minRuntime)"),
        (1.5, "queue team: min_runtime 1.5 s must be whole seconds"),
        (float("nan"), "queue team: min_runtime must be a number of seconds, got nan"),
    ],
)
def test_the_rule_refuses_a_bad_min_runtime_naming_the_field(value: float, words: str) -> None:
    spec = dataclasses.replace(QueueSpec(name="team"), min_runtime=value)
    errors = rules.queue_field_errors(spec)
    assert [(e.field, e.message) for e in errors] == [("min_runtime", words)]
    assert rules.queue_field_errors(dataclasses.replace(spec, min_runtime=None)) == []
    assert rules.queue_field_errors(dataclasses.replace(spec, min_runtime=0.0)) == []
