"""``engine.manifests.export``: the trees written as the peers' manifests read back to the same trees and give the
same values (on random snapshots of the golden corpus' generator), and every document is valid against the peer's
own CRD schema (when the peers' manifests are beside the repository)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from engine.changes import node_values
from engine.manifests import load_manifests
from engine.manifests.export import FORMATS, export_trees
from engine.objects import Snapshot
from engine.values import compute_values
from tests.acceptance.manifests import PEER_MANIFESTS, needs_peer_manifests
from tests.support import corpus
from tests.support.manifest_dump import dump_snapshot

TREE_KINDS = {"Queue", "Namespace", "ResourceQuota", "ElasticQuota"}


def load_docs(docs: list[dict[str, Any]]) -> Snapshot:
    return load_manifests([("export.yaml", yaml.safe_dump_all(docs, sort_keys=False))]).snapshot


def drawn(seed: int) -> Snapshot:
    return load_docs(corpus.snapshot(seed).docs)


def round_trip(snap: Snapshot) -> Snapshot:
    """The cluster's own objects (nodes, pods, podgroups, the policy) as the tests write them, the trees as the
    export writes them, read back together."""
    rest = [d for d in dump_snapshot(snap) if d["kind"] not in TREE_KINDS]
    return load_docs(rest + export_trees(snap, "volcano") + export_trees(snap, "koordinator"))


@pytest.mark.parametrize("seed", range(20))
def test_an_export_reads_back_to_the_same_trees_and_values(seed: int) -> None:
    snap = drawn(seed)
    back = round_trip(snap)
    assert back.queues == snap.queues
    assert back.queue_hierarchy == snap.queue_hierarchy
    assert back.quota_groups == snap.quota_groups
    assert back.quota_namespaces == snap.quota_namespaces
    assert back.namespaces == snap.namespaces
    assert node_values(compute_values(back)) == node_values(compute_values(snap))


def test_each_format_writes_only_its_tree_in_tree_order() -> None:
    snap = drawn(3)
    volcano = export_trees(snap, "volcano")
    assert {d["kind"] for d in volcano} <= {"Queue", "Namespace", "ResourceQuota"}
    koord = export_trees(snap, "koordinator")
    assert {d["kind"] for d in koord} <= {"ElasticQuota"}
    for docs, parent_of in (
        ([d for d in volcano if d["kind"] == "Queue"], lambda d: d["spec"].get("parent")),
        (koord, lambda d: d["metadata"]["labels"].get("quota.scheduling.koordinator.sh/parent")),
    ):
        seen: set[str] = set()
        for doc in docs:
            parent = parent_of(doc)
            written = {x["metadata"]["name"] for x in docs}
            assert parent is None or parent not in written or parent in seen, (doc["metadata"]["name"], parent)
            seen.add(doc["metadata"]["name"])


def test_an_unknown_format_is_named() -> None:
    with pytest.raises(ValueError, match="format: 'kueue' is not one of volcano, koordinator"):
        export_trees(Snapshot(), "kueue")
    assert set(FORMATS) == {"volcano", "koordinator"}


def _schema(crd_file: str, version: str) -> dict[str, Any]:
    crd = yaml.safe_load((PEER_MANIFESTS / crd_file).read_text())
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            return v["schema"]["openAPIV3Schema"]  # type: ignore[no-any-return]
    raise AssertionError(f"{crd_file} has no version {version}")


@needs_peer_manifests
@pytest.mark.parametrize("seed", range(10))
def test_every_exported_tree_object_is_valid_against_the_peers_crd(seed: int) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schemas = {
        "Queue": _schema("volcano/config__crd__volcano__bases__scheduling.volcano.sh_queues.yaml", "v1beta1"),
        "ElasticQuota": _schema(
            "koordinator/config__crd__bases__scheduling.sigs.k8s.io_elasticquotas.yaml", "v1alpha1"
        ),
    }
    validators = {kind: jsonschema.Draft7Validator(schema) for kind, schema in schemas.items()}
    snap = drawn(seed)
    checked = 0
    for doc in export_trees(snap, "volcano") + export_trees(snap, "koordinator"):
        validator = validators.get(doc["kind"])
        if validator is not None:
            errors = [f"{'.'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(doc)]
            assert not errors, (doc["metadata"]["name"], errors)
            checked += 1
    assert checked >= 1
