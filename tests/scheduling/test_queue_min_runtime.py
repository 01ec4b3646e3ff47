"""A queue's minimum runtime flows from the row into the snapshot the engine gets (``scheduling.store``) and into
the session: a pod of the queue is kept from reclaim within it."""

from __future__ import annotations

import pytest

from quotas import services
from quotas.models import Queue
from scheduling import store
from tests.scheduling.conftest import World

pytestmark = pytest.mark.django_db


def test_the_snapshot_carries_each_queues_min_runtime(world: World) -> None:
    snap = store.load_snapshot(world.cluster)
    assert all(q.min_runtime is None for q in snap.queues.values())
    services.save_queue(Queue.objects.get(name="dept"), {"min_runtime": 120})
    services.save_queue(Queue.objects.get(name="team-b"), {"min_runtime": 0})
    snap = store.load_snapshot(world.cluster)
    assert snap.queues["dept"].min_runtime == 120.0
    assert snap.queues["team-b"].min_runtime == 0.0
    assert snap.queues["team-a"].min_runtime is None  # unset: the engine takes dept's for it
    services.save_queue(Queue.objects.get(name="dept"), {"min_runtime": None})
    assert store.load_snapshot(world.cluster).queues["dept"].min_runtime is None
