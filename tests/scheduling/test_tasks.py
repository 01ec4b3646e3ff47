"""scheduling/tasks.py: the Celery tasks (called in-process), the periodic schedules per cluster, the command."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django_celery_beat.models import PeriodicTask

from scheduling import store, tasks
from scheduling.models import Cluster, Pod, SchedulingSession, default_scheduler_policy
from tests.scheduling.conftest import World, build_world

pytestmark = pytest.mark.django_db


def test_run_session_task_binds_with_the_real_engine(world: World) -> None:
    assert tasks.run_session(world.cluster.pk) == "ran"
    session = SchedulingSession.objects.get()
    assert (session.kind, session.status, session.bound) == ("session", "ok", 3)
    assert set(Pod.objects.values_list("status", flat=True)) == {"Bound"}
    assert tasks.run_session.apply(args=[world.cluster.pk]).get() == "ran"  # through Celery's eager path
    assert SchedulingSession.objects.order_by("-id").first().bound == 0


def test_tasks_of_a_deleted_cluster_say_gone() -> None:
    for task in (tasks.run_session, tasks.recycle, tasks.agent_tick, tasks.generate_workload, tasks.check_nodes):
        assert task(987654) == "gone"
    assert tasks.compact_records(987654) == "gone"


def test_a_failing_session_returns_failed(world: World, fake_engine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fake_engine, "run_session", lambda *a, **k: 1 / 0)
    assert tasks.run_session(world.cluster.pk) == "failed"
    assert SchedulingSession.objects.get().error.startswith("ZeroDivisionError")


def test_simulation_tasks_run_only_on_simulated_clusters(world: World) -> None:
    assert tasks.agent_tick(world.cluster.pk) == "disabled"
    assert tasks.generate_workload(world.cluster.pk) == "disabled"
    world.cluster.simulated = True
    world.cluster.save()
    assert tasks.agent_tick(world.cluster.pk) == "ran"
    assert tasks.generate_workload(world.cluster.pk, 7) == "ran"
    assert tasks.check_nodes(world.cluster.pk) == "ran"
    assert tasks.compact_records(world.cluster.pk) == "ran"


def test_every_task_is_acks_late_with_time_limits() -> None:
    for entry in tasks.CLUSTER_SCHEDULES:
        task = getattr(tasks, entry.task.rsplit(".", 1)[1])
        assert task.name == entry.task
        assert task.acks_late is True
        assert task.time_limit and task.soft_time_limit and task.soft_time_limit < task.time_limit


def test_each_cluster_gets_its_periodic_tasks(world: World) -> None:
    rows = PeriodicTask.objects.filter(args=json.dumps([world.cluster.pk]))
    by_task = {t.task: t for t in rows}
    assert set(by_task) == {e.task for e in tasks.CLUSTER_SCHEDULES}
    session = by_task["scheduling.tasks.run_session"]
    assert session.name == "c1: scheduling session" and session.enabled
    assert (session.interval.every, session.interval.period, session.expire_seconds) == (1, "seconds", 1)
    assert by_task["scheduling.tasks.check_nodes"].expire_seconds == 4  # below the 5 s period
    assert (
        not by_task["scheduling.tasks.agent_tick"].enabled and not by_task["scheduling.tasks.generate_workload"].enabled
    )
    # An admin's edit survives; the simulation follows the flag.
    session.enabled = False
    session.save()
    world.cluster.simulated = True
    world.cluster.save()
    rows = {t.task: t for t in PeriodicTask.objects.filter(args=json.dumps([world.cluster.pk]))}
    assert rows["scheduling.tasks.agent_tick"].enabled and rows["scheduling.tasks.generate_workload"].enabled
    assert not rows["scheduling.tasks.run_session"].enabled
    pk = world.cluster.pk
    world.cluster.delete()
    assert not PeriodicTask.objects.filter(args=json.dumps([pk])).exists()


def test_ensure_schedules_command_turns_on_the_demo(db: Any) -> None:
    build_world()
    default = Cluster.objects.get(name="default")
    PeriodicTask.objects.filter(args=json.dumps([default.pk])).delete()  # as after the data migration
    out = StringIO()
    call_command("ensure_schedules", "--simulated", "default", stdout=out)
    default.refresh_from_db()
    assert default.simulated and "monitorAllQuotas: true" in default.scheduler_policy
    assert default.policy.has_plugin("elasticquota") and "reclaim" in default.policy.actions
    assert "cluster default (simulated): 6 of 6 periodic tasks enabled" in out.getvalue()
    assert "cluster c1: 4 of 6 periodic tasks enabled" in out.getvalue()
    # an admin's own policy is kept
    default.scheduler_policy = 'actions: "enqueue, allocate"\ntiers: []\n'
    default.save()
    call_command("ensure_schedules", "--simulated", "default", stdout=StringIO())
    default.refresh_from_db()
    assert default.policy.actions == ("enqueue", "allocate")
    with pytest.raises(CommandError, match="nowhere does not exist"):
        call_command("ensure_schedules", "--simulated", "nowhere", stdout=StringIO())


def test_default_policy_is_volcanos_and_bad_policies_are_refused(db: Any) -> None:
    from django.core.exceptions import ValidationError

    from engine.policy.policy import DEFAULT_POLICY

    cluster = Cluster.objects.create(name="fresh")
    assert cluster.scheduler_policy == default_scheduler_policy() and cluster.policy == DEFAULT_POLICY
    cluster.scheduler_policy = 'actions: "enqueue, teleport"'
    with pytest.raises(ValidationError) as info:
        cluster.save()
    assert "teleport" in str(info.value.message_dict["scheduler_policy"])
    assert Cluster.objects.get(pk=cluster.pk).policy == DEFAULT_POLICY


def test_record_skipped_row(world: World) -> None:
    row = store.record_skipped(world.cluster.pk)
    assert (row.status, row.kind) == ("skipped", "session") and "lock" in row.error
