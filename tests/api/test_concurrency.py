"""Optimistic concurrency that holds under real concurrent HTTP clients (issue 9, item 1).

A live server (pytest-django's threaded ``live_server``, one database connection per request thread, PostgreSQL)
and real clients (``requests``, one thread each, released together by a barrier): several writers with the same
``If-Match`` get exactly one success; read-modify-write loops with retry on 412 lose no update; the editor's
version check holds the same way; and the tree rules cannot be broken by writes that each passed them alone.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
import requests

from core.models import VersionConflict
from engine.resources import parse_resource_list
from quotas import services
from quotas.models import Queue

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

TIMEOUT = 30


@pytest.fixture
def admin_token(transactional_db: Any) -> str:
    from django.contrib.auth import get_user_model

    from security.tokens import create_token

    services.ensure_builtins()
    user = get_user_model().objects.create_user("racer", password="pw-racer-1", is_staff=True)
    return create_token(user, "test")[1]


def _together(n: int, work: Callable[[int], Any]) -> list[Any]:
    """Run ``work(i)`` in ``n`` threads released at the same moment; their results in order (exceptions
    re-raised)."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n

    def run(i: int) -> None:
        try:
            barrier.wait(timeout=TIMEOUT)
            results[i] = work(i)
        except BaseException as exc:  # handed to the test thread
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT * 4)
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return results


def _session(token: str) -> requests.Session:
    s = requests.Session()
    s.headers.update({"Authorization": f"Token {token}", "Content-Type": "application/json"})
    return s


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/v1/queues/q/", {"weight": 7}),
        ("/api/v1/quota-groups/g/", {"max": {"cpu": "12"}}),
        ("/api/v1/namespaces/ns/", {"weight": 5}),
    ],
)
def test_ten_simultaneous_patches_with_one_if_match_make_one_success(
    live_server: Any, admin_token: str, path: str, body: dict[str, Any]
) -> None:
    from quotas.models import Namespace

    services.save_queue(None, {"name": "q"})
    services.save_quota_group(None, {"name": "g", "max": parse_resource_list({"cpu": "8"})})
    Namespace.objects.create(name="ns")
    first = requests.get(live_server.url + path, headers={"Authorization": f"Token {admin_token}"}, timeout=TIMEOUT)
    etag = first.headers["ETag"]

    def patch(i: int) -> int:
        with _session(admin_token) as s:
            return s.patch(live_server.url + path, json=body, headers={"If-Match": etag}, timeout=TIMEOUT).status_code

    codes = Counter(_together(10, patch))
    assert codes == Counter({200: 1, 412: 9}), codes
    after = requests.get(live_server.url + path, headers={"Authorization": f"Token {admin_token}"}, timeout=TIMEOUT)
    assert after.json()["version"] == first.json()["version"] + 1
    # the stale tag is refused from now on, the new one works
    with _session(admin_token) as s:
        assert s.patch(live_server.url + path, json=body, headers={"If-Match": etag}).status_code == 412
        assert s.patch(live_server.url + path, json=body, headers={"If-Match": after.headers["ETag"]}).ok


def test_simultaneous_deletes_and_state_changes_with_one_if_match(live_server: Any, admin_token: str) -> None:
    services.save_queue(None, {"name": "q"})
    etag = requests.get(
        live_server.url + "/api/v1/queues/q/", headers={"Authorization": f"Token {admin_token}"}, timeout=TIMEOUT
    ).headers["ETag"]

    def act(i: int) -> int:
        url = live_server.url + ("/api/v1/queues/q/close/" if i % 2 else "/api/v1/queues/q/")
        with _session(admin_token) as s:
            method = s.post if i % 2 else s.delete
            return method(url, headers={"If-Match": etag}, timeout=TIMEOUT).status_code

    codes = _together(8, act)
    winners = [c for c in codes if c < 300]
    assert len(winners) == 1, codes
    assert all(c in (404, 412) for c in codes if c >= 300), codes  # 404: the one that won deleted it


def test_eight_read_modify_write_clients_with_retries_lose_nothing(live_server: Any, admin_token: str) -> None:
    """Each client increments the queue's weight 6 times: GET, then PATCH weight+1 with If-Match; on 412 it reads
    again and retries. Every success must count: the final weight is the start plus the successes."""
    services.save_queue(None, {"name": "counter", "weight": 1})
    url = live_server.url + "/api/v1/queues/counter/"
    per_client = 6  # 48 increments racing: enough for refusals and retries (asserted below)

    def client(i: int) -> tuple[int, int]:
        done = conflicts = 0
        with _session(admin_token) as s:
            while done < per_client:
                current = s.get(url, timeout=TIMEOUT)
                assert current.status_code == 200, current.text
                r = s.patch(
                    url,
                    json={"weight": current.json()["weight"] + 1},
                    headers={"If-Match": current.headers["ETag"]},
                    timeout=TIMEOUT,
                )
                if r.status_code == 412:
                    conflicts += 1
                    continue
                assert r.status_code == 200, r.text
                done += 1
        return done, conflicts

    results = _together(8, client)
    successes = sum(d for d, _ in results)
    assert successes == 8 * per_client
    assert Queue.objects.get(name="counter").weight == 1 + successes  # nothing lost
    assert sum(c for _, c in results) > 0  # the clients really raced (they were refused and retried)


def test_concurrent_creates_cannot_break_the_tree_rules_together(live_server: Any, admin_token: str) -> None:
    """Children's deserved must sum within the parent's: 6 clients each add a child deserving 4 of the parent's 10.
    Each request passes the rule alone; the tree write lock makes them check one after another, so exactly two
    are created and the rest are refused with the rule's message."""
    services.save_queue(None, {"name": "dept", "deserved": parse_resource_list({"cpu": "10"})})

    def create(i: int) -> requests.Response:
        with _session(admin_token) as s:
            return s.post(
                live_server.url + "/api/v1/queues/",
                json={"name": f"team-{i}", "parent": "dept", "deserved": {"cpu": "4"}},
                timeout=TIMEOUT,
            )

    responses = _together(6, create)
    assert sorted(r.status_code for r in responses) == [201, 201, 400, 400, 400, 400], [r.text for r in responses]
    assert Queue.objects.filter(parent__name="dept").count() == 2
    refused = next(r for r in responses if r.status_code == 400).json()
    assert refused["errors"][0]["attr"].startswith("deserved")


def _logged_in(base: str, username: str, password: str) -> requests.Session:
    s = requests.Session()
    s.get(base + "/accounts/login/", timeout=TIMEOUT)
    r = s.post(
        base + "/accounts/login/",
        data={"username": username, "password": password, "csrfmiddlewaretoken": s.cookies["csrftoken"]},
        timeout=TIMEOUT,
    )
    assert r.ok and "sessionid" in s.cookies, r.status_code
    return s


def test_the_editors_version_check_holds_under_concurrent_saves(live_server: Any, admin_token: str) -> None:
    """Six browsers save the queue form read at the same version: one is saved, five get the conflict page (409)."""
    queue = services.save_queue(None, {"name": "shared", "weight": 1})
    sessions = [_logged_in(live_server.url, "racer", "pw-racer-1") for _ in range(6)]

    def save(i: int) -> int:
        s = sessions[i]
        form = {
            "name": "shared",
            "parent": "root",
            "weight": str(10 + i),
            "priority": "0",
            "reclaimable": "on",
            "version": str(queue.version),
            "action": "save",
            "csrfmiddlewaretoken": s.cookies["csrftoken"],
        }
        r = s.post(live_server.url + "/edit/queues/shared/", data=form, allow_redirects=False, timeout=TIMEOUT)
        return r.status_code

    codes = Counter(_together(6, save))
    assert codes == Counter({302: 1, 409: 5}), codes
    saved = Queue.objects.get(name="shared")
    assert saved.version == queue.version + 1 and 10 <= saved.weight <= 15
    page = sessions[0].get(live_server.url + "/edit/queues/shared/", timeout=TIMEOUT).text
    assert re.search(rf'name="version" value="{saved.version}"', page)


def test_a_save_from_a_stale_instance_is_refused_in_the_database(transactional_db: Any) -> None:
    """Below every view: saving a row read before somebody else saved it is a compare-and-swap that fails
    (``VersionConflict``) and writes nothing, instead of overwriting the other change."""
    services.ensure_builtins()
    services.save_queue(None, {"name": "q", "weight": 1})
    mine, theirs = Queue.objects.get(name="q"), Queue.objects.get(name="q")
    theirs.weight = 5
    theirs.save()
    mine.priority = 9
    with pytest.raises(VersionConflict, match="read at version 1 and is now at version 2"):
        mine.save()
    row = Queue.objects.get(name="q")
    assert (row.weight, row.priority, row.version) == (5, 0, 2)
    assert mine.version == 1  # the instance stays as it was read
    mine.refresh_from_db()
    mine.priority = 9
    mine.save()
    assert Queue.objects.get(name="q").version == 3
