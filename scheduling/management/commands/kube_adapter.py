"""Run the Kubernetes adapter of a ``source=kubernetes`` cluster (``scheduling.kube.adapter``): mirror the API
server's nodes, pods, podgroups, queues, quotas, namespaces and priority classes into Fairway, and send the sessions'
bindings, evictions and statuses back. Run it next to the Celery worker and beat (which run the sessions); start two
or more for availability: one holds the cluster's Lease and acts, the others stand by."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from scheduling.models import Cluster, ClusterSource


class Command(BaseCommand):
    help = "Run the Kubernetes adapter of a source=kubernetes cluster (leader-elected through a Lease)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cluster", required=True, help="the cluster's name in Fairway")
        parser.add_argument("--lease-namespace", default="kube-system", help="where the Lease lives")
        parser.add_argument("--identity", default=None, help="this candidate's name (default: host-pid)")
        parser.add_argument("--interval", type=float, default=1.0, help="seconds between passes when idle")
        parser.add_argument("--lease-seconds", type=float, default=15.0, help="the Lease's duration")

    def handle(self, *args: Any, **options: Any) -> None:
        from kubernetes.config import ConfigException

        from scheduling.kube.adapter import Adapter

        cluster = Cluster.objects.filter(name=options["cluster"]).first()
        if cluster is None:
            raise CommandError(f"cluster {options['cluster']} does not exist")
        if cluster.source != ClusterSource.KUBERNETES:
            raise CommandError(f"cluster {cluster.name} has source={cluster.source}; set source=kubernetes first")
        try:
            adapter = Adapter(
                cluster,
                identity=options["identity"],
                lease_namespace=options["lease_namespace"],
                lease_seconds=options["lease_seconds"],
                renew_seconds=max(1.0, options["lease_seconds"] / 3),
            )
        except ConfigException as exc:
            raise CommandError(f"cluster {cluster.name}: cannot connect: {exc}") from exc
        self.stdout.write(
            f"adapter {adapter.identity} of cluster {cluster.name}: watching {', '.join(adapter.kinds())}"
        )
        adapter.run(interval=options["interval"])
