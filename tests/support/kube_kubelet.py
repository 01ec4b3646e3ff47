"""Kubelets stood in through the API server, for the tests against the real control plane (``kube_apiserver``).

A ``source=kubernetes`` cluster's nodes are played here the way a kubelet shows itself to the API server, and only
through it (no container runs):

* ``register`` creates each Node as a kubelet registers it (the object, then ``status`` through the status
  subresource: allocatable, capacity, the Ready condition) and its Lease ``kube-node-lease/<node>``;
* ``renew`` renews the Leases (``spec.renewTime``), as a kubelet does every 10 s (``renewing`` does it every
  ``interval`` in a thread, until the block ends); a node left out (``down``) stops renewing, and kube-controller-manager's node lifecycle controller turns its Ready condition Unknown once
  ``--node-monitor-grace-period`` has passed (``ControlPlane(controllers=("nodelifecycle",))``);
* ``sync`` plays the pods bound to its nodes: a pod with a node and phase Pending starts (``status.phase`` Running,
  ``startTime``, the Ready condition, which a PodDisruptionBudget counts); a pod being deleted (``deletionTimestamp``, e.g. after an eviction) has stopped, so it is deleted
  for good (grace period 0), as a kubelet finishes a graceful deletion;
* ``finish`` ends a pod Succeeded or Failed (its containers exited).

The new Node's ``node.kubernetes.io/not-ready:NoSchedule`` taint (added by the server's admission) is taken off by
the node lifecycle controller once the node is Ready; where that controller does not run, ``register(untaint=True)``
takes it off, as the tests that are not about node health do.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

NODE_LEASES = "kube-node-lease"


def _now() -> datetime:
    return datetime.now(UTC)


class KubeletStandIn:
    """The kubelets of ``nodes`` (name -> allocatable quantities); ``down`` are the nodes whose kubelet is dead."""

    def __init__(self, api: k8s.ApiClient, nodes: Mapping[str, Mapping[str, str]], *, lease_seconds: int = 40) -> None:
        self.core, self.leases = k8s.CoreV1Api(api), k8s.CoordinationV1Api(api)
        self.nodes = {name: dict(amounts) for name, amounts in nodes.items()}
        self.lease_seconds = lease_seconds
        self.down: set[str] = set()

    def register(self, *, untaint: bool = False) -> None:
        for name, allocatable in self.nodes.items():
            self.core.create_node({"apiVersion": "v1", "kind": "Node",
                                   "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}})  # fmt: skip
            if untaint:
                self.core.patch_node(name, {"spec": {"taints": None}})
            stamp = _now().isoformat()
            ready = {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready",
                     "lastHeartbeatTime": stamp, "lastTransitionTime": stamp}  # fmt: skip
            status = {"capacity": allocatable, "allocatable": allocatable, "conditions": [ready]}
            self.core.patch_node_status(name, {"status": status})
            body = k8s.V1Lease(
                metadata=k8s.V1ObjectMeta(name=name, namespace=NODE_LEASES),
                spec=k8s.V1LeaseSpec(holder_identity=name, lease_duration_seconds=self.lease_seconds,
                                     renew_time=_now()),
            )  # fmt: skip
            self.leases.create_namespaced_lease(NODE_LEASES, body)

    def renew(self) -> list[str]:
        """Renew the Lease of every node not ``down``; returns their names."""
        renewed = []
        for name in sorted(set(self.nodes) - self.down):
            self.leases.patch_namespaced_lease(name, NODE_LEASES, {"spec": {"renewTime": _now().isoformat()}})
            renewed.append(name)
        return renewed

    @contextmanager
    def renewing(self, interval: float) -> Iterator[None]:
        """Renew the Leases every ``interval`` seconds in a thread while the block runs."""
        stop = threading.Event()

        def loop() -> None:
            while not stop.wait(interval):
                self.renew()

        thread = threading.Thread(target=loop, name="kubelet-leases", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(10)

    def _pods(self, name: str) -> list[k8s.V1Pod]:
        return list(self.core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={name}").items)

    def sync(self) -> dict[str, list[str]]:
        """Start the Pending pods bound to the nodes not ``down``; delete for good those being deleted."""
        out: dict[str, list[str]] = {"started": [], "deleted": []}
        for name in sorted(set(self.nodes) - self.down):
            for pod in self._pods(name):
                ns, pod_name = pod.metadata.namespace, pod.metadata.name
                if pod.metadata.deletion_timestamp is not None:
                    try:
                        self.core.delete_namespaced_pod(pod_name, ns, grace_period_seconds=0)
                    except ApiException as exc:
                        if exc.status != 404:
                            raise
                    out["deleted"].append(f"{ns}/{pod_name}")
                elif (pod.status.phase or "Pending") == "Pending":
                    ready = {"type": "Ready", "status": "True", "lastTransitionTime": _now().isoformat()}
                    self._phase(ns, pod_name, "Running", startTime=_now().isoformat(), conditions=[ready])
                    out["started"].append(f"{ns}/{pod_name}")
        return out

    def finish(self, pods: Iterable[tuple[str, str]], phase: str) -> None:
        """End ``(namespace, name)`` pods with ``phase`` (Succeeded or Failed)."""
        assert phase in ("Succeeded", "Failed"), phase
        for ns, name in pods:
            self._phase(ns, name, phase)

    def _phase(self, ns: str, name: str, phase: str, **extra: Any) -> None:
        self.core.patch_namespaced_pod_status(name, ns, {"status": {"phase": phase, **extra}})
