"""What lets the adapter keep up with thousands of pods (``bench/bench_kube.py``): the bindings and the PodGroup
statuses a session decided go out several at once, the informers' snapshots hand the cached objects over without
copying them, and the pods new to Fairway are inserted in bulk. No server here: the API calls are played by fakes
whose calls wait for each other (a barrier), so sending one call at a time fails instead of finishing."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.utils import timezone

from scheduling.kube import mirror_in, mirror_out
from scheduling.kube.client import KIND_BY_PATH, KINDS
from scheduling.kube.informer import Informer
from tests.kube.conftest import node, pod, podgroup
from tests.support.factories import ClusterFactory, NamespaceFactory, NodeFactory, PodFactory, PodGroupFactory

PARTIES = 4  # calls that must be in flight together for any of them to return


class _Together:
    """A fake API whose calls return only once ``PARTIES`` of them are waiting together (a broken barrier, after
    the safety timeout, fails the call: one call at a time never gets there)."""

    def __init__(self) -> None:
        self.barrier = threading.Barrier(PARTIES, timeout=10)
        self.calls: list[tuple[Any, ...]] = []
        self.lock = threading.Lock()

    def _meet(self, *args: Any, **_: Any) -> Any:
        with self.lock:
            self.calls.append(args)
        self.barrier.wait()
        return _Drained()

    create_namespaced_pod_binding = _meet
    replace_namespaced_custom_object = _meet


class _Drained:
    data = b"{}"

    def release_conn(self) -> None:
        pass


@pytest.fixture
def cluster(db: Any) -> Any:
    from quotas import services

    services.ensure_builtins()
    return ClusterFactory(name="k-at-once", source="kubernetes", kubeconfig="", scheduler_name="fairway")


def test_a_session_s_bindings_go_out_several_at_once(cluster: Any) -> None:
    ns = NamespaceFactory(name="at-once")
    n1 = NodeFactory(cluster=cluster, name="n1")
    names = [f"p{i}" for i in range(PARTIES * 3)]
    for name in names:
        PodFactory(cluster=cluster, namespace=ns, name=name, status="Bound", node=n1)
    caches = {"/pods": [pod("at-once", name) for name in names]}
    sender = mirror_out.Sender(object(), cluster, caches, timezone.now())  # type: ignore[arg-type]
    sender.core = _Together()  # type: ignore[assignment]
    sender.send_bindings()
    assert sender.counts == {"bound": len(names)} and sender.problems == []
    assert sorted(call[0] for call in sender.core.calls) == sorted(names)  # type: ignore[attr-defined]


def test_podgroup_statuses_are_written_several_at_once_and_unchanged_ones_not_at_all(cluster: Any) -> None:
    ns = NamespaceFactory(name="at-once-pg")
    groups = [PodGroupFactory(cluster=cluster, namespace=ns, name=f"g{i}", phase="Running") for i in range(PARTIES)]
    objects = [podgroup("at-once-pg", g.name, "default") for g in groups]
    unchanged = podgroup("at-once-pg", "same", "default")
    PodGroupFactory(cluster=cluster, namespace=ns, name="same", phase="Pending")
    unchanged["status"] = {"phase": "Pending", "conditions": [], "running": 0, "succeeded": 0, "failed": 0}
    kind = KIND_BY_PATH[("scheduling.volcano.sh", "podgroups")]
    caches = {mirror_out.cache_key(kind.group, kind.plural): [*objects, unchanged]}
    sender = mirror_out.Sender(object(), cluster, caches, timezone.now())  # type: ignore[arg-type]
    sender.custom = _Together()  # type: ignore[assignment]
    sender.write_podgroup_status()
    assert sender.counts == {"podgroup_status": PARTIES}
    written = sorted(call[4] for call in sender.custom.calls)  # type: ignore[attr-defined]
    assert written == [g.name for g in groups]  # "same" already has its status: no call


def test_an_informer_s_snapshot_hands_over_the_cached_objects_without_copying_them() -> None:
    informer = Informer(object(), KINDS[-1])  # type: ignore[arg-type]
    informer.apply({"type": "ADDED", "object": pod("ns", "a")})
    informer.apply({"type": "ADDED", "object": pod("ns", "b")})
    first = informer.snapshot()
    assert [o["metadata"]["name"] for o in first] == ["a", "b"]
    assert first[0] is informer.cache["ns/a"]
    informer.apply({"type": "MODIFIED", "object": {**pod("ns", "a"), "spec": {"nodeName": "n1"}}})
    # the event replaced the object: what the earlier snapshot holds did not change under its reader
    assert "nodeName" not in first[0]["spec"] and informer.snapshot()[0]["spec"] == {"nodeName": "n1"}


def test_pods_new_to_fairway_are_inserted_in_bulk(cluster: Any, django_assert_max_num_queries: Any) -> None:
    from scheduling.models import Pod

    objects: list[dict[str, Any]] = [node("n1", cpu="64")]
    objects += [pod("bulk", f"p{i}") for i in range(120)]
    mirror_in.mirror(cluster, objects, timezone.now())  # the namespace and node rows, and the pods
    Pod.objects.filter(cluster=cluster).delete()
    with django_assert_max_num_queries(40):  # one INSERT for the 120 pods (one each would be 240 statements)
        report = mirror_in.mirror(cluster, objects, timezone.now())
    assert report.written["Pod"] == 120
    assert Pod.objects.filter(cluster=cluster, status="Pending").count() == 120
