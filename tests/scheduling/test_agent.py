"""scheduling/agent.py: the node-agent protocol, the simulated agent and the workload generator."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import time_machine
from django.core.management import call_command
from django.utils import timezone

from engine.replay.workload import submitter
from scheduling import agent, sessions, store, tasks
from scheduling.models import Cluster, Node, Pod, PodGroup
from tests.scheduling.conftest import World, rl

pytestmark = pytest.mark.django_db


def _bind_all(world: World) -> None:
    sessions.run_scheduling_session(world.cluster)


@pytest.mark.parametrize(
    ("before", "report", "after", "error"),
    [
        ("Bound", "Running", "Running", None),
        ("Bound", "Failed", "Failed", None),
        ("Bound", "Succeeded", "Succeeded", None),
        ("Running", "Succeeded", "Succeeded", None),
        ("Running", "Failed", "Failed", None),
        ("Running", "Running", "Running", None),  # a retried report
        ("Releasing", "Succeeded", "Succeeded", None),
        ("Succeeded", "Succeeded", "Succeeded", None),
        ("Pending", "Running", None, "not bound to a node yet"),
        ("Pipelined", "Running", None, "not bound to a node yet"),
        ("Succeeded", "Running", None, "already finished"),
        ("Failed", "Succeeded", None, "already finished"),
        ("Running", "Bound", None, "reports Running, Succeeded or Failed"),
        ("Releasing", "Running", None, "being evicted"),
    ],
)
def test_pod_status_transitions(world: World, before: str, report: str, after: str | None, error: str | None) -> None:
    pod = world.pods["ns-a/a-0"]
    Pod.objects.filter(pk=pod.pk).update(status=before, node=world.nodes["n1"])
    pod.refresh_from_db()
    now = timezone.now()
    if error:
        with pytest.raises(agent.AgentError, match=error):
            agent.report_pod_status(pod, report, now)
        assert Pod.objects.get(pk=pod.pk).status == before
        return
    pod = agent.report_pod_status(pod, report, now)
    assert pod.status == after
    if before != after and after in ("Succeeded", "Failed"):
        assert pod.finished == now and pod.started is not None
    if before == "Bound" and after == "Running":
        assert pod.started == now


def test_report_from_the_wrong_node_is_refused(world: World) -> None:
    _bind_all(world)
    pod = world.pod("ns-a/a-0")
    with pytest.raises(agent.AgentError) as info:
        agent.report_pod_status(pod, "Running", timezone.now(), node="elsewhere")
    assert info.value.field == "node" and pod.node.name in info.value.message
    assert agent.report_pod_status(pod, "Running", timezone.now(), node=pod.node.name).status == "Running"


def test_gone_turns_an_evicted_pod_failed_evicted(world: World) -> None:
    pod = world.pods["ns-a/a-0"]
    with pytest.raises(agent.AgentError, match="not being evicted"):
        agent.confirm_gone(pod, timezone.now())
    Pod.objects.filter(pk=pod.pk).update(status="Releasing", node=world.nodes["n1"])
    pod.refresh_from_db()
    now = timezone.now()
    pod = agent.confirm_gone(pod, now)
    assert (pod.status, pod.reason, pod.finished, pod.node.name) == ("Failed", "Evicted", now, "n1")
    assert agent.confirm_gone(pod, now + timedelta(seconds=5)).finished == now  # retried: no change


def test_heartbeats_and_the_timeout() -> None:
    from tests.scheduling.conftest import build_world

    world = build_world()
    start = timezone.now()

    def checks(seconds: int) -> list[str]:
        """The periodic check, every 5 s for ``seconds``; the nodes it turned NotReady."""
        out: list[str] = []
        for _ in range(seconds // 5):
            clock.shift(timedelta(seconds=5))
            out += agent.mark_stale_nodes(world.cluster, timezone.now())
        return out

    with time_machine.travel(start, tick=False) as clock:
        assert agent.mark_stale_nodes(world.cluster, timezone.now()) == []  # the check's first run
        n1 = agent.heartbeat(world.nodes["n1"], timezone.now(), labels={"zone": "b"}, allocatable=rl(cpu="16"))
        assert n1.labels == {"zone": "b"} and n1.allocatable["cpu"] == 16000 and n1.ready
        agent.heartbeat(world.nodes["n2"], timezone.now())
        assert checks(40) == []  # the first run forgives silence for one timeout (40 s)
        agent.heartbeat(world.nodes["n2"], timezone.now())
        clock.shift(timedelta(seconds=1))  # n1 silent for 41 s, n2 for 1 s, n3 never heartbeated
        assert agent.mark_stale_nodes(world.cluster, timezone.now()) == ["n1"]
        assert Node.objects.get(cluster=world.cluster, name="n1").not_ready_since == timezone.now()
        assert tasks.check_nodes(world.cluster.pk) == "ran"
        assert dict(Node.objects.filter(cluster=world.cluster).values_list("name", "ready")) == {
            "n1": False,
            "n2": True,
            "n3": True,
        }
        assert store.load_snapshot(world.cluster).total_allocatable["cpu"] == 16000  # n1's capacity left the total
        Cluster.objects.filter(pk=world.cluster.pk).update(node_heartbeat_timeout=5)
        world.cluster.refresh_from_db()
        clock.shift(timedelta(seconds=5))
        assert agent.mark_stale_nodes(world.cluster, timezone.now()) == ["n2"]
        agent.heartbeat(Node.objects.get(cluster=world.cluster, name="n1"), timezone.now())
        n1 = Node.objects.get(cluster=world.cluster, name="n1")
        assert n1.ready and n1.not_ready_since is None  # back


def _play_down(world: World, clock: Any, name: str, *, rounds: int, seconds: int) -> list[str]:
    """The simulation plays node ``name`` down; then ``rounds`` times, ``seconds`` later, an agent tick and the
    check: the nodes the check turned NotReady."""
    Node.objects.filter(cluster=world.cluster, name=name).update(labels={agent.SIMULATE_DOWN_LABEL: "true"})
    stale: list[str] = []
    for _ in range(rounds):
        clock.shift(timedelta(seconds=seconds))
        agent.agent_tick(world.cluster, timezone.now())
        stale += agent.mark_stale_nodes(world.cluster, timezone.now())
    return stale


def test_the_check_does_not_condemn_nodes_for_its_own_silence() -> None:
    """A broker outage stops both the simulated agent's heartbeats and the check: when the check resumes, missed
    heartbeats are forgiven for one timeout, and the agent's next beats bring every node back."""
    from tests.scheduling.conftest import build_world

    world = build_world()
    Cluster.objects.filter(pk=world.cluster.pk).update(simulated=True)
    world.cluster.refresh_from_db()
    start = timezone.now()
    with time_machine.travel(start, tick=False) as clock:
        for _ in range(3):
            agent.agent_tick(world.cluster, timezone.now())
            assert agent.mark_stale_nodes(world.cluster, timezone.now()) == []
            clock.shift(timedelta(seconds=5))
        clock.shift(timedelta(seconds=60))  # nothing ran for a minute
        assert agent.mark_stale_nodes(world.cluster, timezone.now()) == []  # not the nodes' fault
        world.cluster.refresh_from_db()
        assert world.cluster.nodes_grace_from == timezone.now()
        agent.agent_tick(world.cluster, timezone.now())
        assert set(Node.objects.filter(cluster=world.cluster).values_list("ready", flat=True)) == {True}
        # a node really silent after the grace is condemned
        assert _play_down(world, clock, "n2", rounds=10, seconds=5) == ["n2"]


def test_the_checks_gap_is_a_setting(settings: Any) -> None:
    """FAIRWAY_NODE_CHECK_GAP_SECONDS: a previous check older than it (or than half the timeout) starts a grace."""
    from tests.scheduling.conftest import build_world

    world = build_world()
    Cluster.objects.filter(pk=world.cluster.pk).update(node_heartbeat_timeout=6)
    world.cluster.refresh_from_db()
    start = timezone.now()
    with time_machine.travel(start, tick=False) as clock:
        agent.mark_stale_nodes(world.cluster, timezone.now())  # the first check starts a grace
        clock.shift(timedelta(seconds=8))
        agent.mark_stale_nodes(world.cluster, timezone.now())  # 8 s: within the default 15 s gap
        world.cluster.refresh_from_db()
        assert world.cluster.nodes_grace_from == start
        settings.FAIRWAY = {**settings.FAIRWAY, "NODE_CHECK_GAP_SECONDS": 4.0}
        clock.shift(timedelta(seconds=5))
        agent.mark_stale_nodes(world.cluster, timezone.now())  # 5 s: a gap now (above 4 s and half of 6 s)
        world.cluster.refresh_from_db()
        assert world.cluster.nodes_grace_from == timezone.now()
        clock.shift(timedelta(seconds=3))
        agent.mark_stale_nodes(world.cluster, timezone.now())  # 3 s: half the timeout, not a gap
        world.cluster.refresh_from_db()
        assert world.cluster.nodes_grace_from == start + timedelta(seconds=13)


def test_the_checks_gap_must_be_above_zero() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(FAIRWAY_NODE_CHECK_GAP_SECONDS="0", DJANGO_SETTINGS_MODULE="controlplane.settings")
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "FAIRWAY_NODE_CHECK_GAP_SECONDS=0.0: expected a number of seconds above 0" in done.stderr


def test_a_simulated_agent_brings_notready_nodes_back() -> None:
    from tests.scheduling.conftest import build_world

    world = build_world()
    Node.objects.filter(cluster=world.cluster).update(ready=False, not_ready_since=timezone.now())
    counts = agent.agent_tick(world.cluster, timezone.now())
    assert counts["heartbeats"] == 3
    assert set(Node.objects.filter(cluster=world.cluster).values_list("ready", "not_ready_since")) == {(True, None)}


def test_simulated_agent_runs_pods_to_completion(world: World) -> None:
    _bind_all(world)
    start = timezone.now()
    with time_machine.travel(start, tick=False) as clock:
        counts = agent.agent_tick(world.cluster, timezone.now())
        assert counts["started"] == 3 and counts["heartbeats"] == 3
        assert set(Pod.objects.values_list("status", flat=True)) == {"Running"}
        clock.shift(timedelta(seconds=59))
        assert agent.agent_tick(world.cluster, timezone.now())["finished"] == 0
        clock.shift(timedelta(seconds=1))  # a-0 and a-1 last 60 s; solo has no duration and runs on
        counts = agent.agent_tick(world.cluster, timezone.now())
        assert counts["finished"] == 2 and counts["completed"] == 1
        assert PodGroup.objects.get(pk=world.podgroups["ns-a/pg-a"].pk).phase == "Completed"
        assert world.pod("ns-b/solo").status == "Running"
        Pod.objects.filter(pk=world.pods["ns-b/solo"].pk).update(status="Releasing")
        assert agent.agent_tick(world.cluster, timezone.now())["gone"] == 1
        assert (world.pod("ns-b/solo").status, world.pod("ns-b/solo").reason) == ("Failed", "Evicted")
        # Completed podgroups are collected after their TTL
        clock.shift(timedelta(seconds=301))
        assert agent.collect_garbage(world.cluster, timezone.now(), 300) == 1
        assert not PodGroup.objects.filter(pk=world.podgroups["ns-a/pg-a"].pk).exists()
        assert not Pod.objects.filter(cluster=world.cluster).exists()


def test_a_node_with_its_plug_pulled_neither_starts_nor_finishes_its_pods(world: World) -> None:
    """The agent plays every node but those labelled down: their Bound pods stay Bound, their Running pods run on
    past their duration, while the other nodes' pods start and finish."""
    _bind_all(world)
    down = Pod.objects.filter(cluster=world.cluster, name="a-0").values_list("node__name", flat=True).get()
    Node.objects.filter(cluster=world.cluster, name=down).update(labels={agent.SIMULATE_DOWN_LABEL: "true"})
    on_down = set(Pod.objects.filter(node__name=down).values_list("name", flat=True))
    elsewhere = set(Pod.objects.filter(node__isnull=False).exclude(node__name=down).values_list("name", flat=True))
    start = timezone.now()
    with time_machine.travel(start, tick=False) as clock:
        counts = agent.agent_tick(world.cluster, timezone.now())
        assert counts["started"] == len(elsewhere)
        assert set(Pod.objects.filter(name__in=on_down).values_list("status", flat=True)) == {"Bound"}
        Pod.objects.filter(name__in=on_down).update(status="Running", started=start)
        clock.shift(timedelta(seconds=3600))
        agent.agent_tick(world.cluster, timezone.now())
        assert set(Pod.objects.filter(name__in=on_down).values_list("status", flat=True)) == {"Running"}
        finished = Pod.objects.filter(name__in=elsewhere, duration_seconds__isnull=False)
        assert finished.exists() and set(finished.values_list("status", flat=True)) == {"Succeeded"}


def test_workload_generator_is_seeded_and_follows_the_rules() -> None:
    call_command("load_demo", stdout=StringIO())
    cluster = Cluster.objects.get(name="default")
    # a fixed moment: the generator's randomness is seeded by the seed, the cluster and the second, and its busy
    # waves follow the clock, so a test started at another second drew other jobs (and, rarely, fewer queues)
    start = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)
    knobs = agent.WorkloadSettings(jobs_per_tick=1.0, max_pending_pods=10_000)

    def run(seed: int) -> list[tuple[str, str, int]]:
        before = set(PodGroup.objects.values_list("pk", flat=True))
        submitted = 0
        for k in range(12):
            submitted += agent.generate_workload(cluster, start + timedelta(seconds=2 * k), seed=seed, settings=knobs)[
                "submitted"
            ]
        new = PodGroup.objects.exclude(pk__in=before).order_by("name")
        out = [(pg.queue.name, pg.namespace.name, pg.min_member) for pg in new]
        assert len(out) == submitted
        new.delete()
        return out

    first, again, other = run(1), run(1), run(2)
    assert first == again and first != other and len(first) > 5
    leaves = {"ml-research", "nlp", "vision", "platform", "data-eng", "search", "analytics", "batch-etl"}
    assert {q for q, _, _ in first} <= leaves and len({q for q, _, _ in first}) >= 4
    # pods match their gang and their namespace's quota group; GPU jobs tolerate the GPU taint
    for k in range(8):
        agent.generate_workload(cluster, start + timedelta(seconds=2 * k), seed=4, settings=knobs)
    for pg in PodGroup.objects.filter(name__startswith="job-").prefetch_related("pods"):
        pods = list(pg.pods.all())
        assert len(pods) == pg.min_member
        assert all(p.quota_group_id == pg.namespace.quota_group_id for p in pods)
        for p in pods:
            assert ("nvidia.com/gpu" in p.request) == bool(p.tolerations)
        assert pg.user == submitter(pg.queue.name, pg.name)  # one of its team's people, as offline


def test_the_generator_writes_a_calls_jobs_together_and_refuses_a_name_already_taken() -> None:
    """One call's beats are written at its end, each podgroup with its pods; the same draw again (the same seed,
    cluster and seconds: a beat run twice) finds its names taken and submits nothing."""
    call_command("load_demo", stdout=StringIO())
    cluster = Cluster.objects.get(name="default")
    knobs = agent.WorkloadSettings(jobs_per_tick=1.0, max_pending_pods=10_000)
    at = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)
    first = agent.generate_workload(cluster, at, seed=3, settings=knobs, ticks=4)
    new = PodGroup.objects.filter(cluster=cluster, name__startswith="job-")
    assert first["submitted"] == new.count() > 1 and first["refused"] == 0
    assert first["pods"] == Pod.objects.filter(podgroup__in=new).count() == sum(pg.min_member for pg in new)
    again = agent.generate_workload(cluster, at, seed=3, settings=knobs, ticks=4)
    assert (again["submitted"], again["refused"]) == (0, first["submitted"])
    assert new.count() == first["submitted"]


def test_workload_generator_respects_the_backlog_cap_and_namespace_quota() -> None:
    from quotas.models import Namespace

    call_command("load_demo", stdout=StringIO())
    cluster = Cluster.objects.get(name="default")
    capped = agent.WorkloadSettings(jobs_per_tick=1.0, max_pending_pods=1)
    # a fixed moment at which batch-etl's team is at the top of its busy wave (the generator is seeded by the
    # second, so the test is deterministic; reading the wall clock made it depend on the time of day)
    base = datetime(2026, 1, 1, tzinfo=UTC)
    start = next(
        base + timedelta(seconds=k)
        for k in range(int(capped.wave_seconds))
        if agent._busy("batch-etl", (base + timedelta(seconds=k)).timestamp(), capped.wave_seconds) > 0.99
    )
    demo_jobs = set(PodGroup.objects.values_list("pk", flat=True))
    for k in range(6):
        agent.generate_workload(cluster, start + timedelta(seconds=k), seed=1, settings=capped)
    # every demo team but batch-etl already has a job waiting: only batch-etl gets one, and only one
    assert list(PodGroup.objects.exclude(pk__in=demo_jobs).values_list("queue__name", flat=True)) == ["batch-etl"]
    Namespace.objects.update(hard=rl(cpu="500m"))  # below any job: every new job is refused
    eager = agent.WorkloadSettings(jobs_per_tick=1.0, max_pending_pods=10_000)
    counts = [
        agent.generate_workload(cluster, start + timedelta(seconds=10 + k), seed=1, settings=eager) for k in range(4)
    ]
    assert sum(c["submitted"] for c in counts) == 0 and sum(c["refused"] for c in counts) > 0


def test_the_generator_counts_each_queues_pending_pods_and_what_they_ask_in_the_database() -> None:
    call_command("load_demo", stdout=StringIO())
    cluster = Cluster.objects.get(name="default")
    pending = Pod.objects.filter(cluster=cluster, status="Pending").select_related("podgroup__queue")
    expected_waiting: dict[str, int] = {}
    expected: dict[str, dict[str, int]] = {}
    for pod in pending:
        queue = pod.podgroup.queue.name  # type: ignore[union-attr]
        expected_waiting[queue] = expected_waiting.get(queue, 0) + 1
        sums = expected.setdefault(queue, {"cpu": 0, "nvidia.com/gpu": 0})
        for r in sums:
            sums[r] += pod.request.get(r, 0)
    assert any(s["nvidia.com/gpu"] for s in expected.values()) and any(s["cpu"] for s in expected.values())
    waiting, backlog = agent._pending_by_queue(cluster, [*sorted(expected), "no-such-queue"])
    assert (waiting, backlog) == (expected_waiting, expected)


def test_demo_runs_live_sessions_agent_and_workload(monkeypatch: Any) -> None:
    """A few simulated seconds of ``make run``: sessions place, the agent runs and finishes, jobs keep coming."""
    call_command("load_demo", stdout=StringIO())
    call_command("ensure_schedules", "--simulated", "default", stdout=StringIO())
    cluster = Cluster.objects.get(name="default")
    start = timezone.now()
    with time_machine.travel(start, tick=False) as clock:
        for _ in range(20):
            assert tasks.generate_workload(cluster.pk) == "ran"
            assert tasks.run_session(cluster.pk) == "ran"
            assert tasks.agent_tick(cluster.pk) == "ran"
            assert tasks.recycle(cluster.pk) in ("ran",)
            clock.shift(timedelta(seconds=10))
    statuses = set(Pod.objects.filter(cluster=cluster).values_list("status", flat=True))
    assert {"Running", "Succeeded"} <= statuses
    for node in Node.objects.filter(cluster=cluster):
        used = sum(
            p.request.get("cpu", 0) for p in Pod.objects.filter(node=node, status__in=("Bound", "Running", "Releasing"))
        )
        assert used <= node.allocatable["cpu"]


def test_an_evicted_gang_member_is_replaced_and_its_gang_queues_again(world: World) -> None:
    """The simulated job controller: an evicted pod of a podgroup at work becomes Failed/Evicted and a Pending
    replacement (same request and priority) joins the podgroup; a second eviction gets the next attempt number."""
    _bind_all(world)
    agent.agent_tick(world.cluster, timezone.now())
    a0 = world.pods["ns-a/a-0"]
    Pod.objects.filter(pk=a0.pk).update(status="Releasing")
    counts = agent.agent_tick(world.cluster, timezone.now())
    assert counts["gone"] == 1 and counts["replaced"] == 1
    assert (world.pod("ns-a/a-0").status, world.pod("ns-a/a-0").reason) == ("Failed", "Evicted")
    again = Pod.objects.get(cluster=world.cluster, name="a-0-r1")
    assert again.status == "Pending" and again.node is None
    assert (again.podgroup_id, again.request, again.priority) == (a0.podgroup_id, a0.request, a0.priority)
    assert PodGroup.objects.get(pk=a0.podgroup_id).phase != "Completed"
    Pod.objects.filter(pk=again.pk).update(status="Releasing")
    assert agent.agent_tick(world.cluster, timezone.now())["replaced"] == 1
    assert Pod.objects.filter(cluster=world.cluster, name="a-0-r2", status="Pending").exists()


def test_a_podgroup_completes_when_every_pod_of_it_has_finished(world: World) -> None:
    """Completed once it has pods and all of them finished (Succeeded or Failed); not with one live pod, not
    without pods; an already Completed one is left as it is."""
    pg = world.podgroups["ns-a/pg-a"]
    empty = PodGroup.objects.create(
        cluster=world.cluster, namespace=pg.namespace, name="empty", queue=pg.queue, min_member=1
    )
    now = timezone.now()
    Pod.objects.filter(name="a-0").update(status="Succeeded")
    assert agent.complete_finished_podgroups(world.cluster, now) == 0
    Pod.objects.filter(name="a-1").update(status="Failed")
    assert agent.complete_finished_podgroups(world.cluster, now) == 1
    assert PodGroup.objects.get(pk=pg.pk).phase == "Completed"
    assert PodGroup.objects.get(pk=empty.pk).phase != "Completed"
    assert agent.complete_finished_podgroups(world.cluster, now) == 0


def test_a_late_simulated_agent_condemns_no_node() -> None:
    """On a simulated cluster the heartbeats are the agent's own: when its ticks are late (its worker busy on a
    loaded machine) while the check runs on time, no node turns NotReady; a node the simulation plays down falls
    behind the others' beats and does. A real cluster's nodes are judged against the clock."""
    from tests.scheduling.conftest import build_world

    world = build_world()
    Cluster.objects.filter(pk=world.cluster.pk).update(simulated=True, node_heartbeat_timeout=6)
    world.cluster.refresh_from_db()
    start = timezone.now()
    with time_machine.travel(start, tick=False) as clock:
        agent.agent_tick(world.cluster, timezone.now())
        for _ in range(3):  # the check every 5 s, the agent's next tick only 10 s later
            clock.shift(timedelta(seconds=5))
            assert agent.mark_stale_nodes(world.cluster, timezone.now()) == []
        agent.agent_tick(world.cluster, timezone.now())
        assert _play_down(world, clock, "n2", rounds=4, seconds=4) == ["n2"]
        Cluster.objects.filter(pk=world.cluster.pk).update(simulated=False)
        world.cluster.refresh_from_db()
        clock.shift(timedelta(seconds=4))
        assert agent.mark_stale_nodes(world.cluster, timezone.now()) == []  # a beat 4 s old: within the timeout
        clock.shift(timedelta(seconds=3))
        assert agent.mark_stale_nodes(world.cluster, timezone.now()) == ["n1", "n3"]  # real nodes: the clock
