"""The in-process mirror of a cluster (``scheduling.feed.mirror``): brought up to date from the change feed, it must
hold exactly what a full read (``store.read_cluster``) gives, after any sequence of writes through the real write
paths; and it must read in full whenever it cannot prove it is current."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import random
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from core.models import Revision
from engine.objects import Snapshot
from quotas.models import Namespace, Queue, QuotaGroup
from scheduling import agent, sessions, store
from scheduling.feed.mirror import ClusterMirror, mirror_of, prune_changes
from scheduling.models import ClusterFeed, Node, Pod, PodGroup, RowChange, SchedulingSession
from tests.scheduling.conftest import World, build_world, rl
from tests.support import migrated_sqlite

STATUSES = ["Pending", "Pipelined", "Bound", "Running", "Releasing", "Succeeded", "Failed"]
PHASES = ["Pending", "Inqueue", "Running", "Unknown", "Completed"]
MOVED_REFERENCES = "a tree change renamed or moved what the rows refer to"
# stored required node affinities (Kubernetes' nodeSelectorTerms): zone b, or any node but n1; none
AFFINITIES: list[list[dict[str, Any]]] = [
    [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}],
    [{"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]}],
    [],
]


def assert_same(mirror: ClusterMirror, world: World) -> None:
    """The mirror's snapshot and row ids equal a full read's, object by object (and the nodes and podgroups in
    the same order)."""
    full, ids = store.read_cluster(world.cluster)
    mine, my_ids = mirror.snapshot(world.cluster), mirror.row_ids()
    _compare(mine, full)
    # the snapshot's pods (a new copy, or an older copy renewed by the mirror's logged stores and drops) are the
    # mirror's own, the same objects in the same order
    held = mirror._state.tasks if mirror._state is not None else {}
    assert list(mine.tasks) == list(held)
    assert all(mine.tasks[uid] is task for uid, task in held.items())
    assert dict(my_ids.pods) == dict(ids.pods)
    assert dict(my_ids.nodes) == dict(ids.nodes)


def _compare(mine: Snapshot, full: Snapshot) -> None:
    assert list(mine.nodes) == list(full.nodes)
    for name, node in full.nodes.items():
        assert mine.nodes[name] == node, name
    assert set(mine.tasks) == set(full.tasks)
    for uid, task in full.tasks.items():
        assert mine.tasks[uid] == task, uid
    assert set(mine.podgroups) == set(full.podgroups)
    for key, pg in full.podgroups.items():
        assert mine.podgroups[key] == pg, key
    # (the podgroups' order is not compared: the mirror appends one made after the others where a full read sorts
    # them, and no decision reads it, as every order the sessions use ends on the job's key; the carried sessions'
    # tests compare decisions with fresh ones)
    assert dict(mine.queues) == dict(full.queues)
    assert dict(mine.quota_groups) == dict(full.quota_groups)
    assert dict(mine.namespaces) == dict(full.namespaces)
    assert {k: sorted(v) for k, v in mine.quota_namespaces.items()} == {
        k: sorted(v) for k, v in full.quota_namespaces.items()
    }
    assert mine.policy == full.policy
    assert mine.admission.pod_group_waits == full.admission.pod_group_waits


# -- random writes through the real write paths ----------------------------------------------------------------


class Writer:
    """Random writes of a world's cluster, each through one of the paths the product uses."""

    def __init__(self, world: World, rng: random.Random) -> None:
        self.world, self.rng, self.n = world, rng, 0
        self.cluster = world.cluster

    def _pods(self) -> list[Pod]:
        return list(Pod.objects.filter(cluster=self.cluster).order_by("id"))

    def _pod(self) -> Pod | None:
        pods = self._pods()
        return self.rng.choice(pods) if pods else None

    def _node(self) -> Node | None:
        nodes = list(Node.objects.filter(cluster=self.cluster).order_by("id"))
        return self.rng.choice(nodes) if nodes else None

    def _group(self) -> PodGroup | None:
        groups = list(PodGroup.objects.filter(cluster=self.cluster).order_by("id"))
        return self.rng.choice(groups) if groups else None

    def _ns(self) -> Namespace:
        return self.rng.choice(list(Namespace.objects.filter(name__in=["ns-a", "ns-b"]).order_by("name")))

    def step(self) -> str:
        ops = [m for m in dir(self) if m.startswith("op_")]
        op = self.rng.choice(ops)
        getattr(self, op)()
        return op

    # pods
    def op_create_pod(self) -> None:
        self.n += 1
        ns, group = self._ns(), self._group() if self.rng.random() < 0.6 else None
        Pod.objects.create(
            cluster=self.cluster,
            namespace=ns if group is None else group.namespace,
            name=f"p{self.n}-{self.rng.randrange(10**6)}",
            podgroup=group,
            request=rl(cpu=str(self.rng.randint(1, 3))),
            priority=self.rng.choice([0, 10]),
            preemptible=self.rng.random() < 0.8,
            quota_group=ns.quota_group if self.rng.random() < 0.7 else None,
            status=self.rng.choice(STATUSES),
            node=self._node() if self.rng.random() < 0.5 else None,
            node_selector={"zone": "a"} if self.rng.random() < 0.2 else {},
            node_affinity=self.rng.choice(AFFINITIES) if self.rng.random() < 0.2 else [],
            tolerations=[{"key": "k", "operator": "Exists"}] if self.rng.random() < 0.2 else [],
            labels={"app": "x"} if self.rng.random() < 0.2 else {},
            started=timezone.now() if self.rng.random() < 0.3 else None,
        )

    def op_bulk_create_pods(self) -> None:
        group = self._group()
        if group is None:
            return
        self.n += 1
        Pod.objects.bulk_create(
            Pod(cluster=self.cluster, namespace=group.namespace, name=f"b{self.n}-{k}", podgroup=group)
            for k in range(self.rng.randint(1, 4))
        )

    def op_pod_status_save(self) -> None:
        pod = self._pod()
        if pod is not None:
            pod.status = self.rng.choice(STATUSES)
            pod.node = self._node() if pod.status not in ("Pending", "Succeeded") else None
            pod.save()

    def op_pod_bulk_update(self) -> None:
        pods = self._pods()
        some = [p.pk for p in pods if self.rng.random() < 0.3]
        Pod.objects.filter(pk__in=some).update(status=self.rng.choice(STATUSES), priority=self.rng.randint(0, 5))

    def op_pod_raw_sql(self) -> None:  # no revision moved by the writer: the trigger does it
        pod = self._pod()
        if pod is not None:
            cast = "::jsonb" if connection.vendor == "postgresql" else ""
            with connection.cursor() as cursor:
                cursor.execute(
                    f"UPDATE scheduling_pod SET request = %s{cast} WHERE id = %s",
                    [f'{{"cpu": {1000 * self.rng.randint(1, 5)}}}', pod.pk],
                )

    def op_pod_affinity(self) -> None:  # only the required node affinity changes: the trigger logs it
        pod = self._pod()
        if pod is not None:
            Pod.objects.filter(pk=pod.pk).update(node_affinity=self.rng.choice(AFFINITIES))

    def op_pod_delete(self) -> None:
        pod = self._pod()
        if pod is not None:
            pod.delete()

    def op_pod_move_group(self) -> None:
        pod, group = self._pod(), self._group()
        if pod is not None:
            target = group if group is not None and group.namespace_id == pod.namespace_id else None
            Pod.objects.filter(pk=pod.pk).update(podgroup=target)

    def op_pod_noise(self) -> None:  # columns the engine does not read
        Pod.objects.filter(cluster=self.cluster).update(message=f"m{self.rng.randrange(100)}")

    def op_agent_report(self) -> None:
        pod = Pod.objects.filter(cluster=self.cluster, status__in=["Bound", "Running"]).order_by("id").first()
        if pod is not None and pod.node_id is not None:
            status = "Running" if pod.status == "Bound" else self.rng.choice(["Succeeded", "Failed"])
            with contextlib.suppress(agent.AgentError):
                agent.report_pod_status(pod, status, timezone.now())

    # podgroups
    def op_create_group(self) -> None:
        self.n += 1
        ns = self._ns()
        group = PodGroup.objects.create(
            cluster=self.cluster,
            namespace=ns,
            name=f"g{self.n}",
            queue=ns.default_queue,
            min_member=self.rng.randint(1, 3),
            min_resources=rl(cpu="2") if self.rng.random() < 0.5 else None,
            phase=self.rng.choice(PHASES),
        )
        for k in range(self.rng.randint(0, 3)):
            Pod.objects.create(cluster=self.cluster, namespace=ns, name=f"g{self.n}-{k}", podgroup=group)

    def op_group_phase(self) -> None:
        group = self._group()
        if group is not None:
            group.phase = self.rng.choice(PHASES)
            group.unplaced_sessions = self.rng.randint(0, 3)
            group.kueue_pod_group_count = group.unplaced_sessions or None  # (no draw of its own: the same sequences)
            group.conditions = [{"type": "Unschedulable", "status": "True", "reason": "r", "transitionID": "1"}]
            group.save()

    def op_group_bulk_complete(self) -> None:
        PodGroup.objects.filter(cluster=self.cluster, pk__in=[g.pk for g in [self._group()] if g]).update(
            phase="Completed"
        )

    def op_group_rename(self) -> None:
        group = self._group()
        if group is not None:
            self.n += 1
            group.name = f"r{self.n}"
            group.save()

    def op_group_delete(self) -> None:  # cascades to its pods
        group = self._group()
        if group is not None and self.rng.random() < 0.5:
            group.delete()

    def op_complete_finished(self) -> None:
        agent.complete_finished_podgroups(self.cluster, timezone.now())

    # nodes
    def op_node_create(self) -> None:
        self.n += 1
        Node.objects.create(
            cluster=self.cluster,
            name=self.rng.choice(["a", "m", "z", "N"]) + f"{self.n}",
            allocatable=rl(cpu="8", memory="32Gi"),
            labels={"zone": self.rng.choice("ab")},
        )

    def op_node_update(self) -> None:
        node = self._node()
        if node is not None:
            node.ready = self.rng.random() < 0.7
            node.unschedulable = self.rng.random() < 0.2
            node.taints = [{"key": "k", "value": "v", "effect": "NoSchedule"}] if self.rng.random() < 0.3 else []
            node.save()

    def op_node_rename(self) -> None:
        node = self._node()
        if node is not None:
            self.n += 1
            node.name = f"x{self.n}"
            node.save()

    def op_node_delete(self) -> None:  # its pods lose their node (SET_NULL)
        node = self._node()
        if node is not None and self.rng.random() < 0.4:
            node.delete()

    def op_heartbeat(self) -> None:  # not a change the engine reads
        for node in Node.objects.filter(cluster=self.cluster):
            agent.heartbeat(node, timezone.now())

    # the trees
    def op_namespace_weight(self) -> None:
        ns = self._ns()
        ns.weight = self.rng.randint(1, 4)
        ns.save()

    def op_namespace_default_queue(self) -> None:
        ns = self._ns()
        ns.default_queue = Queue.objects.get(name=self.rng.choice(["team-a", "team-b"]))
        ns.save()

    def op_quota_group_max(self) -> None:
        group = QuotaGroup.objects.get(name="qa")
        group.max = rl(cpu=str(self.rng.randint(12, 30)))
        group.save()

    # the scheduler itself
    def op_session(self) -> None:
        if self.rng.random() < 0.3:
            assert sessions.run_scheduling_session(self.cluster).status == "ok"


def _run_sequences(seed: int, steps: int) -> dict[str, int]:
    rng = random.Random(seed)
    world = build_world(f"c{seed}")
    writer = Writer(world, rng)
    mirror = ClusterMirror(world.cluster.pk)
    mirror.refresh()
    assert mirror.last.full
    assert_same(mirror, world)
    outcomes = {"full": 0, "incremental": 0}
    for _ in range(steps):
        for _ in range(rng.randint(1, 4)):
            with transaction.atomic():
                writer.step()
        done = mirror.refresh()
        outcomes["full" if done.full else "incremental"] += 1
        assert_same(mirror, world)
        # no session opens this mirror's carry, whose notes would keep every copy of the pods alive (a session
        # drops those it followed); without them the copy before the last one is renewed when the mirror alone
        # holds it (``ClusterMirror._renewed_copy``)
        mirror.carry.clear()
    outcomes["renewed"] = mirror.renewed
    return outcomes


# Sequences per seed: 100 keeps the suite's share under a minute on the shared machine; set
# FAIRWAY_MIRROR_SEQUENCES (and FAIRWAY_MIRROR_SEEDS, FAIRWAY_MIRROR_SQLITE_SEEDS for the SQLite pass) for a longer run.
SEQUENCES = int(os.environ.get("FAIRWAY_MIRROR_SEQUENCES", "100"))
SEEDS = int(os.environ.get("FAIRWAY_MIRROR_SEEDS", "5"))


@pytest.mark.parametrize("seed", range(SEEDS))
@pytest.mark.django_db
def test_random_writes_leave_the_mirror_equal_to_a_full_read(seed: int) -> None:
    outcomes = _run_sequences(seed, SEQUENCES)
    # only the tree changes that move what rows refer to read in full; nearly every refresh is incremental
    assert outcomes["incremental"] > outcomes["full"]
    assert outcomes["renewed"] > 0  # copies of the pods renewed by the log (and checked by ``assert_same``)


@pytest.mark.django_db
def test_the_session_mirror_stays_equal_to_a_full_read() -> None:
    rng = random.Random(99)
    world = build_world("sess")
    writer = Writer(world, rng)
    for _ in range(40):
        writer.step()
        assert sessions.run_scheduling_session(world.cluster).status == "ok"
        mirror = mirror_of(world.cluster.pk)
        # a full read only for the first copy, or after a tree change that moved what rows refer to (a namespace's
        # default queue: the writer's op_namespace_default_queue)
        assert not mirror.last.full or mirror.last.reason in ("no copy yet", MOVED_REFERENCES), mirror.last
        mirror.refresh()  # the session's own decisions, read back
        assert_same(mirror, world)


@pytest.mark.django_db
def test_the_notes_of_changed_podgroups_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the mirror tells the engine's carry of each new copy of the podgroups (``note_podgroups``): it differs
    from the copy before only at the noted keys, and every key in both is in the same relative order (a new podgroup
    created after the others goes last, as a full read orders them); the copies stay equal to a full read."""
    from engine.session.carry import SessionCarry

    notes: list[tuple[Any, Any, Any]] = []
    real = SessionCarry.note_podgroups

    def noting(self: SessionCarry, base: Any, podgroups: Any, changed: Any) -> None:
        notes.append((base, podgroups, changed))
        real(self, base, podgroups, changed)

    monkeypatch.setattr(SessionCarry, "note_podgroups", noting)
    rng = random.Random(7)
    world = build_world("pgnotes")
    writer = Writer(world, rng)
    for step in range(40):
        for _ in range(rng.randint(1, 3)):
            with transaction.atomic():
                writer.step() if step % 4 else writer.op_create_group()
            if step % 3 == 0:  # the first pod without a podgroup changes: its own podgroup keeps its place
                writer.op_create_pod()
                alone = Pod.objects.filter(cluster=world.cluster, podgroup=None).order_by("id").first()
                Pod.objects.filter(pk=alone.pk).update(priority=F("priority") + 1)  # type: ignore[union-attr]
        assert sessions.run_scheduling_session(world.cluster).status == "ok"
    known = [(base, now, changed) for base, now, changed in notes if changed is not None and base]
    for base, now, changed in known:
        assert all(now[key] is pg for key, pg in base.items() if key in now and key not in changed)
        assert set(now) ^ set(base) <= changed  # new and gone keys noted
        assert [key for key in base if key in now] == [key for key in now if key in base]
    assert len(known) > 20, len(known)
    mirror = mirror_of(world.cluster.pk)
    mirror.refresh()
    assert_same(mirror, world)
    assert "podgroups recounted (those noted)" in mirror.carry.last or mirror.carry.last.startswith("full")


@pytest.mark.parametrize("seed", [3, 11])
@pytest.mark.django_db
def test_a_sessions_own_bindings_are_applied_without_reading_them_back(
    seed: int, django_capture_on_commit_callbacks: Any
) -> None:
    """Once a session commits, its mirror makes the pods it bound from what it holds and the binding instead of
    reading their rows back (``ClusterMirror.own_writes``), and stays equal to a full read: also when another writer
    changed some of those pods after the commit (their rows are read), or when the session evicted, pipelined or
    left a pod without a podgroup."""
    rng = random.Random(seed)
    world = build_world(f"own{seed}")
    writer = Writer(world, rng)
    applied = interfered = 0
    for step in range(40):
        for _ in range(rng.randint(1, 3)):
            with transaction.atomic():
                writer.step()
        with django_capture_on_commit_callbacks(execute=True):
            session = sessions.run_scheduling_session(world.cluster)
        assert session.status == "ok"
        mirror = mirror_of(world.cluster.pk)
        bound = [uid for uid, _node, _pipelined in session.bindings]
        if bound and step % 3 == 0:  # another writer, after the commit, on a pod the session bound
            ns, name = bound[0].split("/")
            Pod.objects.filter(cluster=world.cluster, namespace__name=ns, name=name).update(
                priority=F("priority") + 1, node=None if rng.random() < 0.5 else F("node")
            )
            interfered += 1
        mirror.refresh()
        applied += mirror.last.own
        assert mirror.last.own <= len(bound)
        assert_same(mirror, world)
    assert interfered > 0
    # (PostgreSQL: the session's bindings are written by its binding stream, whose first statement gives the
    # revision its own writes start at; elsewhere they are read back as before, and the copy is equal all the same)
    assert applied > 0 or connection.vendor != "postgresql", applied


# -- what the feed logs ----------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_every_write_is_logged_in_its_transaction_and_a_heartbeat_is_not(world: World) -> None:
    cid = world.cluster.pk
    before = RowChange.objects.filter(cluster_id=cid).count()
    for node in world.nodes.values():
        agent.heartbeat(node, timezone.now())
    Pod.objects.filter(cluster=world.cluster).update(message="noise")
    assert RowChange.objects.filter(cluster_id=cid).count() == before
    (rev,) = Revision.objects.values_of(Revision.cluster_key(cid))
    with connection.cursor() as cursor:  # a writer that does not move the revision itself
        cursor.execute("UPDATE scheduling_pod SET priority = 7 WHERE cluster_id = %s", [cid])
    (after,) = Revision.objects.values_of(Revision.cluster_key(cid))
    # PostgreSQL's triggers move it once per statement; SQLite's (row-level only) once per logged row
    assert after == rev + (1 if connection.vendor == "postgresql" else len(world.pods))
    assert set(RowChange.objects.filter(cluster_id=cid, rev__gt=rev).values_list("kind", "row_id")) == {
        (3, p.pk) for p in world.pods.values()
    }
    assert max(RowChange.objects.filter(cluster_id=cid).values_list("rev", flat=True)) == after
    with pytest.raises(RuntimeError), transaction.atomic():
        world.nodes["n1"].delete()
        raise RuntimeError("rolled back")
    assert not RowChange.objects.filter(cluster_id=cid, rev__gt=after).exists()
    with transaction.atomic():  # every statement that logs rows moves the revision again
        Pod.objects.filter(cluster=world.cluster).update(priority=1)
        Node.objects.filter(cluster=world.cluster).update(ready=False)
    logged = RowChange.objects.filter(cluster_id=cid, rev__gt=after)
    assert logged.filter(kind=3).count() == 3 and logged.filter(kind=1).count() == 3
    assert max(logged.filter(kind=3).values_list("rev", flat=True)) < min(
        logged.filter(kind=1).values_list("rev", flat=True)
    )


@pytest.mark.django_db
def test_a_kueue_pod_groups_wait_follows_its_count_and_its_pods(world: World) -> None:
    """The count alone is logged (its trigger column), and the group's wait is found anew from the pods of each
    snapshot: a pod that arrives ends it, one that goes brings it back, without a full read."""
    mirror = ClusterMirror(world.cluster.pk)
    mirror.refresh()
    pg = world.podgroups["ns-a/pg-a"]
    PodGroup.objects.filter(pk=pg.pk).update(kueue_pod_group_count=3)
    assert not mirror.refresh().full and mirror.last.changes == 1
    waits = dict(mirror.snapshot(world.cluster).admission.pod_group_waits)
    assert waits["ns-a/pg-a"].startswith("2 of its 3 pods exist"), waits
    assert_same(mirror, world)
    third = Pod.objects.create(cluster=world.cluster, namespace=pg.namespace, name="a-2", podgroup=pg)
    assert not mirror.refresh().full
    assert mirror.snapshot(world.cluster).admission.pod_group_waits == ()
    assert_same(mirror, world)
    third.delete()
    assert not mirror.refresh().full
    assert [k for k, _ in mirror.snapshot(world.cluster).admission.pod_group_waits] == ["ns-a/pg-a"]
    Pod.objects.filter(pk=world.pods["ns-a/a-0"].pk).update(status="Failed")  # a Failed pod cannot run
    assert not mirror.refresh().full
    assert dict(mirror.snapshot(world.cluster).admission.pod_group_waits)["ns-a/pg-a"].startswith("1 of its 3")
    assert_same(mirror, world)
    Pod.objects.filter(pk=world.pods["ns-a/a-1"].pk).update(status="Running", node=world.nodes["n1"])  # admitted
    assert not mirror.refresh().full
    assert mirror.snapshot(world.cluster).admission.pod_group_waits == ()
    Pod.objects.filter(pk=world.pods["ns-a/a-1"].pk).update(status="Pending", node=None)
    assert not mirror.refresh().full
    assert [k for k, _ in mirror.snapshot(world.cluster).admission.pod_group_waits] == ["ns-a/pg-a"]
    PodGroup.objects.filter(pk=pg.pk).update(kueue_pod_group_count=None)  # no longer a Kueue pod group: no wait
    assert not mirror.refresh().full and mirror.last.changes == 1
    assert mirror.snapshot(world.cluster).admission.pod_group_waits == ()
    assert_same(mirror, world)


# -- falling back to a full read -------------------------------------------------------------------------------


def _touch(world: World) -> None:
    """One real change of one pod (its priority moves on every call: an update to the same value logs nothing)."""
    Pod.objects.filter(pk=world.pods["ns-b/solo"].pk).update(priority=(F("priority") + 1) % 100)


@pytest.mark.django_db
def test_a_new_mirror_reads_in_full_then_incrementally(world: World) -> None:
    mirror = ClusterMirror(world.cluster.pk)
    assert mirror.refresh().full and mirror.last.reason == "no copy yet"
    _touch(world)
    done = mirror.refresh()
    assert not done.full and done.changes == 1
    assert not mirror.refresh().full and mirror.last.changes == 0
    assert_same(mirror, world)


@pytest.mark.django_db
def test_the_changed_rows_are_read_by_one_array_of_keys_on_postgresql(world: World) -> None:
    """On PostgreSQL the changed pods' rows are read by their keys as one array parameter (``id = ANY(%s)``), not an
    ``IN`` list of a placeholder per key (preparing thousands of them cost more than reading the rows); SQLite,
    without arrays, reads them by an ``IN`` list."""
    from django.test.utils import CaptureQueriesContext

    mirror = ClusterMirror(world.cluster.pk)
    mirror.refresh()
    Pod.objects.filter(cluster=world.cluster).update(priority=(F("priority") + 1) % 100)
    with CaptureQueriesContext(connection) as queries:
        done = mirror.refresh()
    assert not done.full and done.changes == Pod.objects.filter(cluster=world.cluster).count() > 2
    pod_reads = [q["sql"] for q in queries.captured_queries if 'FROM "scheduling_pod"' in q["sql"]]
    array = connection.vendor == "postgresql"
    assert pod_reads
    for sql in pod_reads:
        assert ('"scheduling_pod"."id" = ANY(' in sql, " IN (" in sql) == (array, not array), sql
    assert_same(mirror, world)


@pytest.mark.django_db
def test_a_new_cluster_has_its_feed_row_so_that_a_reader_never_writes_it(world: World) -> None:
    feed = ClusterFeed.objects.get(cluster=world.cluster)  # made with the cluster, before any mirror read
    mirror = ClusterMirror(world.cluster.pk)
    mirror.refresh()
    assert ClusterFeed.objects.get(cluster=world.cluster).epoch == feed.epoch


@pytest.mark.django_db
def test_a_recreated_feed_reads_in_full(world: World) -> None:
    mirror = ClusterMirror(world.cluster.pk)
    mirror.refresh()
    ClusterFeed.objects.filter(cluster=world.cluster).delete()
    _touch(world)
    assert mirror.refresh().reason == "the change feed was recreated"
    assert_same(mirror, world)


@pytest.mark.django_db
def test_a_revision_that_went_back_reads_in_full(world: World) -> None:
    mirror = ClusterMirror(world.cluster.pk)
    mirror.refresh()
    Revision.objects.filter(key=Revision.cluster_key(world.cluster.pk)).update(value=1)
    assert mirror.refresh().reason == "a revision went back"


@pytest.mark.django_db
def test_pruned_changes_read_in_full(world: World) -> None:
    mirror = ClusterMirror(world.cluster.pk)
    mirror.refresh()
    for _ in range(3):
        _touch(world)
    assert prune_changes(world.cluster, keep=1) > 0
    assert mirror.refresh().reason == "changes since the copy were pruned"
    assert_same(mirror, world)
    _touch(world)
    assert not mirror.refresh().full  # caught up: pruning behind it is harmless
    assert prune_changes(world.cluster, keep=0) >= 0
    _touch(world)
    assert not mirror.refresh().full


@pytest.mark.django_db
def test_a_tree_change_reads_the_trees_and_reads_in_full_only_when_rows_refer_to_it(world: World) -> None:
    mirror = ClusterMirror(world.cluster.pk)
    mirror.refresh()
    ns = Namespace.objects.get(name="ns-a")
    ns.weight = 5
    ns.save()
    assert not mirror.refresh().full
    assert mirror.snapshot(world.cluster).namespaces["ns-a"].weight == 5
    ns.default_queue = Queue.objects.get(name="team-b")  # the solo pods' own podgroups change queue
    ns.save()
    assert mirror.refresh().reason == "a tree change renamed or moved what the rows refer to"
    assert_same(mirror, world)
    queue = Queue.objects.get(name="team-a")
    queue.name = "team-a2"
    queue.save()
    assert mirror.refresh().full
    assert_same(mirror, world)


@pytest.mark.django_db
def test_a_failed_refresh_drops_the_copy(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    mirror = ClusterMirror(world.cluster.pk)
    mirror.refresh()
    _touch(world)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("connection lost")

    monkeypatch.setattr(ClusterMirror, "_apply_pods", broken)
    with pytest.raises(RuntimeError):
        mirror.refresh()
    monkeypatch.undo()
    assert mirror.refresh().reason == "no copy yet"
    assert_same(mirror, world)


@pytest.mark.django_db
def test_two_mirrors_alternating_on_one_cluster_each_read_only_the_changes_since_their_own(world: World) -> None:
    """Two workers (two mirrors) take turns running the cluster's sessions: a mirror that did not run the last
    session takes over from its own copy, reading only what changed since it was last brought up to date (the
    other's writes are in the feed like any other), and says so; one that did reads only the changes."""
    a, b = ClusterMirror(world.cluster.pk), ClusterMirror(world.cluster.pk)
    from scheduling.feed import mirror as mirrors

    def session(m: ClusterMirror) -> Any:
        with transaction.atomic():
            m.read(world.cluster, session=True)
            mirrors.record_session(world.cluster.pk, m)
        return m.last

    b.refresh()  # b holds a copy, but does not run the sessions
    assert session(a).full
    _touch(world)
    done = session(a)
    assert not done.full and done.reason == "" and done.changes == 1  # a ran the last one
    _touch(world)
    done = session(b)  # b's copy is two changes behind
    assert not done.full and done.reason == mirrors.TAKEOVER and done.changes == 1
    assert_same(b, world)
    done = session(a)
    assert not done.full and done.reason == mirrors.TAKEOVER and done.changes == 1
    _touch(world)
    done = session(a)
    assert not done.full and done.reason == "" and done.changes == 1
    assert_same(a, world)
    assert ClusterFeed.objects.get(cluster=world.cluster).last_mirror == a.generation


@pytest.mark.django_db
def test_nodes_stay_in_the_database_order_and_a_renamed_node_moves_its_pods(world: World) -> None:
    mirror = ClusterMirror(world.cluster.pk)
    mirror.refresh()
    pod = world.pods["ns-a/a-0"]
    Pod.objects.filter(pk=pod.pk).update(status="Running", node=world.nodes["n2"])
    Node.objects.create(cluster=world.cluster, name="a-first", allocatable=rl(cpu="1"))
    node = world.nodes["n2"]
    node.name = "zz"
    node.save()
    assert not mirror.refresh().full
    assert list(mirror.snapshot(world.cluster).nodes) == ["a-first", "n1", "n3", "zz"]
    assert mirror.snapshot(world.cluster).tasks["ns-a/a-0"].node == "zz"
    assert_same(mirror, world)


@pytest.mark.django_db
def test_a_completed_podgroup_takes_its_finished_pods_out(world: World) -> None:
    mirror = ClusterMirror(world.cluster.pk)
    mirror.refresh()
    Pod.objects.filter(podgroup=world.podgroups["ns-a/pg-a"]).update(status="Succeeded")
    assert "ns-a/a-0" in mirror.read(world.cluster)[0].tasks  # finished, but its podgroup is still open
    agent.complete_finished_podgroups(world.cluster, timezone.now() + timedelta(seconds=1))
    snapshot, _ = mirror.read(world.cluster)
    assert not mirror.last.full
    assert "ns-a/a-0" not in snapshot.tasks and "ns-a/pg-a" not in snapshot.podgroups
    assert_same(mirror, world)


@pytest.mark.django_db
def test_new_pods_read_in_one_refresh_keep_the_notes_of_what_changed(world: World) -> None:
    """Pods created between two sessions come in at the end in primary-key order, whatever order the set of
    changed keys iterates in: no re-sort of every pod, and the engine's carry and the recording are told exactly
    which pods changed (before, a larger new key stored first made the smaller one look out of order: a re-sort
    and a comparison of every pod, the most of a session after 3 % of the pods changed)."""
    mirror = ClusterMirror(world.cluster.pk)
    mirror.refresh()
    mirror.snapshot(world.cluster)
    top = Pod.objects.order_by("-id").values_list("id", flat=True).first() or 0
    base = (top // 64 + 1) * 64
    ns_b = world.pods["ns-b/solo"].namespace
    # a set of these two keys iterates as (base + 9, base + 2): the hash table's slot 1 before slot 2
    assert list({base + 2, base + 9}) == [base + 9, base + 2]
    with transaction.atomic():
        for pk in (base + 9, base + 2):
            Pod.objects.create(id=pk, cluster=world.cluster, namespace=ns_b, name=f"new-{pk}", request=rl(cpu="1"))
    assert not mirror.refresh().full
    snapshot = mirror.snapshot(world.cluster)
    assert list(snapshot.tasks)[-2:] == [f"ns-b/new-{base + 2}", f"ns-b/new-{base + 9}"]
    assert mirror.tasks_note is not None
    assert mirror.tasks_note[2] == {f"ns-b/new-{base + 2}", f"ns-b/new-{base + 9}"}
    assert_same(mirror, world)


# -- the steady state ------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_session_with_nothing_changed_reuses_the_engines_last_result(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.session import run as engine_run

    calls: list[Any] = []
    real = engine_run.run_session

    def counting(snapshot: Snapshot, *, now: float, **kwargs: Any) -> Any:
        result = real(snapshot, now=now, **kwargs)
        calls.append((now, result))
        return result

    monkeypatch.setattr(engine_run, "run_session", counting)
    PodGroup.objects.filter(pk=world.podgroups["ns-a/pg-a"].pk).update(min_member=5)  # it cannot run: it waits
    first = sessions.run_scheduling_session(world.cluster)
    assert first.bound == 1 and len(calls) == 1  # the solo pod
    # the session reads back its own writes (the binding, then the waiting podgroup's reason and counters) until
    # one writes nothing the engine reads
    for _ in range(10):
        sessions.run_scheduling_session(world.cluster)
        if mirror_of(world.cluster.pk).last.changes == 0:
            break
    ran = len(calls)
    assert 2 <= ran <= 10
    settled = SchedulingSession.objects.order_by("-id").first()
    assert settled is not None
    for _ in range(3):  # nothing changed since: the same decisions, without the engine
        session = sessions.run_scheduling_session(world.cluster)
        assert session.status == "ok" and session.bound == 0
        assert session.podgroups == settled.podgroups and session.pending_pods == settled.pending_pods
    assert len(calls) == ran
    # a podgroup's reason written by anyone is logged too: the next session runs the engine and writes its own
    PodGroup.objects.filter(pk=world.podgroups["ns-a/pg-a"].pk).update(message="edited")
    sessions.run_scheduling_session(world.cluster)
    assert len(calls) == ran + 1
    assert PodGroup.objects.get(pk=world.podgroups["ns-a/pg-a"].pk).message != "edited"
    sessions.run_scheduling_session(world.cluster)  # reads back that write of its own
    assert len(calls) == ran + 2
    ran += 2
    # exact: the engine on a full read now decides what was reused
    fresh = real(store.read_cluster(world.cluster)[0], now=timezone.now().timestamp())
    assert fresh.bindings == calls[-1][1].bindings and fresh.evictions == calls[-1][1].evictions
    assert fresh.podgroups == calls[-1][1].podgroups
    # any write the engine reads runs it again; a write it does not read does not
    Pod.objects.filter(cluster=world.cluster).update(message="noise")
    sessions.run_scheduling_session(world.cluster)
    assert len(calls) == ran
    _touch(world)
    sessions.run_scheduling_session(world.cluster)
    assert len(calls) == ran + 1
    # so does another policy, and a requeue backoff that ends
    world.cluster.scheduler_policy = world.cluster.scheduler_policy + "\n"
    sessions.run_scheduling_session(world.cluster)
    assert len(calls) == ran + 2
    mirror = mirror_of(world.cluster.pk)
    soon = timezone.now().timestamp() + 30
    key = "ns-a/pg-a"
    pg = mirror._state.podgroups[key]  # type: ignore[union-attr]
    mirror._state.podgroups[key] = dataclasses.replace(pg, backoff_until=soon)  # type: ignore[union-attr]
    assert mirror.reusable(world.cluster.scheduler_policy, soon - 1) is not None
    assert mirror.reusable(world.cluster.scheduler_policy, soon + 1) is None


@pytest.mark.django_db
def test_sessions_on_the_kept_engine_state_decide_as_a_full_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine keeps its opened state in the mirror between sessions (``engine.session.carry``) and updates it
    from the objects that changed: after random writes through the real write paths, each session decides what
    the engine decides from scratch on a fresh copy of the same snapshot."""
    from engine.session import run as engine_run

    real = engine_run.run_session
    updates: list[str] = []

    def checked(snapshot: Snapshot, *, now: float, carry: Any = None, **kwargs: Any) -> Any:
        result = real(snapshot, now=now, carry=carry, **kwargs)
        # the same engine on a fresh copy (its bindings not handed to the session's writer a second time)
        fresh = real(dataclasses.replace(snapshot), now=now, **{k: v for k, v in kwargs.items() if k != "on_bindings"})
        assert result.bindings == fresh.bindings and result.evictions == fresh.evictions
        assert list(result.podgroups.items()) == list(fresh.podgroups.items())
        assert (result.queue_values, result.namespace_values, result.quota_values) == (
            fresh.queue_values,
            fresh.namespace_values,
            fresh.quota_values,
        )
        assert carry is not None
        updates.append(carry.last)
        return result

    monkeypatch.setattr(engine_run, "run_session", checked)
    rng = random.Random(5)
    world = build_world("carry")
    writer = Writer(world, rng)
    for _ in range(40):
        for _ in range(rng.randint(1, 3)):
            with transaction.atomic():
                writer.step()
        assert sessions.run_scheduling_session(world.cluster).status == "ok"
    assert sum(1 for u in updates if u.startswith("update")) > len(updates) // 2, updates
    # and mostly on the mirror's notes of the pods it re-read (``SessionCarry.note_tasks``), not every pod compared
    assert sum(1 for u in updates if u.endswith("by the caller's notes")) > len(updates) // 3, updates


# -- the embedded default ----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_this_module_passes_on_sqlite_too(tmp_path: Path, migrated_sqlite_template: Path) -> None:
    """The same tests on the embedded default of ``make run``: SQLite, with the row-level triggers of
    ``scheduling.feed.triggers``, in a process of its own (the settings pick the database when they load), the random
    sequences included. SQLite is in the standard library: no server is needed. Its test database is a copy of the
    run's migrated SQLite file (``tests.support.migrated_sqlite``): migrating is not what this module tests."""
    if connection.vendor == "sqlite":
        pytest.skip("this is the SQLite run")
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")},
        "FAIRWAY_VAR_DIR": str(tmp_path),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'fairway.sqlite3'}",
        migrated_sqlite.ENV: str(migrated_sqlite_template),
        # one of the random sequences' seeds (100 sequences) unless asked for more: the rest of the module is the same
        # on both databases, and its random writes are its longest part. Seed 0 alone runs every one of the Writer's
        # 24 kinds of write (each at least 6 times, counted on 2026-11-30), so every SQLite trigger path is written
        # through; PostgreSQL's pass runs 5 seeds
        "FAIRWAY_MIRROR_SEEDS": os.environ.get("FAIRWAY_MIRROR_SQLITE_SEEDS", "1"),
    }
    env = {k: v for k, v in env.items() if not k.startswith(("PYTEST_XDIST", "PYTEST_CURRENT"))}
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", __file__]
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert " failed" not in done.stdout and "1 skipped" in done.stdout  # this test itself, skipped there


@pytest.mark.django_db
def test_sqlite_without_all_its_triggers_reads_in_full(world: World) -> None:
    """A migration that rebuilds a table on SQLite (Django copies it into a new one) drops its triggers: the mirror
    then reads in full instead of trusting a feed that no longer logs everything."""
    if connection.vendor != "sqlite":
        pytest.skip("the SQLite triggers")
    mirror = ClusterMirror(world.cluster.pk)
    assert mirror.refresh().reason == "no copy yet"
    _touch(world)
    assert not mirror.refresh().full
    with connection.cursor() as cursor:  # rolled back with the test's transaction (DDL is transactional in SQLite)
        cursor.execute("DROP TRIGGER fairway_feed_scheduling_pod_update")
    _touch(world)
    assert mirror.refresh().reason == "no change feed on this database"
    assert_same(mirror, world)


def test_the_local_queues_are_read_once_per_trees_revision_and_again_after_a_write(world: World) -> None:
    """Kueue's LocalQueues are tree rows: the mirror reads them for the first snapshot at a trees revision and keeps
    them for the next ones (a session and its recycling pass read the same); a LocalQueue written (which moves the
    trees' revision) is in the next snapshot."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from quotas.models import LocalQueue

    mirror = ClusterMirror(world.cluster.pk)
    first, _ = mirror.read(world.cluster)
    assert first.admission.local_queue_specs == ()
    with CaptureQueriesContext(connection) as seen:
        again, _ = mirror.read(world.cluster)
    assert not [q for q in seen.captured_queries if "quotas_localqueue" in q["sql"]]
    assert again.admission.local_queue_specs == ()
    LocalQueue.objects.create(
        namespace=Namespace.objects.get(name="ns-a"), name="lq-a", queue=Queue.objects.get(name="team-a"), weight="2"
    )
    after, _ = mirror.read(world.cluster)
    assert [(s.namespace, s.name, s.queue) for s in after.admission.local_queue_specs] == [("ns-a", "lq-a", "team-a")]
