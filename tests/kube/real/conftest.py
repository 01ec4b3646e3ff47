"""The real control plane of ``tests/support/kube_apiserver.py`` (etcd + kube-apiserver, RBAC, the peers' CRDs),
one for the folder (started once per run: see ``control_plane``): its tests keep apart by namespace and by name.

Skipped, with the reason, when the binaries are not built and ``CI`` is not set; under CI a missing binary fails
(``make test`` builds them first, once per machine)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from tests.kube.conftest import wait_for
from tests.support.kube_apiserver import ControlPlane, binaries
from tests.support.kube_kubelet import NODE_LEASES, KubeletStandIn


def _under_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="package")
def control_plane() -> Iterator[ControlPlane]:
    """One etcd and kube-apiserver for this folder's tests, stopped after the last of them (an idle pair costs about
    2 % of a core). ``make test`` hands the whole folder to one worker (``ONE_WORKER_FOLDERS`` in tests/conftest.py),
    so the pair starts once per run. Beside them kube-controller-manager runs the Job controller alone (Kueue's
    Jobs: it makes a Job's pods and deletes those beyond a lowered parallelism); it acts on Jobs only, which no
    other test creates, so it costs a module of its own a second server."""
    bins = binaries()
    missing = bins.missing()
    if missing:
        reason = (f"the real API server is not built ({', '.join(map(str, missing))} missing): "
                  "`make kube-tools` builds etcd and kube-apiserver once per machine")  # fmt: skip
        if _under_ci():
            pytest.fail(reason + " (CI is set: make test builds them before the suite)")
        pytest.skip(reason)
    with ControlPlane(bins, controllers=("job",)) as plane:
        yield plane


# -- what the adapter's tests share --------------------------------------------------------------------------------

RBAC = Path(__file__).resolve().parents[3] / "deploy" / "kubernetes" / "rbac.yaml"
ADAPTER_NAMESPACE, ADAPTER_ACCOUNT = "fairway", "fairway-adapter"


@pytest.fixture
def admin(control_plane: ControlPlane) -> Iterator[k8s.ApiClient]:
    with control_plane.api_client() as api:
        yield api


@pytest.fixture
def tag() -> str:
    """A short random suffix: the session's server is shared, so each test's objects carry their own names."""
    return uuid.uuid4().hex[:6]


@pytest.fixture
def kubelets(admin: k8s.ApiClient) -> Iterator[Callable[..., KubeletStandIn]]:
    """Stand-in kubelets (``tests/support/kube_kubelet.py``) whose nodes are registered, and deleted after the test
    (with their Leases), so that the next test's sessions do not place pods on them."""
    made: list[KubeletStandIn] = []

    def make(nodes: dict[str, dict[str, str]], *, untaint: bool = True, **options: Any) -> KubeletStandIn:
        stand_in = KubeletStandIn(admin, nodes, **options)
        made.append(stand_in)
        stand_in.register(untaint=untaint)
        return stand_in

    yield make
    core, leases = k8s.CoreV1Api(admin), k8s.CoordinationV1Api(admin)
    for stand_in in made:
        for name in stand_in.nodes:
            for delete, args in ((core.delete_node, (name,)), (leases.delete_namespaced_lease, (name, NODE_LEASES))):
                try:
                    delete(*args)
                except ApiException as exc:
                    if exc.status != 404:
                        raise


def make_cluster(kubeconfig: str, tag: str, **fields: Any) -> Any:
    """A ``source=kubernetes`` cluster of this test (its name and scheduler name carry ``tag`` unless given), its
    tree from the cluster unless ``tree_source`` says otherwise."""
    from quotas import services
    from scheduling.models import Cluster

    services.ensure_builtins()
    fields.setdefault("tree_source", "kubernetes")
    fields.setdefault("name", f"c{tag}")
    fields.setdefault("scheduler_name", f"fw-{tag}")
    return Cluster.objects.create(source="kubernetes", kubeconfig=kubeconfig, **fields)


@pytest.fixture
def make_adapter() -> Iterator[Callable[..., Any]]:
    """Adapters with short leases and watches; their informers run (``start=False``: not yet) and are stopped after
    the test."""
    from scheduling.kube.adapter import Adapter

    made: list[Any] = []

    def make(cluster: Any, identity: str = "a1", *, start: bool = True, **options: Any) -> Any:
        options.setdefault("lease_namespace", "kube-system")
        options.setdefault("lease_seconds", 5.0)
        options.setdefault("renew_seconds", 0.0)  # every pass renews: no pass is refused for a slow machine
        options.setdefault("watch_seconds", 5)
        adapter = Adapter(cluster, identity=identity, **options)
        for informer in adapter.informers:
            informer.backoff, informer.max_backoff = 0.05, 0.5
        made.append(adapter)
        if start:
            adapter.start_informers()
            wait_for(adapter.synced, what=f"the first lists ({adapter.problems()})")
        return adapter

    yield make
    for adapter in made:
        adapter.stop_informers()


def rbac_documents() -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(RBAC.read_text()) if doc]


def apply_rbac(api: k8s.ApiClient, docs: list[dict[str, Any]]) -> None:
    """Create (or replace) the ServiceAccount, roles and bindings of ``docs`` as ``kubectl apply`` would."""
    core, rbac = k8s.CoreV1Api(api), k8s.RbacAuthorizationV1Api(api)
    try:
        core.create_namespace({"metadata": {"name": ADAPTER_NAMESPACE}})
    except ApiException as exc:
        if exc.status != 409:
            raise
    calls = {
        "ServiceAccount": (core.create_namespaced_service_account, core.replace_namespaced_service_account),
        "ClusterRole": (rbac.create_cluster_role, rbac.replace_cluster_role),
        "ClusterRoleBinding": (rbac.create_cluster_role_binding, rbac.replace_cluster_role_binding),
        "Role": (rbac.create_namespaced_role, rbac.replace_namespaced_role),
        "RoleBinding": (rbac.create_namespaced_role_binding, rbac.replace_namespaced_role_binding),
    }
    for doc in docs:
        create, replace = calls[doc["kind"]]
        ns = doc["metadata"].get("namespace")
        try:
            create(*([ns] if ns else []), doc)
        except ApiException as exc:
            if exc.status != 409:
                raise
            replace(doc["metadata"]["name"], *([ns] if ns else []), doc)


@pytest.fixture
def adapter_token(control_plane: ControlPlane, admin: k8s.ApiClient) -> Iterator[str]:
    """``deploy/kubernetes/rbac.yaml`` applied as it is, and a real token of its ServiceAccount (TokenRequest);
    applied again after the test, for a test that changed it."""
    apply_rbac(admin, rbac_documents())
    yield control_plane.service_account_token(ADAPTER_NAMESPACE, ADAPTER_ACCOUNT)
    apply_rbac(admin, rbac_documents())
