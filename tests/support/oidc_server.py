"""Runs the test OpenID Connect provider (``tests/support/oidc_provider``) in a separate process on a free loopback
port: its own SQLite database in a temporary folder, its tables made when it starts; an RSA key generated here
(``key_pem``, RS256); gunicorn serving it. ``user()`` and ``client()`` set its users (with their groups) and Fairway's
client while it runs, through its seed endpoints (``oidc_provider/seed.py``, for the token made here only).
``stop()`` ends the server and removes the folder."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.support.ports import free_port

REPO = Path(__file__).resolve().parents[2]
START_SECONDS = 60  # how long the provider may take to answer its discovery document


class ProviderError(RuntimeError):
    """The provider did not start or a command failed (the message ends with its output)."""


def rsa_key_pem() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


class OidcProvider:
    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="fairway-oidc-"))
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.issuer = f"{self.base}/o"
        self.key_pem = rsa_key_pem()
        self.seed_token = secrets.token_urlsafe(32)
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_URL"))},
            "DJANGO_SETTINGS_MODULE": "tests.support.oidc_provider.settings",
            "PROVIDER_SECRET_KEY": "test-provider-" + self.folder.name,
            "PROVIDER_DATABASE": str(self.folder / "provider.sqlite3"),
            "PROVIDER_RSA_KEY": self.key_pem,
            "PROVIDER_ISSUER": self.issuer,
            "PROVIDER_SEED_TOKEN": self.seed_token,
            "PYTHONPATH": str(REPO),
        }
        self.process: subprocess.Popen[bytes] | None = None
        self.log = self.folder / "server.log"

    def _seed(self, what: str, data: dict[str, object]) -> None:
        request = urllib.request.Request(
            f"{self.base}/seed/{what}/",
            data=json.dumps(data).encode(),
            headers={"Authorization": f"Bearer {self.seed_token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30):
                pass
        except urllib.error.HTTPError as e:
            raise ProviderError(f"the provider refused the {what} {data}: {e.code} {e.read().decode()[-2000:]}") from e

    def start(self) -> OidcProvider:
        try:
            with self.log.open("wb") as log:
                self.process = subprocess.Popen(
                    [
                        sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{self.port}", "--workers", "1",
                        "--threads", "4", "--no-control-socket", "tests.support.oidc_provider.wsgi:application",
                    ],
                    cwd=REPO, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                )  # fmt: skip
            deadline = time.monotonic() + START_SECONDS
            while True:
                try:
                    with urllib.request.urlopen(f"{self.issuer}/.well-known/openid-configuration", timeout=5) as r:
                        if r.status == 200:
                            return self
                except (urllib.error.URLError, ConnectionError, TimeoutError):
                    pass
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise ProviderError(f"the provider did not start:\n{self.log.read_text()[-4000:]}")
                time.sleep(0.1)
        except BaseException:
            self.stop()
            raise

    def user(self, username: str, password: str, groups: list[str], email: str = "") -> None:
        self._seed("user", {"username": username, "password": password, "email": email, "groups": groups})

    def client(self, client_id: str, secret: str, redirect_uri: str) -> None:
        self._seed("client", {"client_id": client_id, "secret": secret, "redirect_uri": redirect_uri})

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)
