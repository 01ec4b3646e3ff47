"""scheduling/store/: rows -> snapshot -> (hand-made) decisions -> rows, compare-and-swap, one transaction."""

from __future__ import annotations

import copy
import threading
import time
from collections import Counter
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from core.models import Revision
from engine.objects import PodGroupPhase, TaskStatus
from engine.policy.policy import DEFAULT_POLICY
from engine.session.decisions import Binding, Blocker, Eviction, PodGroupStatus, SessionResult, StatusChanges
from quotas.models import Namespace
from scheduling import sessions, store
from scheduling.models import (
    ChangeKind,
    Node,
    Pod,
    PodGroup,
    PodGroupReason,
    QuotaSample,
    RowChange,
    SchedulingSession,
)
from scheduling.models import (
    Eviction as EvictionRow,
)
from scheduling.store import bindings as store_bindings
from scheduling.store import db as store_db
from scheduling.store import write as store_write
from tests.conftest import ensure_migrated_rows, forget_cluster_state
from tests.scheduling.conftest import GIB, World, build_world, rl

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def _world(module_db: Any) -> World:
    """``build_world()`` once for the module (each test runs in a transaction of its own)."""

    def build() -> World:
        ensure_migrated_rows()
        return build_world()

    return module_db(build)


@pytest.fixture
def world(_world: World, db: Any) -> World:
    """The module's world, as a test of its own would have built it (fresh objects, no state of a past session)."""
    forget_cluster_state(_world.cluster.pk)
    return copy.deepcopy(_world)


# -- reading --------------------------------------------------------------------------------------------------


def test_snapshot_reads_nodes_pods_podgroups_and_trees(world: World) -> None:
    snap = store.load_snapshot(world.cluster)
    assert set(snap.nodes) == {"n1", "n2", "n3"}
    assert snap.nodes["n1"].allocatable == {"cpu": 8000, "memory": 32 * GIB, "pods": 110_000}
    assert snap.total_allocatable["cpu"] == 24000
    assert set(snap.tasks) == {"ns-a/a-0", "ns-a/a-1", "ns-b/solo"}
    a0 = snap.tasks["ns-a/a-0"]
    assert (a0.podgroup, a0.request["cpu"], a0.status, a0.node, a0.quota_group) == (
        "ns-a/pg-a",
        2000,
        TaskStatus.PENDING,
        None,
        "qa",
    )
    pg = snap.podgroups["ns-a/pg-a"]
    assert (pg.queue, pg.min_member, pg.min_resources, pg.phase) == (
        "team-a",
        2,
        {"cpu": 4000, "memory": 8 * GIB},
        PodGroupPhase.PENDING,
    )
    # A pod without a podgroup gets its own: minMember 1, its namespace's default queue.
    own = snap.podgroups["ns-b/podgroup-solo"]
    assert (own.queue, own.min_member, snap.tasks["ns-b/solo"].podgroup) == ("team-b", 1, "ns-b/podgroup-solo")
    assert snap.namespaces["ns-a"].weight == 2 and snap.namespaces["ns-a"].queue == "team-a"
    assert snap.quota_namespaces["qa"] == ("ns-a",)
    assert snap.quota_group_of(snap.tasks["ns-b/solo"]) == "qb"
    assert snap.queues["team-a"].parent == "dept" and snap.queues["team-a"].weight == 2
    assert snap.quota_groups["qa"].min == {"cpu": 12000} and snap.quota_groups["qdept"].is_parent
    assert {"root", "default"} <= set(snap.queues) and {"root", "system", "default"} <= set(snap.quota_groups)
    assert snap.policy == DEFAULT_POLICY
    assert snap.problems() == []


def test_snapshot_statuses_pipelined_completed_and_not_ready(world: World) -> None:
    from scheduling.models import Namespace, Queue

    world.pods["ns-a/a-0"].status, world.pods["ns-a/a-0"].node = "Running", world.nodes["n1"]
    world.pods["ns-a/a-0"].save()
    world.pods["ns-a/a-1"].status, world.pods["ns-a/a-1"].node = "Pipelined", world.nodes["n2"]
    world.pods["ns-a/a-1"].save()
    Node.objects.filter(pk=world.nodes["n3"].pk).update(ready=False)
    done = PodGroup.objects.create(
        cluster=world.cluster,
        namespace=Namespace.objects.get(name="ns-a"),
        name="old",
        queue=Queue.objects.get(name="team-a"),
        phase="Completed",
    )
    Pod.objects.create(cluster=world.cluster, namespace=done.namespace, name="old-0", podgroup=done, status="Succeeded")
    finished = Pod.objects.create(
        cluster=world.cluster,
        namespace=done.namespace,
        name="a-2",
        podgroup=world.podgroups["ns-a/pg-a"],
        status="Succeeded",
        node=world.nodes["n1"],
    )
    snap = store.load_snapshot(world.cluster)
    assert snap.tasks["ns-a/a-0"].status is TaskStatus.RUNNING and snap.tasks["ns-a/a-0"].node == "n1"
    # Pipelining is decided afresh by every session.
    assert snap.tasks["ns-a/a-1"].status is TaskStatus.PENDING and snap.tasks["ns-a/a-1"].node is None
    assert "ns-a/old" not in snap.podgroups and "ns-a/old-0" not in snap.tasks
    assert snap.tasks[f"ns-a/{finished.name}"].status is TaskStatus.SUCCEEDED  # gang counts keep finished members
    assert snap.nodes["n3"].ready is False and snap.total_allocatable["cpu"] == 16000
    assert snap.node_used["n1"]["cpu"] == 2000


def test_snapshot_reads_in_a_fixed_number_of_queries(world: World, django_assert_max_num_queries: Any) -> None:
    from scheduling.models import Namespace

    ns = Namespace.objects.get(name="ns-a")
    pg = world.podgroups["ns-a/pg-a"]
    Node.objects.bulk_create(
        Node(cluster=world.cluster, name=f"bulk-{i}", allocatable=rl(cpu="4"), labels={"zone": str(i % 3)})
        for i in range(100)
    )
    Pod.objects.bulk_create(
        Pod(
            cluster=world.cluster,
            namespace=ns,
            name=f"p-{i}",
            podgroup=pg if i % 2 else None,
            request=rl(cpu="1"),
            tolerations=[{"key": "gpu", "operator": "Exists"}],
            node_selector={"zone": "1"},
        )
        for i in range(300)
    )
    with django_assert_max_num_queries(7):
        snap = store.load_snapshot(world.cluster)
    assert len(snap.tasks) == 303 and len(snap.nodes) == 103
    assert snap.tasks["ns-a/p-1"].tolerations[0].operator == "Exists"
    assert snap.tasks["ns-a/p-1"].node_selector == {"zone": "1"}


# -- writing --------------------------------------------------------------------------------------------------


def _result(**kwargs: Any) -> SessionResult:
    return SessionResult(**kwargs)


BIND_ALL = _result(
    bindings=[Binding("ns-a/a-0", "n1"), Binding("ns-a/a-1", "n2"), Binding("ns-b/solo", "n3", pipelined=True)],
    podgroups={
        "ns-a/pg-a": PodGroupStatus("ns-a/pg-a", "Running"),
        "ns-b/podgroup-solo": PodGroupStatus("ns-b/podgroup-solo", "Inqueue", "Pipelined", "waits on n3"),
    },
)


def test_round_trip_rows_snapshot_decisions_rows(world: World, writers: str) -> None:
    now = timezone.now()
    session = store.apply_decisions(world.cluster, BIND_ALL, now, pending_pods=3)
    assert (session.status, session.bound, session.pipelined, session.evicted) == ("ok", 2, 1, 0)
    assert sorted(map(tuple, session.bindings)) == [
        ("ns-a/a-0", "n1", False),
        ("ns-a/a-1", "n2", False),
        ("ns-b/solo", "n3", True),
    ]
    assert session.podgroups == {"Running": 1} and session.pending_pods == 3
    a0, solo = world.pod("ns-a/a-0"), world.pod("ns-b/solo")
    assert (a0.status, a0.node.name) == ("Bound", "n1")
    assert (solo.status, solo.node.name) == ("Pipelined", "n3")
    pg = PodGroup.objects.get(pk=world.podgroups["ns-a/pg-a"].pk)
    assert pg.phase == "Running" and pg.reason == ""
    assert pg.conditions[0]["type"] == "Scheduled" and pg.conditions[0]["transitionID"] == str(session.pk)
    assert list(PodGroupReason.objects.values_list("phase", "session_id")) == [("Running", session.pk)]
    snap = store.load_snapshot(world.cluster)  # and back
    assert snap.tasks["ns-a/a-0"].status is TaskStatus.BOUND and snap.tasks["ns-a/a-0"].node == "n1"
    assert snap.tasks["ns-b/solo"].status is TaskStatus.PENDING and snap.tasks["ns-b/solo"].node is None
    assert snap.podgroups["ns-a/pg-a"].phase is PodGroupPhase.RUNNING
    assert snap.podgroups["ns-a/pg-a"].conditions[0].type == "Scheduled"
    assert snap.node_used["n1"]["cpu"] == 2000


def test_replaying_a_result_binds_nothing_twice(world: World, writers: str) -> None:
    now = timezone.now()
    first = store.apply_decisions(world.cluster, BIND_ALL, now)
    bound_at = {uid: world.pod(uid).updated for uid in ("ns-a/a-0", "ns-a/a-1")}
    moved = _result(bindings=[Binding("ns-a/a-0", "n3"), Binding("ns-a/a-1", "n3")])
    second = store.apply_decisions(world.cluster, BIND_ALL, now + timedelta(seconds=1))
    third = store.apply_decisions(world.cluster, moved, now + timedelta(seconds=2))
    assert (first.bound, second.bound, third.bound) == (2, 0, 0)
    assert second.pipelined == 1  # pipelining is redone each session: the pod went back to Pending first
    assert [world.pod(u).node.name for u in ("ns-a/a-0", "ns-a/a-1")] == ["n1", "n2"]
    assert {uid: world.pod(uid).updated for uid in bound_at} == bound_at
    assert second.bindings == [["ns-b/solo", "n3", True]] and third.bindings == []


def test_pipelined_pods_not_pipelined_again_go_back_to_pending(world: World) -> None:
    store.apply_decisions(world.cluster, BIND_ALL, timezone.now())
    store.apply_decisions(world.cluster, _result(), timezone.now())
    solo = world.pod("ns-b/solo")
    assert (solo.status, solo.node) == ("Pending", None)
    store.apply_decisions(world.cluster, _result(bindings=[Binding("ns-b/solo", "n2")]), timezone.now())
    assert world.pod("ns-b/solo").status == "Bound"  # a pipelined pod may be bound later


def test_bindings_skip_pods_that_changed_meanwhile_and_unknown_names(world: World) -> None:
    Pod.objects.filter(pk=world.pods["ns-a/a-0"].pk).delete()
    Pod.objects.filter(pk=world.pods["ns-a/a-1"].pk).update(status="Failed")
    result = _result(
        bindings=[
            Binding("ns-a/a-0", "n1"),
            Binding("ns-a/a-1", "n1"),
            Binding("ns-b/solo", "ghost-node"),
            Binding("ns-x/nobody", "n1"),
        ]
    )
    session = store.apply_decisions(world.cluster, result, timezone.now())
    assert session.bound == 0 and session.bindings == []
    assert world.pod("ns-a/a-1").status == "Failed" and world.pod("ns-b/solo").status == "Pending"


def test_bindings_stay_inside_their_cluster(world: World) -> None:
    other = build_world("c2", nodes=1)
    session = store.apply_decisions(other.cluster, _result(bindings=[Binding("ns-a/a-0", "n1")]), timezone.now())
    assert session.bound == 1
    assert world.pod("ns-a/a-0").status == "Pending" and other.pod("ns-a/a-0").node.cluster == other.cluster


def test_evictions_turn_pods_releasing_with_a_record_once(world: World) -> None:
    store.apply_decisions(world.cluster, BIND_ALL, timezone.now())
    Pod.objects.filter(pk=world.pods["ns-a/a-0"].pk).update(status="Running")
    blocker = Blocker("queue", "team-b", "cpu", 1000, 0, "deserved")
    evict = _result(
        evictions=[
            Eviction("ns-a/a-0", "reclaim", "Reclaimed", "queue team-a over deserved cpu: 4 > 2", "ns-b/solo", blocker),
            Eviction("ns-b/solo", "preempt", "Preempted", "a pipelined pod is not running"),  # not allocated
        ]
    )
    now = timezone.now()
    session = store.apply_decisions(world.cluster, evict, now)
    again = store.apply_decisions(world.cluster, evict, now)
    assert (session.evicted, again.evicted) == (1, 0)
    a0 = world.pod("ns-a/a-0")
    assert (a0.status, a0.reason, a0.node.name) == ("Releasing", "Evicted", "n1")  # still holds its node
    row = EvictionRow.objects.get()
    assert (row.pod_id, row.pod_uid, row.node, row.action, row.reason, row.preemptor, row.session_id) == (
        a0.pk,
        "ns-a/a-0",
        "n1",
        "reclaim",
        "Reclaimed",
        "ns-b/solo",
        session.pk,
    )
    assert row.blocker == blocker.to_dict() and "4 > 2" in row.message
    assert store.load_snapshot(world.cluster).tasks["ns-a/a-0"].status is TaskStatus.RELEASING


@pytest.fixture(params=["native", "generic"])
def writers(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The store's writers as PostgreSQL runs them, and the generic ones SQLite runs (prepared statements per row,
    ``bulk_create``), exercised here on PostgreSQL."""
    if request.param == "generic":
        for module in (store_write, store_bindings, store_db):
            monkeypatch.setattr(module, "is_postgres", lambda: False)
    return str(request.param)


def test_podgroup_reasons_conditions_and_history(world: World, writers: str) -> None:
    key = "ns-a/pg-a"
    pk = world.podgroups[key].pk

    def status(message: str, resource: str = "cpu", phase: str = "Pending") -> SessionResult:
        blocker = Blocker("queue", "team-a", resource, 4000, 2000, "realCapability")
        return _result(podgroups={key: PodGroupStatus(key, phase, "NotEnoughResources", message, blocker)})

    t0 = timezone.now()
    s1 = store.apply_decisions(world.cluster, status("queue team-a: insufficient cpu, requested 4, available 2"), t0)
    pg = PodGroup.objects.get(pk=pk)
    assert (pg.phase, pg.reason, pg.blocker["resource"]) == ("Pending", "NotEnoughResources", "cpu")
    cond = pg.conditions[0]
    assert (cond["type"], cond["status"], cond["reason"], cond["transitionID"]) == (
        "Unschedulable",
        "True",
        "NotEnoughResources",
        str(s1.pk),
    )
    # Only the numbers move: message and condition follow, the transition and the history stay.
    store.apply_decisions(
        world.cluster, status("queue team-a: insufficient cpu, requested 4, available 1"), t0 + timedelta(seconds=1)
    )
    pg = PodGroup.objects.get(pk=pk)
    assert pg.message.endswith("available 1") and pg.conditions[0]["message"].endswith("available 1")
    assert pg.conditions[0]["transitionID"] == str(s1.pk)
    assert pg.conditions[0]["lastTransitionTime"] == cond["lastTransitionTime"]
    assert PodGroupReason.objects.filter(podgroup_id=pk).count() == 1
    # Another resource blocks it: a new history row.
    store.apply_decisions(world.cluster, status("insufficient memory", "memory"), t0 + timedelta(seconds=2))
    # Inqueue, then Running, then Completed by the agent: never overwritten afterwards.
    store.apply_decisions(world.cluster, status("waiting", "memory", phase="Inqueue"), t0 + timedelta(seconds=3))
    store.apply_decisions(
        world.cluster, _result(podgroups={key: PodGroupStatus(key, "Running")}), t0 + timedelta(seconds=4)
    )
    history = list(PodGroupReason.objects.filter(podgroup_id=pk).order_by("time").values_list("phase", "reason"))
    assert history == [
        ("Pending", "NotEnoughResources"),
        ("Pending", "NotEnoughResources"),
        ("Inqueue", "NotEnoughResources"),
        ("Running", ""),
    ]
    PodGroup.objects.filter(pk=pk).update(phase="Completed")
    store.apply_decisions(world.cluster, status("late"), t0 + timedelta(seconds=5))
    assert PodGroup.objects.get(pk=pk).phase == "Completed"


def test_podgroup_statuses_compared_with_what_the_last_session_left_and_the_feed(
    world: World, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    """On PostgreSQL a session compares its podgroup statuses with those the last session of this process left, and
    reads again only the podgroups the change feed logged since (not every open podgroup): what another writer
    changed meanwhile is written over exactly as when every podgroup was read, and nothing is written when nothing
    moved."""
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL only (elsewhere every open podgroup is read)")
    from scheduling.models import ClusterFeed

    ClusterFeed.objects.get_or_create(cluster=world.cluster)
    store_write._STATUSES.pop(world.cluster.pk, None)
    read: list[int] = []
    real = store_write._status_rows

    def counted(qs: Any) -> Any:
        rows = real(qs)
        read.append(len(rows))
        return rows

    monkeypatch.setattr(store_write, "_status_rows", counted)
    key = "ns-a/pg-a"
    pk = world.podgroups[key].pk
    blocker = Blocker("queue", "team-a", "cpu", 4000, 2000, "realCapability")
    waiting = _result(
        podgroups={key: PodGroupStatus(key, "Pending", "NotEnoughResources", "insufficient cpu", blocker)}
    )

    def apply(at: Any) -> PodGroup:
        with django_capture_on_commit_callbacks(execute=True):
            store.apply_decisions(world.cluster, waiting, at)
        return PodGroup.objects.get(pk=pk)

    t0 = timezone.now()
    first = apply(t0)
    assert (first.reason, first.message) == ("NotEnoughResources", "insufficient cpu")
    assert read == [PodGroup.objects.filter(cluster=world.cluster).exclude(phase="Completed").count()]  # all
    assert apply(t0 + timedelta(seconds=1)).updated == first.updated  # nothing moved: nothing written
    assert read[1:] == []  # and no podgroup read again
    PodGroup.objects.filter(pk=pk).update(reason="ByHand", message="set by hand", blocker=None)  # another writer
    again = apply(t0 + timedelta(seconds=2))
    assert (again.reason, again.message, again.blocker["name"]) == ("NotEnoughResources", "insufficient cpu", "team-a")
    assert read[1:] == [1]  # only the podgroup the feed logged
    store_write._STATUSES.pop(world.cluster.pk, None)  # a new process: every open podgroup read again
    apply(t0 + timedelta(seconds=3))
    assert read[2] == read[0]
    # a podgroup the session completes is no longer among the open ones the next session counts per phase
    with django_capture_on_commit_callbacks(execute=True):
        store.apply_decisions(world.cluster, _result(podgroups={key: PodGroupStatus(key, "Completed")}), t0)
    with django_capture_on_commit_callbacks(execute=True):
        after = store.apply_decisions(world.cluster, waiting, t0 + timedelta(seconds=4))
    still_open = PodGroup.objects.filter(cluster=world.cluster).exclude(phase="Completed")
    assert after.podgroups == dict(sorted(Counter(still_open.values_list("phase", flat=True)).items()))
    assert PodGroup.objects.get(pk=pk).phase == "Completed"


@pytest.mark.parametrize("changes", [False, True], ids=["every-status", "computed-only"])
def test_kept_podgroup_statuses_follow_other_writers_and_their_counts_stay_exact(
    world: World, django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch, changes: bool
) -> None:
    """Session after session on PostgreSQL, with the same status objects given again (as a session that reuses its
    settled statuses does) and new ones, while another writer changes, completes and adds podgroups: every row ends
    as the session's status says (a status given again is written again over a row another writer changed), and the
    per-phase counts of the open podgroups are those of a full count each time. ``computed-only``: each result says
    which statuses are not those of the result before (``StatusChanges``, as a session's close does), and only those
    and the rows the feed logged are compared."""
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL only (elsewhere every open podgroup is read)")
    from quotas.models import Queue
    from scheduling.models import ClusterFeed

    ClusterFeed.objects.get_or_create(cluster=world.cluster)
    store_write._STATUSES.pop(world.cluster.pk, None)
    ns_a, queue = Namespace.objects.get(name="ns-a"), Queue.objects.get(name="team-a")
    for i in range(4):
        PodGroup.objects.create(cluster=world.cluster, namespace=ns_a, name=f"more-{i}", queue=queue, min_member=1)
    keys = sorted(f"ns-a/{pg.name}" for pg in PodGroup.objects.filter(cluster=world.cluster))
    running = {key: PodGroupStatus(key, "Running") for key in keys}
    waiting = PodGroupStatus("ns-a/more-1", "Pending", "NotEnoughResources", "insufficient cpu")
    compared: list[int] = []
    real = store_write._statuses_to_compare

    def counted(statuses: Any, given: Any, now_read: Any) -> Any:
        out = list(real(statuses, given, now_read))
        compared.append(len(out))
        return out

    monkeypatch.setattr(store_write, "_statuses_to_compare", counted)
    t0 = timezone.now()
    before: dict[str, PodGroupStatus] | None = None
    steps = [
        ({}, running),
        ({}, running),  # the very same statuses again
        ({"ns-a/more-0": {"phase": "Pending"}}, running),  # another writer moved one: written back
        ({"ns-a/more-2": {"phase": "Completed"}}, {**running, "ns-a/more-1": waiting}),
        ({}, {**running, "ns-a/more-1": waiting}),
        ({"new": {}}, {**running, "ns-a/more-1": waiting}),  # a podgroup made meanwhile
        ({"ns-a/more-1": {"reason": "ByHand"}}, {**running, "ns-a/more-1": waiting}),
        ({}, {**running, "ns-a/more-3": PodGroupStatus("ns-a/more-3", "Completed")}),  # the session completes one
        ({}, running),
    ]
    for i, (edits, statuses) in enumerate(steps):
        for key, fields in edits.items():
            if key == "new":
                PodGroup.objects.create(cluster=world.cluster, namespace=ns_a, name="late", queue=queue, min_member=1)
            else:
                PodGroup.objects.filter(cluster=world.cluster, name=key.split("/")[1]).update(**fields)
        done_before = set(
            PodGroup.objects.filter(cluster=world.cluster, phase="Completed").values_list("pk", flat=True)
        )
        given = None
        if changes and before is not None:
            given = StatusChanges(before, [key for key in statuses if before.get(key) is not statuses[key]])
        before = statuses
        result = _result(podgroups=statuses, status_changes=given)
        with django_capture_on_commit_callbacks(execute=True):
            session = store.apply_decisions(world.cluster, result, t0 + timedelta(seconds=i))
        if given is not None and i in (1, 4, 8):  # nothing else logged: the computed statuses only
            assert compared[-1] == len(given.computed), (i, compared)
        rows = {
            f"ns-a/{name}": (phase, reason)
            for name, phase, reason in PodGroup.objects.filter(cluster=world.cluster).values_list(
                "name", "phase", "reason"
            )
        }
        for key, st in statuses.items():
            if rows[key][0] != "Completed":  # a Completed podgroup is never written over
                assert rows[key] == (st.phase, st.reason), (i, key)
        # the podgroups open when the session began, in their phases now (one it completed counts as Completed)
        were_open = PodGroup.objects.filter(cluster=world.cluster).exclude(pk__in=done_before)
        assert session.podgroups == dict(sorted(Counter(were_open.values_list("phase", flat=True)).items())), i


def test_quota_samples_per_tree_node_in_base_units(world: World) -> None:
    def values(**fields: Any) -> SimpleNamespace:
        return SimpleNamespace(**{k: rl(**v) for k, v in fields.items()})

    queue = values(request={"cpu": "6"}, allocated={"cpu": "4"}, deserved={"cpu": "3"}, borrowed={"cpu": "1"}, lent={})
    group = values(request={"cpu": "2"}, used={"cpu": "2"}, runtime={"cpu": "12"}, borrowed={}, lent={"cpu": "10"})
    result = _result(queue_values={"team-a": queue}, quota_values={"qa": group})
    now = timezone.now()
    store.apply_decisions(world.cluster, result, now)
    q = QuotaSample.objects.get(kind="queue")
    assert (q.name, q.time, q.request, q.allocated, q.deserved, q.borrowed, q.lent) == (
        "team-a",
        now,
        {"cpu": 6000},
        {"cpu": 4000},
        {"cpu": 3000},
        {"cpu": 1000},
        {},
    )
    g = QuotaSample.objects.get(kind="quota")
    assert (g.name, g.allocated, g.deserved, g.lent) == ("qa", {"cpu": 2000}, {"cpu": 12000}, {"cpu": 10000})


def test_a_node_is_sampled_when_its_values_change_and_at_least_every_interval(
    world: World, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """A steady cluster writes no sample per session for every tree node: only the nodes whose values changed since
    the last sample this process wrote, and each node at least every ``FAIRWAY_SAMPLE_EVERY_SECONDS`` (0: all)."""
    from scheduling.store import write

    settings.FAIRWAY = {**settings.FAIRWAY, "SAMPLE_EVERY_SECONDS": 60}
    write._LAST_SAMPLES.pop(world.cluster.pk, None)

    def queue(cpu: str) -> SimpleNamespace:
        return SimpleNamespace(request=rl(cpu=cpu), allocated=rl(), deserved=rl(cpu="1"), borrowed=rl(), lent=rl())

    def session(at: Any, a: str, b: str) -> list[str]:
        with django_capture_on_commit_callbacks(execute=True):
            store.apply_decisions(
                world.cluster, _result(queue_values={"a": queue(a), "b": queue(b)}, quota_values=None), at
            )
        return sorted(QuotaSample.objects.filter(cluster=world.cluster, time=at).values_list("name", flat=True))

    t0 = timezone.now()
    assert session(t0, "1", "1") == ["a", "b"]  # a process with no memory writes them all
    assert session(t0 + timedelta(seconds=1), "1", "1") == []  # nothing changed
    assert session(t0 + timedelta(seconds=2), "2", "1") == ["a"]  # only the node that changed
    assert session(t0 + timedelta(seconds=60), "2", "1") == ["b"]  # b's last sample is 60 s old
    settings.FAIRWAY = {**settings.FAIRWAY, "SAMPLE_EVERY_SECONDS": 0}
    assert session(t0 + timedelta(seconds=61), "2", "1") == ["a", "b"]


@pytest.mark.parametrize("seed", range(16))
def test_samples_made_from_their_kept_inputs_are_the_ones_made_afresh(
    seed: int, world: World, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """A tree node whose inputs equal those of its last sample (``QueueBook.sample_inputs``, a quota group's five
    amounts) gets that sample's values without making them again: over seeded sessions of random clusters whose
    results take effect and whose pods change, every row made so equals the row made with no memory at all."""
    from engine.session.carry import SessionCarry
    from engine.session.run import run_session
    from tests.unit.test_session_carry import World as RandomCluster

    settings.FAIRWAY = {**settings.FAIRWAY, "SAMPLE_EVERY_SECONDS": 3}
    cid = world.cluster.pk
    store_write._LAST_SAMPLES.pop(cid, None)
    cluster, carry = RandomCluster(seed), SessionCarry()
    t0 = timezone.now()
    made = reused = 0
    for step in range(25):
        result = run_session(cluster.snap, now=float(step), carry=carry)
        rows, sources = store_write._sample_rows(cid, result)
        memory = store_write._LAST_SAMPLES.pop(cid, None)
        fresh, _ = store_write._sample_rows(cid, result)
        if memory is not None:
            store_write._LAST_SAMPLES[cid] = memory
        assert rows == fresh, step
        made += len(sources)
        reused += len(rows) - len(sources)
        with django_capture_on_commit_callbacks(execute=True):
            store_write._changed_samples(cid, rows, t0 + timedelta(seconds=step), sources)
        if cluster.rng.random() < 0.5:
            cluster.apply(result, now=float(step))
        for _ in range(cluster.rng.randint(1, 3)):
            cluster.change()
    assert reused > 0 and made > 0  # both paths taken


def test_quota_samples_keep_any_name_and_every_amount(world: World) -> None:
    """The samples go in with one COPY: names and amounts come back as written, whatever their characters."""
    big = {"cpu": str(2**40), "memory": "3Ei", "example.com/weird": "7"}
    queue = SimpleNamespace(request=rl(**big), allocated=rl(), deserved=rl(cpu="1"), borrowed=rl(), lent=rl())
    names = ["plain", 'we\\ird\t"name"\nwith lines', "ünïcode-队列"]
    result = _result(queue_values=dict.fromkeys(names, queue), quota_values=None)
    now = timezone.now()
    store.apply_decisions(world.cluster, result, now)
    rows = QuotaSample.objects.filter(cluster=world.cluster).order_by("id")
    assert [(r.name, r.kind, r.time) for r in rows] == [(n, "queue", now) for n in names]
    assert all(r.request == {k: v for k, v in sorted(rl(**big).items())} for r in rows)
    assert all(r.deserved == {"cpu": 1000} and r.lent == {} for r in rows)


def test_apply_is_one_transaction(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: Any, **kwargs: Any) -> int:
        raise RuntimeError("disk full")

    monkeypatch.setattr(store_write, "_write_samples", boom)
    with pytest.raises(RuntimeError):
        store.apply_decisions(world.cluster, BIND_ALL, timezone.now())
    assert not SchedulingSession.objects.exists()
    assert set(Pod.objects.values_list("status", flat=True)) == {"Pending"}
    assert PodGroup.objects.get(pk=world.podgroups["ns-a/pg-a"].pk).phase == "Pending"


def test_run_scheduling_session_times_each_phase(world: World, fake_engine: Any) -> None:
    session = sessions.run_scheduling_session(world.cluster)
    assert session.status == "ok" and session.bound == 3 and session.pending_pods == 3
    assert set(session.timings) == {"load_ms", "engine_ms", "bindings_wait_ms", "write_ms"}
    assert min(session.timings.values()) >= 0
    assert session.duration_ms == pytest.approx(sum(session.timings.values()), abs=0.01)
    assert fake_engine.calls == [pytest.approx(session.started.timestamp())]
    assert sessions.run_scheduling_session(world.cluster).bound == 0


def test_a_failing_engine_is_recorded_and_writes_nothing(world: World, fake_engine: Any, monkeypatch: Any) -> None:
    """Even what it handed over before it failed, which the session's writer had written already (PostgreSQL)."""
    monkeypatch.setattr(store.BindingStream, "MIN_BATCH", 1)
    written = _count_binding_statements(monkeypatch)

    def broken(snapshot: Any, *, now: float, on_bindings: Any = None, **kwargs: Any) -> Any:
        if on_bindings is not None:
            on_bindings([Binding("ns-b/solo", "n1")])
            deadline = time.monotonic() + 10
            while not written and time.monotonic() < deadline:
                time.sleep(0.005)
            assert written == ["fairway-bindings"]
        raise ValueError("poison podgroup ns-a/pg-a")

    monkeypatch.setattr(fake_engine, "run_session", broken)
    session = sessions.run_scheduling_session(world.cluster)
    assert session.status == "failed" and "poison podgroup" in session.error
    assert set(Pod.objects.values_list("status", flat=True)) == {"Pending"}
    assert not [t for t in threading.enumerate() if t.name == "fairway-bindings"]


# -- bindings written while the engine runs (PostgreSQL) --------------------------------------------------------

needs_postgres = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="bindings are written while the engine runs on PostgreSQL only"
)


def _count_binding_statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of the thread of each by-key binding statement, as it completes."""
    names: list[str] = []
    real = store_bindings._bind_by_key

    def counted(prepared: Any) -> Any:
        applied = real(prepared)
        names.append(threading.current_thread().name)
        return applied

    monkeypatch.setattr(store_bindings, "_bind_by_key", counted)
    return names


def _pace_the_engine(monkeypatch: pytest.MonkeyPatch, written: list[str]) -> None:
    """The real engine, waiting after each handover of bindings until the writer has written it (``written``
    grew: ``_count_binding_statements``), so that a session makes one statement per committed job."""
    from engine.session import run as engine_run

    real = engine_run.run_session

    def paced(snapshot: Any, *, now: float, on_bindings: Any = None, **kwargs: Any) -> Any:
        def forward(batch: Any) -> None:
            before = len(written)
            on_bindings(batch)
            deadline = time.monotonic() + 10
            # a writer whose statement failed writes nothing more: the engine goes on at once
            while len(written) == before and "poisoned" not in written and time.monotonic() < deadline:
                time.sleep(0.002)

        return real(snapshot, now=now, on_bindings=forward if on_bindings else None, **kwargs)

    monkeypatch.setattr(engine_run, "run_session", paced)


def _more_pods(world: World, n: int) -> None:
    ns = Namespace.objects.get(name="ns-b")
    for i in range(n):
        Pod.objects.create(
            cluster=world.cluster, namespace=ns, name=f"p-{i}", request=rl(cpu="1"), quota_group=ns.quota_group
        )


def _pod_rows(world: World) -> list[tuple[str, str, str]]:
    return sorted(
        (f"{ns}/{name}", status, node or "")
        for ns, name, status, node in Pod.objects.filter(cluster=world.cluster).values_list(
            "namespace__name", "name", "status", "node__name"
        )
    )


@needs_postgres
def test_bindings_written_while_the_engine_runs_are_those_written_after_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same cluster twice: the session's bindings streamed a statement or two at a time on the writer's thread,
    then all written after the engine; the same rows, the same session record, every bound pod in the feed."""
    monkeypatch.setattr(store.BindingStream, "MIN_BATCH", 1)
    threads = _count_binding_statements(monkeypatch)
    _pace_the_engine(monkeypatch, threads)
    streamed = build_world("streamed", nodes=2)
    _more_pods(streamed, 7)
    first = sessions.run_scheduling_session(streamed.cluster)
    assert len(threads) >= 3 and set(threads) == {"fairway-bindings"}

    threads.clear()
    monkeypatch.setattr(store.BindingStream, "usable", staticmethod(lambda ids: False))
    after = build_world("after", nodes=2)
    _more_pods(after, 7)
    second = sessions.run_scheduling_session(after.cluster)
    assert threads == ["MainThread"]

    assert first.status == second.status == "ok"
    assert first.bound == second.bound == 10 and first.bindings == second.bindings
    assert _pod_rows(streamed) == _pod_rows(after)
    logged = set(
        RowChange.objects.filter(cluster_id=streamed.cluster.pk, kind=ChangeKind.POD).values_list("row_id", flat=True)
    )
    assert set(Pod.objects.filter(cluster=streamed.cluster, status="Bound").values_list("id", flat=True)) <= logged


@needs_postgres
def test_streamed_bindings_skip_a_node_deleted_since_the_read(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer asks only for the nodes each batch names (``_nodes_still_there``): a binding to a node deleted
    between the read and the write is not made, the others are, one batch at a time."""
    from django.db import transaction

    monkeypatch.setattr(store.BindingStream, "MIN_BATCH", 1)
    monkeypatch.setattr(store.BindingStream, "MAX_BATCH", 1)
    _, ids = store.read_cluster(world.cluster)
    world.nodes["n2"].delete()
    with transaction.atomic(), store.BindingStream(world.cluster, timezone.now(), ids) as stream:
        stream(BIND_ALL.bindings)
        applied = stream.finish()
    assert applied is not None
    assert sorted(map(tuple, applied)) == [("ns-a/a-0", "n1", False), ("ns-b/solo", "n3", True)]
    assert (world.pod("ns-a/a-1").status, world.pod("ns-a/a-1").node) == ("Pending", None)


@needs_postgres
def test_the_writer_takes_what_has_come_in_batches_then_the_rest_at_once(world: World) -> None:
    stream = store.BindingStream(world.cluster, timezone.now(), store.RowIds(pods={}, nodes={}))
    stream.MIN_BATCH, stream.MAX_BATCH = 2, 2
    b = [Binding(f"ns/p{i}", "n1") for i in range(6)]
    stream._queue.put(b[:1])
    stream._queue.put(b[1:4])
    batches = stream._batches()
    assert next(batches) == (b[:2], False)
    assert next(batches) == (b[2:4], False)  # enough left over: no waiting
    stream._queue.put(b[4:5])
    stream._queue.put(store_db.END)
    assert next(batches) == (b[4:5], True)
    assert next(batches, None) is None

    stream = store.BindingStream(world.cluster, timezone.now(), store.RowIds(pods={}, nodes={}))
    stream.MIN_BATCH = 2
    stream._queue.put(b[:2])
    batches = stream._batches()
    assert next(batches) == (b[:2], False)
    stream._queue.put(store_db.END)
    assert next(batches, None) is None  # no empty last statement


@needs_postgres
def test_a_failed_binding_statement_fails_the_session_and_writes_nothing(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL refuses the writer's second statement: the session is recorded as failed, its first statement is
    rolled back with the rest, and the next session writes on the same connection."""
    monkeypatch.setattr(store.BindingStream, "MIN_BATCH", 1)
    written = _count_binding_statements(monkeypatch)
    _pace_the_engine(monkeypatch, written)
    real = store_bindings._by_key
    calls: list[int] = []

    def poisoned(*args: Any) -> Any:
        prepared = real(*args)
        calls.append(1)
        if len(calls) == 2:
            written.append("poisoned")  # the engine goes on at once (this statement fails)
            prepared.params[2] = "{not-a-number}"  # the nodes' keys: invalid input for bigint
        return prepared

    monkeypatch.setattr(store_bindings, "_by_key", poisoned)
    _more_pods(world, 2)
    failed = sessions.run_scheduling_session(world.cluster)
    assert written[0] == "fairway-bindings" and len(calls) == 2
    assert failed.status == "failed" and "bigint" in failed.error
    assert set(Pod.objects.filter(cluster=world.cluster).values_list("status", flat=True)) == {"Pending"}
    monkeypatch.setattr(store_bindings, "_by_key", real)
    assert sessions.run_scheduling_session(world.cluster).bound == 5


def test_session_decisions_by_kind_and_namespace(world: World) -> None:
    store.apply_decisions(world.cluster, BIND_ALL, timezone.now())
    Pod.objects.filter(pk=world.pods["ns-a/a-1"].pk).update(status="Running")
    session = store.apply_decisions(
        world.cluster,
        _result(
            evictions=[Eviction("ns-a/a-1", "preempt", "Preempted", "priority 10 < 50", "ns-b/solo")],
            podgroups={"ns-a/pg-a": PodGroupStatus("ns-a/pg-a", "Unknown", "Unschedulable", "lost a member")},
        ),
        timezone.now(),
    )
    everything = store.session_decisions(session)
    assert [d["kind"] for d in everything] == ["evict", "podgroup"]
    assert everything[0]["preemptor"] == "ns-b/solo" and everything[1]["podgroup"] == "ns-a/pg-a"
    first = SchedulingSession.objects.defer("bindings").order_by("id").first()
    # the bindings in the order they took effect (the database's answer to the compare-and-swap: any order)
    assert sorted(d["pod"] for d in store.session_decisions(first, {"ns-a"}, "bind")) == ["ns-a/a-0", "ns-a/a-1"]
    assert store.session_decisions(first, {"ns-b"}, "bind") == []
    assert [d["pod"] for d in store.session_decisions(first, None, "pipeline")] == ["ns-b/solo"]


# -- compaction -----------------------------------------------------------------------------------------------


def test_compaction_keeps_an_hour_in_full_then_minutes_then_hours(world: World) -> None:
    now = timezone.now().replace(minute=30, second=0, microsecond=0)

    def samples(start: Any, count: int, step: int) -> None:
        QuotaSample.objects.bulk_create(
            QuotaSample(cluster=world.cluster, time=start + timedelta(seconds=i * step), kind=kind, name=name)
            for i in range(count)
            for kind, name in (("queue", "team-a"), ("quota", "qa"))
        )

    samples(now - timedelta(minutes=30), 180, 10)  # the last half hour, every 10 s: all kept
    samples(now - timedelta(hours=3), 60, 10)  # 10 minutes three hours ago: one per minute
    samples(now - timedelta(days=2, hours=1), 360, 10)  # an hour two days ago, across two clock hours
    other = build_world("c2", nodes=0)
    QuotaSample.objects.create(cluster=other.cluster, time=now - timedelta(days=3), kind="queue", name="team-a")
    QuotaSample.objects.create(
        cluster=other.cluster, time=now - timedelta(days=3, seconds=5), kind="queue", name="team-a"
    )
    counts = store.compact_records(world.cluster, now)
    recent = QuotaSample.objects.filter(cluster=world.cluster, time__gte=now - timedelta(hours=1))
    middle = QuotaSample.objects.filter(
        cluster=world.cluster, time__lt=now - timedelta(hours=1), time__gte=now - timedelta(days=1)
    )
    old = QuotaSample.objects.filter(cluster=world.cluster, time__lt=now - timedelta(days=1))
    assert recent.count() == 360
    assert middle.filter(kind="queue").count() == 10 and middle.filter(kind="quota").count() == 10
    assert old.filter(kind="queue").count() == 2 and old.count() == 4
    # the latest sample of each bucket is the one kept
    kept = middle.filter(kind="queue").order_by("time").first()
    assert kept.time.second == 50
    assert counts["samples_by_minute"] == 2 * 50 and counts["samples_by_hour"] == 2 * 358
    assert QuotaSample.objects.filter(cluster=other.cluster).count() == 2  # another cluster is left alone


def test_compaction_drops_samples_past_their_retention(world: World, settings: Any) -> None:
    settings.FAIRWAY = {**settings.FAIRWAY, "SAMPLE_RETENTION_DAYS": 30}
    now = timezone.now()
    for age in (timedelta(days=31), timedelta(days=29)):
        QuotaSample.objects.create(cluster=world.cluster, time=now - age, kind="queue", name="team-a")
    assert store.compact_records(world.cluster, now)["samples_expired"] == 1
    assert [s.time for s in QuotaSample.objects.filter(cluster=world.cluster)] == [now - timedelta(days=29)]


def test_compaction_drops_old_sessions(world: World) -> None:
    now = timezone.now()
    _old, _quiet, busy, recent = (
        SchedulingSession.objects.create(cluster=world.cluster, started=now - age, bound=b, status=st)
        for age, b, st in (
            (timedelta(days=8), 5, "ok"),
            (timedelta(hours=2), 0, "ok"),
            (timedelta(hours=2), 3, "ok"),
            (timedelta(minutes=5), 0, "skipped"),
        )
    )
    assert store.compact_records(world.cluster, now)["sessions"] == 2
    assert set(SchedulingSession.objects.values_list("pk", flat=True)) == {busy.pk, recent.pk}


def test_bindings_by_primary_key_from_the_read(world: World) -> None:
    snapshot, ids = store.read_cluster(world.cluster)
    assert set(ids.pods) == set(snapshot.tasks) and set(ids.nodes) == set(snapshot.nodes)
    assert ids.pods["ns-a/a-0"] == world.pods["ns-a/a-0"].pk
    # between the read and the write: a-1 is deleted and re-created under the same name, solo starts elsewhere
    old = world.pods["ns-a/a-1"]
    Pod.objects.filter(pk=old.pk).delete()
    Pod.objects.create(cluster=world.cluster, namespace=old.namespace, name="a-1", podgroup=old.podgroup)
    Pod.objects.filter(pk=world.pods["ns-b/solo"].pk).update(status="Running", node=world.nodes["n3"])
    session = store.apply_decisions(world.cluster, BIND_ALL, timezone.now(), ids=ids)
    assert session.bindings == [["ns-a/a-0", "n1", False]]
    assert world.pod("ns-a/a-1").status == "Pending"  # the new pod was never decided on
    assert (world.pod("ns-b/solo").status, world.pod("ns-b/solo").node.name) == ("Running", "n3")
    again = store.apply_decisions(world.cluster, BIND_ALL, timezone.now(), ids=ids)
    assert again.bound == 0


def test_bindings_by_primary_key_skip_a_node_deleted_since_the_read(world: World, writers: str) -> None:
    """The pod's node has no foreign key in the database (``Pod.node``): a binding to a node deleted between the
    read and the write is not made (the others are), and no pod is left naming the deleted node."""
    _, ids = store.read_cluster(world.cluster)
    gone = world.nodes["n2"].pk
    world.nodes["n2"].delete()
    session = store.apply_decisions(world.cluster, BIND_ALL, timezone.now(), ids=ids)
    assert sorted(map(tuple, session.bindings)) == [("ns-a/a-0", "n1", False), ("ns-b/solo", "n3", True)]
    assert (world.pod("ns-a/a-1").status, world.pod("ns-a/a-1").node) == ("Pending", None)
    assert not Pod.objects.filter(node_id=gone).exists()


def test_bindings_by_primary_key_take_no_node_of_another_cluster(world: World, writers: str) -> None:
    other = build_world("c2", nodes=1)
    _, ids = store.read_cluster(world.cluster)
    ids.nodes["n1"] = other.nodes["n1"].pk  # a key that is no node of this cluster
    session = store.apply_decisions(world.cluster, BIND_ALL, timezone.now(), ids=ids)
    assert sorted(b[0] for b in session.bindings) == ["ns-a/a-1", "ns-b/solo"]
    assert world.pod("ns-a/a-0").status == "Pending" and not other.nodes["n1"].pods.exists()


def test_deleting_a_node_unsets_the_node_of_its_pods(world: World) -> None:
    """Without a database constraint the ORM's ``on_delete=SET_NULL`` still runs, for a row and a queryset."""
    store.apply_decisions(world.cluster, BIND_ALL, timezone.now())
    world.nodes["n1"].delete()
    Node.objects.filter(pk=world.nodes["n3"].pk).delete()
    assert [(world.pod(u).status, world.pod(u).node) for u in ("ns-a/a-0", "ns-b/solo")] == [
        ("Bound", None),
        ("Pipelined", None),
    ]
    assert world.pod("ns-a/a-1").node.name == "n2"
    assert store.load_snapshot(world.cluster).tasks["ns-a/a-0"].node is None


@pytest.mark.parametrize("by_key", [True, False])
def test_bindings_are_logged_in_the_change_feed_and_only_they(world: World, writers: str, by_key: bool) -> None:
    """Every pod a binding changed is in the change feed (PostgreSQL's trigger takes the binding statement's word
    that all its rows changed, ``scheduling.feed.triggers``); the word does not outlive the statement: a later update that
    changes no logged column logs nothing."""
    cid = world.cluster.pk
    ids = store.read_cluster(world.cluster)[1] if by_key else None
    (before,) = Revision.objects.values_of(Revision.cluster_key(cid))
    session = store.apply_decisions(world.cluster, BIND_ALL, timezone.now(), ids=ids)
    assert session.bound + session.pipelined == 3
    logged = RowChange.objects.filter(cluster_id=cid, kind=ChangeKind.POD, rev__gt=before)
    assert set(logged.values_list("row_id", flat=True)) == {p.pk for p in world.pods.values()}
    (after,) = Revision.objects.values_of(Revision.cluster_key(cid))
    Pod.objects.filter(cluster=world.cluster).update(message="noise")
    assert not RowChange.objects.filter(cluster_id=cid, rev__gt=after).exists()


def test_bindings_by_primary_key_are_reported_in_the_engines_order(world: World, writers: str) -> None:
    """PostgreSQL's writer updates the rows in primary key order; the session row lists them as the engine
    decided them."""
    _, ids = store.read_cluster(world.cluster)
    backwards = sorted(BIND_ALL.bindings, key=lambda b: -ids.pods[b.task])
    session = store.apply_decisions(world.cluster, _result(bindings=backwards), timezone.now(), ids=ids)
    assert session.bindings == [[b.task, b.node, b.pipelined] for b in backwards]
    assert [world.pod(b.task).node.name for b in backwards] == [b.node for b in backwards]


# -- array literals (the bulk statements' parameters) -------------------------------------------------------------

AWKWARD = ["plain", "", "NULL", 'a "quoted" word', 'back\\slash \\" both', "comma, {braces}", "é ünïcode ✓", " pad "]


def test_array_literals_round_trip_through_postgresql() -> None:
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("array literals are PostgreSQL's")
    moment = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT %s::text[], %s::bigint[], %s::timestamptz[]",
            [
                store_db.pg_array([*AWKWARD, None]),
                store_db.pg_int_array([0, -5, 2**62]),
                store_db.pg_array([moment, None]),
            ],
        )
        texts, ints, times = cursor.fetchone()
    assert texts == [*AWKWARD, None]
    assert ints == [0, -5, 2**62]
    assert times == [moment, None]


def test_reason_history_and_conditions_keep_awkward_text(world: World, writers: str) -> None:
    key = "ns-a/pg-a"
    pk = world.podgroups[key].pk
    message = 'queue "team-a": insufficient cpu\\ {requested 4}, available 2, NULL'
    blocker = Blocker("queue", 'team "a"', "cpu", 4000, 2000, "realCapability")
    result = _result(podgroups={key: PodGroupStatus(key, "Pending", "NotEnoughResources", message, blocker)})
    session = store.apply_decisions(world.cluster, result, timezone.now())
    row = PodGroupReason.objects.get(podgroup_id=pk)
    assert (row.session_id, row.phase, row.reason, row.message) == (
        session.pk,
        "Pending",
        "NotEnoughResources",
        message,
    )
    assert row.blocker == blocker.to_dict()
    pg = PodGroup.objects.get(pk=pk)
    assert (pg.message, pg.blocker, pg.conditions[0]["message"]) == (message, blocker.to_dict(), message)


def test_bindings_by_primary_key_take_only_pods_still_pending(world: World) -> None:
    """The by-key writer SQLite uses (``executemany`` of one compare-and-swap) binds the Pending pods of the
    snapshot and reports exactly those; a pod that changed since, or a node or pod the keys do not know, is left."""
    ids = store.RowIds(
        pods={uid: pod.pk for uid, pod in world.pods.items()},
        nodes=dict(Node.objects.filter(cluster=world.cluster).values_list("name", "id")),
    )
    Pod.objects.filter(pk=world.pods["ns-a/a-1"].pk).update(status="Failed")
    bindings = [
        Binding("ns-a/a-0", "n1"),
        Binding("ns-a/a-1", "n2"),
        Binding("ns-b/solo", "n3", pipelined=True),
        Binding("ns-x/nobody", "n1"),
        Binding("ns-a/a-0", "ghost-node"),
    ]
    now = timezone.now()
    applied = store_bindings._bind_generic_by_id(world.cluster, bindings, now, ids)
    assert applied == [["ns-a/a-0", "n1", False], ["ns-b/solo", "n3", True]]
    a0, a1, solo = (world.pod(u) for u in ("ns-a/a-0", "ns-a/a-1", "ns-b/solo"))
    assert (a0.status, a0.node.name, a0.updated) == ("Bound", "n1", now)
    assert (solo.status, solo.node.name) == ("Pipelined", "n3")
    assert (a1.status, a1.node) == ("Failed", None)
    assert store_bindings._bind_generic_by_id(world.cluster, bindings[:1], now, ids) == []  # replayed: nothing twice


# -- rows fetched while the caller works (PostgreSQL: a server-side cursor on a thread) ---------------------------


def test_rows_fetched_meanwhile_are_the_querys_rows_in_chunks(world: World) -> None:
    _more_pods(world, 11)
    qs = Pod.objects.filter(cluster=world.cluster).order_by("id").values_list(*store.POD_COLUMNS)
    with store.fetched_meanwhile(qs, chunk=4) as chunks:
        got = list(chunks)
    assert [row for chunk in got for row in chunk] == store_db.fetch_all(qs)
    if connection.vendor == "postgresql":
        assert [len(c) for c in got] == [4, 4, 4, 2]
    assert not [t for t in threading.enumerate() if t.name == "fairway-read"]


@needs_postgres
def test_leaving_early_or_a_failed_query_leaves_the_connection_usable(world: World) -> None:
    _more_pods(world, 11)
    qs = Pod.objects.filter(cluster=world.cluster).order_by("id").values_list("id")
    with pytest.raises(RuntimeError, match="caller"), store.fetched_meanwhile(qs, chunk=2) as chunks:
        next(chunks)
        raise RuntimeError("the caller stops at its first chunk")
    assert not [t for t in threading.enumerate() if t.name == "fairway-read"]
    assert Pod.objects.filter(cluster=world.cluster).count() == 14

    broken = Pod.objects.filter(cluster=world.cluster).extra(where=["1 / (id - id) = 1"]).values_list("id")
    with pytest.raises(Exception, match="division by zero"), store.fetched_meanwhile(broken) as chunks:
        list(chunks)


def test_without_server_side_cursors_the_rows_come_in_one_fetch(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(connection.settings_dict, "DISABLE_SERVER_SIDE_CURSORS", True)
    qs = Pod.objects.filter(cluster=world.cluster).order_by("id").values_list("id")
    with store.fetched_meanwhile(qs, chunk=1) as chunks:
        assert list(chunks) == [store_db.fetch_all(qs)]


def test_a_gang_released_whole_is_counted_on_its_podgroup(world: World) -> None:
    # issue 26 item 2: the reason and the GPU-seconds held idle stay on the podgroup after its status moves on
    released = PodGroupStatus(
        "ns-a/pg-a", "Pending", "GangReleased", "released whole and waiting again: 72 GPU-seconds held idle",
        Blocker("gang", "ns-a/pg-a", limit="minMember"), 0, 0, None, 72,
    )  # fmt: skip
    now = timezone.now()
    store.apply_decisions(world.cluster, _result(podgroups={"ns-a/pg-a": released}), now)
    store.apply_decisions(world.cluster, _result(podgroups={"ns-a/pg-a": released}), now + timedelta(seconds=9))
    pg = PodGroup.objects.get(pk=world.podgroups["ns-a/pg-a"].pk)
    assert (pg.phase, pg.reason, pg.gang_releases, pg.idle_gpu_seconds) == ("Pending", "GangReleased", 2, 144)
    assert pg.released_at == now + timedelta(seconds=9) and "72 GPU-seconds" in pg.release_reason
    store.apply_decisions(world.cluster, _result(podgroups={"ns-a/pg-a": PodGroupStatus("ns-a/pg-a", "Running")}), now)
    assert PodGroup.objects.get(pk=pg.pk).idle_gpu_seconds == 144  # kept once it runs again
