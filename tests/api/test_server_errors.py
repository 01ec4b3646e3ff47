"""Regression tests for the 500s schemathesis found (issue 9, item 5), one per finding, over real HTTP on the demo.

Each request below answered 500 before its fix; now each is a 4xx with the error envelope naming the field (or a
200 where the request was fine).
"""

from __future__ import annotations

from typing import Any

from tests.api.live import Live, errors


def test_renaming_a_namespace_onto_a_taken_name_is_a_400(live: Live) -> None:
    # was an IntegrityError: the serializer's declared name field had no uniqueness check
    for method in ("put", "patch"):
        r = getattr(live.admin, method)(f"{live.url}/api/v1/namespaces/vision/", json={"name": "vision-dev"})
        assert r.status_code == 400, r.text
        assert errors(r) == {"name": "namespace vision-dev already exists"}
    r = live.admin.patch(f"{live.url}/api/v1/namespaces/vision/", json={"name": "vision"})  # its own name is fine
    assert r.status_code == 200


def test_creating_namespace_0_twice_is_a_400(live: Live) -> None:
    r = live.admin.post(f"{live.url}/api/v1/namespaces/", json={"name": "0"})
    assert r.status_code == 201, r.text
    r = live.admin.post(f"{live.url}/api/v1/namespaces/", json={"name": "0", "weight": 1, "hard": {"cpu": "4"}})
    assert r.status_code == 400
    assert errors(r) == {"name": "namespace 0 already exists"}


def _delete_default_cluster(live: Live) -> None:
    r = live.admin.delete(f"{live.url}/api/v1/clusters/default/", params={"force": "true"})  # it holds the demo
    assert r.status_code == 204, r.text


def test_queue_explain_without_its_cluster(live: Live) -> None:
    # was Cluster.DoesNotExist: the cluster named by ?cluster=, or the default one once deleted
    r = live.admin.get(f"{live.url}/api/v1/queues/analytics/explain/", params={"cluster": "elsewhere"})
    assert r.status_code == 400 and errors(r) == {"cluster": "cluster 'elsewhere' does not exist"}
    _delete_default_cluster(live)
    r = live.admin.get(f"{live.url}/api/v1/queues/analytics/explain/")
    assert r.status_code == 200
    assert r.json() == {"name": "analytics", "values": None, "steps": []}


def test_quota_group_explain_without_its_cluster(live: Live) -> None:
    r = live.admin.get(f"{live.url}/api/v1/quota-groups/operations/explain/", params={"cluster": "\u00ff"})
    assert r.status_code == 400 and "does not exist" in errors(r)["cluster"]
    _delete_default_cluster(live)
    r = live.admin.get(f"{live.url}/api/v1/quota-groups/operations/explain/")
    assert r.status_code == 200
    assert r.json() == {"name": "operations", "values": None, "explain": {}}


def test_node_patch_and_put_with_cluster_0_or_name_0(live: Live) -> None:
    url = f"{live.url}/api/v1/nodes"
    r = live.admin.patch(f"{url}/cpu-01/", json={"cluster": "0"})
    assert r.status_code == 400 and errors(r) == {"cluster": "cluster 0 does not exist"}
    r = live.admin.patch(f"{url}/cpu-02/", json={"name": 0})  # a number is read as its text, a valid name
    assert r.status_code == 200 and r.json()["name"] == "0"
    # was an IntegrityError: renaming another node onto the taken name
    r = live.admin.patch(f"{url}/cpu-03/", json={"name": 0})
    assert r.status_code == 400 and errors(r) == {"name": "node 0 already exists in cluster default"}
    r = live.admin.put(f"{url}/cpu-03/", json={"name": "0", "cluster": "default", "allocatable": {"cpu": "1"}})
    assert r.status_code == 400 and errors(r) == {"name": "node 0 already exists in cluster default"}


def test_podgroup_patch_and_put_with_odd_keys(live: Live) -> None:
    url = f"{live.url}/api/v1/podgroups/"
    for name in ("job-a", "job-b"):
        r = live.admin.post(url, json={"namespace": "nlp", "name": name, "min_member": 1})
        assert r.status_code == 201, r.text
    ids = {pg["name"]: pg["id"] for pg in live.admin.get(url, params={"namespace": "nlp"}).json()["results"]}
    # was an IntegrityError: a rename onto a taken name in the same namespace
    r = live.admin.patch(f"{url}{ids['job-b']}/", json={"name": "job-a"})
    assert r.status_code == 400 and errors(r) == {"name": "podgroup nlp/job-a already exists"}
    r = live.admin.put(f"{url}{ids['job-b']}/", json={"namespace": "nlp", "name": "job-a"})
    assert r.status_code == 400 and errors(r) == {"name": "podgroup nlp/job-a already exists"}
    # keys the engine cannot count with: bounded like min_member
    r = live.admin.patch(f"{url}{ids['job-b']}/", json={"min_task_member": {"worker": 10**30}})
    assert r.status_code == 400 and "min_task_member.worker" in errors(r)
    r = live.admin.patch(f"{url}{ids['job-b']}/", json={"": 1, "unknown": None, "min_member": 2})
    assert r.status_code == 200 and r.json()["min_member"] == 2


def test_quota_group_with_a_null_parent_is_a_400(live: Live) -> None:
    # was a CheckConstraint violation: the database keeps one quota tree, under root
    url = f"{live.url}/api/v1/quota-groups/"
    for body in ({"name": "orphan", "parent": None}, {"name": "orphan", "parent": None, "tree_id": "t1"}):
        r = live.admin.post(url, json=body)
        assert r.status_code == 400, r.text
        assert errors(r) == {"parent": "quota group orphan: parent is required (use 'root' for a top-level group)"}
    r = live.admin.patch(f"{url}research/", json={"parent": None})
    assert r.status_code == 400 and "parent is required" in errors(r)["parent"]
    r = live.admin.post(url, json={"name": "orphan", "parent": "root"})
    assert r.status_code == 201


def test_eviction_filters_namespace_and_session(live: Live) -> None:
    url = f"{live.url}/api/v1/evictions/"
    # was a DataError: a decimal session id overflowed PostgreSQL's numeric
    r = live.admin.get(url, params={"namespace": "nlp", "session": "1e-999999"})
    assert r.status_code == 400 and errors(r) == {"session": "Enter a whole number."}
    r = live.admin.get(url, params={"namespace": "nlp", "session": str(2**70)})
    assert r.status_code == 400 and "session" in errors(r)
    r = live.admin.get(url, params={"namespace": "nlp", "session": "12"})
    assert r.status_code == 200 and r.json()["count"] == 0


def test_time_filters_with_offsets_postgresql_refuses(live: Live) -> None:
    # was a DataError: "time zone displacement out of range" for offsets beyond PostgreSQL's ±15:59
    for path in ("evictions", "samples", "sessions"):
        for moment in ("0666-12-02T19:27:21.02-21:22", "2026-01-01T00:00:00+21:45"):
            r: Any = live.admin.get(f"{live.url}/api/v1/{path}/", params={"since": moment, "until": moment})
            assert r.status_code == 200, (path, moment, r.text)
        r = live.admin.get(f"{live.url}/api/v1/{path}/", params={"since": "0001-01-01T00:00:00+05:00"})
        assert r.status_code == 400 and "out of range" in errors(r)["since"]


def test_patching_a_taint_without_its_key(live: Live) -> None:
    # was a 500 on every later read of the node: a PATCH is partial down to the nested taints, where DRF skipped the
    # required key, and the stored taint could not be shown again
    url = f"{live.url}/api/v1/nodes/cpu-01/"
    r = live.admin.patch(url, json={"taints": [{}]})
    assert r.status_code == 400
    assert errors(r) == {"taints.0.key": "This field is required.", "taints.0.effect": "This field is required."}
    assert live.admin.get(url).status_code == 200
    r = live.admin.patch(url, json={"taints": [{"key": "gpu", "effect": "NoSchedule"}]})
    assert r.status_code == 200 and r.json()["taints"] == [{"key": "gpu", "value": "", "effect": "NoSchedule"}]
    # tolerations keep their defaults on a PATCH too
    r = live.admin.post(f"{live.url}/api/v1/pods/", json={"namespace": "nlp", "name": "p1", "request": {"cpu": "1"}})
    assert r.status_code == 201, r.text
    r = live.admin.patch(f"{live.url}/api/v1/pods/{r.json()['id']}/", json={"tolerations": [{"key": "gpu"}]})
    assert r.status_code == 200, r.text
    assert r.json()["tolerations"] == [{"key": "gpu", "operator": "Equal", "value": "", "effect": ""}]


def test_a_write_whose_reference_was_deleted_meanwhile_is_a_409(transactional_db: None) -> None:
    """A row that lost what it points to between the view's checks and the commit (a cluster force-deleted while a
    pod was being created: the database checks the foreign key at commit) is a 409 saying so, not a 500. The
    exception is PostgreSQL's own (the check made immediate inside a savepoint)."""
    import json

    from django.db import IntegrityError, connection, transaction
    from django.test import RequestFactory

    from controlplane.middleware import DatabaseUnavailableMiddleware
    from scheduling.models import Pod

    caught: IntegrityError | None = None
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        try:
            with transaction.atomic():
                Pod.objects.create(cluster_id=987654321, namespace_id=987654321, name="orphan")
        except IntegrityError as exc:
            caught = exc
    assert caught is not None
    middleware = DatabaseUnavailableMiddleware(lambda request: None)  # type: ignore[arg-type,return-value]
    api = middleware.process_exception(RequestFactory().post("/api/v1/pods/"), caught)
    assert api is not None and api.status_code == 409
    body = json.loads(api.content)
    assert body["errors"][0]["code"] == "reference_deleted"
    assert "was deleted while the request ran; nothing was written" in body["errors"][0]["detail"]
    page = middleware.process_exception(RequestFactory().post("/nodes/new/"), caught)
    assert page is not None and page.status_code == 409
    other = IntegrityError("duplicate key value violates unique constraint")
    assert middleware.process_exception(RequestFactory().post("/api/v1/pods/"), other) is None
