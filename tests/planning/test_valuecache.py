"""The value cache is keyed by the revisions the database keeps (``core.models.Revision``): every kind of writer
moves them in its own transaction, a rolled-back write does not, and the cached values last exactly as long as
the revisions stay the same."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import transaction
from django.utils import timezone

from core.models import Revision
from engine.resources import parse_resource_list
from engine.session.decisions import SessionResult
from planning import valuecache
from quotas.models import Namespace, Queue
from scheduling import agent, store
from scheduling.models import Cluster, Node, Pod, PodGroup
from tests.frontend import builders

pytestmark = pytest.mark.django_db


@pytest.fixture
def cluster() -> Cluster:
    """The default cluster with one node, a team queue, a namespace and a job of two pods (one Bound)."""
    builders.node("n1", cpu="8", memory="32Gi")
    builders.queue("team-a", deserved={"cpu": "4"})
    builders.namespace("ns-a", queue_name="team-a")
    builders.job("ns-a", "train", "team-a", 2, {"cpu": "1"})
    Pod.objects.filter(name="train-0").update(status="Bound", node=Node.objects.get(name="n1"))
    return builders.cluster()


def _write_tree_by_service(cluster: Cluster, api: Any) -> None:
    builders.queue("team-b")


def _write_namespace_by_api(cluster: Cluster, api: Any) -> None:
    response = api.patch("/api/v1/namespaces/ns-a/", {"weight": 3}, format="json")
    assert response.status_code == 200, response.content


def _write_namespaces_in_bulk(cluster: Cluster, api: Any) -> None:
    Namespace.objects.filter(name="ns-a").update(weight=4)


def _heartbeat_with_more_cpu(cluster: Cluster, api: Any) -> None:
    agent.heartbeat(Node.objects.get(name="n1"), timezone.now(), allocatable=parse_resource_list({"cpu": "16"}))


def _mark_the_node_stale(cluster: Cluster, api: Any) -> None:
    now = timezone.now()
    Node.objects.filter(name="n1").update(last_heartbeat=now - timedelta(hours=1))
    Cluster.objects.filter(pk=cluster.pk).update(nodes_checked_at=now, nodes_grace_from=now - timedelta(hours=1))
    cluster.refresh_from_db()
    assert agent.mark_stale_nodes(cluster, now) == ["n1"]


def _report_a_pod_running(cluster: Cluster, api: Any) -> None:
    agent.report_pod_status(Pod.objects.get(name="train-0"), "Running", timezone.now(), node="n1")


def _delete_a_podgroup(cluster: Cluster, api: Any) -> None:
    PodGroup.objects.get(name="train").delete()


def _change_the_cluster_settings(cluster: Cluster, api: Any) -> None:
    cluster.scheduler_policy = (
        'actions: "enqueue, allocate, backfill, reclaim"\n'
        "tiers:\n- plugins: [{name: priority}, {name: gang}, {name: conformance}]\n"
        "- plugins: [{name: overcommit}, {name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]\n"
    )
    cluster.save()


def _change_a_setting_the_values_do_not_read(cluster: Cluster, api: Any) -> None:
    cluster.node_heartbeat_timeout += 1
    cluster.save()


def _heartbeat_alone(cluster: Cluster, api: Any) -> None:
    agent.heartbeat(Node.objects.get(name="n1"), timezone.now())


def _commit_a_session(cluster: Cluster, api: Any) -> None:
    store.apply_decisions(cluster, SessionResult(), timezone.now())


WRITERS: dict[str, Callable[..., None]] = {
    "tree service": _write_tree_by_service,
    "namespace API": _write_namespace_by_api,
    "namespaces in bulk": _write_namespaces_in_bulk,
    "agent heartbeat": _heartbeat_with_more_cpu,
    "stale nodes (bulk)": _mark_the_node_stale,
    "agent pod report": _report_a_pod_running,
    "podgroup delete": _delete_a_podgroup,
    "cluster settings": _change_the_cluster_settings,
}
# writes that move the cluster's revision without changing anything the values are computed from
UNCHANGING: dict[str, Callable[..., None]] = {
    "agent heartbeat alone": _heartbeat_alone,
    "heartbeat timeout": _change_a_setting_the_values_do_not_read,
    "session commit with no decision": _commit_a_session,
}


@pytest.mark.parametrize("writer", list(WRITERS), ids=list(WRITERS))
def test_every_writer_invalidates_the_cached_values(cluster: Cluster, writer: str, admin_api: Any) -> None:
    _, values = valuecache.current(cluster)
    assert valuecache.current(cluster)[1] is values  # nothing written: the same values
    before = valuecache.fingerprint(cluster)
    WRITERS[writer](cluster, admin_api)
    assert valuecache.fingerprint(cluster) != before
    assert valuecache.current(cluster)[1] is not values


@pytest.mark.parametrize("writer", list(UNCHANGING), ids=list(UNCHANGING))
def test_a_write_that_changes_nothing_the_values_read_keeps_them(cluster: Cluster, writer: str) -> None:
    """The revision moves (a heartbeat does, every few seconds for each node of a live cluster), the snapshot read
    again equals the one the values came from: the same values object is handed back, equal to a computation from
    scratch, and the next real change still brings new ones."""
    from engine.changes import node_values
    from engine.values import compute_values

    _, values = valuecache.current(cluster)
    before = valuecache.fingerprint(cluster)
    UNCHANGING[writer](cluster, None)
    assert valuecache.fingerprint(cluster) != before
    snapshot, kept = valuecache.current(cluster)
    assert kept is values
    assert node_values(kept) == node_values(compute_values(snapshot))
    _heartbeat_with_more_cpu(cluster, None)
    snapshot, fresh = valuecache.current(cluster)
    assert fresh is not values and snapshot.nodes["n1"].allocatable["cpu"] == 16000


def test_the_recomputed_values_show_the_write(cluster: Cluster) -> None:
    snapshot, _ = valuecache.current(cluster)
    assert snapshot.nodes["n1"].allocatable["cpu"] == 8000
    _heartbeat_with_more_cpu(cluster, None)
    snapshot, _ = valuecache.current(cluster)
    assert snapshot.nodes["n1"].allocatable["cpu"] == 16000


def test_a_rolled_back_write_leaves_the_revisions_and_the_cache(cluster: Cluster) -> None:
    _, values = valuecache.current(cluster)
    before = valuecache.fingerprint(cluster)
    with pytest.raises(RuntimeError), transaction.atomic():
        builders.queue("team-c")
        _heartbeat_with_more_cpu(cluster, None)
        _commit_a_session(cluster, None)
        raise RuntimeError("roll back")
    assert valuecache.fingerprint(cluster) == before
    assert not Queue.objects.filter(name="team-c").exists()
    assert valuecache.current(cluster)[1] is values


def test_a_cluster_write_leaves_the_other_clusters_cached(cluster: Cluster) -> None:
    other = Cluster.objects.create(name="other")
    _, values = valuecache.current(other)
    _heartbeat_with_more_cpu(cluster, None)
    assert valuecache.current(other)[1] is values
    trees, own = Revision.objects.values_of(Revision.TREES, Revision.cluster_key(cluster.pk))
    assert trees > 0 and own > 0


def test_a_tree_change_reuses_the_pods_aggregates_and_a_pod_change_does_not(cluster: Cluster) -> None:
    """After an edit of the trees only, the values are recomputed on the same pods and podgroups (the mirror hands
    back the very same dictionaries) and reuse their aggregates; the numbers equal a computation from scratch. A pod
    write brings new ones."""
    from engine.values import compute_values

    snap0, values0 = valuecache.current(cluster)
    Queue.objects.filter(name="team-a").update(weight=3)
    snap1, values1 = valuecache.current(cluster)
    assert values1 is not values0
    assert snap1.tasks is snap0.tasks and snap1.podgroups is snap0.podgroups
    assert values1.aggregates is not None and values0.aggregates is not None
    assert values1.aggregates.jobs is values0.aggregates.jobs  # reused, not recomputed
    fresh = compute_values(snap1)
    assert dict(values1.queues) == dict(fresh.queues) and dict(values1.quotas) == dict(fresh.quotas)
    Pod.objects.filter(name="train-1").update(status="Bound", node=Node.objects.get(name="n1"))
    snap2, values2 = valuecache.current(cluster)
    assert snap2.tasks is not snap1.tasks
    assert values2.aggregates is not None and values2.aggregates.jobs is not values1.aggregates.jobs
    assert values2.queues["team-a"].allocated == parse_resource_list({"cpu": "2"})


def test_after_pod_writes_the_values_equal_a_computation_from_scratch(cluster: Cluster) -> None:
    """After writes of some pods the aggregates are brought up to date for those pods only (the cache's carry);
    every value equals ``compute_values`` of the same snapshot from scratch, write after write."""
    from engine.changes import node_values
    from engine.values import compute_values

    valuecache.current(cluster)
    builders.job("ns-a", "eval", "team-a", 3, {"cpu": "2"})
    n1 = Node.objects.get(name="n1")
    writes: list[Callable[[], object]] = [
        lambda: Pod.objects.filter(name="train-1").update(status="Bound", node=n1),
        lambda: Pod.objects.filter(name="eval-0").update(status="Running", node=n1),
        lambda: Pod.objects.filter(name="train-0").update(status="Succeeded"),
        lambda: Pod.objects.filter(name="eval-2").delete(),
        lambda: Pod.objects.filter(name="eval-1").update(priority=5),
    ]
    for write in writes:
        write()
        snap, values = valuecache.current(cluster)
        assert node_values(values) == node_values(compute_values(snap))
    assert valuecache._carries[cluster.pk].last.startswith("update")


def test_a_bulk_write_filtered_by_cluster_moves_that_cluster_only_when_it_writes_a_row(cluster: Cluster) -> None:
    """A bulk update that names its cluster (as the agent's and the store's do) moves that cluster's revision when
    a row matches, without asking the rows' clusters, and leaves it when none does; one that names none asks."""
    other = Cluster.objects.create(name="other")
    key, other_key = Revision.cluster_key(cluster.pk), Revision.cluster_key(other.pk)

    def revisions() -> tuple[int, int]:
        own, theirs = Revision.objects.values_of(key, other_key)
        return own, theirs

    before = revisions()
    assert Pod.objects.filter(cluster=other, status="Bound").update(status="Running") == 0
    assert Pod.objects.filter(cluster=cluster, status="Succeeded").update(status="Running") == 0
    assert revisions() == before
    assert Pod.objects.filter(cluster=cluster, status="Bound").update(status="Running") == 1
    after = revisions()
    assert after[0] > before[0] and after[1] == before[1]
    assert Pod.objects.filter(name="train-0").update(status="Bound") == 1  # no cluster named: its rows tell
    assert revisions()[0] > after[0] and revisions()[1] == before[1]


def test_a_bulk_write_inside_a_transaction_takes_no_savepoint_and_one_that_matches_nothing_writes_nothing(
    cluster: Cluster,
) -> None:
    """Inside a transaction a bulk write and its revision's move share it (no savepoint: two statements less, as the
    live loop makes tens of such writes a second); a write whose cluster has no matching row issues no UPDATE or
    DELETE at all, and moves nothing (the check that would move the revision found none). Rolled back whole, the
    write and its move go together."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    key = Revision.cluster_key(cluster.pk)
    (before,) = Revision.objects.values_of(key)
    with transaction.atomic(), CaptureQueriesContext(connection) as seen:
        assert Pod.objects.filter(cluster=cluster, status="Succeeded").update(status="Running") == 0
        assert Pod.objects.filter(cluster=cluster, status="Succeeded").delete() == (0, {})
        assert Pod.objects.filter(cluster=cluster, status="Bound").update(status="Running") == 1
    statements = [q["sql"].split()[0] for q in seen.captured_queries]
    assert "SAVEPOINT" not in statements, statements
    assert statements.count("UPDATE") == 2 and "DELETE" not in statements, statements  # the revision, the pod
    (after,) = Revision.objects.values_of(key)
    assert after > before
    with pytest.raises(RuntimeError), transaction.atomic():
        Pod.objects.filter(cluster=cluster, status="Running").update(status="Bound")
        raise RuntimeError("rolled back")
    assert Revision.objects.values_of(key) == (after,)
    assert Pod.objects.filter(cluster=cluster, status="Running").count() == 1
