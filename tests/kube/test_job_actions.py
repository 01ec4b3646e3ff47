"""Job actions in a cluster mirrored from Kubernetes (``scheduling.job_actions``), against the emulated API server:
a requeue's evictions go out through the Eviction API, a delete is recorded and carried out by the adapter (the pods
and the PodGroup deleted there, then the job recorded as removed by the person who asked), and a PodGroup owned by
a controller is not deleted, with the reason on the job."""

from __future__ import annotations

from typing import Any

from tests.kube.conftest import node, pod, podgroup, queue, wait_for


def _world(seed: Any) -> None:
    from quotas import services

    services.save_queue(None, {"name": "ml", "weight": 1})
    seed.namespace("team-ml", queue_name="ml")
    seed.node(node("n1"))
    seed.queue(queue("ml"))
    seed.podgroup(podgroup("team-ml", "train", "ml", min_member=2))
    seed.pod(pod("team-ml", "train-0", group="train"))
    seed.pod(pod("team-ml", "train-1", group="train"))


def _pods_cache(adapter: Any) -> str:
    return str(next(i for i in adapter.informers if i.kind.plural == "pods").cache)


def test_requeue_evicts_through_the_api_and_delete_is_carried_out_by_the_adapter(
    kcluster: Any, seed: Any, make_adapter: Any, emulator: Any, api: Any, make_user: Any
) -> None:
    from scheduling import tasks
    from scheduling.models import Eviction, Pod, PodGroup, RemovedJob

    _world(seed)
    adapter = make_adapter()
    adapter.reconcile()
    assert tasks.run_session(kcluster.pk) == "ran"
    adapter.reconcile()  # the bindings go out
    wait_for(lambda: all(p["spec"].get("nodeName") for p in emulator.objects("", "pods")), what="the bindings")
    pg = PodGroup.objects.get(cluster=kcluster, name="train")
    client = api(make_user("ops", staff=True))

    r = client.post(f"/api/v1/podgroups/{pg.pk}/requeue/")
    assert r.status_code == 200, r.content
    assert r.json()["released"] == 2 and r.json()["replaced"] == 0  # the job's controller makes new pods there
    assert set(Pod.objects.filter(podgroup=pg).values_list("status", flat=True)) == {"Releasing"}
    adapter.reconcile()
    evictions = [v for v in emulator.verbs() if v[0] == "create" and v[3] == "eviction"]
    assert len(evictions) == 2
    assert set(Eviction.objects.filter(action="requeue").values_list("api_status", flat=True)) == {"done"}
    wait_for(lambda: "train-0" not in _pods_cache(adapter), what="the evicted pods gone")

    # the controller made a new pod; the person deletes the job: recorded, then carried out by the adapter
    seed.pod(pod("team-ml", "train-2", group="train"))
    wait_for(lambda: "train-2" in _pods_cache(adapter), what="the new pod")
    adapter.reconcile()
    r = client.post(f"/api/v1/podgroups/{pg.pk}/delete/")
    assert r.status_code == 202, r.content
    assert r.json()["pending"] is True
    assert PodGroup.objects.get(pk=pg.pk).deletion_requested_by == "ops"
    r = client.post(f"/api/v1/podgroups/{pg.pk}/delete/")
    assert r.status_code == 409 and "is being deleted already (asked by ops" in r.content.decode()
    adapter.reconcile()
    assert emulator.get("scheduling.volcano.sh", "podgroups", "team-ml", "train") is None
    assert emulator.objects("", "pods") == []
    wait_for(lambda: "train-2" not in _pods_cache(adapter), what="the deletions seen")
    wait_for(lambda: not next(i for i in adapter.informers if i.kind.plural == "podgroups").cache, what="pg gone")
    adapter.reconcile()
    assert not PodGroup.objects.filter(pk=pg.pk).exists()
    record = RemovedJob.objects.get(cluster=kcluster, name="train")
    assert record.cause == "deleted"
    assert record.reason == "deleted by ops (job action), through the API server of the Kubernetes cluster k1"


def test_a_podgroup_owned_by_a_controller_is_not_deleted(
    kcluster: Any, seed: Any, make_adapter: Any, emulator: Any, api: Any, make_user: Any
) -> None:
    """Known owner: the API refuses (409, with the owner and the kubectl command). An owner the mirror had not seen
    yet when the deletion was asked: the adapter leaves the PodGroup, drops the request and says why on the job."""
    from scheduling.models import PodGroup, PodGroupReason

    _world(seed)
    owned = podgroup("team-ml", "vc", "ml")
    owned["metadata"]["ownerReferences"] = [
        {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "vc", "uid": "u1", "controller": True}
    ]
    seed.podgroup(owned)
    adapter = make_adapter()
    adapter.reconcile()
    pg = PodGroup.objects.get(cluster=kcluster, name="vc")
    assert pg.kube_owner == "Job vc (batch.volcano.sh/v1alpha1)"
    client = api(make_user("ops", staff=True))
    r = client.post(f"/api/v1/podgroups/{pg.pk}/delete/")
    assert r.status_code == 409
    assert r.json()["errors"][0]["detail"] == (
        "job team-ml/vc is not deleted: its PodGroup is owned by Job vc (batch.volcano.sh/v1alpha1), which would make "
        "it again; delete that object instead (kubectl delete -n team-ml job vc)"
    )
    assert PodGroup.objects.get(pk=pg.pk).deletion_requested_at is None

    PodGroup.objects.filter(pk=pg.pk).update(kube_owner=None)  # as if asked before the mirror saw the owner
    assert client.post(f"/api/v1/podgroups/{pg.pk}/delete/").status_code == 202
    out = adapter.reconcile()
    assert out is not None and any("owned by Job vc" in p for p in out["problems"])
    assert emulator.get("scheduling.volcano.sh", "podgroups", "team-ml", "vc") is not None
    pg.refresh_from_db()
    assert pg.deletion_requested_at is None and pg.reason == "DeleteRefused"
    assert pg.kube_owner == "Job vc (batch.volcano.sh/v1alpha1)"  # the mirror put it back
    last = PodGroupReason.objects.filter(podgroup=pg).order_by("-time", "-id").first()
    assert last is not None and "kubectl delete -n team-ml job vc" in last.message
