"""A replay run by a real Celery worker on Redis (issue 29 item 5): the task builds the trace of an hour of a small
cluster from the test database, replays the baseline and the proposal, and leaves the row done with its result and
its progress at 1; a run cancelled before the worker took it is not run. (The routing to the ``replay`` queue and
the session workers' queues: tests/api/test_replays.py; cancelling between sessions: tests/planning/test_replay.py.)"""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from planning import replay
from planning.models import ReplayRun
from planning.tasks import run_replay
from scheduling.models import PodGroup
from tests.integration.test_celery_worker import _logs, on_redis, redis_url, workers  # noqa: F401 - fixtures
from tests.scheduling.conftest import build_world

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_real_worker_runs_a_replay_and_skips_a_cancelled_one(
    on_redis: Any,  # noqa: F811
    workers: SimpleNamespace,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    build_world()
    PodGroup.objects.update(created=timezone.now() - timedelta(minutes=30))
    boss = get_user_model().objects.create_user("boss", is_staff=True)
    monkeypatch.setattr(replay, "send", lambda pk: None)  # sent by hand below, on this test's own queue
    no_nodes = [{"op": "remove", "kind": "node", "name": n} for n in ("n1", "n2", "n3")]
    run = replay.start(boss, no_nodes, window="1h", cluster="c1")
    skipped = replay.start(boss, no_nodes, window="1h", cluster="c1")
    assert replay.cancel(skipped, boss)
    workers.start(FAIRWAY_REPLAY_PROGRESS_SECONDS="0")
    assert run_replay.apply_async(args=[run.pk], queue=workers.queue).get(timeout=120) == "done", _logs(workers)
    assert run_replay.apply_async(args=[skipped.pk], queue=workers.queue).get(timeout=60) == "cancelled"
    run.refresh_from_db()
    assert (run.state, run.progress, run.error) == ("done", 1.0, "")
    assert run.result["differences"]["teams"]["queue/team-a"]["jobs.started"] == {"before": 1, "after": 0, "change": -1}
    assert ReplayRun.objects.get(pk=skipped.pk).result is None
