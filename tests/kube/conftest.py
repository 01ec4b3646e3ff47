"""Fixtures of the Kubernetes adapter's tests: the emulated API server (``emulator.Emulator``, kmock over real
HTTP on a free localhost port, in a thread), the official client pointed at it through a kubeconfig, a
``source=kubernetes`` cluster, and objects to seed it with."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.kube.emulator import EmulatorThread

SCHEDULER = "fairway"
VOLCANO = ("scheduling.volcano.sh", "v1beta1")
KOORD = ("scheduling.sigs.k8s.io", "v1alpha1")


@pytest.fixture
def emulator() -> Iterator[EmulatorThread]:
    with EmulatorThread() as emu:
        yield emu


def kubeconfig(url: str) -> str:
    return f"""apiVersion: v1
kind: Config
clusters: [{{name: emulated, cluster: {{server: "{url}"}}}}]
users: [{{name: fairway, user: {{token: test-token}}}}]
contexts: [{{name: emulated, context: {{cluster: emulated, user: fairway}}}}]
current-context: emulated
"""


@pytest.fixture
def kube(emulator: EmulatorThread) -> k8s.ApiClient:
    """The official client, configured from a kubeconfig that points at the emulator."""
    from scheduling.kube.client import api_client

    return api_client(kubeconfig(emulator.url))


@pytest.fixture
def kcluster(db: Any, emulator: EmulatorThread) -> Any:
    from quotas import services
    from scheduling.models import Cluster

    services.ensure_builtins()
    return Cluster.objects.create(
        name="k1", source="kubernetes", kubeconfig=kubeconfig(emulator.url), scheduler_name=SCHEDULER
    )


def node(name: str, cpu: str = "8", memory: str = "32Gi", ready: str = "True") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"zone": "a"}},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"},
                       "conditions": [{"type": "Ready", "status": ready}]}}  # fmt: skip


def pod(ns: str, name: str, cpu: str = "1", *, group: str = "", labels: dict[str, str] | None = None,
        scheduler: str = SCHEDULER, **extra: Any) -> dict[str, Any]:  # fmt: skip
    meta: dict[str, Any] = {"name": name, "namespace": ns, "labels": labels or {}}
    if group:
        meta["annotations"] = {"scheduling.k8s.io/group-name": group}
    spec = {"schedulerName": scheduler, "containers": [{"name": "main", "image": "busybox",
            "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}], **extra}  # fmt: skip
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": "Pending"}}


def queue(name: str, *, parent: str = "root", weight: int = 1, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
            "spec": {"parent": parent, "weight": weight, **spec}}  # fmt: skip


def podgroup(ns: str, name: str, queue_name: str, min_member: int = 1, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"queue": queue_name, "minMember": min_member, **spec}, "status": {"phase": "Pending"}}  # fmt: skip


def elastic_quota(name: str, ns: str = "default", *, parent: str = "koordinator-root-quota", is_parent: bool = False,
                  namespaces: tuple[str, ...] = (), **spec: Any) -> dict[str, Any]:  # fmt: skip
    labels = {"quota.scheduling.koordinator.sh/parent": parent,
              "quota.scheduling.koordinator.sh/is-parent": "true" if is_parent else "false"}  # fmt: skip
    meta: dict[str, Any] = {"name": name, "namespace": ns, "labels": labels}
    if namespaces:
        meta["annotations"] = {"quota.scheduling.koordinator.sh/namespaces": '["' + '","'.join(namespaces) + '"]'}
    return {"apiVersion": "scheduling.sigs.k8s.io/v1alpha1", "kind": "ElasticQuota", "metadata": meta, "spec": spec}


class Seeder:
    """Creates objects through the official client (real HTTP, as kubectl would)."""

    def __init__(self, api: k8s.ApiClient) -> None:
        self.core, self.custom = k8s.CoreV1Api(api), k8s.CustomObjectsApi(api)
        self.scheduling, self.policy = k8s.SchedulingV1Api(api), k8s.PolicyV1Api(api)

    def namespace(self, name: str, queue_name: str = "") -> None:
        annotations = {"scheduling.volcano.sh/queue-name": queue_name} if queue_name else None
        self.core.create_namespace({"apiVersion": "v1", "kind": "Namespace",
                                    "metadata": {"name": name, "annotations": annotations}})  # fmt: skip

    def node(self, obj: dict[str, Any]) -> None:
        self.core.create_node(obj)

    def pod(self, obj: dict[str, Any]) -> None:
        self.core.create_namespaced_pod(obj["metadata"]["namespace"], obj)

    def queue(self, obj: dict[str, Any]) -> None:
        self.custom.create_cluster_custom_object(*VOLCANO, "queues", obj)

    def podgroup(self, obj: dict[str, Any]) -> None:
        self.custom.create_namespaced_custom_object(*VOLCANO, obj["metadata"]["namespace"], "podgroups", obj)

    def elastic_quota(self, obj: dict[str, Any]) -> None:
        self.custom.create_namespaced_custom_object(*KOORD, obj["metadata"]["namespace"], "elasticquotas", obj)

    def resource_quota(self, ns: str, hard: dict[str, str]) -> None:
        self.core.create_namespaced_resource_quota(ns, {"apiVersion": "v1", "kind": "ResourceQuota",
                                                        "metadata": {"name": "quota"}, "spec": {"hard": hard}})  # fmt: skip

    def priority_class(self, name: str, value: int) -> None:
        self.scheduling.create_priority_class({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                               "metadata": {"name": name}, "value": value})  # fmt: skip


@pytest.fixture
def seed(kube: k8s.ApiClient) -> Seeder:
    return Seeder(kube)


def wait_for(check: Callable[[], Any], timeout: float = 10.0, what: str = "the condition") -> Any:
    """Poll ``check`` until it returns something truthy (the informers run in threads)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


@pytest.fixture
def make_adapter(kcluster: Any, kube: k8s.ApiClient) -> Iterator[Callable[..., Any]]:
    """Adapters of ``kcluster`` with their informers running (stopped after the test)."""
    from scheduling.kube.adapter import Adapter

    made: list[Any] = []

    def make(identity: str = "a1", *, start: bool = True, **options: Any) -> Any:
        options.setdefault("lease_seconds", 2.0)
        options.setdefault("renew_seconds", 0.2)
        options.setdefault("watch_seconds", 5)
        adapter = Adapter(kcluster, identity=identity, lease_namespace="kube-system", **options)
        for informer in adapter.informers:
            informer.backoff = 0.05
        made.append(adapter)
        if start:
            adapter.start_informers()
            wait_for(adapter.synced, what="the first lists")
        return adapter

    yield make
    for adapter in made:
        adapter.stop_informers()
