"""A Kueue pod group through the adapter: its pods (``kueue.x-k8s.io/pod-group-name`` with the total count) are one
podgroup row named after the group, in their LocalQueue's ClusterQueue, with ``minMember`` the total count."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from tests.kube.conftest import pod


def test_a_pod_group_is_one_podgroup_row(db: Any) -> None:
    from quotas import services
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import Cluster, Pod, PodGroup

    services.ensure_builtins()
    services.save_queue(None, {"name": "ml", "weight": 1})
    cluster = Cluster.objects.create(name="west", source="kubernetes", scheduler_name="fairway")
    labels = {"kueue.x-k8s.io/queue-name": "lq", "kueue.x-k8s.io/pod-group-name": "train"}
    members = [pod("team", name, scheduler="fairway", labels=dict(labels)) for name in ("leader", "worker")]
    for member in members:
        member["metadata"]["annotations"] = {"kueue.x-k8s.io/pod-group-total-count": "2"}
    local_queue = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
                   "metadata": {"name": "lq", "namespace": "team"}, "spec": {"clusterQueue": "ml"}}  # fmt: skip
    report = mirror(cluster, [*members, local_queue], timezone.now())
    assert not report.problems, report.problems
    rows = dict(Pod.objects.filter(cluster=cluster).values_list("name", "podgroup__name"))
    assert rows == {"leader": "train", "worker": "train"}
    group = PodGroup.objects.get(cluster=cluster, name="train")
    assert (group.namespace.name, group.queue.name, group.min_member) == ("team", "ml", 2)
    again = mirror(cluster, [*members, local_queue], timezone.now())  # nothing moves the second time
    assert again.written["PodGroup"] == 0 and not again.deleted


# -- the live sessions: a group short of its pods waits, as in ``fairway simulate`` ----------------------------


def _group_pods(names: tuple[str, ...], count: int = 2, **annotations: str) -> list[dict[str, Any]]:
    """Pods of 1 core in namespace ``team``, of Kueue pod group ``train`` of ``count`` pods in LocalQueue ``lq``."""
    labels = {"kueue.x-k8s.io/queue-name": "lq", "kueue.x-k8s.io/pod-group-name": "train"}
    out = [pod("team", name, scheduler="fairway", labels=dict(labels)) for name in names]
    for member in out:
        member["metadata"]["annotations"] = {"kueue.x-k8s.io/pod-group-total-count": str(count), **annotations}
    return out


def _kueue_world(**queue: Any) -> tuple[Any, list[dict[str, Any]]]:
    """A ``source=kubernetes`` cluster with one node of 8 cores, queue ``ml`` (with the fields ``queue``) and
    LocalQueue ``team/lq`` pointing at it; returns the cluster and the objects every pass sends besides the pods."""
    from quotas import services
    from scheduling.models import Cluster
    from tests.kube.conftest import node

    services.ensure_builtins()
    services.save_queue(None, {"name": "ml", "weight": 1, **queue})
    cluster = Cluster.objects.create(name="west", source="kubernetes", scheduler_name="fairway")
    local_queue = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
                   "metadata": {"name": "lq", "namespace": "team"}, "spec": {"clusterQueue": "ml"}}  # fmt: skip
    return cluster, [node("n1"), local_queue]


def test_a_pod_group_keeps_its_count_and_loses_it_when_it_becomes_something_else(db: Any) -> None:
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import PodGroup

    cluster, others = _kueue_world()
    mirror(cluster, [*others, *_group_pods(("leader",))], timezone.now())
    assert PodGroup.objects.get(cluster=cluster, name="train").kueue_pod_group_count == 2
    # the API shows it, read-only: a client cannot set it
    from scheduling.serializers import PodGroupSerializer

    row = PodGroup.objects.get(cluster=cluster, name="train")
    assert PodGroupSerializer(row).data["kueue_pod_group_count"] == 2
    assert PodGroupSerializer().fields["kueue_pod_group_count"].read_only
    # with fast admission Kueue admits it on its first pod: it never waits, nothing is kept
    fast = _group_pods(("leader",), **{"kueue.x-k8s.io/pod-group-fast-admission": "true"})
    report = mirror(cluster, [*others, *fast], timezone.now())
    assert report.written["PodGroup"] == 1 and not report.problems, report.problems
    assert PodGroup.objects.get(cluster=cluster, name="train").kueue_pod_group_count is None
    # a Volcano PodGroup of that name is not a Kueue pod group either
    mirror(cluster, [*others, *_group_pods(("leader",), count=3)], timezone.now())
    assert PodGroup.objects.get(cluster=cluster, name="train").kueue_pod_group_count == 3
    volcano = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
               "metadata": {"name": "train", "namespace": "team"}, "spec": {"queue": "ml", "minMember": 2}}  # fmt: skip
    mirror(cluster, [*others, volcano], timezone.now())
    assert PodGroup.objects.get(cluster=cluster, name="train").kueue_pod_group_count is None


def test_a_live_session_admits_a_pod_group_only_once_all_its_pods_exist(db: Any) -> None:
    from scheduling import sessions
    from scheduling.feed.mirror import mirror_of
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import Pod, PodGroup

    cluster, others = _kueue_world()
    mirror(cluster, [*others, *_group_pods(("leader",))], timezone.now())
    assert sessions.run_scheduling_session(cluster).status == "ok"
    group = PodGroup.objects.get(cluster=cluster, name="train")
    # one of its two pods: Kueue has made no workload of it; not admitted, no quota held, no pod placed
    assert (group.phase, group.reason) == ("Pending", "NotEnoughPods"), (group.phase, group.reason, group.message)
    assert "1 of its 2 pods exist (kueue.x-k8s.io/pod-group-total-count)" in group.message
    assert not Pod.objects.filter(cluster=cluster, node__isnull=False).exists()
    assert sessions.run_scheduling_session(cluster).status == "ok"  # and so it stays
    assert PodGroup.objects.get(pk=group.pk).phase == "Pending"
    # the second pod arrives between two sessions, read by the same copy of the cluster from the change feed
    mirror(cluster, [*others, *_group_pods(("leader", "worker"))], timezone.now())
    assert sessions.run_scheduling_session(cluster).status == "ok"
    assert not mirror_of(cluster.pk).last.full, mirror_of(cluster.pk).last.reason
    group.refresh_from_db()
    assert group.phase in ("Inqueue", "Running") and group.reason != "NotEnoughPods", (group.phase, group.reason)
    for _ in range(2):
        sessions.run_scheduling_session(cluster)
    placed = dict(Pod.objects.filter(cluster=cluster).values_list("name", "node__name"))
    assert placed == {"leader": "n1", "worker": "n1"}, placed


def test_a_volcano_podgroup_short_of_its_pods_is_still_admitted(db: Any) -> None:
    from scheduling import sessions
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import PodGroup

    cluster, others = _kueue_world()
    volcano = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
               "metadata": {"name": "train", "namespace": "team"},
               "spec": {"queue": "ml", "minMember": 2, "minResources": {"cpu": "2"}}}  # fmt: skip
    leader = pod("team", "leader", group="train")
    report = mirror(cluster, [*others, volcano, leader], timezone.now())
    assert not report.problems, report.problems
    assert sessions.run_scheduling_session(cluster).status == "ok"
    group = PodGroup.objects.get(cluster=cluster, name="train")
    assert group.kueue_pod_group_count is None
    assert group.phase == "Inqueue", (group.phase, group.reason, group.message)  # Volcano reserves its quota first


def test_a_pod_group_short_of_its_pods_holds_no_quota(db: Any) -> None:
    """Queue ``ml`` has a capability of 2 cores; the group (2 pods of 2 cores, 1 present) came first. A job of 1 core
    submitted after it is admitted and runs: the group reserves nothing while it waits (as a Volcano PodGroup it
    would reserve 2 cores, and the job would not fit)."""
    from engine.resources import parse_resource_list
    from scheduling import sessions
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import PodGroup

    cluster, others = _kueue_world(capability=parse_resource_list({"cpu": "2"}))
    leader = _group_pods(("leader",))
    leader[0]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
    mirror(cluster, [*others, *leader], timezone.now())
    sessions.run_scheduling_session(cluster)
    volcano = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
               "metadata": {"name": "other", "namespace": "team"},
               "spec": {"queue": "ml", "minMember": 1, "minResources": {"cpu": "1"}}}  # fmt: skip
    report = mirror(cluster, [*others, *leader, volcano, pod("team", "o-0", group="other")], timezone.now())
    assert not report.problems, report.problems
    sessions.run_scheduling_session(cluster)
    phases = {g.name: (g.phase, g.reason) for g in PodGroup.objects.filter(cluster=cluster)}
    assert phases["train"] == ("Pending", "NotEnoughPods"), phases
    assert phases["other"][0] in ("Inqueue", "Running"), phases
