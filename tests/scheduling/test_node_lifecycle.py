"""Dead nodes release their pods (issue 8): NotReady beyond the pod eviction timeout -> the pods are lost
(Failed, NodeLost, an eviction row each), their usage leaves the queue and the quota group, a simulated cluster's
gangs get replacements, nothing is evicted while most of the cluster is NotReady, and the returning node's agent
learns which pods to stop."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.utils import timezone

from scheduling import agent, sessions, store, tasks
from scheduling.models import Cluster, Eviction, Node, Pod, PodGroup
from tests.scheduling.conftest import World, build_world

pytestmark = pytest.mark.django_db


def _running_on(world: World, node: str) -> list[str]:
    """Binds the world's pods, starts them, and returns the uids of those the session put on ``node``."""
    sessions.run_scheduling_session(world.cluster)
    Pod.objects.filter(cluster=world.cluster, status="Bound").update(status="Running", started=timezone.now())
    return sorted(
        f"{ns}/{name}"
        for ns, name in Pod.objects.filter(cluster=world.cluster, node__name=node).values_list(
            "namespace__name", "name"
        )
    )


def _down(world: World, name: str, since: Any) -> None:
    Node.objects.filter(cluster=world.cluster, name=name).update(ready=False, not_ready_since=since)


def test_pods_of_a_node_notready_beyond_the_timeout_are_lost(world: World) -> None:
    on_n1 = _running_on(world, "n1")
    assert on_n1, "the session placed something on n1"
    start = timezone.now()
    with time_machine.travel(start, tick=False) as clock:
        _down(world, "n1", timezone.now())
        clock.shift(timedelta(seconds=299))
        assert agent.evict_lost_nodes(world.cluster, timezone.now())["lost"] == 0  # not yet: 299 s < 300 s
        clock.shift(timedelta(seconds=2))
        counts = agent.evict_lost_nodes(world.cluster, timezone.now())
        assert counts == {"lost": len(on_n1), "replaced": 0, "nodes": 1}  # not simulated: no replacement
        for uid in on_n1:
            pod = world.pod(uid)
            assert (pod.status, pod.reason) == ("Failed", "NodeLost")
            assert "NotReady for 5 min 1 s (pod eviction timeout 5 min)" in pod.message
        rows = Eviction.objects.filter(cluster=world.cluster, action="node-lost")
        assert sorted(rows.values_list("pod_uid", flat=True)) == on_n1
        assert set(rows.values_list("node", flat=True)) == {"n1"}
        assert agent.evict_lost_nodes(world.cluster, timezone.now())["lost"] == 0  # once only
        # the session no longer counts them: the quota group's used drops to what the other nodes hold
        snapshot = store.load_snapshot(world.cluster)
        assert all(snapshot.tasks[uid].status == "Failed" for uid in on_n1 if uid in snapshot.tasks)


def test_a_simulated_cluster_replaces_the_lost_gang_members() -> None:
    world = build_world(nodes=3)
    Cluster.objects.filter(pk=world.cluster.pk).update(simulated=True)
    world.cluster.refresh_from_db()
    on_n1 = _running_on(world, "n1")
    gang = [uid for uid in on_n1 if uid.startswith("ns-a/")]
    assert gang
    start = timezone.now()
    with time_machine.travel(start, tick=False) as clock:
        _down(world, "n1", timezone.now())
        clock.shift(timedelta(seconds=301))
        counts = agent.evict_lost_nodes(world.cluster, timezone.now())
    assert counts["replaced"] == len(gang)
    for uid in gang:
        replacement = world.pod(uid + "-r1")
        assert (replacement.status, replacement.node) == ("Pending", None)
    # the gang is waiting again, not Completed, and the garbage collector leaves it alone
    sessions.run_scheduling_session(world.cluster)
    assert PodGroup.objects.get(pk=world.podgroups["ns-a/pg-a"].pk).phase != "Completed"


def test_nothing_is_evicted_while_most_nodes_are_notready(world: World) -> None:
    _running_on(world, "n1")
    long_ago = timezone.now() - timedelta(hours=1)
    _down(world, "n1", long_ago)
    _down(world, "n2", long_ago)  # 2 of 3 NotReady: 67 % >= 55 %
    assert agent.cluster_disrupted(world.cluster) == (2, 3)
    assert agent.evict_lost_nodes(world.cluster, timezone.now()) == {"lost": 0, "replaced": 0, "nodes": 0}
    assert not Eviction.objects.filter(cluster=world.cluster).exists()
    Node.objects.filter(cluster=world.cluster, name="n2").update(ready=True, not_ready_since=None)  # 1 of 3
    assert agent.evict_lost_nodes(world.cluster, timezone.now())["nodes"] == 1


def test_the_returning_agent_learns_which_pods_to_stop(world: World, admin_api: Any) -> None:
    on_n1 = _running_on(world, "n1")
    _down(world, "n1", timezone.now() - timedelta(minutes=10))
    agent.evict_lost_nodes(world.cluster, timezone.now())
    listing = admin_api.get(f"/api/v1/nodes/n1/pods/?cluster={world.cluster.name}").json()
    rows = listing["results"] if isinstance(listing, dict) else listing
    assert sorted(f"{r['namespace']}/{r['name']}" for r in rows) == on_n1
    assert {(r["status"], r["reason"], r["action"]) for r in rows} == {("Failed", "NodeLost", "stop")}
    first = rows[0]
    answer = admin_api.post(f"/api/v1/pods/{first['id']}/gone/")
    assert answer.status_code == 200, answer.content
    assert answer.json()["status"] == "Failed"
    after = admin_api.get(f"/api/v1/nodes/n1/pods/?cluster={world.cluster.name}").json()
    after_rows = after["results"] if isinstance(after, dict) else after
    assert first["id"] not in {r["id"] for r in after_rows}  # stopped: no longer listed
    assert Eviction.objects.filter(pod_id=first["id"], node="n1").exists()  # the record keeps the node


def test_the_simulated_agent_stops_lost_pods_when_its_node_returns() -> None:
    world = build_world()
    Cluster.objects.filter(pk=world.cluster.pk).update(simulated=True)
    world.cluster.refresh_from_db()
    on_n1 = _running_on(world, "n1")
    _down(world, "n1", timezone.now() - timedelta(minutes=10))
    agent.evict_lost_nodes(world.cluster, timezone.now())
    counts = agent.agent_tick(world.cluster, timezone.now())
    assert counts["stopped"] == len(on_n1)
    assert not Pod.objects.filter(cluster=world.cluster, node__name="n1", status="Failed").exists()


def test_the_node_check_task_runs_the_whole_lifecycle(world: World) -> None:
    """``check_nodes`` marks stale nodes, evicts lost ones and completes finished podgroups, once a run."""
    _running_on(world, "n1")
    start = timezone.now()
    with time_machine.travel(start, tick=False) as clock:
        for name in ("n1", "n2", "n3"):
            agent.heartbeat(Node.objects.get(cluster=world.cluster, name=name), timezone.now())
        for _ in range(70):  # 350 s of checks every 5 s; n2 and n3 keep beating, n1 is silent
            clock.shift(timedelta(seconds=5))
            for name in ("n2", "n3"):
                agent.heartbeat(Node.objects.get(cluster=world.cluster, name=name), timezone.now())
            assert tasks.check_nodes(world.cluster.pk) == "ran"
        n1 = Node.objects.get(cluster=world.cluster, name="n1")
        assert not n1.ready
        assert n1.not_ready_since is not None
        # NotReady after 40 s of silence, lost 300 s later
        assert Eviction.objects.filter(cluster=world.cluster, action="node-lost").exists()
