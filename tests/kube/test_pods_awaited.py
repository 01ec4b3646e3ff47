"""Delayed pod creation on a live cluster (seed 003): Volcano's job controller makes a vcjob's pods once its PodGroup
is Inqueue, and on a loaded control plane a large job's pods take longer than the requeue rule's sessions
(``requeueAfterSessions``, 3, about 3 s) to all exist. An admitted PodGroup whose pods are still coming (fewer than
its minimum, none on a node, the newest stored less than ``FAIRWAY_POD_CREATION_SECONDS`` ago, or none yet and
admitted less than that long ago) keeps its reservation; one whose pods stopped coming is given back by the requeue
rule as before (``scheduling.store.read._growing``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from django.utils import timezone

from tests.kube.conftest import node, pod, podgroup, queue


def _world(db: Any) -> Any:
    from quotas import services
    from scheduling.models import Cluster

    services.ensure_builtins()
    return Cluster.objects.create(name="west", source="kubernetes", tree_source="kubernetes", scheduler_name="fairway")


def _objects(pods: int) -> list[dict[str, Any]]:
    """Queue ``q``, a node of 8 cores, and a PodGroup of minimum 3 pods of 1 core (as Volcano's job controller makes
    it for a vcjob) with ``pods`` of them made so far."""
    group = podgroup("team", "train", "q", 3, minResources={"cpu": "3", "memory": "3Gi"})
    made = [pod("team", f"train-{i}", group="train") for i in range(pods)]
    return [node("n1"), queue("q", capability={"cpu": "8", "memory": "32Gi"}), group, *made]


def test_an_admitted_podgroup_whose_pods_keep_coming_keeps_its_reservation_and_one_whose_pods_stopped_does_not(
    db: Any,
) -> None:
    from scheduling import sessions, store
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import Cluster, Pod, PodGroup

    cluster = _world(db)
    report = mirror(cluster, _objects(1), timezone.now())
    assert not report.problems, report.problems
    for _ in range(5):  # the first pod was just stored: its controller is making the others
        sessions.run_scheduling_session(cluster)
    group = PodGroup.objects.get(cluster=cluster, name="train")
    assert (group.phase, group.requeues) == ("Inqueue", 0), (group.phase, group.message)
    assert "team/train" in store.load_snapshot(Cluster.objects.get(pk=cluster.pk)).admission.pods_awaited
    # no pod for longer than the setting: the requeue rule counts again, and gives the reservation back
    Pod.objects.filter(cluster=cluster).update(created=timezone.now() - timedelta(seconds=61))
    assert "team/train" not in store.load_snapshot(Cluster.objects.get(pk=cluster.pk)).admission.pods_awaited
    for _ in range(3):
        sessions.run_scheduling_session(cluster)
    group.refresh_from_db()
    assert (group.phase, group.requeues) == ("Pending", 1), (group.phase, group.message)


def test_an_admitted_podgroup_none_of_whose_pods_exists_yet_keeps_its_reservation_for_the_setting(db: Any) -> None:
    """A vcjob's PodGroup is admitted before any of its pods exists (its controller makes them once it is Inqueue):
    the first pod is awaited for ``FAIRWAY_POD_CREATION_SECONDS`` after the session that admitted it, not for the
    requeue rule's three sessions; after that, the rule gives the reservation back."""
    from scheduling import sessions
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import PodGroup

    cluster = _world(db)
    report = mirror(cluster, _objects(0), timezone.now())
    assert not report.problems, report.problems
    for _ in range(5):
        sessions.run_scheduling_session(cluster)
    group = PodGroup.objects.get(cluster=cluster, name="train")
    assert (group.phase, group.reason, group.requeues) == ("Inqueue", "NotEnoughPods", 0), group.message
    # admitted longer ago than the setting, and still no pod: counted again
    [condition] = group.conditions
    condition["lastTransitionTime"] = (timezone.now() - timedelta(seconds=61)).strftime("%Y-%m-%dT%H:%M:%SZ")
    PodGroup.objects.filter(pk=group.pk).update(conditions=[condition])
    for _ in range(3):
        sessions.run_scheduling_session(cluster)
    group.refresh_from_db()
    assert (group.phase, group.requeues) == ("Pending", 1), (group.phase, group.message)


def test_the_pods_awaited_by_the_store() -> None:
    """Only an Inqueue podgroup short of its pods, none on a node, with a pod stored within the setting; a pod whose
    time is ahead of the clock counts for nothing."""
    import dataclasses

    from engine.manifests import load_objects
    from engine.objects import PodGroupCondition, PodGroupPhase
    from scheduling.store.read import _growing

    now = datetime(2026, 12, 1, 8, tzinfo=UTC).timestamp()

    def awaited(pods: int, ago: float, phase: str = "Inqueue", on_node: bool = False, short: str = "") -> bool:
        """``short``: the podgroup's last condition's reason, ``ago`` seconds ago (a session wrote it)."""
        snapshot = load_objects(_objects(pods), live=True)[0].snapshot
        tasks = [dataclasses.replace(t, creation_timestamp=now - ago) for t in snapshot.tasks.values()]
        if on_node and tasks:
            tasks[0] = dataclasses.replace(tasks[0], node="n1")
        conditions = (
            (PodGroupCondition("Unschedulable", reason=short, last_transition_time=now - ago),) if short else ()
        )
        pg = dataclasses.replace(snapshot.podgroups["team/train"], phase=PodGroupPhase(phase), conditions=conditions)
        snapshot = snapshot.replace(tasks={t.uid: t for t in tasks}, podgroups={pg.key: pg})
        return list(_growing(snapshot, {}, now, 60.0)) == ["team/train"]

    assert awaited(1, 10) and awaited(2, 59)
    assert not awaited(1, 61)  # stopped coming
    assert not awaited(0, 10)  # none yet, and no session says since when it waits for them
    # none yet, admitted 10 s ago (the admitting session wrote NotEnoughPods): its controller makes the first now
    assert awaited(0, 10, short="NotEnoughPods")
    assert not awaited(0, 61, short="NotEnoughPods")  # none for longer than the setting
    assert not awaited(0, 10, short="Requeued") and not awaited(0, -3600, short="NotEnoughPods")
    assert not awaited(3, 10)  # all there
    assert not awaited(1, 10, phase="Pending")  # not admitted
    assert not awaited(2, 10, on_node=True)  # one running: the gang is being placed
    assert not awaited(1, -3600)  # stored "in the future"
