"""``engine.partial`` on a live cluster's snapshot: a Job an earlier session admitted in part
(``AdmissionLevers.partial_admitted``) is kept to its count, its pods on a node first; one that waits again is not."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from engine.manifests import load_objects
from engine.objects import Snapshot
from engine.partial import PartialAdmission

LOCAL_QUEUE = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
               "metadata": {"name": "lq", "namespace": "team"}, "spec": {"clusterQueue": "ml"}}  # fmt: skip
SPEC = {"schedulerName": "fairway", "containers": [{"name": "main", "resources": {"requests": {"cpu": "1"}}}]}


def _pod(name: str, node: str = "") -> dict[str, Any]:
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "sample", "uid": "uid-sample", "controller": True}
    spec = {**SPEC, "nodeName": node} if node else SPEC
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "team",
            "ownerReferences": [owner]}, "spec": spec, "status": {"phase": "Pending"}}  # fmt: skip


def _snapshot(on_node: int, pending: int, admitted: int) -> Snapshot:
    """A Job of 6 pods (at least 2) admitted with ``admitted`` (its parallelism lowered to it, the annotation keeping 6):
    ``on_node`` of its pods on a node, ``pending`` others."""
    annotations = {"kueue.x-k8s.io/job-min-parallelism": "2", "fairway.io/original-parallelism": "6"}
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "sample", "namespace": "team", "uid": "uid-sample",
                        "labels": {"kueue.x-k8s.io/queue-name": "lq"}, "annotations": annotations},
           "spec": {"parallelism": admitted, "template": {"spec": SPEC}}}  # fmt: skip
    pods = [_pod(f"sample-p{i}") for i in range(pending)] + [_pod(f"sample-{i}", "n1") for i in range(on_node)]
    result, invalid = load_objects([LOCAL_QUEUE, job, *pods], live=True)
    assert not invalid
    snap = result.snapshot
    return snap.replace(admission=replace(snap.admission, partial_admitted=(("team/sample", admitted),)))


def test_an_admitted_job_is_kept_to_its_count_its_pods_on_a_node_first() -> None:
    snap = _snapshot(on_node=2, pending=4, admitted=3)
    partial = PartialAdmission(snap)
    cut = partial.before(snap)
    kept = sorted(t.name for t in cut.tasks.values() if t.podgroup == "team/sample")
    assert kept == ["sample-0", "sample-1", "sample-p0"]
    group = cut.podgroups["team/sample"]
    assert (group.min_member, group.min_resources.raw) == (3, {"cpu": 3000})
    partial.after(cut, {"team/sample"})
    assert partial.cuts() == {"team/sample": 3}


def test_a_job_that_waits_again_is_not_kept_and_loses_its_count() -> None:
    snap = _snapshot(on_node=0, pending=6, admitted=3)
    partial = PartialAdmission(snap)
    partial.before(snap)
    assert "team/sample" not in partial.cuts()
