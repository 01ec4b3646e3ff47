"""A Kubernetes API server emulation over real HTTP: kmock's ``KubernetesEmulator`` (its aiohttp server, request
parsing, request log and ``Status`` errors) with the semantics the adapter relies on served by this subclass:

* numeric, increasing ``metadata.resourceVersion`` (one counter for every object, as etcd's revision) and
  ``metadata.uid`` / ``creationTimestamp`` on create;
* list with ``metadata.resourceVersion``, ``fieldSelector`` (``a.b=c``, ``a.b!=c``) and ``labelSelector``
  (``k=v``, ``k``, ``!k``);
* watch from ``?resourceVersion=`` (the events after it, replayed from the log), ``allowWatchBookmarks``
  (a ``BOOKMARK`` whenever the stream is idle for ``bookmark_seconds``), ``timeoutSeconds``; a watch from a version
  older than the compacted floor gets an ``ERROR`` event with code 410 (``compact()``), as the real server does;
  ``drop_watches()`` cuts every open watch connection mid-stream;
* ``PUT`` (replace) with a ``resourceVersion`` that is not the current one is a 409 ``Conflict``; ``PUT
  …/status`` replaces only the status, and a ``PUT`` of the object keeps its status — except for the kinds whose
  CRD has no status subresource (``NO_STATUS_SUBRESOURCE``: there ``…/status`` is a 404, as on the real server,
  and the object's ``PUT`` writes its status too); ``PATCH`` applies a JSON merge patch (or a JSON patch);
* ``POST pods/{name}/binding`` sets ``spec.nodeName`` (409 when the pod already has a node);
  ``POST pods/{name}/eviction`` (policy/v1) deletes the pod, or answers 429 when a ``PodDisruptionBudget`` of its
  namespace selects it and allows no disruption (healthy pods it selects - ``minAvailable`` ≤ 0).

``EmulatorThread`` runs it on a free localhost port in a thread of its own (its own event loop), for synchronous
tests; its helpers run in that loop.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

import aiohttp.web
import jsonpatch
import kmock
from kmock._internal import rendering

Key = tuple[str, str, str, str]  # (group, plural, namespace or "", name)
# Volcano's PodGroup CRD has ``subresources: {}``, Koordinator's ElasticQuota CRD none (tests/fixtures/crds)
NO_STATUS_SUBRESOURCE = {("scheduling.volcano.sh", "podgroups"), ("scheduling.sigs.k8s.io", "elasticquotas")}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _field(obj: Mapping[str, Any], path: str) -> str:
    value: Any = obj
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return "" if value is None else str(value)


def _selected(obj: Mapping[str, Any], fields: str, labels: str) -> bool:
    for term in filter(None, fields.split(",")):
        if "!=" in term:
            path, _, want = term.partition("!=")
            if _field(obj, path) == want:
                return False
        else:
            path, _, want = term.replace("==", "=").partition("=")
            if _field(obj, path) != want:
                return False
    have = (obj.get("metadata") or {}).get("labels") or {}
    for term in filter(None, labels.split(",")):
        if "=" not in term:  # existence (``key``) or absence (``!key``)
            if (term.lstrip("!") in have) == term.startswith("!"):
                return False
            continue
        key, _, want = term.partition("=")
        if have.get(key) != want:
            return False
    return True


def _merge(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge(out.get(key), value)
    return out


class Emulator(kmock.KubernetesEmulator):
    """See the module docstring. State lives in this object and is touched only from its event loop."""

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        self.rv = 0
        self.store: dict[Key, dict[str, Any]] = {}
        self.log: list[tuple[int, tuple[str, str], str, dict[str, Any]]] = []
        self.floor = 0  # a watch from a version below this is 410 Gone
        self.bookmark_seconds = 0.2
        self.drops = 0  # drop_watches() generation
        self.changed = asyncio.Condition()

    # -- state --------------------------------------------------------------------------------------------

    async def write(self, key: Key, kind: str, obj: dict[str, Any] | None) -> dict[str, Any] | None:
        """Store (or delete, ``obj`` None) an object at a new resource version and tell the watchers."""
        self.rv += 1
        if obj is None:
            old = self.store.pop(key)
            old["metadata"]["resourceVersion"] = str(self.rv)
            self.log.append((self.rv, key[:2], "DELETED", copy.deepcopy(old)))
        else:
            meta = obj.setdefault("metadata", {})
            meta["resourceVersion"] = str(self.rv)
            meta.setdefault("uid", str(uuid.uuid4()))
            meta.setdefault("creationTimestamp", _now())
            if key[2]:
                meta["namespace"] = key[2]
            self.store[key] = obj
            self.log.append((self.rv, key[:2], kind, copy.deepcopy(obj)))
        async with self.changed:
            self.changed.notify_all()
        return obj

    def put_quietly(self, key: Key, obj: dict[str, Any] | None) -> None:
        """Change an object without a watch event (as if its event were compacted away): only a list shows it."""
        self.rv += 1
        if obj is None:
            self.store.pop(key, None)
            return
        obj.setdefault("metadata", {})["resourceVersion"] = str(self.rv)
        self.store[key] = obj

    def compact(self) -> int:
        """Forget the log up to now: a watch resuming from an older version gets 410 Gone."""
        self.floor = self.rv + 1
        self.log.clear()
        return self.floor

    async def drop_watches(self) -> None:
        self.drops += 1
        async with self.changed:
            self.changed.notify_all()

    def objects_of(self, group: str, plural: str) -> list[dict[str, Any]]:
        return [copy.deepcopy(o) for k, o in sorted(self.store.items()) if k[:2] == (group, plural)]

    # -- HTTP ---------------------------------------------------------------------------------------------

    async def __call__(self, raw_request: aiohttp.web.BaseRequest) -> aiohttp.web.StreamResponse:
        """kmock 0.8 cannot parse ``/api/v1/namespaces[/name]`` (it reads ``namespaces`` as the namespace prefix):
        those requests are parsed here, the rest by kmock."""
        parts = raw_request.path.strip("/").split("/")
        if parts[:3] != ["api", "v1", "namespaces"] or len(parts) > 4:
            return await super().__call__(raw_request)
        body = await raw_request.read()
        request = rendering.Request(
            id=len(self._requests),
            raw_request=raw_request,
            url=raw_request.url,
            method=raw_request.method,
            params=dict(raw_request.query),
            headers=dict(raw_request.headers),
            body=body,
            text=body.decode(),
            data=json.loads(body) if body else None,
            resource=kmock.resource("", "v1", "namespaces"),
            name=parts[3] if len(parts) == 4 else None,
        )
        self._requests.append(request)
        return await self._handle(request)

    async def _handle(self, request: rendering.Request) -> aiohttp.web.StreamResponse:
        if request.resource is None:
            return await super()._handle(request)
        try:
            return await self._serve(request)
        except kmock.KubernetesError as exc:
            return await self._render_error(exc)

    async def _serve(self, request: rendering.Request) -> aiohttp.web.StreamResponse:
        res = request.resource
        assert res is not None
        group, plural = res.group or "", res.plural or ""
        ns, name, sub = request.namespace or "", request.name, request.subresource
        method = str(request.method.value).upper()
        if method == "GET" and request.params.get("watch") in ("true", "1"):
            return await self._watch(request, group, plural)
        if method == "GET" and name is None:
            return self._list(request, group, plural)
        key = (group, plural, ns, name or "")
        if method == "POST" and name is None:
            return await self._create(request, group, plural, ns)
        if method == "POST" and sub == "binding":
            return await self._bind(request, key)
        if method == "POST" and sub == "eviction":
            return await self._evict(request, key)
        if key not in self.store:
            raise kmock.KubernetesObjectNotFoundError(
                reason="NotFound", message=f'{plural} "{name}" not found', details={"name": name, "kind": plural}
            )
        if method == "GET":
            return aiohttp.web.json_response(self.store[key])
        if method == "PUT" and sub == "status" and (group, plural) in NO_STATUS_SUBRESOURCE:
            raise kmock.KubernetesObjectNotFoundError(reason="NotFound", message="the server could not find the "
                                                      "requested resource")  # fmt: skip
        if method == "PUT":
            return await self._replace(request, key, status_only=sub == "status")
        if method == "PATCH":
            return await self._patch(request, key)
        if method == "DELETE":
            old = await self.write(key, "DELETED", None)
            return aiohttp.web.json_response(old)
        raise kmock.KubernetesError(status=405, reason="MethodNotAllowed", message=f"{method} is not served")

    def _list(self, request: rendering.Request, group: str, plural: str) -> aiohttp.web.StreamResponse:
        fields, labels = request.params.get("fieldSelector", ""), request.params.get("labelSelector", "")
        items = [
            o
            for k, o in sorted(self.store.items())
            if k[:2] == (group, plural) and (not request.namespace or k[2] == request.namespace)
            if _selected(o, fields, labels)
        ]
        return aiohttp.web.json_response({"metadata": {"resourceVersion": str(self.rv)}, "items": items})

    async def _create(self, request: rendering.Request, group: str, plural: str, ns: str) -> Any:
        body = dict(request.data or {})
        meta = body.setdefault("metadata", {})
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = f"{meta['generateName']}{uuid.uuid4().hex[:5]}"
        name = meta.get("name")
        key = (group, plural, ns or (body.get("metadata") or {}).get("namespace") or "", name or "")
        if not name:
            raise kmock.KubernetesError(status=422, reason="Invalid", message="metadata.name: Required value")
        if key in self.store:
            raise kmock.KubernetesError(status=409, reason="AlreadyExists", message=f'{plural} "{name}" already exists')
        body.setdefault("metadata", {}).pop("resourceVersion", None)
        return aiohttp.web.json_response(await self.write(key, "ADDED", body), status=201)

    async def _replace(self, request: rendering.Request, key: Key, *, status_only: bool) -> Any:
        body = dict(request.data or {})
        current = self.store[key]
        sent = (body.get("metadata") or {}).get("resourceVersion")
        if sent and sent != current["metadata"]["resourceVersion"]:
            raise kmock.KubernetesError(
                status=409,
                reason="Conflict",
                message=f'Operation cannot be fulfilled on {key[1]} "{key[3]}": the object has been modified; '
                "please apply your changes to the latest version and try again",
            )
        new = copy.deepcopy(current)
        if status_only:
            new["status"] = body.get("status") or {}
        else:
            keep = {k: current["metadata"][k] for k in ("uid", "creationTimestamp") if k in current["metadata"]}
            new = {**body, "metadata": {**(body.get("metadata") or {}), **keep}}
            if "status" in current and (key[0], key[1]) not in NO_STATUS_SUBRESOURCE:
                new["status"] = current["status"]
        return aiohttp.web.json_response(await self.write(key, "MODIFIED", new))

    async def _patch(self, request: rendering.Request, key: Key) -> Any:
        body = request.data
        if isinstance(body, list):
            new = jsonpatch.apply_patch(self.store[key], body)
        else:
            new = _merge(self.store[key], body or {})
        return aiohttp.web.json_response(await self.write(key, "MODIFIED", new))

    async def _bind(self, request: rendering.Request, key: Key) -> Any:
        pod = self.store.get(key)
        if pod is None:
            raise kmock.KubernetesObjectNotFoundError(reason="NotFound", message=f'pods "{key[3]}" not found')
        node = ((request.data or {}).get("target") or {}).get("name")
        bound = (pod.get("spec") or {}).get("nodeName")
        if bound:
            raise kmock.KubernetesError(
                status=409, reason="Conflict", message=f"pod {key[3]} is already assigned to node {bound!r}"
            )
        new = copy.deepcopy(pod)
        new.setdefault("spec", {})["nodeName"] = node
        await self.write(key, "MODIFIED", new)
        return aiohttp.web.json_response({"kind": "Status", "apiVersion": "v1", "status": "Success"}, status=201)

    async def _evict(self, request: rendering.Request, key: Key) -> Any:
        pod = self.store.get(key)
        if pod is None:
            raise kmock.KubernetesObjectNotFoundError(reason="NotFound", message=f'pods "{key[3]}" not found')
        for pdb_key, pdb in sorted(self.store.items()):
            if pdb_key[:3] != ("policy", "poddisruptionbudgets", key[2]):
                continue
            if self._allowed(pdb) <= 0 and self._selects(pdb, pod):
                raise kmock.KubernetesError(
                    status=429,
                    reason="TooManyRequests",
                    message="Cannot evict pod as it would violate the pod's disruption budget.",
                    details={"causes": [{"reason": "DisruptionBudget", "message": (
                        f"The disruption budget {pdb_key[3]} needs {pdb['spec'].get('minAvailable')} healthy pods "
                        f"and has {self._healthy(pdb)} currently")}]},
                )  # fmt: skip
        await self.write(key, "DELETED", None)
        return aiohttp.web.json_response({"kind": "Status", "apiVersion": "v1", "status": "Success"}, status=201)

    def _selects(self, pdb: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
        want = ((pdb.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
        have = (pod.get("metadata") or {}).get("labels") or {}
        return all(have.get(k) == v for k, v in want.items())

    def _healthy(self, pdb: Mapping[str, Any]) -> int:
        ns = (pdb.get("metadata") or {}).get("namespace", "")
        return sum(
            1
            for k, p in self.store.items()
            if k[:3] == ("", "pods", ns) and self._selects(pdb, p) and (p.get("status") or {}).get("phase") == "Running"
        )

    def _allowed(self, pdb: Mapping[str, Any]) -> int:
        return self._healthy(pdb) - int((pdb.get("spec") or {}).get("minAvailable") or 0)

    async def _watch(self, request: rendering.Request, group: str, plural: str) -> aiohttp.web.StreamResponse:
        raw = request._raw_request
        assert raw is not None
        response = aiohttp.web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(raw)
        params = request.params
        since_text = params.get("resourceVersion") or "0"
        since = int(since_text) if since_text.isdigit() else 0
        if since and since < self.floor:
            gone = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 410, "reason": "Expired",
                    "message": f"too old resource version: {since} ({self.floor - 1})"}  # fmt: skip
            await response.write(json.dumps({"type": "ERROR", "object": gone}).encode() + b"\n")
            await response.write_eof()
            return response
        timeout = float(params.get("timeoutSeconds") or 300)
        bookmarks = params.get("allowWatchBookmarks") in ("true", "1")
        loop = asyncio.get_running_loop()
        deadline, drops = loop.time() + timeout, self.drops
        sent = since if since else self.rv
        if not since:
            for k, o in sorted(self.store.items()):
                if k[:2] == (group, plural) and self._watched(request, o):
                    await response.write(json.dumps({"type": "ADDED", "object": o}).encode() + b"\n")
        while loop.time() < deadline:
            if self.drops != drops:
                raw.transport.close()  # type: ignore[union-attr]  # a dropped connection, mid-stream
                return response
            for rv, res, kind, o in [e for e in self.log if e[0] > sent]:
                sent = rv
                if res == (group, plural) and self._watched(request, o):
                    await response.write(json.dumps({"type": kind, "object": o}).encode() + b"\n")
            sent = max(sent, self.rv)
            async with self.changed:
                try:
                    await asyncio.wait_for(self.changed.wait(), min(self.bookmark_seconds, deadline - loop.time()))
                    continue
                except TimeoutError:
                    pass
            if bookmarks and self.drops == drops:
                mark = {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": str(sent)}}}
                await response.write(json.dumps(mark).encode() + b"\n")
        await response.write_eof()
        return response

    def _watched(self, request: rendering.Request, obj: Mapping[str, Any]) -> bool:
        ns = (obj.get("metadata") or {}).get("namespace", "")
        if request.namespace and ns != request.namespace:
            return False
        return _selected(obj, request.params.get("fieldSelector", ""), request.params.get("labelSelector", ""))


class EmulatorThread:
    """The emulator on ``127.0.0.1:<free port>`` in a thread with its own event loop; ``call`` runs a function (or
    coroutine function) there and returns its result."""

    def __init__(self) -> None:
        self.emulator: Emulator | None = None
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), name="kube-emulator", daemon=True)

    async def _main(self) -> None:
        async with Emulator() as emulator, kmock.Server(emulator) as server:
            self.emulator, self.port = emulator, server.port
            self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
            self._ready.set()
            await self._stop.wait()

    def __enter__(self) -> EmulatorThread:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the Kubernetes emulator did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        assert self._loop is not None

        async def run() -> Any:
            out = fn(*args)
            return await out if asyncio.iscoroutine(out) else out

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(10)

    def objects(self, group: str, plural: str) -> list[dict[str, Any]]:
        assert self.emulator is not None
        return self.call(self.emulator.objects_of, group, plural)

    def get(self, group: str, plural: str, namespace: str, name: str) -> dict[str, Any] | None:
        assert self.emulator is not None
        return self.call(lambda: copy.deepcopy(self.emulator.store.get((group, plural, namespace, name))))  # type: ignore[union-attr]

    def requests(self) -> Iterator[tuple[str, str, str, str]]:
        """Every request served: (HTTP method, API group, resource plural, subresource)."""
        for verb, group, plural, sub, _ in self.verbs():
            method = {"get": "GET", "list": "GET", "watch": "GET", "create": "POST", "update": "PUT"}.get(verb, verb)
            yield method.upper(), group, plural, sub

    def verbs(self) -> Iterator[tuple[str, str, str, str, dict[str, str]]]:
        """Every request served as RBAC sees it: (verb, API group, resource, subresource, query parameters)."""
        assert self.emulator is not None
        for r in self.call(lambda: list(self.emulator._requests)):  # type: ignore[union-attr]
            if r.resource is None:
                continue
            method = str(r.method.value).upper()
            if method == "GET":
                verb = "watch" if r.params.get("watch") in ("true", "1") else ("get" if r.name else "list")
            else:
                verb = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}[method]
            yield verb, r.resource.group or "", r.resource.plural or "", r.subresource or "", dict(r.params)
