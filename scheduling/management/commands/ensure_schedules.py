"""Create every cluster's periodic tasks (session, recycling, heartbeat check, compaction, and the simulation
tasks of simulated clusters). ``--simulated NAME`` first marks that cluster simulated (``make run`` does this for
the demo's default cluster) and, while its scheduler policy is still Volcano's default, gives it the demo policy
(``DEMO_POLICY``: reclaim and preempt on, hierarchical capacity, Koordinator's elastic quota with the overuse
monitor on and a 30 s eviction delay) so that borrowing, lending, reclaim and recycling happen live. Every victim
filter sits in the first tier, so each of them always applies (Volcano lets a later tier decide when an earlier one
spares every candidate)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from scheduling.demo_data import DEMO_POLICY
from scheduling.models import Cluster, default_scheduler_policy
from scheduling.tasks import ensure_schedules


class Command(BaseCommand):
    help = "Create the periodic tasks of every cluster (idempotent); --simulated NAME turns on the demo simulation."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--simulated", metavar="CLUSTER", help="mark this cluster simulated first")

    def handle(self, *args: Any, **options: Any) -> None:
        name = options.get("simulated")
        if name:
            cluster = Cluster.objects.filter(name=name).first()
            if cluster is None:
                raise CommandError(f"cluster {name} does not exist")
            cluster.simulated = True
            if cluster.scheduler_policy.strip() in ("", default_scheduler_policy().strip()):
                cluster.scheduler_policy = DEMO_POLICY
            cluster.save()
        total = 0
        for cluster in Cluster.objects.order_by("name"):
            tasks = ensure_schedules(cluster)
            total += len(tasks)
            enabled = sum(1 for t in tasks if t.enabled)
            flag = " (simulated)" if cluster.simulated else ""
            self.stdout.write(f"cluster {cluster.name}{flag}: {enabled} of {len(tasks)} periodic tasks enabled")
        self.stdout.write(self.style.SUCCESS(f"{total} periodic tasks in place"))
