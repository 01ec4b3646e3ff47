"""List and watch one kind of the API server into an in-memory cache, as client-go's reflector does.

* **List** the whole collection (``GET …?fieldSelector=&labelSelector=``, the kind's selectors) and remember the list's ``metadata.resourceVersion``.
* **Watch** from that version (``?watch=true&resourceVersion=&allowWatchBookmarks=true&timeoutSeconds=``): each
  ``ADDED`` / ``MODIFIED`` / ``DELETED`` event updates the cache and the version; a ``BOOKMARK`` only moves the
  version, so a watch that saw nothing of its own kind still resumes near the head. When the server ends the watch
  (its timeout), the next one resumes from the last version: nothing is listed again.
* **410 Gone** (an ``ERROR`` event with code 410, or the HTTP status, when the version was compacted away) lists the
  collection again: the cache is replaced by the list, so an object deleted meanwhile disappears and nothing
  changed meanwhile is missed.
* **A dropped connection** (or any other error) is retried from the last version after a backoff that doubles from
  ``backoff`` up to ``max_backoff`` and resets after a watch that worked. A refusal (403: the ServiceAccount lacks
  the verb) is logged as an error quoting the server's message, which names the verb and the resource, and kept in
  ``problem``.
* **A CRD that is not installed** (the list answers 404: a cluster without Koordinator, say) is not fatal: the kind
  counts as listed and empty (``missing``), a warning names the CRD once, and the list is tried again every
  ``missing_recheck`` seconds, so a CRD installed later is picked up. The adapter runs without that kind meanwhile
  (every kind it reads is optional except the built-in ones, which a server always has). The workload
  integrations (JobSet, Kubeflow's jobs: ``Kind.integration``), which most clusters do not run, are logged at info
  level and are not a ``problem``.

Only HTTP happens here (no database): the caches are read by the adapter's thread, under ``lock``. ``generation``
moves whenever the cache changes, so the adapter knows when to mirror again.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kubernetes import client as k8s
from kubernetes.watch.watch import iter_resp_lines

from scheduling.kube.client import Kind, refusal

__all__ = ["Gone", "Informer", "object_key"]

logger = logging.getLogger(__name__)


class Gone(Exception):
    """The watch's resource version is too old (410): list again."""


def object_key(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace") or ""
    return f"{ns}/{meta.get('name', '')}" if ns else str(meta.get("name", ""))


class Informer:
    """The cache of one kind (see the module docstring); ``run`` is its thread's body."""

    def __init__(
        self,
        api: k8s.ApiClient,
        kind: Kind,
        *,
        scheduler: str = "fairway",
        watch_seconds: int = 60,
        backoff: float = 0.1,
        max_backoff: float = 5.0,
        missing_recheck: float = 30.0,
    ) -> None:
        self.api, self.kind = api, kind
        self.field_selector = kind.field_selector.format(scheduler=scheduler)
        self.watch_seconds, self.backoff, self.max_backoff = watch_seconds, backoff, max_backoff
        self.missing_recheck = missing_recheck
        self.missing = False  # the kind's CRD is not installed (its list answered 404)
        self.problem = ""  # the last error, as a sentence ("" once a list works again)
        self.cache: dict[str, dict[str, Any]] = {}
        self.resource_version = ""
        self.listed = False
        self.generation = 0
        self.lists = self.watches = self.reconnects = self.bookmarks = 0
        self.lock = threading.Lock()
        self.changed: Callable[[], None] = lambda: None  # set by the adapter: wake it up

    # -- the calls ------------------------------------------------------------------------------------------

    def _request(self, params: dict[str, Any], timeout: Any) -> Any:
        query = [(k, v) for k, v in params.items() if v not in (None, "")]
        if self.field_selector:
            query.append(("fieldSelector", self.field_selector))
        if self.kind.label_selector:
            query.append(("labelSelector", self.kind.label_selector))
        return self.api.call_api(
            *self.api.param_serialize(
                method="GET", resource_path=self.kind.path(), query_params=query, auth_settings=["BearerToken"]
            ),
            _request_timeout=timeout,
        )

    def list(self) -> None:
        """Replace the cache with a fresh list (the starting point of the watches)."""
        response = self._request({}, 30)
        if response.status == 404 and self.kind.crd:
            self._missing()
            return
        if not 200 <= response.status <= 299:
            self._raise(response.status, response.read())
        data = json.loads(response.read())
        if self.missing:
            logger.warning("the CRD %s is installed now: the adapter reads its %ss", self.kind.crd, self.kind.kind)
        items = {}
        for obj in data.get("items") or []:
            obj.setdefault("apiVersion", self.kind.api_version)
            obj.setdefault("kind", self.kind.kind)
            items[object_key(obj)] = obj
        with self.lock:
            self.cache = items
            self.resource_version = str((data.get("metadata") or {}).get("resourceVersion") or "")
            self.listed = True
            self.generation += 1
        self.lists += 1
        self.missing, self.problem = False, ""
        self.changed()

    def _missing(self) -> None:
        if not self.missing:
            said = (f"the CRD {self.kind.crd} is not installed (the API server serves no {self.kind.path()}): "
                    f"the adapter runs without {self.kind.kind}s of {self.kind.group} and looks again every "
                    f"{self.missing_recheck:g} s")  # fmt: skip
            if self.kind.integration:  # (most clusters run no JobSet or training operator: not a problem)
                logger.info("%s", said)
            else:
                self.problem = said
                logger.warning("%s", said)
        with self.lock:
            if self.cache or not self.missing:
                self.generation += 1
            self.cache, self.resource_version, self.listed, self.missing = {}, "", True, True
        self.lists += 1
        self.changed()

    def watch(self, stop: threading.Event | None = None) -> None:
        """One watch from the current version until the server ends it (or ``stop`` is set)."""
        params = {"watch": "true", "resourceVersion": self.resource_version, "allowWatchBookmarks": "true",
                  "timeoutSeconds": str(self.watch_seconds)}  # fmt: skip
        response = self._request(params, (10, self.watch_seconds + 10))
        self.watches += 1
        try:
            if response.status == 410:
                raise Gone(f"{self.kind.kind}: 410 Gone")
            if not 200 <= response.status <= 299:
                self._raise(response.status, response.read())
            for event in self._events(response.response):
                self.apply(event)
                if stop is not None and stop.is_set():
                    return
        finally:
            response.response.release_conn()

    @staticmethod
    def _events(raw: Any) -> Iterator[dict[str, Any]]:
        for line in iter_resp_lines(raw):
            if line.strip():
                yield json.loads(line)

    def _raise(self, status: int, body: bytes) -> None:
        exc = k8s.ApiException(status=status, reason=body.decode(errors="replace")[:500])
        exc.body = body  # the Status: its message names what was refused (``client.error_status`` reads it)
        raise exc

    def apply(self, event: Mapping[str, Any]) -> None:
        """One watch event into the cache."""
        kind, obj = event.get("type"), event.get("object") or {}
        if kind == "ERROR":
            code = obj.get("code")
            if code == 410:
                raise Gone(f"{self.kind.kind}: {obj.get('message', '410 Gone')}")
            raise k8s.ApiException(status=code or 500, reason=str(obj.get("message", "")))
        version = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        with self.lock:
            if kind in ("ADDED", "MODIFIED"):
                obj.setdefault("apiVersion", self.kind.api_version)
                obj.setdefault("kind", self.kind.kind)
                self.cache[object_key(obj)] = obj
                self.generation += 1
            elif kind == "DELETED":
                self.cache.pop(object_key(obj), None)
                self.generation += 1
            if version:
                self.resource_version = version
        if kind == "BOOKMARK":
            self.bookmarks += 1
        else:
            self.changed()

    # -- the loop -------------------------------------------------------------------------------------------

    def step(self, stop: threading.Event | None = None) -> None:
        """List when needed, then watch once; a 410 makes the next step list again."""
        if not self.listed:
            self.list()
        if self.missing:  # no CRD, nothing to watch: list again after a while
            (stop or threading.Event()).wait(self.missing_recheck)
            self.listed = False
            return
        try:
            self.watch(stop)
        except Gone as exc:
            logger.info("%s; listing again", exc)
            self.listed = False

    def run(self, stop: threading.Event) -> None:
        """Step until ``stop``; errors (a dropped connection, the server down) wait a doubling backoff."""
        delay = self.backoff
        while not stop.is_set():
            try:
                self.step(stop)
                delay = self.backoff
                if not self.missing:
                    self.problem = ""  # it works again
            except Exception as exc:  # a dropped connection is urllib3's ProtocolError; any other error alike
                self.reconnects += 1
                self.problem = refusal(exc, f"list and watch {self.kind.path()}")
                if getattr(exc, "status", None) == 403:
                    logger.error("%s; retrying in %.1f s", self.problem, delay)
                else:
                    logger.warning("watch of %s failed (%s); retrying in %.1f s", self.kind.plural, exc, delay)
                stop.wait(delay)
                delay = min(delay * 2, self.max_backoff)

    def snapshot(self) -> list[dict[str, Any]]:
        """The cached objects, in key order: a new list of the objects themselves, not copies. An object in the
        cache is never changed in place (a watch event or a list replaces it whole), so a reader holds a consistent
        view without copying tens of thousands of pods on every pass; readers must not change them either
        (``mirror_out`` copies an object before it writes a status into it)."""
        with self.lock:
            return [self.cache[k] for k in sorted(self.cache)]
