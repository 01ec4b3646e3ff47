"""The informers against the real API server's lists and watches: real resourceVersions and bookmarks (on the
session's server, with its watch cache), a real 410 Gone after an etcd compaction and the re-list, and an adapter
started against a server without the peers' CRDs (both on a server of this module's own, without CRDs and without
the watch cache, so that a watch reads etcd and meets the compaction)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.kube.conftest import Seeder, node, pod, queue, wait_for
from tests.kube.real.conftest import make_cluster
from tests.support.kube_apiserver import CRDS, ControlPlane, binaries


@pytest.fixture(scope="module")
def bare_plane(control_plane: ControlPlane) -> Iterator[ControlPlane]:
    """etcd + kube-apiserver without CRDs and without the watch cache (``control_plane`` first: it skips or fails
    with the reason when the binaries are not built)."""
    with ControlPlane(binaries(), crds=False, apiserver_args=("--watch-cache=false",)) as plane:
        yield plane


def _ready_node(core: k8s.CoreV1Api, name: str) -> None:
    obj = node(name, cpu="8")
    core.create_node({key: value for key, value in obj.items() if key != "status"})
    core.patch_node(name, {"spec": {"taints": None}})  # no node lifecycle controller here: see kube_kubelet.py
    core.patch_node_status(name, {"status": obj["status"]})


def _informer(adapter: Any, plural: str, group: str = "") -> Any:
    return next(i for i in adapter.informers if i.kind.plural == plural and i.kind.group == group)


def test_real_resource_versions_and_bookmarks(
    db: Any, control_plane: ControlPlane, admin: k8s.ApiClient, tag: str, make_adapter: Any
) -> None:
    """The pods' watch asks for bookmarks: the server sends them (shortly before it ends a watch) with the version
    its pods have reached, which the field selector may have hidden from this watch — another scheduler's pods. The
    informer's version moves on with them and its cache does not change; the next watch resumes from there.

    (A bookmark carries the version of its own kind's cache on the server: a kind nothing touched gets none, so
    this is shown on the pods' watch, where the selector hides events.)"""
    cluster = make_cluster(control_plane.kubeconfig(), tag)
    adapter = make_adapter(cluster, start=False, watch_seconds=6)
    pods = _informer(adapter, "pods")
    seed, ns = Seeder(admin), f"ns-{tag}"
    seed.namespace(ns)
    seed.pod(pod(ns, "mine", scheduler=cluster.scheduler_name))
    pods.list()
    listed_at, cached = int(pods.resource_version), pods.snapshot()
    assert list(pods.cache) == [f"{ns}/mine"] and listed_at > 0  # etcd's revision, as a string
    watching = threading.Thread(target=pods.watch)  # a whole watch, until the server ends it (timeoutSeconds)
    watching.start()
    wait_for(lambda: pods.watches == 1, what="the watch to start")
    seed.pod(pod(ns, "theirs", scheduler="default-scheduler"))  # a pod this watch does not select
    theirs = int(k8s.CoreV1Api(admin).read_namespaced_pod("theirs", ns).metadata.resource_version)
    assert theirs > listed_at
    watching.join()  # no event came, only bookmarks
    assert pods.bookmarks >= 1
    assert int(pods.resource_version) >= theirs  # moved on by the bookmark
    assert pods.snapshot() == cached and pods.lists == 1
    # the next watch resumes from the bookmark's version: an event after it arrives, nothing is listed again
    k8s.CoreV1Api(admin).patch_namespaced_pod("mine", ns, {"metadata": {"labels": {"seen": "yes"}}})
    pods.watch()
    assert pods.cache[f"{ns}/mine"]["metadata"]["labels"] == {"seen": "yes"} and pods.lists == 1
    assert int(pods.resource_version) > theirs


def test_a_real_compaction_answers_410_and_the_adapter_lists_again(
    db: Any, bare_plane: ControlPlane, tag: str, make_adapter: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from scheduling.models import Node, Pod

    with bare_plane.api_client() as admin:
        core, seed, ns = k8s.CoreV1Api(admin), Seeder(admin), f"ns-{tag}"
        cluster = make_cluster(bare_plane.kubeconfig(), tag)
        seed.namespace(ns)
        for name in (f"a-{tag}", f"b-{tag}"):
            _ready_node(core, name)
        seed.pod(pod(ns, "early", scheduler=cluster.scheduler_name))
        adapter = make_adapter(cluster, start=False, watch_seconds=1)
        for informer in adapter.informers:
            informer.list()
        assert adapter.reconcile() is not None
        nodes, pods = _informer(adapter, "nodes"), _informer(adapter, "pods")
        # changes no watch saw, then their events compacted away
        seed.pod(pod(ns, "late", scheduler=cluster.scheduler_name))
        core.delete_node(f"b-{tag}")
        assert bare_plane.compact_etcd() > int(nodes.resource_version)
        with caplog.at_level(logging.INFO, logger="scheduling.kube.informer"):
            for informer in (nodes, pods):
                informer.step()  # the watch from the listed version: 410 Gone from the server
                assert not informer.listed
        assert sum("410" in r.getMessage() or "too old" in r.getMessage() for r in caplog.records) >= 2
        for informer in (nodes, pods):
            informer.step()  # lists again: the cache is the server's now
            assert informer.lists == 2 and informer.listed
        assert sorted(nodes.cache) == [f"a-{tag}"] and sorted(pods.cache) == [f"{ns}/early", f"{ns}/late"]
        adapter.reconcile()
        assert sorted(Pod.objects.filter(cluster=cluster).values_list("name", flat=True)) == ["early", "late"]
        assert list(Node.objects.filter(cluster=cluster).values_list("name", flat=True)) == [f"a-{tag}"]
        seed.pod(pod(ns, "after", scheduler=cluster.scheduler_name))  # and the new watch works
        pods.watch()
        assert f"{ns}/after" in pods.cache and pods.lists == 2


def test_an_adapter_without_the_peers_crds_names_each_missing_crd_and_runs_without_them(
    db: Any, bare_plane: ControlPlane, tag: str, make_adapter: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Decision: every peer kind is optional (a cluster has Volcano or Koordinator, rarely every one): a missing
    CRD is named once in a warning and in the adapter's problems, the kind counts as empty, the rest works
    (mirror, sessions, bindings; nothing is written to the missing kinds), and a CRD installed later is read."""
    from scheduling import tasks
    from scheduling.models import Pod

    with bare_plane.api_client() as admin:
        core, seed, ns = k8s.CoreV1Api(admin), Seeder(admin), f"ns-{tag}"
        cluster = make_cluster(bare_plane.kubeconfig(), tag, tree_source="fairway")  # Fairway's trees: written out
        seed.namespace(ns)
        _ready_node(core, f"m-{tag}")
        seed.pod(pod(ns, "solo", scheduler=cluster.scheduler_name))
        with caplog.at_level(logging.INFO, logger="scheduling.kube.informer"):
            adapter = make_adapter(cluster, start=False)
            for informer in adapter.informers:
                informer.missing_recheck = 0.2
            adapter.start_informers()
            wait_for(adapter.synced, what="the first lists")
        missing = sorted(i.kind.crd for i in adapter.informers if i.missing and not i.kind.integration)
        assert missing == ["clusterqueues.kueue.x-k8s.io", "cohorts.kueue.x-k8s.io",
                           "elasticquotas.scheduling.sigs.k8s.io", "elasticquotas.scheduling.x-k8s.io",
                           "localqueues.kueue.x-k8s.io", "podgroups.scheduling.volcano.sh",
                           "queues.scheduling.volcano.sh", "resourceflavors.kueue.x-k8s.io"]  # fmt: skip
        # the workload integrations most clusters do not run: logged (info), not a problem of every pass
        integrations = sorted(i.kind.crd for i in adapter.informers if i.missing and i.kind.integration)
        assert integrations == ["jaxjobs.kubeflow.org", "jobsets.jobset.x-k8s.io", "mpijobs.kubeflow.org",
                                "paddlejobs.kubeflow.org", "pytorchjobs.kubeflow.org", "tfjobs.kubeflow.org",
                                "xgboostjobs.kubeflow.org"]  # fmt: skip
        out = adapter.reconcile()
        assert out is not None
        for crd in missing:
            assert sum(f"the CRD {crd} is not installed" in p for p in out["problems"]) == 1, out["problems"]
            assert any(f"the CRD {crd} is not installed" in r.getMessage() and r.levelno == logging.WARNING
                       for r in caplog.records)  # fmt: skip
        for crd in integrations:
            assert not any(crd in p for p in out["problems"]), out["problems"]
            assert any(f"the CRD {crd} is not installed" in r.getMessage() and r.levelno == logging.INFO
                       for r in caplog.records)  # fmt: skip
        assert not any("404" in p for p in out["problems"])  # nothing was written to a missing kind
        assert tasks.run_session(cluster.pk) == "ran"
        out = adapter.reconcile()
        assert out is not None and out["sent"].get("bound") == 1
        solo = Pod.objects.select_related("node").get(cluster=cluster, name="solo")
        assert solo.status == "Bound" and core.read_namespaced_pod("solo", ns).spec.node_name == solo.node.name

        # the Volcano Queue CRD installed: the informer reads it at its next look, the problem goes
        bare_plane.apply_crds(files=[CRDS / "scheduling.volcano.sh_queues.yaml"])
        queues = _informer(adapter, "queues", "scheduling.volcano.sh")
        Seeder(admin).queue(queue(f"q-{tag}"))
        wait_for(lambda: not queues.missing and f"q-{tag}" in queues.cache, what="the installed CRD's objects")
        assert all("queues.scheduling.volcano.sh" not in p for p in adapter.problems())
