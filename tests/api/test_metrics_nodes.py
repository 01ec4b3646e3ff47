"""``/metrics`` at scale (issue 25: a hostile agent may fill a cluster up to ``FAIRWAY_MAX_NODES``): healthy nodes are
counted, never listed; only the nodes that need attention (NotReady, set aside, silent) get series of their own, at
most ``FAIRWAY_METRICS_NODE_SERIES_LIMIT`` per cluster, with the number left out; and each cluster's text is kept and
rebuilt only when what it was built from changed (counted in builds, not timed)."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import time_machine
from django.conf import settings
from django.test import override_settings

from engine.resources import parse_resource_list
from planning import metrics as exposition
from quotas.models import Namespace, Queue
from scheduling import agent, store
from scheduling.models import Cluster, Node, PodGroup
from security.tokens import create_token
from tests.api.test_metrics import scrape, value
from tests.frontend import builders as b
from tests.scheduling.conftest import build_world

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
HEALTHY = 300
# name -> (ready, seconds since its last heartbeat or None, set aside, cordoned); the cluster's timeout is 40 s
ODD = {
    "silent-a": (True, 100, False, False),
    "silent-b": (True, 300, False, False),
    "silent-c": (True, 1000, False, False),
    "down-a": (False, 600, False, False),
    "down-b": (False, 700, False, False),
    "aside-a": (True, 1, True, False),
    "cordoned-a": (True, 1, False, True),
    "cordoned-b": (True, 1, False, True),
    "never-heard": (True, None, False, False),  # created by an admin, never heartbeated: not silent
}
NEEDING = {"silent-a", "silent-b", "silent-c", "down-a", "down-b", "aside-a"}


def _fleet() -> Cluster:
    """The default cluster with ``HEALTHY`` nodes that heartbeated 5 s before ``T0`` and the ``ODD`` ones."""
    cluster = b.cluster()
    shape = parse_resource_list({"cpu": "8", "memory": "32Gi"})
    rows = [
        Node(cluster=cluster, name=f"ok-{i:04d}", allocatable=shape, last_heartbeat=T0 - timedelta(seconds=5))
        for i in range(HEALTHY)
    ]
    for name, (ready, ago, aside, cordoned) in ODD.items():
        beat = None if ago is None else T0 - timedelta(seconds=ago)
        rows.append(
            Node(
                cluster=cluster,
                name=name,
                allocatable=parse_resource_list({}) if aside else shape,
                last_heartbeat=beat,
                ready=ready,
                not_ready_since=None if ready else beat,
                set_aside="set aside: allocatable cpu above the per-node bound (the test said so)" if aside else None,
                unschedulable=cordoned,
            )
        )
    Node.objects.bulk_create(rows)
    return cluster


@pytest.fixture
def token(make_user: Any) -> str:
    return create_token(make_user("admin", staff=True), "test")[1]


def _scrape(client: Any, token: str) -> tuple[dict[str, Any], bytes]:
    """The samples (``test_metrics.scrape``) and the text of one scrape each."""
    body = client.get("/metrics", headers={"Authorization": f"Token {token}"}).content
    return scrape(client, Authorization=f"Token {token}"), body


def _own(metrics: dict[str, Any]) -> dict[str, Any]:
    """Fairway's samples only (the web process' request counters move with every scrape)."""
    return {name: samples for name, samples in metrics.items() if name.startswith("fairway_")}


def _series(metrics: dict[str, Any], name: str, **labels: str) -> dict[str, float]:
    """The ``node`` label of each sample of ``name`` (with ``labels``) and its value."""
    out = {}
    for key, v in metrics.get(name, {}).items():
        found = dict(key)
        if all(found.get(k) == want for k, want in labels.items()):
            out[found["node"]] = v
    return out


def test_healthy_nodes_are_counted_and_only_those_that_need_attention_are_listed(client: Any, token: str) -> None:
    _fleet()
    with time_machine.travel(T0, tick=False):
        metrics, body = _scrape(client, token)
    c = {"cluster": "default"}
    by_state = {s: value(metrics, "fairway_nodes_by_state", **c, state=s) for s in exposition.NODE_STATES}
    assert by_state == {"ready": HEALTHY + 1, "not_ready": 2, "silent": 3, "set_aside": 1, "cordoned": 2}
    assert value(metrics, "fairway_nodes", **c, ready="true") == HEALTHY + len(ODD) - 2
    assert value(metrics, "fairway_nodes", **c, ready="false") == 2
    assert value(metrics, "fairway_nodes_oldest_heartbeat_age_seconds", **c) == 1000.0  # silent-c: Ready, oldest
    ages = _series(metrics, "fairway_node_heartbeat_age_seconds", **c)
    assert ages == {"silent-a": 100, "silent-b": 300, "silent-c": 1000, "down-a": 600, "down-b": 700, "aside-a": 1}
    why = {node: dict(key)["state"] for key in metrics["fairway_node_needs_attention"] if (node := dict(key)["node"])}
    assert why == {
        "silent-a": "silent",
        "silent-b": "silent",
        "silent-c": "silent",
        "down-a": "not_ready",
        "down-b": "not_ready",
        "aside-a": "set_aside",
    }
    assert value(metrics, "fairway_node_series_omitted", **c) == 0
    assert b"ok-0" not in body and b"cordoned-a" not in body and b"never-heard" not in body  # counted, not listed


def test_a_silent_node_that_heartbeats_again_leaves_the_list(client: Any, token: str) -> None:
    _fleet()
    agent.heartbeat(Node.objects.get(name="silent-a"), T0 - timedelta(seconds=2))
    with time_machine.travel(T0, tick=False):
        metrics, _ = _scrape(client, token)
    assert value(metrics, "fairway_nodes_by_state", cluster="default", state="silent") == 2
    assert "silent-a" not in _series(metrics, "fairway_node_heartbeat_age_seconds")


@pytest.mark.parametrize(
    ("limit", "listed"),
    [
        (0, set()),
        (3, {"down-b", "down-a", "aside-a"}),  # NotReady first, then set aside
        (4, {"down-b", "down-a", "aside-a", "silent-c"}),  # then the longest silent
        (100, NEEDING),
    ],
)
def test_the_listed_nodes_are_capped_and_the_rest_counted_as_left_out(
    client: Any, token: str, limit: int, listed: set[str]
) -> None:
    _fleet()
    limited = override_settings(FAIRWAY={**settings.FAIRWAY, "METRICS_NODE_SERIES_LIMIT": limit})
    with limited, time_machine.travel(T0, tick=False):
        metrics, _ = _scrape(client, token)
    assert set(_series(metrics, "fairway_node_needs_attention")) == listed
    assert set(_series(metrics, "fairway_node_heartbeat_age_seconds")) == listed
    assert value(metrics, "fairway_node_series_omitted", cluster="default") == len(NEEDING) - len(listed)
    assert value(metrics, "fairway_nodes_by_state", cluster="default", state="silent") == 3  # counted all the same


def test_the_node_series_limit_must_be_a_count() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(FAIRWAY_METRICS_NODE_SERIES_LIMIT="-1", DJANGO_SETTINGS_MODULE="controlplane.settings")
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "FAIRWAY_METRICS_NODE_SERIES_LIMIT=-1: expected a number of nodes" in done.stderr


def test_a_clusters_text_is_kept_until_what_it_shows_changed(client: Any, token: str) -> None:
    """Two clusters. Nothing changed: nothing rebuilt. A heartbeat alone (it moves the cluster's revision): nothing
    rebuilt, and its age is the new one. A node NotReady, a new job, a blocker written: that cluster's values text
    only, showing it. A session counted: the counters text only, showing it."""
    world = build_world(nodes=3)
    cluster = world.cluster
    exposition.clear()

    def builds() -> dict[str, int]:
        return dict(exposition.BUILDS)

    def delta(before: dict[str, int]) -> dict[str, int]:
        return {k: v - before.get(k, 0) for k, v in exposition.BUILDS.items() if v != before.get(k, 0)}

    def get() -> dict[str, Any]:
        return _own(scrape(client, Authorization=f"Token {token}"))

    c = {"cluster": "c1"}
    store.record_skipped(cluster.pk)
    first = builds()
    metrics = get()
    # c1 and default; only c1 has counters; the waits to start are counted again only every
    # FAIRWAY_METRICS_WAITS_EVERY_SECONDS (tests/api/test_metrics.py), so not again below
    assert delta(first) == {"values": 2, "counters": 1, "waits": 2}
    assert value(metrics, "fairway_sessions_total", **c, kind="session", status="skipped") == 1

    before = builds()
    assert get() == metrics
    assert delta(before) == {}

    with time_machine.travel(T0, tick=False):
        agent.heartbeat(Node.objects.get(cluster=cluster, name="n1"), T0 - timedelta(seconds=1000))
        before = builds()
        metrics = get()
    assert delta(before) == {}
    assert value(metrics, "fairway_nodes_by_state", **c, state="silent") == 1
    assert _series(metrics, "fairway_node_heartbeat_age_seconds", **c) == {"n1": 1000.0}

    Node.objects.filter(cluster=cluster, name="n2").update(ready=False)
    before = builds()
    metrics = get()
    assert delta(before) == {"values": 1}
    assert value(metrics, "fairway_nodes_by_state", **c, state="not_ready") == 1

    waiting = value(metrics, "fairway_queue_waiting_jobs", **c, queue="team-b", phase="Pending")
    assert waiting is not None
    PodGroup.objects.create(
        cluster=cluster,
        namespace=Namespace.objects.get(name="ns-b"),
        name="pg-b",
        queue=Queue.objects.get(name="team-b"),
    )
    before = builds()
    metrics = get()
    assert delta(before) == {"values": 1}
    assert value(metrics, "fairway_queue_waiting_jobs", **c, queue="team-b", phase="Pending") == waiting + 1

    PodGroup.objects.filter(cluster=cluster, name="pg-b").update(
        blocker={"kind": "queue", "name": "team-b", "resource": "cpu"}
    )
    before = builds()
    metrics = get()
    assert delta(before) == {"values": 1}
    blocked = {"blocker_kind": "queue", "blocker": "team-b", "resource": "cpu"}
    assert value(metrics, "fairway_admission_blocked_jobs", **c, **blocked) == 1

    store.record_skipped(cluster.pk)
    before = builds()
    metrics = get()
    assert delta(before) == {"counters": 1}
    assert value(metrics, "fairway_sessions_total", **c, kind="session", status="skipped") == 2


def test_a_deleted_clusters_text_is_forgotten(client: Any, token: str) -> None:
    world = build_world(cluster_name="gone", nodes=1)
    metrics, _ = _scrape(client, token)
    assert value(metrics, "fairway_nodes", cluster="gone", ready="true") == 1
    Cluster.objects.filter(pk=world.cluster.pk).delete()
    metrics, _ = _scrape(client, token)
    assert value(metrics, "fairway_nodes", cluster="gone", ready="true") is None
    assert all(cluster_id != world.cluster.pk for cluster_id, _ in exposition._parts)
