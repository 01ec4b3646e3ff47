"""The peers' own manifests (shared/fixtures/manifests) load, each into what it means; the rest is skipped, named.

Every file loads on its own without an error (warnings allowed). The table gives, per file, how many queues and
quota groups (built-ins included: queues root and default, quota groups root, system and default), pods and
podgroups it yields and how many documents are skipped as kinds Fairway does not use. The tests after it check
exact values: Koordinator's capacity-scheduling manual trees, scheduler-plugins' per-namespace quotas, Volcano's
hierarchical queues, vcjobs and shipped scheduler configuration.
"""

from __future__ import annotations

import dataclasses

import pytest

from engine import rules
from engine.manifests import LoadResult, load_manifests
from engine.objects import PodGroupInfo, PodGroupPhase, QueueHierarchy, QueueSpec, QuotaGroupSpec, TaskStatus
from engine.policy.policy import ElasticQuotaArgs, Policy
from engine.resources import ResourceList
from tests.acceptance.manifests import PEER_MANIFESTS as FIXTURES
from tests.acceptance.manifests import needs_peer_manifests
from tests.support.manifest_dump import dump_yaml

pytestmark = needs_peer_manifests
GiB, MiB, KiB = 2**30, 2**20, 2**10
KOORD_MANUAL = "koordinator/docs__user-manuals__capacity-scheduling.md"


def load(*names: str) -> LoadResult:
    return load_manifests([(name, (FIXTURES / name).read_text()) for name in names])


# file, queues, quota groups, pods, podgroups, skipped documents
EXPECTED = [
    ("koordinator/config__crd__bases__quota.koordinator.sh_elasticquotaprofiles.yaml", 2, 3, 0, 0, 1),
    ("koordinator/config__crd__bases__scheduling.sigs.k8s.io_elasticquotas.yaml", 2, 3, 0, 0, 1),
    ("koordinator/config__manager__scheduler-config.yaml", 2, 3, 0, 0, 0),
    (f"{KOORD_MANUAL}.block01.yaml", 2, 4, 0, 0, 0),
    (f"{KOORD_MANUAL}.block03.yaml", 2, 3, 1, 1, 0),
    (f"{KOORD_MANUAL}.block06.yaml", 2, 4, 0, 0, 0),
    (f"{KOORD_MANUAL}.block16.yaml", 2, 4, 0, 0, 0),
    (f"{KOORD_MANUAL}.block17.yaml", 2, 4, 0, 0, 0),
    (f"{KOORD_MANUAL}.block18.yaml", 2, 4, 0, 0, 0),
    (f"{KOORD_MANUAL}.block33.yaml", 2, 3, 1, 1, 0),
    (f"{KOORD_MANUAL}.block34.yaml", 2, 3, 0, 0, 2),
    (f"{KOORD_MANUAL}.block38.yaml", 2, 5, 0, 0, 0),
    (f"{KOORD_MANUAL}.block39.yaml", 2, 4, 0, 0, 0),
    (f"{KOORD_MANUAL}.block43.yaml", 2, 4, 0, 0, 0),
    ("kueue/cmd__kueueviz__examples__00-resource-flavor.yaml", 2, 3, 0, 0, 0),
    ("kueue/cmd__kueueviz__examples__01-cluster-queues.yaml", 7, 3, 0, 0, 0),  # 4 ClusterQueues and their cohort
    ("kueue/cmd__kueueviz__examples__01.5-cohorts.yaml", 7, 3, 0, 0, 0),  # 5 Cohorts
    ("kueue/cmd__kueueviz__examples__02-local-queues.yaml", 2, 3, 0, 0, 0),
    ("kueue/site__static__examples__admin__resource-flavor-taints.yaml", 2, 3, 0, 0, 0),
    ("kueue/site__static__examples__admin__shared-quota-setup.yaml", 3, 3, 0, 0, 0),
    ("kueue/site__static__examples__admin__single-clusterqueue-setup.yaml", 3, 3, 0, 0, 0),
    ("kueue/site__static__examples__admission-fs__admission-fair-sharing-setup.yaml", 3, 3, 0, 0, 0),
    ("kueue/site__static__examples__tas__sample-gpu-queues.yaml", 3, 3, 0, 0, 1),  # the Topology
    ("scheduler-plugins/kep__9-capacity-scheduling__README.md.block03.yaml", 2, 4, 0, 0, 0),
    ("scheduler-plugins/kep__9-capacity-scheduling__README.md.block04.yaml", 2, 4, 0, 0, 0),
    ("scheduler-plugins/kep__9-capacity-scheduling__README.md.block05.yaml", 2, 4, 0, 0, 0),
    ("scheduler-plugins/kep__9-capacity-scheduling__README.md.block09.yaml", 2, 4, 0, 0, 0),
    ("scheduler-plugins/kep__9-capacity-scheduling__README.md.block10.yaml", 2, 4, 0, 0, 0),
    ("scheduler-plugins/manifests__capacityscheduling__crd.yaml", 2, 3, 0, 0, 1),
    ("scheduler-plugins/manifests__capacityscheduling__elasticquota-example.yaml", 2, 4, 0, 0, 0),
    ("scheduler-plugins/manifests__capacityscheduling__scheduler-config.yaml", 2, 3, 0, 0, 1),
    ("scheduler-plugins/pkg__capacityscheduling__README.md.block02.yaml", 2, 4, 0, 0, 0),
    ("volcano/benchmark__testcases__gang__config__queue.yaml", 3, 3, 0, 0, 0),
    ("volcano/config__crd__volcano__bases__bus.volcano.sh_commands.yaml", 2, 3, 0, 0, 1),
    ("volcano/config__crd__volcano__bases__scheduling.volcano.sh_podgroups.yaml", 2, 3, 0, 0, 1),
    ("volcano/config__crd__volcano__bases__scheduling.volcano.sh_queues.yaml", 2, 3, 0, 0, 1),
    ("volcano/example__deployment__deployment.yaml", 2, 3, 0, 0, 1),
    ("volcano/example__deployment__queue.yaml", 3, 3, 0, 0, 0),
    ("volcano/example__hierarchical-jobs__jobs.yaml", 2, 3, 24, 4, 0),
    ("volcano/example__hierarchical-jobs__queues.yaml", 8, 3, 0, 0, 0),  # + the levels eng and sci
    ("volcano/example__job.yaml", 2, 3, 6, 1, 0),
    ("volcano/staging__src__volcano.sh__apis__artifacts__podgroup.yaml", 2, 3, 0, 1, 0),
    ("volcano/staging__src__volcano.sh__apis__artifacts__queue.yaml", 2, 3, 0, 0, 0),
    ("yunikorn/config__limit.yaml", 2, 3, 0, 0, 1),
    ("yunikorn/config__queues.yaml", 2, 3, 0, 0, 1),
    ("yunikorn/deployments__examples__authz__priority__yunikorn-configs.yaml", 2, 3, 0, 0, 1),
    ("yunikorn/deployments__examples__authz__resource-limits__yunikorn-configs.yaml", 2, 3, 0, 0, 1),
    ("yunikorn/deployments__examples__namespace__queues.yaml", 2, 3, 0, 0, 1),
    ("yunikorn/deployments__examples__placements__tag__config.yaml", 2, 3, 0, 0, 1),
    ("yunikorn/deployments__examples__preemption__yunikorn-configs.yaml", 2, 3, 0, 0, 1),
    ("yunikorn/test__e2e__testdata__quota-preemption__configs__yunikorn-configs-quota-reduced.yaml", 2, 3, 0, 0, 1),
]


def test_the_table_covers_every_fixture() -> None:
    on_disk = sorted(str(p.relative_to(FIXTURES)) for p in FIXTURES.glob("*/*.yaml"))
    assert on_disk, FIXTURES
    assert sorted(row[0] for row in EXPECTED) == on_disk


@pytest.mark.parametrize(("name", "queues", "groups", "pods", "podgroups", "skipped"), EXPECTED)
def test_each_fixture_loads(name: str, queues: int, groups: int, pods: int, podgroups: int, skipped: int) -> None:
    result = load(name)
    snap = result.snapshot
    assert (len(snap.queues), len(snap.quota_groups), len(snap.tasks), len(snap.podgroups)) == (
        queues,
        groups,
        pods,
        podgroups,
    )
    skips = [w for w in result.warnings if w.endswith("skipped")]
    assert len(skips) == skipped, result.warnings
    assert all(w.startswith(f"{name}: document ") for w in skips)
    assert snap.nodes == {}


def test_all_fixtures_together_load_and_round_trip() -> None:
    # Kueue's examples with cpu in flavors other than the kueueviz examples' default-flavor make every Kueue queue's
    # cpu count per flavor (engine.flavors), which Volcano's and Koordinator's objects cannot hold: they are loaded
    # with the others, and round-trip through the Kueue export (tests/unit/test_kueue_flavors.py), not this dump.
    flavored = {
        "kueue/site__static__examples__admin__shared-quota-setup.yaml",
        "kueue/site__static__examples__tas__sample-gpu-queues.yaml",
    }
    together = load(*(row[0] for row in EXPECTED)).snapshot
    assert together.kueue_flavors is not None and {"on-demand", "spot"} <= set(together.kueue_flavors.resources["cpu"])
    result = load(*(row[0] for row in EXPECTED if row[0] not in flavored))
    snap = result.snapshot
    # The dump writes Volcano's and Koordinator's objects: Kueue's ClusterQueue preemption policies travel in the
    # queues' ``fairway.io/kueue`` annotation and come back with them.
    assert snap.kueue_preemption  # the kueueviz example's ClusterQueues set them
    back = load_manifests([("dump.yaml", dump_yaml(snap))]).snapshot
    # Kueue's LocalQueues have no Volcano or Koordinator object either: the dump leaves them out (they round-trip
    # through the Kueue export: tests/scheduling/test_kueue_localqueues_live.py); everything else comes back.
    assert snap.admission.local_queue_specs  # the kueueviz examples' LocalQueues were read
    assert back == snap.replace(admission=dataclasses.replace(snap.admission, local_queue_specs=()))
    # The later quota-example (block18) replaced the earlier ones (block01, block06, block16).
    assert snap.quota_groups["quota-example"].parent == "quota-parent-example"
    assert snap.tasks["default/pod-example"].quota_preemptible is False  # block33 replaced block03


def test_skipped_kinds_are_named() -> None:
    result = load("kueue/site__static__examples__tas__sample-gpu-queues.yaml", "yunikorn/config__queues.yaml")
    assert [w for w in result.warnings if w.endswith("skipped")] == [
        "kueue/site__static__examples__tas__sample-gpu-queues.yaml: document 1 (Topology default): "
        "kind kueue.x-k8s.io/v1beta2 Topology is not used; skipped",
        "yunikorn/config__queues.yaml: document 1: no kind, not a Kubernetes object; skipped",
    ]


# -- Koordinator: the capacity-scheduling manual ------------------------------------------------------------------------


def test_koordinator_manual_leaf_quota() -> None:
    # block01: parent "" (root), is-parent false, min cpu 10 / 20Mi, max cpu 40 / 40Gi
    snap = load(f"{KOORD_MANUAL}.block01.yaml").snapshot
    assert snap.quota_groups["quota-example"] == QuotaGroupSpec(
        name="quota-example",
        parent="root",
        is_parent=False,
        min=ResourceList({"cpu": 10_000, "memory": 20 * MiB}),
        max=ResourceList({"cpu": 40_000, "memory": 40 * GiB}),
    )


def test_koordinator_manual_pod_joins_its_quota() -> None:
    # block03: the pod names quota-example by label; 40m / 40Mi
    snap = load(f"{KOORD_MANUAL}.block01.yaml", f"{KOORD_MANUAL}.block03.yaml").snapshot
    pod = snap.tasks["default/pod-example"]
    assert pod.request == ResourceList({"cpu": 40, "memory": 40 * MiB})
    assert pod.status is TaskStatus.PENDING and pod.quota_preemptible
    assert snap.quota_group_of(pod) == "quota-example"
    alone = load(f"{KOORD_MANUAL}.block03.yaml").snapshot
    assert alone.quota_group_of(alone.tasks["default/pod-example"]) == "default"  # unknown quota -> default


def test_koordinator_manual_kubectl_output_is_read_by_kind() -> None:
    # block06 has no apiVersion: read as Koordinator's ElasticQuota, computed annotations and status ignored.
    result = load(f"{KOORD_MANUAL}.block06.yaml")
    assert result.warnings == [
        f"{KOORD_MANUAL}.block06.yaml: document 1 (ElasticQuota quota-example): "
        "no apiVersion; read as scheduling.sigs.k8s.io/v1alpha1 ElasticQuota"
    ]
    group = result.snapshot.quota_groups["quota-example"]
    assert group.parent == "root"
    assert group.shared_weight == ResourceList({"cpu": 40_000, "memory": 40 * GiB})
    assert group.min == ResourceList({"cpu": 10_000, "memory": 20 * MiB})


def test_koordinator_manual_advanced_configuration() -> None:
    # block16: parent "parent", allow-lent-resource true, shared-weight annotation; booleans written unquoted
    result = load(f"{KOORD_MANUAL}.block16.yaml")
    group = result.snapshot.quota_groups["quota-example"]
    assert (group.parent, group.is_parent, group.allow_lent) == ("parent", False, True)
    assert group.shared_weight == ResourceList({"cpu": 40_000, "memory": 40 * GiB})
    assert any("is-parent]: False is not a string; read as 'false'" in w for w in result.warnings)
    assert "ElasticQuota quota-example: parent quota parent not found" in result.warnings


def test_koordinator_manual_child_min_above_parent_is_refused_by_the_tree_rules() -> None:
    # block17 (parent, min cpu 10) then block18 (child, min cpu 20): loads; the tree rules refuse it with the sum.
    snap = load(f"{KOORD_MANUAL}.block17.yaml", f"{KOORD_MANUAL}.block18.yaml").snapshot
    assert snap.quota_groups["quota-parent-example"].is_parent
    assert snap.quota_groups["quota-example"].parent == "quota-parent-example"
    assert snap.quota_groups["quota-example"].min["cpu"] == 20_000
    errors = rules.validate_quota_tree(snap.quota_groups)
    assert [e.message for e in errors] == [
        "quota group quota-parent-example: the sum of its children's min cpu 20 exceeds its min cpu 10"
    ]


def test_koordinator_manual_non_preemptible_pod() -> None:
    # block33: preemptible: false (unquoted) and a spec cut short by "..."
    snap = load(f"{KOORD_MANUAL}.block33.yaml").snapshot
    pod = snap.tasks["default/pod-example"]
    assert pod.quota_preemptible is False
    assert pod.quota_group == "quota-example"
    assert pod.request == ResourceList() and pod.best_effort


def test_koordinator_manual_multi_tree_quotas() -> None:
    # block38: two tree roots made by the profile controller; block39 then block43: a child of the first
    snap = load(f"{KOORD_MANUAL}.block38.yaml", f"{KOORD_MANUAL}.block39.yaml").snapshot
    k_root = snap.quota_groups["cn-hangzhou-k-root-quota"]
    g_root = snap.quota_groups["cn-hangzhou-g-root-quota"]
    assert (k_root.parent, k_root.is_parent, k_root.tree_id) == (None, True, "18340441938858026940")
    assert (g_root.parent, g_root.tree_id) == (None, "8589367430557242040")
    assert k_root.min == ResourceList({"cpu": 7800, "memory": 26264816 * KiB})
    assert g_root.min == ResourceList({"cpu": 3900, "memory": 12903364 * KiB})
    assert k_root.max == ResourceList({"cpu": 4611686018427387 * 1000, "memory": 4611686018427387})
    child = snap.quota_groups["test-child"]
    assert child.parent == "cn-hangzhou-k-root-quota"
    assert child.tree_id == "18340441938858026940"  # inherited, as Koordinator's webhook does
    assert child.min == child.max == ResourceList({"cpu": 3000, "memory": 6 * GiB})
    assert rules.validate_quota_tree(snap.quota_groups) == []
    after = load(f"{KOORD_MANUAL}.block38.yaml", f"{KOORD_MANUAL}.block43.yaml").snapshot.quota_groups["test-child"]
    assert after.tree_id == "18340441938858026940"  # written by the webhook this time
    assert after.shared_weight == ResourceList({"cpu": 3000, "memory": 6 * GiB})


def test_koordinator_scheduler_config_elastic_quota_args() -> None:
    # ElasticQuotaArgs with only quotaGroupNamespace: Koordinator's defaults for everything Fairway uses.
    result = load("koordinator/config__manager__scheduler-config.yaml")
    assert result.snapshot.elastic_quota_args == ElasticQuotaArgs()
    assert result.warnings == []


# -- scheduler-plugins --------------------------------------------------------------------------------------------------


def test_scheduler_plugins_quotas_are_named_like_their_namespace() -> None:
    snap = load(
        "scheduler-plugins/kep__9-capacity-scheduling__README.md.block03.yaml",
        "scheduler-plugins/kep__9-capacity-scheduling__README.md.block04.yaml",
        "scheduler-plugins/kep__9-capacity-scheduling__README.md.block05.yaml",
    ).snapshot
    assert {n: (g.min["cpu"], g.max["cpu"]) for n, g in snap.quota_groups.items() if n.startswith("quota")} == {
        "quota1": (0, 2000),
        "quota2": (0, 2000),
        "quota3": (1000, 2000),
    }
    demo = load("scheduler-plugins/pkg__capacityscheduling__README.md.block02.yaml").snapshot
    assert demo.quota_groups["quota1"] == QuotaGroupSpec(
        name="quota1", min=ResourceList({"cpu": 4000}), max=ResourceList({"cpu": 6000})
    )
    example = load("scheduler-plugins/manifests__capacityscheduling__elasticquota-example.yaml").snapshot
    assert example.quota_groups["test"] == QuotaGroupSpec(
        name="test",
        min=ResourceList({"cpu": 10_000, "memory": 20 * GiB, "nvidia.com/gpu": 1000}),
        max=ResourceList({"cpu": 20_000, "memory": 40 * GiB, "nvidia.com/gpu": 2000}),
    )


def test_scheduler_plugins_config_without_elastic_quota_args_is_skipped() -> None:
    result = load("scheduler-plugins/manifests__capacityscheduling__scheduler-config.yaml")
    assert result.warnings == [
        "scheduler-plugins/manifests__capacityscheduling__scheduler-config.yaml: document 1 (KubeSchedulerConfiguration): "
        "no ElasticQuota plugin arguments; skipped"
    ]
    assert result.snapshot.elastic_quota_args is None


# -- Volcano ----------------------------------------------------------------------------------------------------------


def test_volcano_hierarchical_queues() -> None:
    snap = load("volcano/example__hierarchical-jobs__queues.yaml").snapshot
    expected = {
        "root-eng-prod": (("root", "eng", "prod"), (1.0, 2.0, 8.0)),
        "root-eng-dev": (("root", "eng", "dev"), (1.0, 2.0, 2.0)),
        "root-sci-prod": (("root", "sci", "prod"), (1.0, 8.0, 8.0)),
        "root-sci-dev": (("root", "sci", "dev"), (1.0, 8.0, 2.0)),
    }
    for name, (path, weights) in expected.items():
        # The HDRF annotations make the tree: each queue under its path's level, with the path's last weight.
        assert snap.queues[name] == QueueSpec(name=name, parent=path[1], weight=int(weights[-1]))
        assert snap.queue_hierarchy[name] == QueueHierarchy(path, weights)
    assert snap.queues["eng"] == QueueSpec(name="eng", parent="root", weight=2)
    assert snap.queues["sci"] == QueueSpec(name="sci", parent="root", weight=8)
    assert rules.validate_queue_tree(snap.queues) == []


def test_volcano_hierarchical_jobs_expand_into_their_queues() -> None:
    result = load("volcano/example__hierarchical-jobs__queues.yaml", "volcano/example__hierarchical-jobs__jobs.yaml")
    assert result.warnings == []
    snap = result.snapshot
    for job, queue in [
        ("eng-prod-job", "root-eng-prod"),
        ("eng-dev-job", "root-eng-dev"),
        ("sci-prod-job", "root-sci-prod"),
        ("sci-dev-job", "root-sci-dev"),
    ]:
        pg = snap.podgroups[f"default/{job}"]
        assert (pg.queue, pg.min_member, pg.min_task_member) == (queue, 1, {"default-nginx": 6})
        assert pg.min_resources == ResourceList({"cpu": 500})  # the first minAvailable (1) pod
        pods = snap.tasks_by_podgroup[f"default/{job}"]
        assert [p.name for p in pods] == [f"{job}-default-nginx-{i}" for i in range(6)]
        assert all(p.request == ResourceList({"cpu": 500}) and p.task_role == "default-nginx" for p in pods)


def test_volcano_example_job() -> None:
    # example/job.yaml: minAvailable 3, 6 replicas of 1 cpu, queue default
    snap = load("volcano/example__job.yaml").snapshot
    assert snap.podgroups["default/test-job"] == PodGroupInfo(
        namespace="default",
        name="test-job",
        queue="default",
        min_member=3,
        min_task_member={"default-nginx": 6},
        min_resources=ResourceList({"cpu": 3000}),
        phase=PodGroupPhase.PENDING,
    )
    assert len(snap.tasks_by_podgroup["default/test-job"]) == 6
    assert {t.status for t in snap.tasks.values()} == {TaskStatus.PENDING}


def test_volcano_queues_and_podgroup() -> None:
    snap = load(
        "volcano/example__deployment__queue.yaml",
        "volcano/staging__src__volcano.sh__apis__artifacts__queue.yaml",
        "volcano/benchmark__testcases__gang__config__queue.yaml",
        "volcano/staging__src__volcano.sh__apis__artifacts__podgroup.yaml",
    ).snapshot
    assert snap.queues["test"] == QueueSpec(
        name="test", weight=1, reclaimable=False, capability=ResourceList({"cpu": 2000})
    )
    assert snap.queues["default"] == QueueSpec(
        name="default", capability=ResourceList({"cpu": 2000, "memory": 4 * 10**9})
    )  # replaces the built-in default queue
    assert snap.queues["benchmark-queue"].capability == ResourceList({"cpu": 10_000_000, "memory": 10000 * GiB})
    assert snap.queues["benchmark-queue"].reclaimable is False
    pg = snap.podgroups["default/test-pg"]
    assert (pg.min_member, pg.queue, pg.min_resources) == (
        1,
        "default",
        ResourceList({"cpu": 1000, "memory": 2 * 10**9}),
    )
    assert rules.validate_queue_tree(snap.queues) == []


def test_volcano_deployment_is_skipped() -> None:
    result = load("volcano/example__deployment__deployment.yaml")
    assert result.warnings == [
        "volcano/example__deployment__deployment.yaml: document 1 (Deployment deploy-with-volcano): "
        "kind apps/v1 Deployment is not used; skipped"
    ]


def test_volcano_helm_scheduler_conf_as_policy_and_in_its_configmap() -> None:
    text = (FIXTURES / "volcano" / "installer__helm__chart__volcano__config__volcano-scheduler.conf").read_text()
    policy = Policy.from_yaml(text)
    assert policy.actions == ("enqueue", "allocate", "backfill")
    assert [[p.name for p in t] for t in policy.tiers] == [
        ["priority", "gang", "conformance"],
        ["overcommit", "drf", "predicates", "proportion", "nodeorder", "binpack"],
    ]
    indented = "\n".join("    " + line for line in text.splitlines())
    configmap = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: volcano-scheduler-configmap\n  namespace: volcano-system\n"
        f"data:\n  volcano-scheduler.conf: |\n{indented}\n"
    )
    result = load_manifests([("cm.yaml", configmap)])
    assert result.snapshot.policy == policy
    assert result.policy_source == "cm.yaml: document 1 (ConfigMap volcano-system/volcano-scheduler-configmap)"
    assert result.warnings == []
