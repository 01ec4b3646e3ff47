"""One scheduling session (or recycling pass) of a cluster, now, in this process: what the worker's periodic task
does, under the same per-cluster lock, for an operator checking a deployment or debugging a cluster without waiting
for beat. Exits non-zero when the session fails or another process holds the cluster's lock."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from scheduling.locks import RECYCLE_LOCK, SCHEDULING_SESSION_LOCK, cluster_lock
from scheduling.models import Cluster, SessionStatus
from scheduling.sessions import run_recycle_pass, run_scheduling_session
from scheduling.tasks import SESSION_TIME_LIMIT


class Command(BaseCommand):
    help = "Run one scheduling session (or, with --recycle, one recycling pass) of a cluster now."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cluster", default=None, help="the cluster's name (default: the default cluster)")
        parser.add_argument("--recycle", action="store_true", help="a recycling pass instead of a session")

    def handle(self, *args: Any, **options: Any) -> None:
        from django.conf import settings

        name = options["cluster"] or settings.FAIRWAY["DEFAULT_CLUSTER"]
        cluster = Cluster.objects.filter(name=name).first()
        if cluster is None:
            raise CommandError(f"cluster {name} does not exist")
        lock = RECYCLE_LOCK if options["recycle"] else SCHEDULING_SESSION_LOCK
        with cluster_lock(lock, cluster.pk, ttl=SESSION_TIME_LIMIT) as acquired:
            if not acquired:
                raise CommandError(f"another process is running cluster {name}'s sessions now; try again")
            session = run_recycle_pass(cluster) if options["recycle"] else run_scheduling_session(cluster)
        if session is None:
            self.stdout.write(f"cluster {name}: nothing to recycle")
            return
        what = "recycling pass" if options["recycle"] else "session"
        line = (
            f"cluster {name}: {what} {session.status} in {session.duration_ms:.0f} ms; "
            f"{session.bound} bound, {session.pipelined} pipelined, {session.evicted} evicted, "
            f"{session.pending_pods} pods were waiting"
        )
        if session.status != SessionStatus.OK:
            raise CommandError(f"{line}: {session.error or 'failed'}")
        self.stdout.write(line)
