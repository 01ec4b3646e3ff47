"""In a cluster Kubernetes owns, priority and preemptibility come from the cluster (PriorityClass, ``spec.priority``,
Koordinator's label), and a pod or podgroup outside its queue's range is held to it, with a Warning Event
``FairwayHeldToRange`` on the object (issue 25, item 3)."""

from __future__ import annotations

from typing import Any

from tests.kube.conftest import node, pod, podgroup


def test_a_pod_outside_its_queues_range_is_held_to_it_with_an_event(
    kcluster: Any, seed: Any, make_adapter: Any, emulator: Any
) -> None:
    from engine.resources import parse_resource_list
    from quotas import services
    from quotas.models import Queue
    from scheduling.models import KubeObjectProblem, Pod, PodGroup

    services.save_queue(None, {"name": "ml", "deserved": parse_resource_list({"cpu": "8"})})
    Queue.objects.filter(name="ml").update(max_priority=100, allow_non_preemptible=False)
    seed.namespace("team-ml", queue_name="ml")
    seed.node(node("n1"))
    seed.priority_class("urgent", 5000)
    seed.podgroup(podgroup("team-ml", "train", "ml", priorityClassName="urgent"))
    pinned = {"quota.scheduling.koordinator.sh/preemptible": "false"}
    seed.pod(pod("team-ml", "train-0", group="train", labels=pinned, priority=5000))
    seed.pod(pod("team-ml", "fine-0", group="train", priority=7))
    adapter = make_adapter()
    adapter.reconcile()

    row = Pod.objects.get(cluster=kcluster, name="train-0")
    assert (row.priority, row.preemptible) == (100, True)
    fine = Pod.objects.get(cluster=kcluster, name="fine-0")
    assert (fine.priority, fine.preemptible) == (7, True)
    assert PodGroup.objects.get(cluster=kcluster, name="train").priority == 100
    held = KubeObjectProblem.objects.get(cluster=kcluster, kind="Pod", name="train-0")
    assert held.reason == "FairwayHeldToRange"
    assert held.message == (
        "pod team-ml/train-0: priority 5000 is above the maximum 100 of queue ml; Fairway schedules it at priority "
        "100; pod team-ml/train-0: queue ml allows no non-preemptible pods; Fairway treats it as preemptible"
    )
    assert KubeObjectProblem.objects.get(cluster=kcluster, kind="PodGroup", name="train").reason == "FairwayHeldToRange"
    assert not KubeObjectProblem.objects.filter(cluster=kcluster, name="fine-0").exists()
    events = {(e["involvedObject"]["kind"], e["involvedObject"]["name"]): e for e in emulator.objects("", "events")}
    event = events[("Pod", "train-0")]
    assert (event["reason"], event["type"], event["message"]) == ("FairwayHeldToRange", "Warning", held.message)
    assert events[("PodGroup", "train")]["reason"] == "FairwayHeldToRange"

    # the admin widens the range: the next pass applies the cluster's values and the notice goes
    Queue.objects.filter(name="ml").update(max_priority=None, allow_non_preemptible=True)
    adapter.reconcile()
    row.refresh_from_db()
    assert (row.priority, row.preemptible) == (5000, False)
    assert not KubeObjectProblem.objects.filter(cluster=kcluster, name__in=["train-0", "train"]).exists()
