"""Leader election of two adapters of one cluster on a real ``coordination.k8s.io/v1`` Lease: one acts, the other
stands by while the leader renews; when the leader dies (it stops renewing and never releases: its thread is simply
no longer driven, as a killed process), the other takes over once it has seen the Lease unrenewed for its whole
duration, and the server's record says so. A clean stop releases the Lease at once."""

from __future__ import annotations

import time
from typing import Any

from kubernetes import client as k8s

from tests.kube.conftest import wait_for
from tests.kube.real.conftest import make_cluster
from tests.support.kube_apiserver import ControlPlane


def test_the_second_adapter_takes_the_lease_over_when_the_first_is_killed(
    db: Any, control_plane: ControlPlane, admin: k8s.ApiClient, tag: str, make_adapter: Any
) -> None:
    cluster = make_cluster(control_plane.kubeconfig(), tag)
    first = make_adapter(cluster, "first", lease_seconds=1.0)
    second = make_adapter(cluster, "second", lease_seconds=1.0)
    leases = k8s.CoordinationV1Api(admin)
    name = f"fairway-adapter-{cluster.name}"
    assert first.reconcile() is not None
    for _ in range(5):  # longer than the lease in all: the leader's renewals keep the other out
        time.sleep(0.3)
        assert first.reconcile() is not None
        assert second.reconcile() is None
    held = leases.read_namespaced_lease(name, "kube-system").spec
    assert (held.holder_identity, held.lease_duration_seconds, held.lease_transitions) == ("first", 1, 0)

    first.stop_informers()  # killed: no more renewals, no release
    wait_for(lambda: second.reconcile() is not None, timeout=15, what="the stand-by to take the Lease")
    spec = leases.read_namespaced_lease(name, "kube-system").spec
    assert (spec.holder_identity, spec.lease_transitions) == ("second", 1)
    assert spec.acquire_time > held.acquire_time
    assert first.reconcile() is None  # back from the dead: it stands by (its renewal would be a conflict)

    second.elector.release()  # a clean stop gives the Lease up: the other need not wait for it to lapse
    assert leases.read_namespaced_lease(name, "kube-system").spec.holder_identity is None
    assert first.elector.ensure()
