"""The adapter reads Kueue's Configuration from the real API server (issue 28 item 9): the ConfigMap Kueue's manager
uses (``FAIRWAY_KUEUE_CONFIGMAP`` in ``FAIRWAY_KUEUE_NAMESPACE``, key ``controller_manager_config.yaml``) becomes the
cluster's ``kueue_configuration``, and the cluster's sessions then run with its fairSharing (the ``kueuefair`` plugin
and the evicting actions), admissionFairSharing and waitForPodsReady, as ``fairway simulate`` runs with the same
Configuration file; a change on the server follows, a Configuration Kueue would refuse is a problem of the ConfigMap
that keeps the last good one, and a deleted ConfigMap leaves none. The namespace carries this test's tag (the server
is shared by the session)."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client as k8s

from tests.kube.conftest import Seeder, wait_for
from tests.support.kube_apiserver import ControlPlane

CONFIG = """apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
fairSharing:
  preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]
admissionFairSharing: {usageHalfLifeTime: 168h, usageSamplingInterval: 5m}
waitForPodsReady: {timeout: 10m, recoveryTimeout: 3m}
"""
KEY = "controller_manager_config.yaml"


@pytest.fixture
def config_cluster(db: Any, control_plane: ControlPlane, settings: Any, tag: str) -> Any:
    from quotas import services
    from scheduling.models import Cluster

    settings.FAIRWAY = {**settings.FAIRWAY, "KUEUE_NAMESPACE": f"kueue-{tag}"}
    services.ensure_builtins()
    return Cluster.objects.create(
        name="kueueconf", source="kubernetes", kubeconfig=control_plane.kubeconfig(), scheduler_name="fairway-kc"
    )


def test_the_adapter_reads_kueues_configuration_from_the_real_server(
    config_cluster: Any, admin: k8s.ApiClient, tag: str
) -> None:
    from engine.manifests import load_manifests
    from scheduling import store
    from scheduling.kube.adapter import Adapter
    from scheduling.models import Cluster, KubeObjectProblem

    core = k8s.CoreV1Api(admin)
    ns = f"kueue-{tag}"
    Seeder(admin).namespace(ns)
    body = {"metadata": {"name": "kueue-manager-config", "namespace": ns}, "data": {KEY: CONFIG}}
    core.create_namespaced_config_map(ns, body)
    adapter = Adapter(config_cluster, identity=f"kc-{tag}", lease_namespace="kube-system", lease_seconds=5.0,
                      renew_seconds=0.5, watch_seconds=5)  # fmt: skip
    informer = next(i for i in adapter.informers if i.kind.plural == "configmaps")
    try:
        adapter.start_informers()
        wait_for(adapter.synced, what="the first lists")
        out = adapter.reconcile()
        assert out is not None and out["problems"] == [], out
        cluster = Cluster.objects.get(pk=config_cluster.pk)
        assert cluster.kueue_configuration == CONFIG
        # the session's policy is the one simulate gives the same Configuration over the same scheduler policy
        live = store.load_snapshot(cluster).policy
        simulated = load_manifests([("kueue.yaml", CONFIG)]).snapshot.policy
        assert live.plugins()[0].name == "kueuefair" and "preempt" in live.to_dict()["actions"]
        assert live.action_arguments("enqueue") == simulated.action_arguments("enqueue")
        assert live.action_arguments("enqueue")["gangRepairTimeout"] == "180s"

        # a change on the server follows at the next pass
        changed = CONFIG.replace("recoveryTimeout: 3m", "recoveryTimeout: 4m")
        core.patch_namespaced_config_map("kueue-manager-config", ns, {"data": {KEY: changed}})
        wait_for(lambda: "4m" in str(informer.cache), what="the watch to bring the change")
        assert adapter.reconcile() is not None
        cluster.refresh_from_db()
        assert cluster.kueue_configuration == changed
        assert store.load_snapshot(cluster).policy.action_arguments("enqueue")["gangRepairTimeout"] == "240s"

        # a Configuration Kueue would refuse: a problem of the ConfigMap, the last good one kept
        bad = changed.replace("usageHalfLifeTime: 168h", "usageHalfLifeTime: a week")
        core.patch_namespaced_config_map("kueue-manager-config", ns, {"data": {KEY: bad}})
        wait_for(lambda: "a week" in str(informer.cache), what="the bad change")
        assert adapter.reconcile() is not None
        cluster.refresh_from_db()
        assert cluster.kueue_configuration == changed
        problem = KubeObjectProblem.objects.get(cluster=cluster, kind="ConfigMap", name="kueue-manager-config")
        assert "admissionFairSharing.usageHalfLifeTime" in problem.message

        # deleted: none (the cluster's own scheduler policy again)
        core.delete_namespaced_config_map("kueue-manager-config", ns)
        wait_for(lambda: not informer.cache, what="the deletion")
        assert adapter.reconcile() is not None
        cluster.refresh_from_db()
        assert cluster.kueue_configuration == ""
        assert store.load_snapshot(cluster).policy.to_dict() == cluster.policy.to_dict()
    finally:
        adapter.stop_informers()
        adapter.elector.release()
        core.delete_namespace(ns)
