"""A real Kubernetes control plane for the tests: ``etcd`` and ``kube-apiserver`` as subprocesses on loopback.

The binaries are built once per machine by ``scripts/kube-tools.sh`` (``make kube-tools``, a prerequisite of
``make test``) into a cache folder outside the repository; ``binaries()`` finds them there. ``ControlPlane`` starts:

* etcd on a free loopback port with a temporary data folder (one member, no fsync: a test's data is thrown away);
* kube-apiserver on a free loopback port, serving HTTPS with the self-signed certificate it makes in its
  ``--cert-dir`` (the kubeconfigs trust exactly that certificate), RBAC (and Node) authorization, a static admin
  token (``--token-auth-file``; the user is in ``system:masters``), and a service-account issuer whose signing key
  pair is made here, so the TokenRequest API issues real ServiceAccount tokens;

waits for ``/readyz``, installs the peers' CRDs (``tests/fixtures/crds``, copied unchanged from their repositories; not its ``workloads`` folder)
and waits until each is Established. ``stop()`` (also on a failed start, and at the end of a ``with`` block) stops
kube-apiserver, then etcd, and removes the temporary folder. A start that fails raises ``ControlPlaneError`` with
the end of the failing process's log.

No kube-controller-manager runs unless asked (``controllers``), so nothing creates a namespace's ``default``
ServiceAccount: the ServiceAccount admission plugin (which refuses pods until it exists) is off; every other default
admission plugin is on. ``ControlPlane(controllers=("nodelifecycle", "disruption"))`` also starts
kube-controller-manager (the same build) with only those controllers, as the admin (a kubeconfig of the static
token, ``--use-service-account-credentials=false``), leader election off and no serving port;
``controller_manager_args`` add its flags (e.g. ``--node-monitor-grace-period=4s``). A node's Ready condition going
Unknown and its ``not-ready`` taint coming off need ``nodelifecycle``; a PodDisruptionBudget's allowance
(``status.disruptionsAllowed``) needs ``disruption``.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import yaml

from controlplane.children import die_with_parent
from tests.support.ports import free_port

REPO = Path(__file__).resolve().parents[2]
CRDS = REPO / "tests" / "fixtures" / "crds"
BUILD_SCRIPT = REPO / "scripts" / "kube-tools.sh"
ADMIN_USER = "fairway-admin"
ISSUER = "https://kubernetes.default.svc.cluster.local"


class ControlPlaneError(RuntimeError):
    """etcd or kube-apiserver did not start (the message ends with the end of its log)."""


@dataclass(frozen=True)
class Binaries:
    etcd: Path
    kube_apiserver: Path
    kube_scheduler: Path
    kube_controller_manager: Path

    def missing(self) -> list[Path]:
        return [p for p in (self.etcd, self.kube_apiserver) if not os.access(p, os.X_OK)]


def binaries() -> Binaries:
    """Where ``scripts/kube-tools.sh`` puts the binaries of the versions pinned in ``tools/*/go.mod``."""
    out = subprocess.run([str(BUILD_SCRIPT), "--paths"], check=True, capture_output=True, text=True).stdout
    dirs = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    k8s = Path(dirs["k8s"])
    return Binaries(
        etcd=Path(dirs["etcd"]) / "etcd",
        kube_apiserver=k8s / "kube-apiserver",
        kube_scheduler=k8s / "kube-scheduler",
        kube_controller_manager=k8s / "kube-controller-manager",
    )


def _signing_key_pair(folder: Path) -> tuple[Path, Path]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private, public = folder / "sa.key", folder / "sa.pub"
    private.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    public.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return private, public


_START_ATTEMPTS = 3
_PORT_TAKEN = "address already in use"


class _Process:
    def __init__(self, name: str, args: list[str], log: Path) -> None:
        self.name, self.log = name, log
        self._log_file: IO[bytes] = log.open("wb")
        self.popen = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=self._log_file, stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent,
        )  # fmt: skip

    def alive(self) -> bool:
        return self.popen.poll() is None

    def tail(self, lines: int = 25) -> str:
        try:
            text = self.log.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(text[-lines:])

    def failed(self, what: str) -> ControlPlaneError:
        code = self.popen.poll()
        state = "is still running" if code is None else f"exited with {code}"
        return ControlPlaneError(f"{self.name} {what} ({state}); the end of its log ({self.log}):\n{self.tail()}")

    def stop(self, grace: float) -> None:
        if self.alive():
            self.popen.terminate()
            try:
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        self._log_file.close()


class ControlPlane:
    """etcd + kube-apiserver (see the module docstring). ``start_timeout`` bounds each wait of the start;
    ``apiserver_args`` are added to kube-apiserver's flags (e.g. ``--etcd-compaction-interval=0``)."""

    def __init__(
        self,
        bins: Binaries | None = None,
        *,
        crds: bool = True,
        start_timeout: float = 120.0,
        stop_grace: float = 10.0,
        apiserver_args: tuple[str, ...] = (),
        controllers: tuple[str, ...] = (),
        controller_manager_args: tuple[str, ...] = (),
    ) -> None:
        self.bins = bins or binaries()
        self.install_crds = crds
        self.start_timeout = start_timeout
        self.stop_grace = stop_grace
        self.apiserver_args = apiserver_args
        self.controllers, self.controller_manager_args = controllers, controller_manager_args
        self.controller_manager: _Process | None = None
        self.admin_token = uuid.uuid4().hex
        self.folder: Path | None = None
        self.etcd: _Process | None = None
        self.apiserver: _Process | None = None
        self.etcd_url = ""
        self.url = ""
        self.ca_file: Path | None = None

    # -- life -------------------------------------------------------------------------------------------------

    def __enter__(self) -> ControlPlane:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        missing = self.bins.missing()
        if missing:
            raise ControlPlaneError(f"not built: {', '.join(map(str, missing))} (make kube-tools builds them)")
        for attempt in range(1, _START_ATTEMPTS + 1):
            self.folder = Path(tempfile.mkdtemp(prefix="fairway-kube-"))
            try:
                self._start_etcd()
                self._start_apiserver()
                if self.install_crds:
                    self.apply_crds()
                if self.controllers:
                    self._start_controller_manager()
                return
            except BaseException as error:
                self.stop()
                # another process bound a port between its draw and the server's bind: start again on others
                if (
                    not (isinstance(error, ControlPlaneError) and _PORT_TAKEN in str(error))
                    or attempt == _START_ATTEMPTS
                ):
                    raise

    def stop(self) -> None:
        for proc in (self.controller_manager, self.apiserver, self.etcd):
            if proc is not None:
                proc.stop(self.stop_grace)
        self.controller_manager = self.apiserver = self.etcd = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def _start_etcd(self) -> None:
        assert self.folder is not None
        client, peer = free_port(), free_port()
        self.etcd_url = f"http://127.0.0.1:{client}"
        self.etcd = _Process("etcd", [
            str(self.bins.etcd), "--name", "fairway-test", "--data-dir", str(self.folder / "etcd"),
            "--listen-client-urls", self.etcd_url, "--advertise-client-urls", self.etcd_url,
            "--listen-peer-urls", f"http://127.0.0.1:{peer}", "--initial-advertise-peer-urls",
            f"http://127.0.0.1:{peer}", "--initial-cluster", f"fairway-test=http://127.0.0.1:{peer}",
            "--unsafe-no-fsync", "--log-level", "warn",
        ], self.folder / "etcd.log")  # fmt: skip
        self._wait(self.etcd, "did not become healthy", lambda: self._get(f"{self.etcd_url}/health"))

    def _start_apiserver(self) -> None:
        assert self.folder is not None and self.etcd is not None
        port = free_port()
        self.url = f"https://127.0.0.1:{port}"
        certs = self.folder / "certs"
        certs.mkdir()
        tokens = self.folder / "tokens.csv"
        tokens.write_text(f'{self.admin_token},{ADMIN_USER},{ADMIN_USER},"system:masters"\n')
        private, public = _signing_key_pair(self.folder)
        self.apiserver = _Process("kube-apiserver", [
            str(self.bins.kube_apiserver),
            f"--etcd-servers={self.etcd_url}",
            "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={port}",
            f"--cert-dir={certs}",
            f"--token-auth-file={tokens}",
            "--authorization-mode=Node,RBAC",
            f"--service-account-issuer={ISSUER}",
            f"--service-account-key-file={public}",
            f"--service-account-signing-key-file={private}",
            "--service-cluster-ip-range=10.0.0.0/24",
            "--disable-admission-plugins=ServiceAccount",
            "--profiling=false",
            *self.apiserver_args,
        ], self.folder / "kube-apiserver.log")  # fmt: skip
        # kube-apiserver writes its self-signed certificate (followed by the CA that signed it) before it serves.
        self.ca_file = certs / "apiserver.crt"
        self._wait(self.apiserver, "wrote no serving certificate", lambda: self.ca_file.exists())  # type: ignore[union-attr]
        self._wait(self.apiserver, "did not become ready at /readyz", lambda: self.readyz() == "ok")

    def _start_controller_manager(self) -> None:
        assert self.folder is not None and self.apiserver is not None
        binary = self.bins.kube_controller_manager
        if not os.access(binary, os.X_OK):
            raise ControlPlaneError(f"not built: {binary} (make kube-tools builds it)")
        config = self.write_kubeconfig(self.folder / "controller-manager.kubeconfig")
        self.controller_manager = _Process("kube-controller-manager", [
            str(binary), f"--kubeconfig={config}", f"--controllers={','.join(self.controllers)}",
            "--use-service-account-credentials=false", "--leader-elect=false", "--secure-port=0",
            *self.controller_manager_args,
        ], self.folder / "kube-controller-manager.log")  # fmt: skip
        # no serving port to ask: its controllers are at work once their informers' caches are synced (it logs so)
        log = self.controller_manager.log
        self._wait(self.controller_manager, "did not sync its caches",
                   lambda: '"Caches are synced"' in log.read_text(errors="replace"))  # fmt: skip

    def _wait(self, proc: _Process, what: str, check: Any) -> None:
        deadline = time.monotonic() + self.start_timeout
        while True:
            if not proc.alive():
                raise proc.failed(what)
            try:
                if check():
                    return
            except (OSError, urllib.error.URLError, ssl.SSLError):
                pass
            if time.monotonic() > deadline:
                raise proc.failed(f"{what} within {self.start_timeout:g} s")
            time.sleep(0.2)

    # -- HTTP -------------------------------------------------------------------------------------------------

    def _ssl(self) -> ssl.SSLContext:
        assert self.ca_file is not None
        return ssl.create_default_context(cafile=str(self.ca_file))

    def _get(self, url: str, token: str | None = None) -> str:
        request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
        context = self._ssl() if url.startswith("https:") else None
        with urllib.request.urlopen(request, timeout=5, context=context) as response:
            return response.read().decode()

    def compact_etcd(self) -> int:
        """Compact etcd's history up to its current revision (etcd's v3 JSON gateway: ``POST /v3/kv/compaction``,
        as ``etcdctl compact`` does); returns that revision. A watch from an older ``resourceVersion`` is then
        answered 410 Gone by kube-apiserver wherever it reads etcd (without the watch cache: ``--watch-cache=false``)."""

        def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
            request = urllib.request.Request(f"{self.etcd_url}{path}", data=json.dumps(body).encode(), method="POST",
                                             headers={"Content-Type": "application/json"})  # fmt: skip
            with urllib.request.urlopen(request, timeout=10) as response:
                return dict(json.loads(response.read()))

        revision = int(post("/v3/kv/range", {"key": base64.b64encode(b"/").decode()})["header"]["revision"])
        post("/v3/kv/compaction", {"revision": str(revision), "physical": True})
        return revision

    def readyz(self) -> str:
        """The body of ``/readyz`` as the admin sees it ('ok' when ready); raises ``HTTPError`` otherwise."""
        return self._get(f"{self.url}/readyz", self.admin_token)

    # -- clients ----------------------------------------------------------------------------------------------

    def kubeconfig(self, token: str | None = None, *, user: str = ADMIN_USER) -> str:
        """A kubeconfig (YAML text) for ``token`` (default: the admin's), trusting the server's own certificate."""
        assert self.ca_file is not None
        ca = base64.b64encode(self.ca_file.read_bytes()).decode()
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": "fairway-test",
            "clusters": [{"name": "fairway-test", "cluster": {"server": self.url, "certificate-authority-data": ca}}],
            "users": [{"name": user, "user": {"token": token or self.admin_token}}],
            "contexts": [{"name": "fairway-test", "context": {"cluster": "fairway-test", "user": user}}],
        }  # fmt: skip
        return yaml.safe_dump(config, sort_keys=False)

    def write_kubeconfig(self, path: Path, token: str | None = None, *, user: str = ADMIN_USER) -> Path:
        path.write_text(self.kubeconfig(token, user=user))
        path.chmod(0o600)
        return path

    def api_client(self, token: str | None = None) -> Any:
        """The official client's ``ApiClient`` for ``token`` (default: the admin's)."""
        from kubernetes import client as k8s
        from kubernetes import config as k8s_config

        configuration = k8s.Configuration()
        k8s_config.load_kube_config_from_dict(
            yaml.safe_load(self.kubeconfig(token)), client_configuration=configuration, persist_config=False
        )
        return k8s.ApiClient(configuration)

    def service_account_token(self, namespace: str, name: str, *, seconds: int = 3600) -> str:
        """A real token of the ServiceAccount ``namespace/name`` (created when absent), by the TokenRequest API."""
        from kubernetes import client as k8s
        from kubernetes.client.rest import ApiException

        with self.api_client() as api:
            core = k8s.CoreV1Api(api)
            try:
                core.create_namespaced_service_account(namespace, {"metadata": {"name": name}})
            except ApiException as exc:
                if exc.status != 409:
                    raise
            request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                       "spec": {"expirationSeconds": seconds}}  # fmt: skip
            answer = core.create_namespaced_service_account_token(name, namespace, request)
            return str(answer.status.token)

    # -- CRDs -------------------------------------------------------------------------------------------------

    def apply_crds(self, folder: Path = CRDS, *, files: list[Path] | None = None) -> list[str]:
        """Create every CRD of ``folder`` (its ``*.yaml`` files, as they are; or of ``files``) and wait until each
        is Established. Returns their names."""
        from kubernetes import client as k8s
        from kubernetes.client.rest import ApiException

        names: list[str] = []
        with self.api_client() as api:
            ext = k8s.ApiextensionsV1Api(api)
            for path in files if files is not None else sorted(folder.glob("*.yaml")):
                for doc in yaml.safe_load_all(path.read_text()):
                    if not doc or doc.get("kind") != "CustomResourceDefinition":
                        continue
                    try:
                        ext.create_custom_resource_definition(doc, _preload_content=False)
                    except ApiException as exc:
                        if exc.status != 409:
                            raise ControlPlaneError(f"{path.name}: the API server refused the CRD: {exc.body}") from exc
                    names.append(doc["metadata"]["name"])
            for name in names:
                self._wait(self.apiserver, f"did not establish the CRD {name}",  # type: ignore[arg-type]
                           lambda name=name: self._established(ext, name))  # fmt: skip
        return names

    @staticmethod
    def _established(ext: Any, name: str) -> bool:
        # Read raw: the client's models reject some fields of a CRD's status.
        crd = json.loads(ext.read_custom_resource_definition(name, _preload_content=False).data)
        conditions = (crd.get("status") or {}).get("conditions") or []
        return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)
