"""``/api/v1/replays/`` (issue 29 item 5): start a replay (checked like a what-if, nothing written on bad input, the
task sent on the ``replay`` queue once committed), list and read runs (a team member its own, with its teams only),
cancel a queued or running one (409 once it has ended)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.conf import settings
from django.contrib.auth.models import Group
from django.utils import timezone

from planning import replay
from planning.models import ReplayRun
from quotas.models import Queue, QuotaGroup
from scheduling.models import PodGroup
from tests.conftest import error_attrs
from tests.scheduling.conftest import build_world

pytestmark = pytest.mark.django_db

URL = "/api/v1/replays/"
NO_NODES = [{"op": "remove", "kind": "node", "name": n} for n in ("n1", "n2", "n3")]


@pytest.fixture
def world(db: Any, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    build_world()
    PodGroup.objects.update(created=timezone.now() - timedelta(minutes=30))
    sent: list[int] = []
    monkeypatch.setattr(replay, "send", sent.append)
    return sent


@pytest.fixture
def member_api(api: Any, make_user: Any, world: list[int]) -> Any:
    user = make_user("alice")
    team = Group.objects.create(name="team-a")
    Queue.objects.get(name="team-a").teams.add(team)
    QuotaGroup.objects.get(name="qa").teams.add(team)
    user.groups.add(team)
    return api(user)


def test_start_read_and_list(admin_api: Any, world: list[int], django_capture_on_commit_callbacks: Any) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        resp = admin_api.post(URL, {"changes": NO_NODES, "cluster": "c1", "window": "1h"}, format="json")
    assert resp.status_code == 201, resp.content
    body = resp.json()
    assert (body["state"], body["progress"], body["window"], body["cluster"]) == ("queued", 0.0, "1h", "c1")
    assert body["result"] is None and body["url"] == f"/replays/{body['id']}/"
    # automation writes no summary: its changes in words, for the list of runs
    assert body["summary"] == "remove node n1; remove node n2; remove node n3"
    assert world == [body["id"]]  # the task was sent after the commit
    assert replay.execute(body["id"]) == "done"
    detail = admin_api.get(f"{URL}{body['id']}/").json()
    assert detail["state"] == "done" and detail["progress"] == 1.0
    assert detail["result"]["differences"]["teams"]["queue/team-a"]["jobs.started"]["after"] == 0
    listed = admin_api.get(URL).json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    assert [r["id"] for r in rows] == [body["id"]] and "result" not in rows[0]  # the list stays small


BAD_INPUT = [
    ({"changes": NO_NODES, "window": "1 week"}, "window", "expected a span back from now"),
    ({"changes": NO_NODES, "window": "30d"}, "window", "at most 7 days"),
    ({"changes": []}, "changes", ""),
    ({"changes": [{"op": "update", "kind": "queue", "name": "nope", "spec": {"weight": 2}}]}, "changes.0.name", "nope"),
    ({"changes": NO_NODES, "cluster": "nope"}, "cluster", "cluster nope does not exist"),
]


def test_bad_input_is_a_400_naming_the_field_and_writes_nothing(admin_api: Any, world: list[int]) -> None:
    for body, attr, words in BAD_INPUT:
        resp = admin_api.post(URL, {"cluster": "c1", **body}, format="json")
        assert resp.status_code == 400, resp.content
        errors = error_attrs(resp)
        assert attr in errors and words in errors[attr], errors
    assert not ReplayRun.objects.exists() and world == []


def test_a_member_proposes_in_its_subtree_and_sees_its_runs_and_teams_only(
    admin_api: Any, member_api: Any, world: list[int]
) -> None:
    refused = member_api.post(
        URL, {"changes": [{"op": "update", "kind": "queue", "name": "dept", "spec": {"weight": 5}}], "cluster": "c1"}
    , format="json")  # fmt: skip
    assert refused.status_code == 400 and "not in your team's subtree" in error_attrs(refused)["changes.0.name"]
    mine = member_api.post(URL, {"changes": NO_NODES, "cluster": "c1", "window": "1h"}, format="json").json()
    theirs = admin_api.post(URL, {"changes": NO_NODES, "cluster": "c1", "window": "1h"}, format="json").json()
    assert replay.execute(mine["id"]) == "done"
    listed = member_api.get(URL).json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    assert [r["id"] for r in rows] == [mine["id"]]
    assert member_api.get(f"{URL}{theirs['id']}/").status_code == 404
    assert member_api.post(f"{URL}{theirs['id']}/cancel/").status_code == 404
    baseline = member_api.get(f"{URL}{mine['id']}/").json()["result"]["baseline"]
    assert set(baseline["teams"]) == {"queue/team-a", "quota/qa", *baseline["roots"]}  # the roots: the cluster's


def test_cancel_a_queued_run_then_409(admin_api: Any, world: list[int]) -> None:
    run = admin_api.post(URL, {"changes": NO_NODES, "cluster": "c1"}, format="json").json()
    assert run["window"] == "7d"  # the default
    resp = admin_api.post(f"{URL}{run['id']}/cancel/")
    assert resp.status_code == 200 and resp.json()["state"] == "cancelled"
    again = admin_api.post(f"{URL}{run['id']}/cancel/")
    assert again.status_code == 409 and "cancelled already" in again.content.decode()
    assert replay.execute(run["id"]) == "cancelled"  # the worker that takes it later does nothing


def test_the_task_is_routed_to_the_replay_queue_and_the_session_worker_does_not_consume_it() -> None:
    from controlplane.celery import app
    from planning.tasks import REPLAY_QUEUE

    route = app.amqp.router.route({}, "planning.tasks.run_replay", args=(1,), kwargs={})
    assert route["queue"].name == REPLAY_QUEUE == "replay"
    session_route = app.amqp.router.route({}, "scheduling.tasks.run_session", args=(1,), kwargs={})
    assert session_route["queue"].name == app.conf.task_default_queue == "celery"
    # a worker started without --queues (the session workers: make run's, docker compose's, Kubernetes') consumes
    # the default queue only
    assert set(app.amqp.Queues(app.conf.task_queues, create_missing=True).consume_from) == {"celery"}
    from controlplane import devserver

    commands = devserver.server_commands("/venv/bin/python", Path("/tmp/v"), "127.0.0.1", 8000)
    assert "--queues" not in commands["worker"] and "-Q" not in commands["worker"]
    replay_worker = commands["replay"]
    assert "replay" in replay_worker[replay_worker.index("--queues") + 1].split(",")
    kube = {
        d["metadata"]["name"]: d["spec"]["template"]["spec"]["containers"][0]["command"]
        for d in yaml.safe_load_all((Path(settings.BASE_DIR) / "deploy/kubernetes/fairway.yaml").read_text())
        if d and d["kind"] == "Deployment"
    }
    assert "--queues" not in kube["fairway-worker"]
    replay_pod = kube["fairway-replay-worker"]
    assert "replay" in replay_pod[replay_pod.index("--queues") + 1].split(",")


def test_the_replay_worker_gets_no_session_queue_of_its_own() -> None:
    """``scheduling.feed.affinity`` gives a one-process worker a session queue of its own; the replay worker, which
    consumes only the routed ``replay`` queue, runs no session and gets none (a worker of any other queue still
    does)."""
    from types import SimpleNamespace

    from controlplane.celery import app
    from scheduling.feed import affinity

    def worker(*queues: str) -> Any:
        selected = app.amqp.Queues(app.conf.task_queues, create_missing=True)
        if queues:
            selected.select(list(queues))
        return SimpleNamespace(app=SimpleNamespace(conf=app.conf, amqp=SimpleNamespace(queues=selected)))

    assert affinity._routed_queues_only(worker("replay"))
    assert not affinity._routed_queues_only(worker())  # the session worker: the default queue
    assert not affinity._routed_queues_only(worker("fairway-test-queue"))  # the suite's workers
    assert not affinity._routed_queues_only(worker("celery", "replay"))
