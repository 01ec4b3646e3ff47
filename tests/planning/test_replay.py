"""Replay runs (issue 29 item 5; ``planning.replay``): checked like a what-if before anything is written, run by the
task's body (the trace, the baseline and the proposal on the real engine in virtual time), progress written into the
row as it goes, a cancel seen between sessions, results kept compact and for a retention window, and a team member's
view limited to its teams."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from controlplane import side_by_side
from planning import replay
from planning.models import ReplayRun
from quotas.models import Queue, QuotaGroup
from scheduling.models import PodGroup
from tests.scheduling.conftest import World, build_world

pytestmark = pytest.mark.django_db

#: the proposal: no node left, so that nothing the baseline started starts
NO_NODES = [{"op": "remove", "kind": "node", "name": n} for n in ("n1", "n2", "n3")]


@pytest.fixture
def world(db: Any) -> World:
    """``build_world``'s cluster with its jobs submitted half an hour ago (inside an hour-long window)."""
    w = build_world()
    PodGroup.objects.filter(cluster=w.cluster).update(created=timezone.now() - timedelta(minutes=30))
    return w


@pytest.fixture
def boss(make_user: Any) -> Any:
    return make_user("boss", staff=True)


@pytest.fixture
def member(make_user: Any) -> Any:
    """A member of team-a's team (queue team-a, quota group qa)."""
    user = make_user("alice")
    team = Group.objects.create(name="team-a")
    Queue.objects.get(name="team-a").teams.add(team)
    QuotaGroup.objects.get(name="qa").teams.add(team)
    user.groups.add(team)
    return user


def _start(user: Any, changes: Any = None, **kw: Any) -> ReplayRun:
    return replay.start(
        user, NO_NODES if changes is None else changes, window=kw.pop("window", "1h"), cluster="c1", **kw
    )


def test_a_run_replays_the_baseline_and_the_proposal_and_keeps_a_compact_report(
    world: World, boss: Any, django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[int] = []
    monkeypatch.setattr(replay, "send", sent.append)
    with django_capture_on_commit_callbacks(execute=True):
        run = _start(boss)
    assert sent == [run.pk]  # the task goes out once the row is committed
    assert (run.state, run.progress, run.window) == ("queued", 0.0, "1h")
    assert run.until - run.since == timedelta(hours=1)
    assert replay.execute(run.pk) == "done"
    run.refresh_from_db()
    assert (run.state, run.progress, run.error) == ("done", 1.0, "")
    assert run.started is not None and run.finished is not None
    result = run.result
    assert result["trace"]["jobs"] >= 1
    base, prop = result["baseline"], result["proposal"]
    assert "jobs" not in base and base["jobCount"] == result["trace"]["jobs"]  # the per-job part is not kept
    assert base["teams"]["queue/team-a"]["jobs"]["started"] == 1  # pg-a fits on the three nodes
    assert prop["teams"]["queue/team-a"]["jobs"]["started"] == 0  # without them it never starts
    assert result["differences"]["teams"]["queue/team-a"]["jobs.started"] == {"before": 1, "after": 0, "change": -1}
    assert base["cluster"]["utilisation"]["cpu"]  # the cpu in use over time


def test_progress_goes_into_the_row_as_virtual_time_passes(
    world: World, boss: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every session writes it; one replay after the other, in this process, where the spy sees each session
    settings.FAIRWAY = {**settings.FAIRWAY, "REPLAY_PROGRESS_SECONDS": 0, "REPLAY_PROCESSES": 1}
    monkeypatch.setattr(replay, "send", lambda pk: None)
    run = _start(boss)
    seen: list[tuple[float, str]] = []
    real = side_by_side.replay

    def watched(*args: Any, progress: Any, **kw: Any) -> Any:
        def spy(t: float) -> None:
            progress(t)
            seen.append(ReplayRun.objects.values_list("progress", "phase").get(pk=run.pk))

        return real(*args, progress=spy, **kw)

    monkeypatch.setattr(side_by_side, "replay", watched)
    assert replay.execute(run.pk) == "done"
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and 0 < fractions[-1] <= 1.0  # forward only
    assert {p for _, p in seen} == {"replaying the baseline", "replaying with the changes"}
    assert all(f <= 0.5 for f, p in seen if p == "replaying the baseline")
    assert all(f >= 0.5 for f, p in seen if p == "replaying with the changes")


def test_progress_is_written_at_most_every_interval(world: World, settings: Any) -> None:
    settings.FAIRWAY = {**settings.FAIRWAY, "REPLAY_PROGRESS_SECONDS": 3600}
    run = ReplayRun.objects.create(
        cluster=world.cluster, window="1h", since=timezone.now(), until=timezone.now(), changes=[], state="running"
    )
    report = replay._Progress(run.pk)
    report(0.2, "a")
    report(0.4, "b")  # within the interval: not written
    assert ReplayRun.objects.values_list("progress", "phase").get(pk=run.pk) == (0.2, "a")
    report(0.6, "c", force=True)
    assert ReplayRun.objects.values_list("progress", "phase").get(pk=run.pk) == (0.6, "c")


def test_a_cancel_stops_the_replay_before_its_next_session(
    world: World, boss: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.FAIRWAY = {**settings.FAIRWAY, "REPLAY_PROGRESS_SECONDS": 0, "REPLAY_PROCESSES": 1}
    monkeypatch.setattr(replay, "send", lambda pk: None)
    run = _start(boss)
    sessions: list[float] = []
    real = side_by_side.replay

    def cancelled_midway(*args: Any, progress: Any, **kw: Any) -> Any:
        def step(t: float) -> None:
            if not sessions:
                assert replay.cancel(ReplayRun.objects.get(pk=run.pk), boss)  # someone presses Cancel
            sessions.append(t)
            progress(t)

        return real(*args, progress=step, **kw)

    monkeypatch.setattr(side_by_side, "replay", cancelled_midway)
    assert replay.execute(run.pk) == "cancelled"
    assert len(sessions) == 1  # no session ran after the cancel
    run.refresh_from_db()
    assert (run.state, run.result) == ("cancelled", None)
    assert not replay.cancel(run, boss)  # it has ended: nothing to cancel
    # cancelled before the worker took it: the worker does nothing
    early = _start(boss)
    assert replay.cancel(early, boss)
    assert replay.execute(early.pk) == "cancelled"
    early.refresh_from_db()
    assert (early.state, early.started, early.result) == ("cancelled", None, None)
    assert replay.execute(10**9) == "gone"


def test_a_replay_that_cannot_run_fails_with_its_sentence(
    world: World, boss: Any, monkeypatch: Any, settings: Any
) -> None:
    from engine.replay import ReplayError

    settings.FAIRWAY = {**settings.FAIRWAY, "REPLAY_PROCESSES": 1}
    monkeypatch.setattr(replay, "send", lambda pk: None)
    run = _start(boss)

    def refuse(*args: Any, **kw: Any) -> Any:
        raise ReplayError("--changes: changes.0.name: queue gone does not exist")

    monkeypatch.setattr(side_by_side, "replay", refuse)
    assert replay.execute(run.pk) == "failed"
    run.refresh_from_db()
    assert run.state == "failed" and run.error == "--changes: changes.0.name: queue gone does not exist"


BAD_INPUT = [
    ({"window": "2w"}, "window", "expected a span back from now such as 6h, 1d or 7d"),
    ({"window": "8d"}, "window", "at most 7 days (FAIRWAY_REPLAY_MAX_WINDOW_DAYS)"),
    ({"window": "0h"}, "window", "longer than nothing"),
    ({"changes": []}, "changes", "expected a non-empty list of changes"),
    ({"changes": [{"op": "update", "kind": "queue", "name": "nope", "spec": {"weight": 2}}]}, "changes.0.name", "nope"),
    ({"cluster": "nope"}, "cluster", "cluster nope does not exist"),
]


def test_bad_input_names_the_field_and_writes_nothing(world: World, boss: Any) -> None:
    for kwargs, field, words in BAD_INPUT:
        with pytest.raises(replay.Refused) as caught:
            replay.start(
                boss,
                kwargs.get("changes", NO_NODES),
                window=kwargs.get("window", "1h"),
                cluster=kwargs.get("cluster", "c1"),
            )
        assert field in caught.value.errors, (kwargs, caught.value.errors)
        assert any(words in m for m in caught.value.errors[field]), caught.value.errors
    assert not ReplayRun.objects.exists()


def test_a_team_member_proposes_only_inside_its_subtree_and_reads_only_its_teams(
    world: World, member: Any, boss: Any, monkeypatch: Any
) -> None:
    monkeypatch.setattr(replay, "send", lambda pk: None)
    with pytest.raises(replay.Refused) as caught:
        _start(member, [{"op": "update", "kind": "queue", "name": "team-b", "spec": {"weight": 3}}])
    assert "not in your team's subtree" in caught.value.errors["changes.0.name"][0]
    run = _start(member, [{"op": "update", "kind": "queue", "name": "team-a", "spec": {"weight": 3}}, *NO_NODES])
    assert replay.execute(run.pk) == "done"
    run.refresh_from_db()
    mine = replay.visible_result(run, member)
    roots = set(run.result["baseline"]["roots"])  # every job of a tree: the cluster's figures, shown whole
    assert "queue/root" in roots and roots <= set(run.result["baseline"]["teams"])
    assert set(mine["baseline"]["teams"]) == {"queue/team-a", "quota/qa"} | roots
    assert set(mine["differences"]["teams"]) <= {"queue/team-a", "quota/qa"} | roots
    assert "queue/dept" in replay.visible_result(run, boss)["baseline"]["teams"]  # an admin reads every team
    assert list(replay.runs_for(member)) == [run]
    boss_run = _start(boss)
    assert boss_run not in replay.runs_for(member) and boss_run in replay.runs_for(boss)


def test_finished_runs_are_kept_for_the_retention_window(
    world: World, boss: Any, settings: Any, monkeypatch: Any
) -> None:
    settings.FAIRWAY = {**settings.FAIRWAY, "REPLAY_RETENTION_DAYS": 2}
    monkeypatch.setattr(replay, "send", lambda pk: None)
    old_done, old_running, recent = _start(boss), _start(boss), _start(boss)
    ReplayRun.objects.filter(pk=old_done.pk).update(state="done", created=timezone.now() - timedelta(days=2, hours=1))
    ReplayRun.objects.filter(pk=old_running.pk).update(state="running", created=timezone.now() - timedelta(days=3))
    ReplayRun.objects.filter(pk=recent.pk).update(state="done", created=timezone.now() - timedelta(days=1))
    newest = _start(boss)  # starting one prunes
    assert set(ReplayRun.objects.values_list("pk", flat=True)) == {old_running.pk, recent.pk, newest.pk}


def test_long_series_are_averaged_into_buckets() -> None:
    from engine.replay.trace import format_time

    t0 = 1_700_000_000.0
    points = [[format_time(t0 + i), float(i % 2)] for i in range(1000)]  # 0, 1, 0, 1 ... each held a second
    kept = replay._series(points, t0, t0 + 1000, 10)
    assert len(kept) == 10
    assert all(p[1] == pytest.approx(0.5) for p in kept)  # the time-weighted mean of each bucket
    assert kept[0][0] == format_time(t0) and kept[1][0] == format_time(t0 + 100)
    short = [[format_time(t0), 0.25]]
    assert replay._series(short, t0, t0 + 1000, 10) == short


def test_a_time_limit_beyond_the_redis_visibility_timeout_is_refused_at_start() -> None:
    """Past the visibility timeout Redis hands the unacknowledged replay to another worker while the first still
    runs it: the settings refuse such a time limit."""
    import os
    import subprocess
    import sys

    from django.conf import settings

    env = {
        **os.environ,
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/5",
        "FAIRWAY_REPLAY_TIME_LIMIT_SECONDS": "3600",
        "DJANGO_SETTINGS_MODULE": "controlplane.settings",
    }
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "FAIRWAY_REPLAY_TIME_LIMIT_SECONDS=3600: at most 3569 s" in done.stderr


def test_a_broker_that_cannot_take_the_task_leaves_the_run_failed_not_queued(
    world: World, boss: Any, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    from planning.tasks import run_replay

    def down(*args: Any, **kw: Any) -> None:
        raise ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(run_replay, "delay", down)
    with django_capture_on_commit_callbacks(execute=True):
        run = _start(boss)
    run.refresh_from_db()
    assert run.state == "failed" and "could not be handed to the replay worker" in run.error
