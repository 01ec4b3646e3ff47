"""Who submitted a job mirrored from Kubernetes (issue 30 item 5): YuniKorn's ``yunikorn.apache.org/user.info``
annotation (JSON ``user`` and ``groups``) first, then ``fairway.io/user``, on the PodGroup, else on its first pod
that names one, else on a plain pod; else nobody (the namespace counts as the user). The readers are
``engine.manifests`` (also ``fairway simulate``'s); the mirror writes the rows, which the store reads back."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from django.utils import timezone

from engine.manifests import load_manifests, load_objects
from tests.kube.conftest import pod, podgroup

INFO = "yunikorn.apache.org/user.info"


def _annotated(obj: dict[str, Any], **annotations: str) -> dict[str, Any]:
    obj["metadata"].setdefault("annotations", {}).update(annotations)
    return obj


def objects() -> list[dict[str, Any]]:
    return [
        _annotated(
            podgroup("ml", "by-info", "default"), **{INFO: json.dumps({"user": "alice", "groups": ["ml", "interns"]})}
        ),
        _annotated(podgroup("ml", "by-plain", "default"), **{"fairway.io/user": "bob"}),
        podgroup("ml", "by-pod", "default"),
        podgroup("ml", "nobody", "default"),
        pod("ml", "by-info-0", group="by-info"),
        pod("ml", "by-plain-0", group="by-plain"),
        _annotated(pod("ml", "by-pod-0", group="by-pod"), **{INFO: json.dumps({"user": "carol", "groups": ["ml"]})}),
        pod("ml", "nobody-0", group="nobody"),
        _annotated(pod("ml", "plain"), **{"fairway.io/user": "dave"}),
        pod("ml", "plain-nobody"),
    ]


EXPECTED = {
    "ml/by-info": ("alice", ("ml", "interns")),
    "ml/by-plain": ("bob", ()),
    "ml/by-pod": ("carol", ("ml",)),
    "ml/nobody": ("", ()),
    "ml/podgroup-plain": ("dave", ()),
    "ml/podgroup-plain-nobody": ("", ()),
}


def test_the_readers_take_the_user_from_the_annotations() -> None:
    result, invalid = load_objects(objects(), source="test")
    assert not invalid
    found = {k: (pg.user, pg.user_groups) for k, pg in result.snapshot.podgroups.items()}
    assert found == EXPECTED


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("{not json", "not valid JSON"),
        ('["alice"]', "expected a JSON object with user and groups"),
        ('{"user": "alice", "groups": "ml"}', "expected a list of group names"),
    ],
)
def test_a_bad_user_info_is_refused_naming_the_annotation(value: str, problem: str) -> None:
    docs = [_annotated(podgroup("ml", "x", "default"), **{INFO: value})]
    _, invalid = load_objects(docs, source="test")
    assert len(invalid) == 1 and INFO in invalid[0].message and problem in invalid[0].message


def test_the_job_manifest_carries_its_user_back() -> None:
    from engine.manifests.export import job_manifests

    snap = load_objects(objects(), source="test")[0].snapshot
    pg = snap.podgroups["ml/by-info"]
    docs = job_manifests(pg, list(snap.podgroup_tasks("ml/by-info")), None)
    back = load_manifests([("job.yaml", yaml.safe_dump_all(docs))]).snapshot.podgroups["ml/by-info"]
    assert (back.user, back.user_groups) == ("alice", ("ml", "interns"))


def test_the_mirror_stores_the_user_and_the_store_reads_it(db: Any) -> None:
    from quotas import services
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import Cluster, Pod, PodGroup
    from scheduling.store import load_snapshot

    services.ensure_builtins()
    cluster = Cluster.objects.create(name="west", source="kubernetes", scheduler_name="fairway")
    report = mirror(cluster, objects(), timezone.now())
    assert not report.problems, report.problems
    rows = {pg.name: (pg.user, pg.user_groups) for pg in PodGroup.objects.all()}
    assert rows == {"by-info": ("alice", ["ml", "interns"]), "by-plain": ("bob", None), "by-pod": ("carol", ["ml"]),
                    "nobody": (None, None)}  # fmt: skip
    assert Pod.objects.get(name="plain").user == "dave" and Pod.objects.get(name="plain-nobody").user is None
    snap = load_snapshot(cluster)
    assert {k: (pg.user, pg.user_groups) for k, pg in snap.podgroups.items()} == EXPECTED
    again = mirror(cluster, objects(), timezone.now())
    assert again.written["PodGroup"] == 0
