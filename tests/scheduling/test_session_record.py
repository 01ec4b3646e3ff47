"""Recording the live sessions' inputs and replaying one (``scheduling.recording``, ``planning.session_replay``,
``engine.replay.recorded``; docs/replay.md "Replaying one session")."""

from __future__ import annotations

import dataclasses
import io
import pickle
import zlib
from contextlib import redirect_stderr, redirect_stdout
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from controlplane.cli import main as cli_main
from engine.objects import TaskStatus
from engine.replay.recorded import (
    Recorder,
    RecordError,
    compact_decisions,
    decisions_digest,
    dump_decisions,
    load_decisions,
    rebuild,
)
from planning import session_replay
from quotas.models import Namespace, Queue
from scheduling import recording, sessions, store
from scheduling.feed.mirror import forget as forget_mirrors
from scheduling.models import Cluster, Eviction, Pod, PodGroup, RecordKind, SchedulingSession, SessionRecord
from tests.scheduling.conftest import World, build_world, rl

POLICY_ACTIONS = "actions: enqueue, allocate, preempt, reclaim, backfill"


@pytest.fixture(autouse=True)
def _fresh() -> Any:
    recording.forget()
    forget_mirrors()
    yield
    recording.forget()
    forget_mirrors()


def _world() -> World:
    """One 8-cpu node; team-a fills it with two jobs (pg-a: 2 x 2 cpu, big: 4 x 1 cpu), reclaim and preempt on."""
    world = build_world(nodes=1)
    Pod.objects.filter(pk=world.pods.pop("ns-b/solo").pk).delete()
    cluster = world.cluster
    cluster.scheduler_policy = cluster.scheduler_policy.replace("actions: enqueue, allocate, backfill", POLICY_ACTIONS)
    assert POLICY_ACTIONS in cluster.scheduler_policy
    cluster.save()
    _job(world, "ns-a", "big", "team-a", 4, "1")
    return world


def _job(world: World, ns: str, name: str, queue: str, pods: int, cpu: str, priority: int = 0) -> None:
    namespace = Namespace.objects.get(name=ns)
    pg = PodGroup.objects.create(
        cluster=world.cluster,
        namespace=namespace,
        name=name,
        queue=Queue.objects.get(name=queue),
        min_member=1,
        priority=priority,
    )
    for k in range(pods):
        Pod.objects.create(
            cluster=world.cluster,
            namespace=namespace,
            name=f"{name}-{k}",
            podgroup=pg,
            request=rl(cpu=cpu, memory="1Gi"),
            quota_group=namespace.quota_group,
            priority=priority,
        )


def _session(world: World) -> SchedulingSession:
    session = sessions.run_scheduling_session(world.cluster)
    assert session.status == "ok", session.error
    return session


def _run_all_bound(world: World) -> None:
    Pod.objects.filter(cluster=world.cluster, status__in=["Bound", "Pipelined"]).update(status="Running")


@pytest.fixture
def history(db: Any) -> dict[str, Any]:
    """Four live sessions: binds (keyframe), nothing new, a reclaim of team-a's pods for team-b's job, then a
    preemption inside team-b for a job of a higher priority."""
    world = _world()
    first = _session(world)
    _run_all_bound(world)
    second = _session(world)
    _job(world, "ns-b", "want", "team-b", 2, "1")
    third = _session(world)
    _run_all_bound(world)
    Pod.objects.filter(cluster=world.cluster, status="Releasing").update(status="Failed")
    return {"world": world, "sessions": [first, second, third]}


def test_a_recorded_session_replays_identical_and_chains_deltas_on_a_keyframe(history: dict[str, Any]) -> None:
    first, second, third = history["sessions"]
    assert first.bound == 6 and third.evicted >= 1
    records = {r.session_id: r for r in SessionRecord.objects.all()}
    assert [records[s.pk].kind for s in (first, second, third)] == ["keyframe", "delta", "delta"]
    assert records[third.pk].parent_session == second.pk and records[third.pk].keyframe_session == first.pk
    for session in (first, second, third):
        doc = session_replay.replay_record(session_replay.find_record(session.pk))
        assert doc["identical"], doc["differences"]
        assert doc["differences"] == []
    doc = session_replay.replay_record(session_replay.find_record(third.pk))
    assert doc["inputs"]["deltas"] == 2 and doc["inputs"]["keyframe"] == first.pk
    assert doc["recorded"]["evicted"] == third.evicted and doc["recorded"] == doc["replayed"]


def test_explain_names_the_action_the_preemptor_the_victims_order_and_the_shares(history: dict[str, Any]) -> None:
    third = history["sessions"][2]
    record = session_replay.find_record(third.pk)
    evicted = load_decisions(bytes(record.decisions))["evictions"]
    victim = evicted[0][0]
    doc = session_replay.replay_record(record, victim)
    why = doc["explain"]
    assert why["job"].startswith("ns-a/") and why["queue"] == "team-a"
    (eviction,) = why["evictions"]
    assert eviction["action"] == "reclaim" and eviction["preemptor_queue"] == "team-b"
    assert eviction["preemptor_job"] == "ns-b/want" and eviction["victim_rank"] == 1
    assert victim in eviction["victims_of_preemptor"]
    assert "deserved" in eviction["message"] and f"session {third.pk}" in why["sentences"][0]
    assert {"team-a", "team-b"} <= set(why["queue_values"]) and why["queue_values"]["team-a"]
    job_doc = session_replay.replay_record(record, "ns-b/want")["explain"]
    assert job_doc["bindings"] or job_doc["status"]
    # asked of the session before (--at a moment before the reclaim): not evicted there, and where it was
    before = session_replay.replay_record(session_replay.find_record(history["sessions"][1].pk), victim)["explain"]
    assert not before["evictions"] and before["evictions_nearby"][0]["session"] == third.pk
    assert before["evictions_nearby"][0]["recorded"] is True
    assert f"fairway replay session {third.pk} --explain {victim}" in before["sentences"][-1]
    with pytest.raises(Exception, match="neither a job nor a pod") as nothing:
        session_replay.replay_record(record, "ns-z/nothing")
    assert "evicted" not in str(nothing.value)
    # a job of another cluster (an eviction list read without its cluster): where it was evicted, and how to ask
    other = Cluster.objects.create(name="other")
    Eviction.objects.create(
        cluster=other, session=third, pod_uid="ns-z/gone-0", namespace="ns-z", job="gone", action="preempt",
        created=record.time,
    )  # fmt: skip
    with pytest.raises(Exception, match="neither a job nor a pod") as elsewhere:
        session_replay.replay_record(record, "ns-z/gone")
    assert (
        f"it was evicted (preempt) in session {third.pk} of cluster other at {record.time.isoformat()}: "
        f"fairway replay session {third.pk} --explain ns-z/gone"
    ) in str(elsewhere.value)
    SessionRecord.objects.filter(session_id=third.pk).delete()  # as a recycling pass, which is not recorded
    gone = session_replay.replay_record(session_replay.find_record(history["sessions"][1].pk), victim)["explain"]
    assert gone["evictions_nearby"][0]["recorded"] is False
    assert gone["sentences"][-1].endswith(f"(not recorded): {evicted[0][3]}")


def test_a_tampered_decision_is_reported(history: dict[str, Any]) -> None:
    third = history["sessions"][2]
    row = SessionRecord.objects.get(session_id=third.pk)
    decisions = load_decisions(bytes(row.decisions))
    gone = decisions["evictions"].pop(0)[0]
    row.decisions, _ = dump_decisions(decisions)  # digest left as written: the alteration shows
    row.save()
    doc = session_replay.replay_record(session_replay.find_record(third.pk))
    assert not doc["identical"]
    assert doc["differences"][0].startswith("the recorded decisions do not match the digest")
    assert any(line.startswith(f"pod {gone}: not evicted in the recording") for line in doc["differences"])
    row.digest = decisions_digest(decisions)  # digest rewritten too: the replay still disagrees
    row.save()
    doc = session_replay.replay_record(session_replay.find_record(third.pk))
    assert doc["differences"] == [
        line for line in doc["differences"] if line.startswith(f"pod {gone}: not evicted in the recording")
    ]
    assert len(doc["differences"]) == 1


def test_a_keyframe_every_n_sessions_and_a_new_chain_in_a_new_process(db: Any, settings: Any) -> None:
    settings.FAIRWAY = {**settings.FAIRWAY, "SESSION_RECORD_KEYFRAME_SESSIONS": 2}
    world = _world()
    made = [_session(world) for _ in range(4)]
    recording.forget()  # another process: its first record is a keyframe
    made.append(_session(world))
    rows = [SessionRecord.objects.get(session_id=s.pk) for s in made]
    assert [r.kind for r in rows] == ["keyframe", "delta", "delta", "keyframe", "keyframe"]
    # the third session reused the second's result (nothing changed): no decisions of its own, its parent's digest
    assert bytes(rows[2].decisions) == b"" and rows[2].digest == rows[1].digest and bytes(rows[4].decisions)
    for s in made:
        doc = session_replay.replay_record(session_replay.find_record(s.pk))
        assert doc["identical"], doc["differences"]


def test_pruning_drops_old_chains_whole_and_keeps_a_recent_records_keyframe(db: Any, settings: Any) -> None:
    settings.FAIRWAY = {**settings.FAIRWAY, "SESSION_RECORD_RETENTION_HOURS": 24.0}
    world = build_world()
    now = timezone.now()

    def row(session: int, hours_ago: float, keyframe: int, parent: int | None) -> None:
        SessionRecord.objects.create(
            cluster=world.cluster,
            session_id=session,
            time=now - timedelta(hours=hours_ago),
            now=(now - timedelta(hours=hours_ago)).timestamp(),
            kind=RecordKind.KEYFRAME if parent is None else RecordKind.DELTA,
            parent_session=parent,
            keyframe_session=keyframe,
            payload=b"",
            decisions=b"",
            digest="",
        )

    row(1, 30, 1, None)  # an old chain with a delta still inside the retention: kept whole
    row(2, 26, 1, 1)
    row(3, 23, 1, 2)
    row(4, 29, 4, None)  # an old chain entirely past the retention: dropped whole
    row(5, 27, 4, 4)
    row(6, 1, 6, None)
    assert store.compact_records(world.cluster, now)["session_records"] == 2
    assert sorted(SessionRecord.objects.values_list("session_id", flat=True)) == [1, 2, 3, 6]
    left = SessionRecord.objects.all()
    keyframes = {r.session_id for r in left if r.kind == RecordKind.KEYFRAME}
    assert all(r.keyframe_session in keyframes for r in left)


def test_recording_off_records_nothing_and_the_replay_names_the_setting(db: Any, settings: Any, admin_api: Any) -> None:
    settings.FAIRWAY = {**settings.FAIRWAY, "SESSION_RECORD_RETENTION_HOURS": 0.0}
    world = _world()
    session = _session(world)
    assert not SessionRecord.objects.exists()
    r = admin_api.get(f"/api/v1/sessions/{session.pk}/replay/")
    assert r.status_code == 409 and "FAIRWAY_SESSION_RECORD_RETENTION_HOURS is 0" in r.content.decode()
    r = admin_api.get("/api/v1/sessions/recorded/?cluster=c1")
    assert r.status_code == 409 and "FAIRWAY_SESSION_RECORD_RETENTION_HOURS" in r.content.decode()


def test_the_api_admins_only_by_id_and_by_time(
    history: dict[str, Any], admin_api: Any, api: Any, make_user: Any
) -> None:
    first, second, third = history["sessions"]
    member = api(make_user("bob", groups=("team-b",)))
    for url in (
        f"/api/v1/sessions/{third.pk}/replay/",
        "/api/v1/sessions/recorded/",
        "/api/v1/sessions/replay/?cluster=c1&at=2030-01-01T00:00:00Z",
    ):
        assert member.get(url).status_code == 403, url
        assert api(None).get(url).status_code in (401, 403), url
    body = admin_api.get(f"/api/v1/sessions/{third.pk}/replay/?explain=ns-b/want").json()
    assert body["identical"] is True and body["explain"]["job"] == "ns-b/want"
    listed = admin_api.get("/api/v1/sessions/recorded/?cluster=c1").json()
    assert [s["session"] for s in listed["sessions"]] == [third.pk, second.pk, first.pk]
    at = third.started + timedelta(milliseconds=1)
    body = admin_api.get("/api/v1/sessions/replay/", {"cluster": "c1", "at": at.isoformat()}).json()
    assert body["session"] == third.pk and body["identical"] is True
    r = admin_api.get("/api/v1/sessions/999999999/replay/")
    assert r.status_code == 404 and "session 999999999 is not recorded" in r.content.decode()
    r = admin_api.get("/api/v1/sessions/replay/?cluster=c1")
    assert r.status_code == 400 and "at" in r.content.decode()
    r = admin_api.get("/api/v1/sessions/replay/?cluster=nope&at=2030-01-01T00:00:00Z")
    assert r.status_code == 400 and "cluster" in r.content.decode()


def _cli(argv: list[str], client: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    """``fairway ...`` in-process, its HTTP calls served by the test client."""
    from controlplane.cli import client as client_module

    def call(self: Any, method: str, path: str, body: Any = None, params: Any = None, *, obj: Any = None) -> Any:
        response = client.get(f"/api/v1/{path}", params or {})
        if response.status_code >= 400:
            raise client_module.ApiError(response.status_code, client_module.error_lines(response, obj))
        return response.json()

    monkeypatch.setattr(client_module.Client, "call", call)
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli_main(argv)
    return code, out.getvalue(), err.getvalue()


def test_the_cli_replays_lists_and_explains(
    history: dict[str, Any], admin_api: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    third = history["sessions"][2]
    code, out, _ = _cli(["replay", "session", str(third.pk), "--explain", "ns-b/want"], admin_api, monkeypatch)
    assert code == 0 and "Replayed: identical decisions" in out and "Why (ns-b/want" in out
    code, out, _ = _cli(["replay", "sessions", "--cluster", "c1"], admin_api, monkeypatch)
    assert code == 0 and str(third.pk) in out and "SESSION" in out
    code, out, _ = _cli(["-o", "json", "replay", "session", str(third.pk)], admin_api, monkeypatch)
    assert code == 0 and '"identical": true' in out
    code, _, err = _cli(["replay", "session"], admin_api, monkeypatch)
    assert code == 2 and "session's id" in err
    code, _, err = _cli(["replay", "session", "999999999"], admin_api, monkeypatch)
    assert code == 1 and "session 999999999 is not recorded" in err


def test_at_a_time_of_day_is_todays_or_yesterdays() -> None:
    from datetime import UTC, datetime

    from controlplane.cli.session_replay import at_moment

    now = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)
    assert at_moment("14:02", now) == "2026-11-29T14:02:00+00:00"
    assert at_moment("16:30", now) == "2026-11-28T16:30:00+00:00"


# -- the payloads, without a database ------------------------------------------------------------------------------


def test_rebuild_keeps_the_key_order_and_a_damaged_or_foreign_payload_is_refused() -> None:
    from engine.objects import NodeInfo, PodGroupInfo, Snapshot, TaskInfo
    from engine.resources import ResourceList

    tasks = {f"ns/p{i}": TaskInfo("ns", f"p{i}", "ns/g", ResourceList({"cpu": 1000 + i})) for i in range(5)}
    snap = Snapshot(
        nodes={"b": NodeInfo("b", ResourceList({"cpu": 8000, "pods": 0})), "a": NodeInfo("a")},
        tasks=tasks,
        podgroups={"ns/g": PodGroupInfo("ns", "g")},
    )
    recorder = Recorder()
    key = recorder.keyframe(snap)
    # a pod changed in place, one gone, one new, then the pods re-sorted (as the mirror does by primary key)
    moved = dict(tasks)
    moved["ns/p1"] = dataclasses.replace(tasks["ns/p1"], status=TaskStatus.RUNNING, node="a")
    del moved["ns/p3"]
    moved = {"ns/p9": TaskInfo("ns", "p9", "ns/g"), **moved}
    second = snap.replace(tasks=moved, nodes={"a": snap.nodes["a"], "b": snap.nodes["b"]})
    delta = recorder.delta(second)
    assert delta is not None and delta.entries == 3
    back = rebuild(key, [delta.payload])
    assert list(back.tasks) == list(second.tasks) and list(back.nodes) == ["a", "b"]
    assert back.tasks == second.tasks and back.nodes["b"].allocatable.raw == {"cpu": 8000, "pods": 0}
    with pytest.raises(RecordError, match="cannot be read"):
        rebuild(key[:-5])
    evil = zlib.compress(pickle.dumps({"format": 1, "kind": "keyframe", "big": {}, "other": {"x": print}}))
    with pytest.raises(RecordError):
        rebuild(evil)
    # a name the engine imported (a module, a function through a dotted path) is not one of its classes
    for smuggled in (b"cengine.replay.recorded\nzlib\n.", b"cengine.replay.recorded\nzlib.decompress\n."):
        with pytest.raises(RecordError, match="never holds"):
            rebuild(zlib.compress(smuggled))
    assert decisions_digest({"a": 1}) == dump_decisions({"a": 1})[1]
    assert compact_decisions(type("R", (), {"bindings": [], "evictions": [], "podgroups": {}})()) == {
        "bindings": [],
        "evictions": [],
        "podgroups": {},
    }


def test_a_delta_by_the_mirrors_note_equals_one_that_looks_at_every_pod() -> None:
    """The mirror's note (the uids changed since its last copy; updated in place, gone, stored anew at the end)
    gives the same rebuilt snapshot, order included, as the full comparison, and a note that does not fit (a pod
    stored anew in the middle) falls back to it."""
    from engine.objects import Snapshot, TaskInfo

    def task(i: int, node: str | None = None) -> TaskInfo:
        return TaskInfo("ns", f"p{i}", "ns/g", node=node)

    base = {t.uid: t for t in (task(i) for i in range(10))}
    first = Snapshot(tasks=base)
    live = dict(base)  # the mirror's own dictionary, changed in place as it applies the feed
    live["ns/p2"] = task(2, "n1")  # updated in place
    del live["ns/p4"]  # gone
    del live["ns/p6"]
    live["ns/p6"] = task(6, "n2")  # deleted and made again: stored anew, at the end
    live["ns/p9"] = task(9, "n3")  # the last one updated in place (at the end already)
    live["ns/p10"] = task(10)  # new
    tasks = dict(live)
    second = Snapshot(tasks=tasks)
    noted = {"ns/p2", "ns/p4", "ns/p6", "ns/p9", "ns/p10"}
    by_note, by_scan = Recorder(), Recorder()
    key = by_note.keyframe(first)
    by_scan.keyframe(first)
    with_note = by_note.delta(second, (base, tasks, noted))
    without = by_scan.delta(second)
    assert with_note is not None and without is not None
    for delta in (with_note, without):
        back = rebuild(key, [delta.payload])
        assert list(back.tasks) == list(tasks) and back.tasks == tasks
    # 4 set (p2 in place; the end p9, p6, p10 in order) and 3 dropped (p4 gone; p9, p6 moved to the end)
    assert with_note.entries == 7
    misplaced = {"ns/p10": task(10), **base}  # a new pod first: not what a note promises
    third = Snapshot(tasks=misplaced)
    recorder = Recorder()
    key = recorder.keyframe(first)
    delta = recorder.delta(third, (base, misplaced, {"ns/p10"}))
    assert delta is not None and list(rebuild(key, [delta.payload]).tasks) == list(misplaced)
