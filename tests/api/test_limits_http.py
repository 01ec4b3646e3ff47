"""Issue 9, item 4 over real HTTP: every bad input is a 4xx with the error envelope, every runaway is bounded.

Nesting bombs, oversized bodies (413, with simulate's documented size still accepted), absurd quantities on queues,
podgroups, heartbeats and what-if, replicas bombs, too many sessions, a spent wall-clock budget (422: the work
stopped), the per-process cap on simultaneous simulations (503 + Retry-After) and an unreachable database (503 +
Retry-After, API and pages). The budgets here assert on status codes, never on timings.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.acceptance import manifests as m
from tests.api.live import Live, errors
from tests.support.ports import free_port

BOMB = "[" * 100_000 + "]" * 100_000  # 200 KB: segfaulted a web worker through simulate
JSON = {"Content-Type": "application/json"}
VCJOB = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: bomb, namespace: nlp}
spec:
  tasks:
  - replicas: 300000
    template: {spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}}
"""


# -- nesting -----------------------------------------------------------------------------------------------------
def test_a_nested_json_body_is_a_400_not_a_crash(live: Live) -> None:
    r = live.member.post(f"{live.url}/api/v1/simulate/", data=BOMB, headers=JSON)
    assert r.status_code == 400
    assert "JSON nested 100000 levels deep, more than 64 (FAIRWAY_MAX_JSON_DEPTH)" in errors(r)[None]
    for path in ("/api/v1/queues/", "/api/v1/whatif/", "/api/v1/nodes/"):
        r = live.admin.post(f"{live.url}{path}", data="[" * 1000 + "]" * 1000, headers=JSON)
        assert r.status_code == 400, (path, r.text)
        assert "nested 1000 levels deep" in errors(r)[None]
    # at the limit it parses (and is refused for what it says, not for its shape)
    r = live.admin.post(f"{live.url}/api/v1/queues/", data='{"name": ' + "[" * 63 + "]" * 63 + "}", headers=JSON)
    assert r.status_code == 400 and "name" in errors(r)


def test_nested_manifests_and_policies_are_a_400(live: Live) -> None:
    url = f"{live.url}/api/v1/simulate/"
    r = live.member.post(url, json={"manifests": BOMB})
    assert r.status_code == 400
    assert "document 1: nested more than 64 levels deep (FAIRWAY_MAX_YAML_DEPTH)" in errors(r)["manifests"]
    r = live.member.post(url, json={"manifests": "- " * 50_000 + "x"})
    assert r.status_code == 400 and "nested more than 64 levels" in errors(r)["manifests"]
    node = m.dump(m.node("n1", cpu="4"))
    r = live.member.post(url, json={"manifests": node, "policy": "actions: enqueue\nx: " + BOMB})
    assert r.status_code == 400 and "nested more than 64 levels" in errors(r)["policy"]


def test_a_null_character_is_a_400(live: Live) -> None:
    r = live.admin.post(f"{live.url}/api/v1/nodes/", json={"name": "n-nul", "labels": {"zone\x00": "a"}})
    assert r.status_code == 400 and errors(r) == {"labels.zone\\u0000": "Null characters are not allowed."}
    r = live.admin.post(f"{live.url}/api/v1/nodes/", json={"name": "n-nul", "taints": [{"key": "k", "value": "\x00"}]})
    assert r.status_code == 400 and errors(r) == {"taints.0.value": "Null characters are not allowed."}
    r = live.admin.get(f"{live.url}/api/v1/queues/%00/")
    assert r.status_code == 400 and "null character" in errors(r)[None]
    r = live.admin.get(f"{live.url}/api/v1/queues/nlp/explain/", params={"cluster": "a\x00b"})
    assert r.status_code == 400


# -- body size -------------------------------------------------------------------------------------------------
def test_an_oversized_body_is_a_413_with_the_envelope(live: Live) -> None:
    r = live.admin.post(f"{live.url}/api/v1/queues/", json={"name": "q", "description": "x" * 3_000_000})
    assert r.status_code == 413
    assert errors(r) == {
        None: f"The request body is {len(r.request.body)} bytes; this endpoint accepts at most 2621440 "
        "(FAIRWAY_MAX_BODY_BYTES)."
    }
    assert r.json()["errors"][0]["code"] == "request_too_large"
    # pages keep the small limit too (before CSRF or the form parser read anything)
    r = requests.post(f"{live.url}/accounts/login/", data={"username": "a", "password": "x" * 3_000_000})
    assert r.status_code == 413 and "FAIRWAY_MAX_BODY_BYTES" in r.text


def test_simulate_takes_its_documented_size_and_refuses_more(live: Live) -> None:
    url = f"{live.url}/api/v1/simulate/"
    node = m.dump(m.node("n1", cpu="4"))
    filler = "# " + "x" * (19_900_000 - len(node)) + "\n"  # ~20 MB, the documented manifests size
    r = live.member.post(url, json={"manifests": node + filler})
    assert r.status_code == 200, r.text[:500]
    assert "n1" not in r.json()["document"]["bindings"].values()  # it ran: nothing to bind, a document back
    r = live.member.post(url, json={"manifests": node + "# " + "x" * 21_000_000})
    assert r.status_code == 400
    assert "more than 20000000 (FAIRWAY_MAX_MANIFEST_BYTES)" in errors(r)["manifests"]
    r = live.member.post(url, json={"manifests": node + "# " + "x" * 34_000_000})
    assert r.status_code == 413 and "FAIRWAY_SIMULATE_MAX_BODY_BYTES" in errors(r)[None]


# -- quantities --------------------------------------------------------------------------------------------------
def test_an_absurd_quantity_is_a_400_naming_the_field_everywhere(live: Live) -> None:
    huge = "1e999999999"
    r = live.admin.post(f"{live.url}/api/v1/queues/", json={"name": "qx", "deserved": {"cpu": huge}})
    assert r.status_code == 400 and "is too large" in errors(r)["deserved.cpu"]
    r = live.member.post(
        f"{live.url}/api/v1/podgroups/", json={"namespace": "nlp", "name": "pg", "min_resources": {"cpu": huge}}
    )
    assert r.status_code == 400 and "is too large" in errors(r)["min_resources.cpu"]
    r = live.admin.post(f"{live.url}/api/v1/nodes/cpu-01/heartbeat/", json={"allocatable": {"cpu": huge}})
    assert r.status_code == 400 and "is too large" in errors(r)["allocatable.cpu"]
    change = {"op": "add", "kind": "node", "spec": {"name": "n-x", "allocatable": {"memory": huge + "Ki"}}}
    r = live.admin.post(f"{live.url}/api/v1/whatif/", json={"changes": [change]})
    assert r.status_code == 400 and "is too large" in errors(r)["changes.0.spec.allocatable.memory"]
    r = live.admin.post(f"{live.url}/api/v1/queues/", data='{"name": "qy", "weight": 1' + "0" * 5000 + "}",
                        headers=JSON)  # fmt: skip
    assert r.status_code == 400


# -- how much work one request may ask for ------------------------------------------------------------------------
def test_replicas_pods_and_sessions_are_bounded(live: Live) -> None:
    r = live.member.post(f"{live.url}/api/v1/simulate/", json={"manifests": VCJOB})
    assert r.status_code == 400
    assert errors(r)["manifests"] == (
        "manifests: document 1 (Job nlp/bomb): spec.tasks[0].replicas: 300000 is more than 10000 (FAIRWAY_MAX_REPLICAS)"
    )
    pg = {"op": "add", "kind": "podgroup", "spec": {"namespace": "nlp", "name": "big", "replicas": 300_000}}
    r = live.admin.post(f"{live.url}/api/v1/whatif/", json={"changes": [pg]})
    assert r.status_code == 400 and "FAIRWAY_MAX_REPLICAS" in errors(r)["changes.0.spec.replicas"]
    many = [
        {"op": "add", "kind": "podgroup", "spec": {"namespace": "nlp", "name": f"pg{i}", "replicas": 10_000}}
        for i in range(11)
    ]
    r = live.admin.post(f"{live.url}/api/v1/whatif/", json={"changes": many})
    assert r.status_code == 400
    assert errors(r) == {
        "changes.10.spec.replicas": "the proposal would add 110000 pods, more than 100000 (FAIRWAY_MAX_PODS)"
    }
    r = live.member.post(f"{live.url}/api/v1/simulate/", json={"manifests": m.dump(m.node("n", cpu="1")),
                                                               "sessions": 50})  # fmt: skip
    assert r.status_code == 400 and "sessions" in errors(r)


def _busy_snapshot() -> str:
    docs: list[Any] = [m.node(f"n{i}", cpu="4", memory="16Gi") for i in range(40)]
    docs += [m.podgroup("ns1", f"pg{i}", "default", min_member=2) for i in range(300)]
    docs += [m.pod("ns1", f"pg{i}-{k}", group=f"pg{i}", cpu="3") for i in range(300) for k in range(2)]
    return m.dump(*docs)


def test_a_spent_budget_stops_the_work_with_422(live: Live, settings: Any) -> None:
    settings.FAIRWAY_LIMITS = dataclasses.replace(settings.FAIRWAY_LIMITS, request_budget_seconds=0.001)
    r = live.member.post(f"{live.url}/api/v1/simulate/", json={"manifests": _busy_snapshot(), "sessions": 20})
    assert r.status_code == 422
    body = r.json()
    assert body["type"] == "client_error" and body["errors"][0]["code"] == "budget_exceeded"
    assert "stopped after the budget of 0.001 s of computation" in body["errors"][0]["detail"]
    assert "(FAIRWAY_REQUEST_BUDGET_SECONDS)" in body["errors"][0]["detail"]
    change = {"op": "set_weight", "kind": "namespace", "name": "nlp", "weight": 3}
    r = live.admin.post(f"{live.url}/api/v1/whatif/", json={"changes": [change], "session": True})
    assert r.status_code == 422 and r.json()["errors"][0]["code"] == "budget_exceeded"
    # with the default budget the same requests complete
    settings.FAIRWAY_LIMITS = dataclasses.replace(settings.FAIRWAY_LIMITS, request_budget_seconds=20.0)
    r = live.admin.post(f"{live.url}/api/v1/whatif/", json={"changes": [change], "session": True})
    assert r.status_code == 200, r.text[:300]


def test_simulations_beyond_the_per_process_cap_are_a_503_with_retry_after(live: Live, settings: Any) -> None:
    from planning.values_api import heavy_work

    settings.FAIRWAY_LIMITS = dataclasses.replace(settings.FAIRWAY_LIMITS, max_concurrent_simulations=1)
    body = {"manifests": m.dump(m.node("n1", cpu="4"))}
    with heavy_work():  # the only slot is taken, as by a simulation still running in this process
        r = live.member.post(f"{live.url}/api/v1/simulate/", json=body)
        assert r.status_code == 503
        assert r.headers["Retry-After"] == "5"
        assert r.json()["errors"][0]["code"] == "busy"
    r = live.member.post(f"{live.url}/api/v1/simulate/", json=body)
    assert r.status_code == 200


# -- the database ------------------------------------------------------------------------------------------------
@pytest.fixture
def server_without_database(tmp_path: Path) -> Iterator[str]:
    """gunicorn serving Fairway with its database on a port where nothing listens."""
    port, dead = free_port(), free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:{dead}/fairway",
        "STATICFILES_STORAGE": "django.contrib.staticfiles.storage.StaticFilesStorage",
        "FAIRWAY_VAR_DIR": str(tmp_path),
    }
    gunicorn = Path(sys.executable).with_name("gunicorn")
    # (a worker that takes long to boot on a loaded machine is not killed: the test has no time window)
    command = [str(gunicorn), "controlplane.wsgi:application", "--bind", f"127.0.0.1:{port}", "--workers", "1"]
    proc = subprocess.Popen(
        [*command, "--timeout", "600"],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            try:
                requests.get(f"{url}/api/v1/", timeout=60)
                break
            except (requests.ConnectionError, requests.Timeout):  # not listening yet, or its worker still booting
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_without_the_database_every_request_is_a_503_with_retry_after(server_without_database: str) -> None:
    url = server_without_database
    for path in ("/api/v1/queues/", "/api/v1/queues/nlp/", "/api/v1/whatif/", "/api/schema/"):
        r = requests.get(f"{url}{path}", headers={"Authorization": "Token 0123456789abcdef"}, timeout=30)
        assert r.status_code == 503, (path, r.text[:300])
        assert r.headers["Retry-After"] == "5"
        assert r.json() == {
            "type": "server_error",
            "errors": [
                {
                    "code": "database_unavailable",
                    "detail": "The database cannot be reached at the moment; retry in a few seconds.",
                    "attr": None,
                }
            ],
        }
    r = requests.post(f"{url}/api/v1/queues/", json={"name": "q"}, timeout=30)  # anonymous: a 503 before a 401
    assert r.status_code == 503
    for path in ("/overview/", "/accounts/login/", "/admin/"):
        r = requests.get(f"{url}{path}", timeout=30, allow_redirects=False)
        assert r.status_code == 503, (path, r.text[:300])
        assert r.headers["Retry-After"] == "5" and "cannot be reached" in r.text


def test_a_database_error_inside_an_api_view_is_a_503(rf: Any) -> None:
    """The path the server above cannot take: the connection lost in the middle of a DRF view (its transaction
    already open), which DRF's exception handler sees first."""
    from django.db import OperationalError
    from rest_framework.request import Request

    from core.errors import ExceptionHandler

    request = Request(rf.get("/api/v1/queues/"))
    response = ExceptionHandler(
        OperationalError("server closed the connection unexpectedly"), {"request": request, "view": None}
    ).run()
    assert response is not None and response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.data["errors"][0]["code"] == "database_unavailable"
