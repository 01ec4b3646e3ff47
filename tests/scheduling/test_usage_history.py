"""Fairness over time through the real store: the decayed past usage is ONE row per cluster, written in the
session's transaction while the policy has the switch on, read back into the snapshot after a restart (a fresh
mirror), and the session through the store decides what the engine decides on that record."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from engine.policy.policy import default_policy_with
from engine.session.run import run_session
from engine.usage import QUEUE, UsageHistory, node_key
from planning import valuecache
from scheduling import sessions, store
from scheduling.feed.mirror import forget
from scheduling.models import SessionStatus
from scheduling.models import UsageHistory as UsageRow
from tests.scheduling.conftest import World

FAIR = {"name": "proportion", "arguments": {"fairnessOverTime": True, "usageHalfLife": "1h"}}


def _switch_on(world: World) -> None:
    world.cluster.scheduler_policy = default_policy_with(FAIR).to_yaml()
    world.cluster.save()


def _restart() -> None:
    forget()
    valuecache.clear()


@pytest.mark.django_db(transaction=True)
def test_sessions_keep_the_past_usage_and_a_restart_reads_it_back(world: World) -> None:
    _switch_on(world)
    cluster = world.cluster
    start = timezone.now().replace(microsecond=0)
    with time_machine.travel(start, tick=False) as clock:
        first = sessions.run_scheduling_session(cluster)
        assert first.status == SessionStatus.OK
        row = UsageRow.objects.get(cluster=cluster)
        assert row.updated == start and row.nodes == {}  # the first session starts the record
        clock.shift(timedelta(hours=1))
        assert sessions.run_scheduling_session(cluster).status == SessionStatus.OK
        assert UsageRow.objects.filter(cluster=cluster).count() == 1  # one row, updated in place
        kept = store.read_past_usage(cluster)
        assert kept is not None and kept.updated == (start + timedelta(hours=1)).timestamp()
        # team-a's gang (4 cpu) and team-b's pod (1 cpu) were bound by the first session: both held something
        # for the hour, team-a four times what team-b held; dept and root hold nothing of their own
        a, b = kept.nodes[node_key(QUEUE, "team-a")], kept.nodes[node_key(QUEUE, "team-b")]
        assert a.used > 0 and b.used > 0 and a.used == pytest.approx(4 * b.used, rel=1e-3)
        assert kept.ratio(QUEUE, "team-a") > 1 > kept.ratio(QUEUE, "team-b")

        _restart()  # a new process: nothing in memory, the record comes from the row
        clock.shift(timedelta(minutes=30))
        snapshot = store.load_snapshot(cluster)
        assert snapshot.past_usage == kept
        expected = run_session(snapshot, now=timezone.now().timestamp()).usage_history
        assert sessions.run_scheduling_session(cluster).status == SessionStatus.OK
        again = store.read_past_usage(cluster)
        assert again is not None and again.nodes == expected.nodes
        assert again.updated == pytest.approx(expected.updated)
        # the steady state is not reused with the switch on: the record moved, so the engine ran again
        clock.shift(timedelta(minutes=30))
        assert sessions.run_scheduling_session(cluster).status == SessionStatus.OK
        latest = store.read_past_usage(cluster)
        assert latest is not None and latest.updated == pytest.approx(expected.updated + 1800.0)
        assert latest.nodes[node_key(QUEUE, "team-a")] != again.nodes[node_key(QUEUE, "team-a")]


@pytest.mark.django_db(transaction=True)
def test_with_the_switch_off_nothing_is_read_or_written(world: World) -> None:
    assert store.read_past_usage(world.cluster) is None
    assert store.load_snapshot(world.cluster).past_usage is None
    assert sessions.run_scheduling_session(world.cluster).status == SessionStatus.OK
    assert not UsageRow.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_malformed_row_fails_the_session_with_a_clear_error(world: World) -> None:
    _switch_on(world)
    UsageRow.objects.create(cluster=world.cluster, updated=timezone.now(), nodes={"queue/team-a": "lots"})
    session = sessions.run_scheduling_session(world.cluster)
    assert session.status == SessionStatus.FAILED
    assert "node 'queue/team-a' must be [used, deserved]" in session.error
    assert UsageHistory.from_json({"updated": 1.0, "nodes": {}}) == UsageHistory(updated=1.0)


@pytest.mark.django_db(transaction=True)
def test_why_a_job_waits_shows_each_nodes_past_usage(world: World) -> None:
    from django.contrib.auth import get_user_model

    from planning.why import why_podgroup

    admin = get_user_model().objects.create_superuser("why-admin", password="pw")
    pg = world.podgroups["ns-a/pg-a"]
    assert "past_usage" not in why_podgroup(pg, admin)["queue_path"][-1]  # off: nothing read, nothing said
    _switch_on(world)
    nodes = {"queue/team-a": [36, 20], "queue/dept": [5, 10], "quota/qa": [1, 10]}
    UsageRow.objects.create(cluster=world.cluster, updated=timezone.now(), nodes=nodes)
    pg.refresh_from_db()
    why = why_podgroup(pg, admin)
    path = {entry["name"]: entry for entry in why["queue_path"]}
    assert path["team-a"]["past_usage"] == "past usage 1.8\u00d7 its share over 7 days"
    assert path["team-a"]["past_usage_ratio"] == 1.8
    assert path["dept"]["past_usage"] == "past usage 0.5\u00d7 its share over 7 days"
    # the quota tree's switch is off in this policy (only proportion has it): the quota path says nothing
    assert all("past_usage" not in entry for chain in why["quota_paths"] for entry in chain)
