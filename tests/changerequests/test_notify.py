"""Change request notifications: the webhook (a local HTTP server in a thread) gets each event as JSON, and neither
a failing webhook nor a failing mail server fails the request."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest

from changerequests.models import ChangeRequest
from tests.changerequests.conftest import NLP_PLUS_4

pytestmark = pytest.mark.django_db
BASE = "/api/v1/change-requests/"


class Hook:
    def __init__(self, status: int) -> None:
        self.status = status
        self.received: list[dict[str, Any]] = []


@pytest.fixture
def hook(settings: Any, request: pytest.FixtureRequest) -> Iterator[Hook]:
    """A webhook receiver on a free local port answering the status ``request.param`` (indirect), else 204."""
    found = Hook(getattr(request, "param", 204))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers["Content-Length"])
            found.received.append(json.loads(self.rfile.read(length)))
            self.send_response(found.status)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.FAIRWAY = {**settings.FAIRWAY, "CHANGE_REQUEST_WEBHOOK_URL": f"http://127.0.0.1:{server.server_port}/hook"}
    yield found
    server.shutdown()
    server.server_close()


def test_the_webhook_gets_every_step(clients: dict[str, Any], hook: Hook) -> None:
    filed = clients["nlp-lead"].post(BASE, {"changes": NLP_PLUS_4}, format="json").json()
    clients["research-lead"].post(f"{BASE}{filed['id']}/approve/", {"comment": "ok"}, format="json")
    assert [(h["event"], h["id"], h["status"]) for h in hook.received] == [
        ("filed", filed["id"], "open"),
        ("applied", filed["id"], "applied"),
    ]
    assert hook.received[0]["requester"] == "nlp-lead" and hook.received[1]["reviewer"] == "research-lead"
    assert hook.received[0]["changes"] == NLP_PLUS_4 and hook.received[0]["url"].endswith(f"/requests/{filed['id']}/")


@pytest.mark.parametrize("hook", [500], indirect=True)
def test_a_failing_webhook_is_logged_and_the_request_stands(
    clients: dict[str, Any], hook: Hook, caplog: pytest.LogCaptureFixture
) -> None:
    r = clients["nlp-lead"].post(BASE, {"changes": NLP_PLUS_4}, format="json")
    assert r.status_code == 201 and ChangeRequest.objects.count() == 1 and len(hook.received) == 1
    assert any("webhook filed" in rec.getMessage() and "500" in rec.getMessage() for rec in caplog.records)


def test_a_failing_mail_server_is_logged_and_the_request_stands(
    clients: dict[str, Any], settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", port, 5
    r = clients["nlp-lead"].post(BASE, {"changes": NLP_PLUS_4}, format="json")
    assert r.status_code == 201 and ChangeRequest.objects.get().status == "open"
    assert any("not sent" in rec.getMessage() for rec in caplog.records)
