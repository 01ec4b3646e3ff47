"""DELETE /api/v1/clusters/{name}/: a cluster that holds nodes, podgroups or pods goes only with ``?force=true`` (409
naming what it holds otherwise); a forced delete waits for the cluster's running session and keeps new ones out, so
it never meets their writes (no IntegrityError, no deadlock: never a 5xx). The admin's delete is the same delete,
its confirmation page being the force."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection, connections
from django_celery_beat.models import PeriodicTask

from scheduling import tasks
from scheduling.feed import mirror
from scheduling.models import Cluster, Node, Pod, PodGroup, SchedulingSession
from tests.scheduling.conftest import build_world

WAIT = 60  # seconds a thread may take before the test gives up on it (a guard, not a measured time)


def _waiting_for_a_lock() -> int:
    """How many backends wait for a lock now (read from another connection's view of pg_locks)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE NOT granted")
        (n,) = cursor.fetchone()
    return int(n)


def _until(check: Any, what: str) -> None:
    import time

    for _ in range(WAIT * 20):
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"gave up waiting for {what}")


@pytest.mark.django_db
def test_a_cluster_with_nodes_or_pods_is_deleted_only_with_force(admin_api: Any) -> None:
    world = build_world("c1")
    cid = world.cluster.pk
    assert PeriodicTask.objects.filter(args=f"[{cid}]").exists()
    r = admin_api.delete("/api/v1/clusters/c1/")
    assert r.status_code == 409, r.json()
    error = r.json()["errors"][0]
    assert error["code"] == "cluster_not_empty"
    assert error["detail"] == (
        "cluster c1 holds 3 nodes, 1 podgroup and 3 pods, which would be deleted with it (and every record of its "
        "sessions); to delete them with it, confirm with force (DELETE /api/v1/clusters/c1/?force=true, or fairway "
        "cluster delete c1 --force)"
    )
    assert Node.objects.filter(cluster_id=cid).count() == 3 and Pod.objects.filter(cluster_id=cid).count() == 3
    assert admin_api.delete("/api/v1/clusters/c1/?force=maybe").status_code == 400
    assert tasks.run_session(cid) == "ran"
    assert admin_api.delete("/api/v1/clusters/c1/?force=true").status_code == 204
    assert not Cluster.objects.filter(pk=cid).exists()
    assert not Node.objects.filter(cluster_id=cid).exists() and not Pod.objects.filter(cluster_id=cid).exists()
    assert not SchedulingSession.objects.filter(cluster_id=cid).exists()
    assert not PeriodicTask.objects.filter(args=f"[{cid}]").exists()
    assert tasks.run_session(cid) == "gone"
    # an empty cluster needs no force
    Cluster.objects.create(name="empty")
    assert admin_api.delete("/api/v1/clusters/empty/").status_code == 204


@pytest.mark.django_db
def test_team_members_delete_no_cluster(api: Any, make_user: Any) -> None:
    Cluster.objects.create(name="empty")
    assert api(make_user("someone")).delete("/api/v1/clusters/empty/?force=true").status_code == 403
    assert Cluster.objects.filter(name="empty").exists()


@pytest.mark.django_db(transaction=True)
def test_a_forced_delete_waits_for_the_running_session(admin_api: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The session holds the cluster's lock and has written its rows (not committed) when the DELETE arrives: the
    delete waits for it, then deletes everything, the session's rows included; 204, nothing half-done."""
    world = build_world("c1")
    cid = world.cluster.pk
    entered, release = threading.Event(), threading.Event()
    real_remember = mirror.ClusterMirror.remember

    def paused(self: Any, *args: Any, **kwargs: Any) -> Any:  # after the engine ran, before the session's writes
        real_remember(self, *args, **kwargs)
        entered.set()
        assert release.wait(WAIT)

    monkeypatch.setattr(mirror.ClusterMirror, "remember", paused)
    results: dict[str, Any] = {}

    def session() -> None:
        try:
            results["session"] = tasks.run_session(cid)
        finally:
            connections.close_all()

    def delete() -> None:
        try:
            results["delete"] = admin_api.delete("/api/v1/clusters/c1/?force=true").status_code
        finally:
            connections.close_all()

    s = threading.Thread(target=session)
    s.start()
    assert entered.wait(WAIT)
    d = threading.Thread(target=delete)
    d.start()
    _until(lambda: _waiting_for_a_lock() > 0, "the delete to wait for the session's lock")
    assert "delete" not in results
    release.set()
    s.join(WAIT)
    d.join(WAIT)
    assert results == {"session": "ran", "delete": 204}
    assert not Cluster.objects.filter(pk=cid).exists()
    assert not SchedulingSession.objects.filter(cluster_id=cid).exists()
    assert not Pod.objects.filter(cluster_id=cid).exists() and not PodGroup.objects.filter(cluster_id=cid).exists()


@pytest.mark.django_db(transaction=True)
def test_a_session_that_meets_the_delete_finds_the_cluster_gone() -> None:
    """The delete holds the cluster's locks (not committed yet) when a session starts: the session skips, and the
    record of its skip, which refers to the cluster, waits for the delete and then finds it gone; no IntegrityError
    anywhere."""
    from django.db import transaction

    from scheduling import ownership

    world = build_world("c1")
    cid = world.cluster.pk
    holding, release = threading.Event(), threading.Event()
    results: dict[str, Any] = {}

    def delete() -> None:
        try:
            with transaction.atomic():
                results["delete"] = str(ownership.delete_cluster(cid, force=True))
                holding.set()
                assert release.wait(WAIT)
        finally:
            connections.close_all()

    def session() -> None:
        try:
            results["session"] = tasks.run_session(cid)
            results["recycle"] = tasks.recycle(cid)
        finally:
            connections.close_all()

    d = threading.Thread(target=delete)
    d.start()
    assert holding.wait(WAIT)
    s = threading.Thread(target=session)
    s.start()
    _until(lambda: _waiting_for_a_lock() > 0, "the session's record to wait for the delete")
    release.set()
    d.join(WAIT)
    s.join(WAIT)
    assert results == {"delete": "3 nodes, 1 podgroup and 3 pods", "session": "gone", "recycle": "gone"}
    assert not SchedulingSession.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_forced_delete_waits_for_a_write_of_the_clusters_rows_in_flight(admin_api: Any) -> None:
    """A pod being created (its transaction holds the cluster's revision, not committed) when the DELETE arrives:
    the delete waits for it and deletes it too. Taking the cluster's row before the revision was a deadlock (the pod's
    commit checks its cluster's row), which PostgreSQL broke by aborting one of the two: a 503."""
    from django.db import transaction

    world = build_world("c1")
    cid = world.cluster.pk
    holding, release = threading.Event(), threading.Event()
    results: dict[str, Any] = {}

    def create() -> None:
        try:
            with transaction.atomic():
                Pod.objects.create(cluster_id=cid, namespace=world.pods["ns-b/solo"].namespace, name="late")
                holding.set()
                assert release.wait(WAIT)
            results["create"] = "committed"
        finally:
            connections.close_all()

    def delete() -> None:
        try:
            results["delete"] = admin_api.delete("/api/v1/clusters/c1/?force=true").status_code
        finally:
            connections.close_all()

    c = threading.Thread(target=create)
    c.start()
    assert holding.wait(WAIT)
    d = threading.Thread(target=delete)
    d.start()
    _until(lambda: _waiting_for_a_lock() > 0, "the delete to wait for the pod's transaction")
    release.set()
    c.join(WAIT)
    d.join(WAIT)
    assert results == {"create": "committed", "delete": 204}
    assert not Cluster.objects.filter(pk=cid).exists() and not Pod.objects.filter(name="late").exists()


@pytest.mark.django_db
def test_the_admin_deletes_a_cluster_after_its_confirmation_page(client: Any) -> None:
    from django.contrib.auth import get_user_model

    world = build_world("c1")
    client.force_login(get_user_model().objects.create_superuser("root-admin", password="pw-root-admin"))
    url = f"/admin/scheduling/cluster/{world.cluster.pk}/delete/"
    page = client.get(url)
    assert page.status_code == 200 and "Are you sure" in page.content.decode()
    assert client.post(url, {"post": "yes"}).status_code == 302
    assert not Cluster.objects.filter(name="c1").exists() and not Node.objects.filter(name="n1").exists()
