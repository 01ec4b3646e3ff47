"""The Kubernetes adapter of one ``source=kubernetes`` cluster: what a node agent is to an ``agent`` cluster.

One informer thread per kind keeps a cache of the API server's objects (``informer``); the adapter's own thread,
while it holds the cluster's Lease (``leader``), mirrors the caches into the rows whenever they changed
(``mirror_in``) and sends what the sessions decided (``mirror_out``). The scheduling sessions themselves are the
normal Celery ones (``scheduling.tasks.run_session``, every second per cluster): the adapter schedules nothing.
A stand-by adapter keeps its caches warm and writes nothing until it holds the lease.

``manage.py kube_adapter --cluster NAME`` runs ``Adapter.run``; tests drive ``Adapter.reconcile`` directly.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from scheduling.kube import mirror_in, mirror_out
from scheduling.kube.client import KINDS, api_client, kueue_config_kind
from scheduling.kube.informer import Informer
from scheduling.kube.leader import LeaseElector
from scheduling.models import Cluster

__all__ = ["Adapter"]

logger = logging.getLogger(__name__)


class Adapter:
    """See the module docstring. ``lease_namespace`` is where the Lease ``fairway-adapter-<cluster>`` lives."""

    def __init__(
        self,
        cluster: Cluster,
        *,
        identity: str | None = None,
        lease_namespace: str = "kube-system",
        lease_seconds: float = 15.0,
        renew_seconds: float = 5.0,
        watch_seconds: int = 60,
        api: Any = None,
    ) -> None:
        self.cluster = cluster
        self.api = api if api is not None else api_client(cluster.read_kubeconfig())
        self.identity = identity or f"{socket.gethostname()}-{os.getpid()}"
        self.elector = LeaseElector(
            self.api, namespace=lease_namespace, name=f"fairway-adapter-{cluster.name}", identity=self.identity,
            lease_seconds=lease_seconds, renew_seconds=renew_seconds,
        )  # fmt: skip
        kueue_config = kueue_config_kind(settings.FAIRWAY["KUEUE_CONFIGMAP"], settings.FAIRWAY["KUEUE_NAMESPACE"])
        self.informers = [
            Informer(self.api, kind, scheduler=cluster.scheduler_name, watch_seconds=watch_seconds)
            for kind in (*KINDS, kueue_config)
        ]
        self.wake = threading.Event()
        for informer in self.informers:
            informer.changed = self.wake.set
        self.stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._mirrored_at: tuple[int, ...] = ()

    # -- informers ------------------------------------------------------------------------------------------

    def start_informers(self) -> None:
        for informer in self.informers:
            thread = threading.Thread(
                target=informer.run, args=(self.stop,), name=f"watch-{informer.kind.plural}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def stop_informers(self) -> None:
        self.stop.set()
        for thread in self._threads:
            thread.join(5)

    def synced(self) -> bool:
        """Every kind listed once (a kind listing again after a 410 keeps its cache meanwhile)."""
        return all(i.lists > 0 for i in self.informers)

    def objects(self) -> list[dict[str, Any]]:
        """Every cached object, kinds in ``KINDS`` order (the readers want priority classes and namespaces first)."""
        out: list[dict[str, Any]] = []
        for informer in self.informers:
            out.extend(informer.snapshot())
        return out

    def missing(self) -> frozenset[str]:
        """The kinds whose CRD is not installed (their informers say which, and run on without them)."""
        return frozenset(mirror_out.cache_key(i.kind.group, i.kind.plural) for i in self.informers if i.missing)

    def problems(self) -> list[str]:
        """What the informers could not read, as sentences: a CRD not installed, a verb the server forbids."""
        return [i.problem for i in self.informers if i.problem]

    def caches(self) -> dict[str, list[dict[str, Any]]]:
        return {mirror_out.cache_key(i.kind.group, i.kind.plural): i.snapshot() for i in self.informers}

    # -- one pass -------------------------------------------------------------------------------------------

    def reconcile(self, *, force: bool = False) -> dict[str, Any] | None:
        """While leading and synced: mirror the caches in when they changed (or ``force``), then send the
        decisions. Returns what it did, or None when it is not the leader (or not synced yet)."""
        if not self.elector.ensure() or not self.synced():
            return None
        self.cluster.refresh_from_db()
        now = timezone.now()
        generations = tuple(i.generation for i in self.informers)
        report = None
        if force or generations != self._mirrored_at:
            report = mirror_in.mirror(self.cluster, self.objects(), now)
            self._mirrored_at = generations
        sender = mirror_out.Sender(self.api, self.cluster, self.caches(), now, missing=self.missing())
        sent = sender.send_all()
        return {"mirrored": report, "sent": sent, "problems": self.problems() + sender.problems}

    def run(self, *, interval: float = 1.0, stop_after: float | None = None) -> None:
        """The adapter's loop: informers in threads, a pass whenever a cache changes or every ``interval``."""
        self.start_informers()
        deadline = None if stop_after is None else timezone.now().timestamp() + stop_after
        try:
            while not self.stop.is_set() and (deadline is None or timezone.now().timestamp() < deadline):
                self.wake.wait(interval)
                self.wake.clear()
                close_old_connections()
                try:
                    self.reconcile()
                except Exception:
                    logger.exception("cluster %s: adapter pass failed; the next one retries", self.cluster.name)
        finally:
            self.elector.release()
            self.stop_informers()

    def kinds(self) -> Sequence[str]:
        return [f"{i.kind.group or 'core'}/{i.kind.plural}" for i in self.informers]
