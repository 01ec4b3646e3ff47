"""``engine.manifests.export``: the trees written as the peers' manifests read back to the same trees and give the
same values (on random snapshots of the golden corpus' generator), and every document is valid against the peer's
own CRD schema (kept in tests/fixtures/crds). Kueue's format keeps what Kueue can hold
(deserved, the limits, weights, the hierarchy, closed leaves) and names the rest."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from engine.changes import node_values
from engine.manifests import load_manifests
from engine.manifests.export import FORMATS, export_notes, export_trees
from engine.objects import BUILTIN_QUEUES, BUILTIN_QUOTA_GROUPS, NamespaceInfo, QueueSpec, QuotaGroupSpec, Snapshot
from engine.resources import ResourceList
from engine.values import compute_values
from tests.support import corpus
from tests.support.manifest_dump import dump_snapshot

TREE_KINDS = {"Queue", "Namespace", "ResourceQuota", "ElasticQuota"}


def load_docs(docs: list[dict[str, Any]]) -> Snapshot:
    return load_manifests([("export.yaml", yaml.safe_dump_all(docs, sort_keys=False))]).snapshot


@cache
def drawn(seed: int) -> Snapshot:
    """The corpus generator's snapshot for ``seed``, read from its manifests once per module: several tests draw the
    same seeds, and the snapshot (frozen, never changed by the export or the engine) is only read."""
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
    with pytest.raises(ValueError, match="format: 'slurm' is not one of volcano, koordinator, kueue"):
        export_trees(Snapshot(), "slurm")
    with pytest.raises(ValueError, match="format: 'slurm'"):
        export_notes(Snapshot(), "slurm")
    assert set(FORMATS) == {"volcano", "koordinator", "kueue"}


# The peers' CRDs, kept in the repository (tests/fixtures/crds/SOURCES.txt says where each comes from).
CRDS = Path(__file__).resolve().parents[1] / "fixtures" / "crds"


@cache
def _schema(crd_file: str, version: str) -> dict[str, Any]:
    """The CRD's schema for ``version``, parsed once per module (the validators only read it)."""
    crd = yaml.safe_load((CRDS / crd_file).read_text())
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            return v["schema"]["openAPIV3Schema"]  # type: ignore[no-any-return]
    raise AssertionError(f"{crd_file} has no version {version}")


@pytest.mark.parametrize("seed", range(10))
def test_every_exported_tree_object_is_valid_against_the_peers_crd(seed: int) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schemas = {
        "Queue": _schema("scheduling.volcano.sh_queues.yaml", "v1beta1"),
        "ElasticQuota": _schema("scheduling.sigs.k8s.io_elasticquotas.yaml", "v1alpha1"),
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


# -- kueue ------------------------------------------------------------------------------------------------------------
KUEUE_KINDS = {
    "ClusterQueue": "clusterqueues",
    "Cohort": "cohorts",
    "LocalQueue": "localqueues",
    "ResourceFlavor": "resourceflavors",
}


def _kueue_crd(plural: str) -> str:
    return f"kueue.x-k8s.io_{plural}.yaml"


KEPT = ("deserved", "borrowing_limit", "lending_limit", "weight")


def rl(**amounts: str) -> ResourceList:
    return ResourceList.parse({"nvidia.com/gpu" if k == "gpu" else k: v for k, v in amounts.items()})


def kueue_tree() -> Snapshot:
    """Two cohorts over three ClusterQueues and a top-level ClusterQueue: own cohort quota, limits (a lending limit
    of 0), weights, a closed leaf, namespaces on leaves; the top-level queues capped at what they deserve, as Kueue
    caps the top of a tree."""
    org = rl(cpu="40", memory="160Gi", gpu="8")
    queues = {
        "org": QueueSpec("org", deserved=org, capability=org, weight=3),
        "research": QueueSpec(
            "research", parent="org", deserved=rl(cpu="24", memory="96Gi", gpu="8"),
            borrowing_limit=rl(cpu="8"), weight=2,
        ),
        "nlp": QueueSpec(
            "nlp", parent="research", deserved=rl(cpu="12", memory="48Gi", gpu="4"),
            borrowing_limit=rl(cpu="4", gpu="2"), lending_limit=rl(gpu="0"), weight=4,
        ),
        "vision": QueueSpec(
            "vision", parent="research", deserved=rl(cpu="12", memory="48Gi", gpu="4"),
            lending_limit=rl(cpu="6"), state="Closed",
        ),
        "ops": QueueSpec("ops", parent="org", deserved=rl(cpu="8", memory="32Gi")),
        "batch": QueueSpec("batch", deserved=rl(cpu="16", memory="64Gi"), capability=rl(cpu="16", memory="64Gi")),
    }  # fmt: skip
    namespaces = {
        "nlp": NamespaceInfo("nlp", queue="nlp"),
        "nlp-dev": NamespaceInfo("nlp-dev", queue="nlp"),
        "ops": NamespaceInfo("ops", queue="ops"),
    }
    return Snapshot(queues={**BUILTIN_QUEUES, **queues}, namespaces=namespaces)


def test_a_kueue_export_reads_back_to_the_same_quota_limits_weights_and_values() -> None:
    snap = kueue_tree()
    docs = export_trees(snap, "kueue")
    assert [d["kind"] for d in docs] == ["ResourceFlavor", *["Cohort"] * 2, *["ClusterQueue"] * 4, *["LocalQueue"] * 3]
    by = {(d["kind"], d["metadata"]["name"], d["metadata"].get("namespace")): d for d in docs}
    org, research = by[("Cohort", "org", None)]["spec"], by[("Cohort", "research", None)]["spec"]
    # a cohort's own quota is what it deserves beyond its children (Kueue adds the children's)
    assert org["resourceGroups"][0]["flavors"][0]["resources"] == [
        {"name": "cpu", "nominalQuota": "8"},
        {"name": "memory", "nominalQuota": "32Gi"},
    ]
    assert research["parentName"] == "org" and research["fairSharing"] == {"weight": 2}
    assert research["resourceGroups"][0]["flavors"][0]["resources"] == [
        {"name": "cpu", "nominalQuota": "0", "borrowingLimit": "8"},
    ]
    nlp = by[("ClusterQueue", "nlp", None)]["spec"]
    assert nlp["cohortName"] == "research" and nlp["fairSharing"] == {"weight": 4}
    assert nlp["resourceGroups"] == [
        {
            "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
            "flavors": [
                {
                    "name": "default-flavor",
                    "resources": [
                        {"name": "cpu", "nominalQuota": "12", "borrowingLimit": "4"},
                        {"name": "memory", "nominalQuota": "48Gi"},
                        {"name": "nvidia.com/gpu", "nominalQuota": "4", "borrowingLimit": "2", "lendingLimit": "0"},
                    ],
                }
            ],
        }
    ]
    assert by[("ClusterQueue", "vision", None)]["spec"]["stopPolicy"] == "Hold"
    assert "cohortName" not in by[("ClusterQueue", "batch", None)]["spec"]
    assert by[("LocalQueue", "default", "nlp-dev")]["spec"] == {"clusterQueue": "nlp"}
    assert export_notes(snap, "kueue") == []  # everything of this tree has its Kueue counterpart

    back = load_docs(docs)
    for name in ("org", "research", "nlp", "vision", "ops", "batch"):
        for field in KEPT:
            assert getattr(back.queues[name], field) == getattr(snap.queues[name], field), (name, field)
        assert back.queues[name].parent == snap.queues[name].parent, name
    assert back.queues["vision"].state == "Closed"
    # the same values under the policy the import runs (Kueue's objects: capacity with the hierarchy)
    mine, theirs = compute_values(snap, back.policy), compute_values(back)
    for name in ("org", "research", "nlp", "vision", "ops", "batch"):
        assert theirs.queues[name].deserved == mine.queues[name].deserved, name
        assert theirs.queues[name].capability == mine.queues[name].capability, name


@pytest.mark.parametrize("seed", range(10))
def test_random_trees_read_back_from_kueue_with_their_quota_limits_and_weights(seed: int) -> None:
    snap = drawn(seed)
    back = load_docs(export_trees(snap, "kueue"))
    notes = export_notes(snap, "kueue")
    for name, queue in snap.queues.items():
        if name in ("root", "default"):
            continue
        for field in KEPT:
            top = queue.parent in ("root", "default")
            if field.endswith("_limit") and top:
                assert getattr(back.queues[name], field) == ResourceList()
                continue
            if field == "deserved" and any(n.startswith(f"queue {name}: deserves ") for n in notes):
                continue
            assert getattr(back.queues[name], field) == getattr(queue, field), (seed, name, field)


def test_what_kueue_cannot_hold_is_named() -> None:
    snap = kueue_tree()
    queues = dict(snap.queues)
    queues["org"] = QueueSpec("org", deserved=rl(cpu="40", memory="32Gi"), borrowing_limit=rl(cpu="1"), priority=5)
    queues["research"] = QueueSpec("research", parent="org", deserved=rl(cpu="20"), state="Closing")
    queues["nlp"] = QueueSpec(
        "nlp", parent="research", deserved=rl(cpu="12"), capability=rl(cpu="20"), guarantee=rl(cpu="2"),
        reclaimable=False,
    )  # fmt: skip
    queues["vision"] = QueueSpec("vision", parent="research", deserved=rl(cpu="12"), state="Closing")
    namespaces = {**snap.namespaces, "web": NamespaceInfo("web", weight=3), "res": NamespaceInfo("res", queue="org")}
    groups = {**BUILTIN_QUOTA_GROUPS, "team": QuotaGroupSpec("team", min=rl(cpu="1"), max=rl(cpu="2"))}
    snap = Snapshot(queues=queues, namespaces=namespaces, quota_groups=groups)
    notes = export_notes(snap, "kueue")
    assert notes == [
        "queue org: borrowing and lending limits dropped: a cohort without a parent has no one to borrow from or lend to",
        "queue org: at the top of a Kueue tree it uses at most its nominal quota (Fairway lets it borrow the "
        "cluster's idle resources up to its capability)",
        "queue org: priority 5 has no Kueue counterpart",
        "queue research: Closing, and a Kueue cohort cannot be stopped",
        "queue research: deserves cpu 20, less than its children's cpu 24; a Kueue cohort holds at least its "
        "children's quota (cpu 24)",
        "queue nlp: guarantee (cpu 2) has no Kueue counterpart (a lending limit keeps quota)",
        "queue nlp: capability (cpu 20) is not deserved plus a borrowing limit, the only cap Kueue has (a borrowing "
        "limit of cpu 8 would keep it)",
        "queue nlp: not reclaimable, which Kueue cannot say of a queue (its lending limit can)",
        "queue vision: Closing written as stopPolicy Hold, which Fairway reads back as Closed",
        "namespace res: its queue org is a cohort, which no LocalQueue can point at",
        "namespace web: its weight and ResourceQuota hard limits are not written",
        "namespaces web: on the default queue: no LocalQueue (Kueue leaves their jobs alone)",
        "quota groups (1): Koordinator's tree has no Kueue counterpart (export them with --format koordinator)",
    ]
    assert export_notes(snap, "volcano") == export_notes(snap, "koordinator") == []
    assert export_trees(Snapshot(), "kueue") == []


@pytest.mark.parametrize("seed", [None, *range(6)])
def test_every_kueue_object_is_valid_against_kueues_crd(seed: int | None) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validators = {
        kind: jsonschema.Draft7Validator(_schema(_kueue_crd(plural), "v1beta2")) for kind, plural in KUEUE_KINDS.items()
    }
    docs = export_trees(kueue_tree() if seed is None else drawn(seed), "kueue")
    assert docs
    for doc in docs:
        errors = [f"{'.'.join(map(str, e.path))}: {e.message}" for e in validators[doc["kind"]].iter_errors(doc)]
        assert not errors, (doc["metadata"]["name"], errors)
        # the CRDs' CEL rules, which JSON schema does not run
        for group in doc["spec"].get("resourceGroups", ()):
            assert all(len(f["resources"]) == len(group["coveredResources"]) for f in group["flavors"])
            assert [r["name"] for r in group["flavors"][0]["resources"]] == group["coveredResources"]
        if doc["kind"] == "ClusterQueue" and "cohortName" not in doc["spec"]:
            rows = [r for g in doc["spec"].get("resourceGroups", ()) for f in g["flavors"] for r in f["resources"]]
            assert not any("borrowingLimit" in r or "lendingLimit" in r for r in rows), doc["metadata"]["name"]
