"""Safe defaults (issue 9, item 6): no default secret in the compose file, redirects only within the site, Secure
cookies and HSTS with FAIRWAY_HTTPS=true, the schema and docs behind a login unless FAIRWAY_PUBLIC_API_DOCS=true,
and every new variable documented."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from quotas.models import Namespace, Queue
from tests.frontend import builders as b

ROOT = Path(__file__).resolve().parents[2]
NEW_VARIABLES = (
    "FAIRWAY_HTTPS",
    "FAIRWAY_HSTS_SECONDS",
    "FAIRWAY_HSTS_INCLUDE_SUBDOMAINS",
    "FAIRWAY_HSTS_PRELOAD",
    "FAIRWAY_TRUST_X_FORWARDED_PROTO",
    "FAIRWAY_PUBLIC_API_DOCS",
)


# -- the compose file and the secret key --------------------------------------------------------------------------


def test_compose_has_no_default_secret_and_refuses_to_start_without_one() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    for service in ("web", "worker", "beat"):
        env = compose["services"][service]["environment"]
        assert re.fullmatch(r"\$\{SECRET_KEY:\?[^}]+\}", env["SECRET_KEY"]), env["SECRET_KEY"]
        assert env["FAIRWAY_REQUIRE_SECRET_KEY"] == "true"
    assert "change-me" not in (ROOT / "docker-compose.yml").read_text()
    for binary in (["docker-compose"], ["docker", "compose"]):  # where a compose binary runs, ask it too
        if shutil.which(binary[0]) and subprocess.run([*binary, "version"], capture_output=True).returncode == 0:
            env = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
            cmd = [*binary, "-f", str(ROOT / "docker-compose.yml"), "config", "-q"]
            refused = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
            assert refused.returncode != 0 and "set SECRET_KEY" in refused.stderr
            accepted = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env={**env, "SECRET_KEY": "s"})
            assert accepted.returncode == 0, accepted.stderr
            break


def _settings_probe(env: dict[str, str], code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter with Django set up under ``env`` (settings are read at start-up)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("FAIRWAY_", "SECRET_KEY", "DJANGO_"))}
    base.update(
        {
            "DJANGO_SETTINGS_MODULE": "controlplane.settings",
            "DATABASE_URL": "sqlite:///:memory:",
            "FAIRWAY_VAR_DIR": str(tmp_path),
            "STATICFILES_STORAGE": "django.contrib.staticfiles.storage.StaticFilesStorage",
            **env,
        }
    )
    script = "import django, json\ndjango.setup()\nfrom django.conf import settings\n" + code
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, env=base)


def test_require_secret_key_refuses_to_start_without_one(tmp_path: Path) -> None:
    r = _settings_probe({"FAIRWAY_REQUIRE_SECRET_KEY": "true"}, "print(settings.SECRET_KEY)", tmp_path)
    assert r.returncode != 0 and "SECRET_KEY must be set" in r.stderr
    r = _settings_probe(
        {"FAIRWAY_REQUIRE_SECRET_KEY": "true", "SECRET_KEY": "k" * 50}, "print(settings.SECRET_KEY)", tmp_path
    )
    assert r.returncode != 0 and "FAIRWAY_SECRET_KEYS must be set" in r.stderr  # the key of the secrets at rest too
    fernet = "MTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTI="
    required = {"FAIRWAY_REQUIRE_SECRET_KEY": "true", "SECRET_KEY": "k" * 50, "FAIRWAY_SECRET_KEYS": fernet}
    r = _settings_probe(required, "print(settings.SECRET_KEY)", tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "k" * 50
    r = _settings_probe({**required, "FAIRWAY_SECRET_KEYS": f"{fernet},not-a-key"}, "print(1)", tmp_path)
    assert r.returncode != 0 and "FAIRWAY_SECRET_KEYS: key 2 is not a Fernet key" in r.stderr


# -- HTTPS -------------------------------------------------------------------------------------------------------

HTTPS_PROBE = """
from django.test import Client
from django.test.utils import setup_test_environment
setup_test_environment()
c = Client()
plain = c.get("/accounts/login/")
secure = c.get("/accounts/login/", secure=True)
forwarded = c.get("/accounts/login/", HTTP_X_FORWARDED_PROTO="https")
print(json.dumps({
    "session_secure": settings.SESSION_COOKIE_SECURE,
    "csrf_secure": settings.CSRF_COOKIE_SECURE,
    "hsts_seconds": settings.SECURE_HSTS_SECONDS,
    "hsts_sub": settings.SECURE_HSTS_INCLUDE_SUBDOMAINS,
    "proxy_header": settings.SECURE_PROXY_SSL_HEADER,
    "cookie_secure": bool(secure.cookies["csrftoken"]["secure"]),
    "hsts_secure": secure.headers.get("Strict-Transport-Security"),
    "hsts_plain": plain.headers.get("Strict-Transport-Security"),
    "hsts_forwarded": forwarded.headers.get("Strict-Transport-Security"),
}))
"""


def _https(env: dict[str, str], tmp_path: Path) -> dict[str, Any]:
    r = _settings_probe(env, HTTPS_PROBE, tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_https_turns_on_secure_cookies_and_hsts(tmp_path: Path) -> None:
    on = _https({"FAIRWAY_HTTPS": "true"}, tmp_path)
    assert on["session_secure"] and on["csrf_secure"] and on["cookie_secure"]
    assert on["hsts_seconds"] == 31_536_000 and on["hsts_sub"] is False
    assert on["hsts_secure"] == "max-age=31536000"
    assert on["hsts_plain"] is None  # Django sends HSTS on secure requests only
    assert on["proxy_header"] is None and on["hsts_forwarded"] is None  # a client cannot claim https itself
    tuned = _https(
        {
            "FAIRWAY_HTTPS": "true",
            "FAIRWAY_HSTS_SECONDS": "600",
            "FAIRWAY_HSTS_INCLUDE_SUBDOMAINS": "true",
            "FAIRWAY_HSTS_PRELOAD": "true",
            "FAIRWAY_TRUST_X_FORWARDED_PROTO": "true",
        },
        tmp_path,
    )
    assert tuned["hsts_secure"] == "max-age=600; includeSubDomains; preload"
    assert tuned["proxy_header"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert tuned["hsts_forwarded"] == "max-age=600; includeSubDomains; preload"  # behind the trusted proxy


def test_without_https_nothing_changes(tmp_path: Path) -> None:
    off = _https({}, tmp_path)
    assert not (off["session_secure"] or off["csrf_secure"] or off["cookie_secure"])
    assert off["hsts_seconds"] == 0 and off["hsts_secure"] is None


# -- redirects ---------------------------------------------------------------------------------------------------

EVIL = [
    "//evil.example/x",
    "https://evil.example/",
    "http://evil.example",
    "/\\evil.example/x",
    "\\\\evil.example",
    "javascript:alert(1)",
    "///evil.example",
]


@pytest.fixture
def editor(client: Any, db: Any) -> Any:
    b.queue("research")
    b.queue("nlp", "research")
    b.namespace("nlp-ns", 1, queue_name="nlp")
    client.force_login(b.user("boss", staff=True))
    return client


@pytest.mark.parametrize("target", EVIL)
def test_next_never_leaves_the_site(editor: Any, target: str) -> None:
    nlp = Queue.objects.get(name="nlp")
    r = editor.post("/edit/queues/nlp/close/", {"version": nlp.version, "next": target})
    assert r.status_code == 302 and r["Location"] == "/queues/nlp/", r["Location"]
    assert Queue.objects.get(name="nlp").state == "Closed"  # the action itself ran
    ns = Namespace.objects.get(name="nlp-ns")
    r = editor.post(
        "/edit/namespaces/nlp-ns/weight/",
        {f"ns-{ns.pk}-weight": "3", f"ns-{ns.pk}-version": ns.version, "action": "save", "next": target},
    )
    assert r.status_code == 302 and r["Location"] == "/edit/", r["Location"]


def test_next_within_the_site_is_followed(editor: Any) -> None:
    nlp = Queue.objects.get(name="nlp")
    r = editor.post("/edit/queues/nlp/close/", {"version": nlp.version, "next": "/trees/queues/?x=1"})
    assert r.status_code == 302 and r["Location"] == "/trees/queues/?x=1"


def test_login_redirects_only_within_the_site(client: Any, db: Any) -> None:
    b.user("lead")
    r = client.post("/accounts/login/", {"username": "lead", "password": b.PASSWORD, "next": "//evil.example/x"})
    assert r.status_code == 302 and "evil" not in r["Location"]


# -- the schema and the docs -------------------------------------------------------------------------------------


def test_schema_and_docs_need_a_login(client: Any, db: Any, api: Any) -> None:
    r = client.get("/api/schema/?format=json")
    assert r.status_code == 401 and r.json()["type"] == "client_error"
    for page in ("/api/docs/", "/api/redoc/"):
        r = client.get(page)
        assert r.status_code == 302 and r["Location"] == "/accounts/login/?next=" + page
    user = b.user("reader")
    assert api(user).get("/api/schema/?format=json").status_code == 200  # a token works
    client.force_login(user)
    assert client.get("/api/schema/?format=json").status_code == 200
    for page in ("/api/docs/", "/api/redoc/"):
        assert client.get(page).status_code == 200


def test_public_api_docs_opt_in(client: Any, db: Any, settings: Any) -> None:
    settings.FAIRWAY = {**settings.FAIRWAY, "PUBLIC_API_DOCS": True}
    assert client.get("/api/schema/?format=json").status_code == 200
    assert client.get("/api/docs/").status_code == 200 and client.get("/api/redoc/").status_code == 200


def test_the_schema_is_built_once_and_again_after_a_setting_changes(
    client: Any, db: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from drf_spectacular.generators import SchemaGenerator

    built: list[int] = []
    real = SchemaGenerator.get_schema

    def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        built.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SchemaGenerator, "get_schema", counting)
    client.force_login(b.user("reader"))
    settings.FAIRWAY = {**settings.FAIRWAY, "PUBLIC_API_DOCS": False}  # a setting changed: whatever was kept is gone
    first = client.get("/api/schema/?format=json")
    second = client.get("/api/schema/?format=json")
    yaml_text = client.get("/api/schema/")
    assert first.status_code == second.status_code == yaml_text.status_code == 200
    assert first.content == second.content and b"/api/v1/queues/" in first.content
    assert yaml_text["Content-Type"].startswith("application/vnd.oai.openapi") and b"openapi: 3" in yaml_text.content
    assert len(built) == 1  # the JSON twice and the YAML from one document
    settings.ROOT_URLCONF = settings.ROOT_URLCONF  # any setting changed (a URL may have): built again
    assert client.get("/api/schema/?format=json").content == first.content and len(built) == 2


# -- documented --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("variable", NEW_VARIABLES)
def test_every_new_variable_is_documented(variable: str) -> None:
    assert f"# {variable}=" in (ROOT / ".env.example").read_text()
    # documented in the settings table of the docs site (docs/configuration.md), not merely mentioned somewhere
    rows = [line for line in (ROOT / "docs" / "configuration.md").read_text().splitlines() if line.startswith("|")]
    assert any(f"`{variable}`" in row for row in rows), f"{variable} has no row in docs/configuration.md"
