"""``scheduling.kube.client.KINDS`` agrees with the peers' CRDs (``tests/fixtures/crds``, copied unchanged): each
custom kind the adapter reads is served at the version it asks for, and it writes a status through ``…/status``
exactly where that version declares the status subresource (elsewhere the real server answers 404 there)."""

from __future__ import annotations

from pathlib import Path

import yaml

from scheduling.kube.client import BUILT_IN_GROUPS, KINDS, Kind

CRDS = Path(__file__).resolve().parents[1] / "fixtures" / "crds"


def _served(kinds: list[Kind]) -> dict[tuple[str, str, str], bool]:
    out = {}
    # the files are named as their CRDs; the workloads' (JobSet, Kubeflow's) in a folder of their own
    for path in {next(CRDS.glob(f"**/{k.group}_{k.plural}.yaml")) for k in kinds}:
        for doc in yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader):  # (some are 600 KB)
            if doc and doc.get("kind") == "CustomResourceDefinition":
                spec = doc["spec"]
                for version in spec["versions"]:
                    if version.get("served"):
                        has = "status" in (version.get("subresources") or {})
                        out[(spec["group"], spec["names"]["plural"], version["name"])] = has
    return out


def test_each_custom_kind_writes_its_status_where_its_crd_serves_it() -> None:
    custom = [k for k in KINDS if k.group not in BUILT_IN_GROUPS]  # the built-in kinds are not CRDs
    served = _served(custom)
    assert {(k.group, k.plural) for k in custom} == {
        ("scheduling.volcano.sh", "queues"), ("scheduling.volcano.sh", "podgroups"),
        ("scheduling.sigs.k8s.io", "elasticquotas"), ("scheduling.x-k8s.io", "elasticquotas"),
        ("kueue.x-k8s.io", "resourceflavors"), ("kueue.x-k8s.io", "cohorts"), ("kueue.x-k8s.io", "clusterqueues"),
        ("kueue.x-k8s.io", "localqueues"), ("jobset.x-k8s.io", "jobsets"), ("kubeflow.org", "pytorchjobs"),
        ("kubeflow.org", "tfjobs"), ("kubeflow.org", "xgboostjobs"), ("kubeflow.org", "paddlejobs"),
        ("kubeflow.org", "jaxjobs"), ("kubeflow.org", "mpijobs")}  # fmt: skip
    for kind in custom:
        key = (kind.group, kind.plural, kind.version)
        assert key in served, f"{key} is not served by the CRDs in {CRDS}"
        assert kind.status_subresource == served[key], key
    by_path = {(k.group, k.plural): k.status_subresource for k in custom}
    assert by_path[("scheduling.volcano.sh", "podgroups")] is False  # `subresources: {}` in Volcano's CRD
    assert by_path[("scheduling.volcano.sh", "queues")] is True
