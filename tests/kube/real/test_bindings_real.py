"""The bindings of a session go to the real API server on kept-alive connections: each answer is read to its end, so
its connection goes back to the client's pool, and a session's hundred bindings open at most ``CONCURRENT_CALLS``
connections (left unread, each binding opened and TLS-handshaked a connection of its own)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubernetes import client as k8s

from tests.kube.conftest import Seeder, pod, wait_for
from tests.kube.real.conftest import make_cluster
from tests.support.kube_apiserver import ControlPlane

PODS = 60


def _connections_made(api: k8s.ApiClient) -> int:
    manager = api.rest_client.pool_manager
    # urllib3's RecentlyUsedContainer refuses plain iteration: its keys() is the way
    return sum(manager.pools[key].num_connections for key in manager.pools.keys())  # noqa: SIM118


def test_a_session_s_bindings_reuse_the_client_s_connections(
    db: Any,
    control_plane: ControlPlane,
    admin: k8s.ApiClient,
    tag: str,
    kubelets: Callable[..., Any],
    make_adapter: Callable[..., Any],
) -> None:
    from scheduling import tasks
    from scheduling.kube.client import CONCURRENT_CALLS

    ns = f"bind-{tag}"
    kubelets({f"bind-{tag}-n1": {"cpu": "64", "memory": "256Gi", "pods": "110"}})
    seed = Seeder(admin)
    seed.namespace(ns)
    cluster = make_cluster(control_plane.kubeconfig(), tag, tree_source="fairway")
    for i in range(PODS):
        seed.pod(pod(ns, f"p{i:03d}", cpu="500m", scheduler=cluster.scheduler_name))
    adapter = make_adapter(cluster)
    pods = next(i for i in adapter.informers if i.kind.plural == "pods")

    wait_for(lambda: len(pods.snapshot()) == PODS, what="the pods in the informer's cache")
    assert adapter.reconcile() is not None
    assert tasks.run_session(cluster.pk) == "ran"
    before = _connections_made(adapter.api)
    out = adapter.reconcile()
    assert out is not None and out["sent"].get("bound") == PODS, out
    assert _connections_made(adapter.api) - before <= CONCURRENT_CALLS
    core = k8s.CoreV1Api(admin)
    assert {p.spec.node_name for p in core.list_namespaced_pod(ns).items} == {f"bind-{tag}-n1"}
