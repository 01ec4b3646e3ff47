"""Load the demo organisation: 3 departments and 8 teams as a queue tree and a quota tree, 24 nodes (8 with
GPUs), namespaces with weights, team accounts, and a few jobs. The trees go through the same services (and
rules) as the API. Idempotent: does nothing when the demo is already there.

``--size large`` loads the same organisation with every quota 200 times larger on 5,000 nodes (3,334 CPU and
1,666 GPU machines) with 900 copies of each job: 7,200 jobs of 49,500 pods, more than the cluster holds, so that
the first session places tens of thousands of pods and the ones after it run at the scale issue 12 measures
(a busy cluster with a backlog). Nodes, jobs and pods go in with bulk inserts, which move the cluster's
revision as every write does.

The small demo has a second cluster, ``lab`` (``FAIR_CLUSTER``): the same teams on 12 machines (8 CPU and 4 GPU
machines, half the default's), simulated, with fairness over time on in both trees (``FAIR_POLICY``) and no job at
first (the workload generator submits them). The default cluster and its policy are as they were.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from engine.resources import ResourceList, parse_resource_list
from quotas import services
from quotas.models import Namespace, Queue, QuotaGroup
from scheduling.demo_data import (
    CPU_NODE,
    FAIR_CLUSTER,
    FAIR_CLUSTER_DESCRIPTION,
    FAIR_POLICY,
    FAIR_SIZE,
    GPU_NODE,
    JOBS,
    ORG,
    SIZES,
    Size,
)
from scheduling.models import Cluster, Node, Pod, PodGroup


def _times(rl: dict[str, str], factor: int) -> dict[str, str]:
    """``rl`` with every amount multiplied by ``factor`` (the quantities keep their unit suffix)."""
    out = {}
    for name, text in rl.items():
        digits = text.rstrip("KMGTPEikmgtpe")
        out[name] = f"{int(digits) * factor}{text[len(digits) :]}"
    return out


def _scale(rl: dict[str, str], factor: float) -> dict[str, str]:
    """Demo helper: quota max = a multiple of min (whole units)."""
    parsed = parse_resource_list(rl)
    out = {}
    for name, amount in parsed.items():
        unit = 1000 if name != "memory" else 2**30
        out[name] = f"{int(amount / unit * factor)}{'Gi' if name == 'memory' else ''}"
    return out


class Command(BaseCommand):
    help = "Load the demo organisation, cluster and jobs (idempotent)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--size",
            choices=sorted(SIZES),
            default="small",
            help="small: 24 nodes and 8 jobs (the default); large: the same teams with 200 times their quotas, "
            "5,000 nodes and 7,200 jobs of 49,500 pods",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        size = SIZES[options["size"]]
        if Queue.objects.filter(name="research").exists():
            loaded = Node.objects.filter(cluster__name="default").count()
            if options["size"] == "large" and loaded < size.nodes:
                raise CommandError(
                    f"the demo is already loaded with {loaded} nodes; the large one needs an empty database "
                    "(make clean, or another DATABASE_URL)"
                )
            self.stdout.write("demo already loaded")
            return
        with transaction.atomic():
            self._load(size)
            if options["size"] == "small":
                self._fair_cluster()
        self.stdout.write(
            self.style.SUCCESS(
                f"demo loaded: 3 departments, 8 teams, {size.nodes:,} nodes, {size.jobs:,} jobs of {size.pods:,} pods; "
                "team logins <team>-lead / demo-<team>"
            )
        )
        if options["size"] == "small":
            self.stdout.write(
                f"cluster {FAIR_CLUSTER}: {FAIR_SIZE.nodes} nodes with fairness over time on (switch clusters at the "
                "top of any page)"
            )

    def _load(self, size: Size) -> None:
        self._trees(size.factor)
        cluster = Cluster.objects.get(name="default")
        self._nodes(cluster, size)
        self._jobs(cluster, size)

    def _fair_cluster(self) -> None:
        """The second cluster: simulated, fairness over time on, its own machines, no job yet."""
        if Cluster.objects.filter(name=FAIR_CLUSTER).exists():
            return
        cluster = Cluster.objects.create(
            name=FAIR_CLUSTER, description=FAIR_CLUSTER_DESCRIPTION, scheduler_policy=FAIR_POLICY, simulated=True
        )
        self._nodes(cluster, FAIR_SIZE)

    def _trees(self, factor: int) -> None:
        User = get_user_model()
        root_group = QuotaGroup.objects.get(name="root")
        for dept, spec in ORG.items():
            services.save_queue(
                None,
                {
                    "name": dept,
                    "parent": "root",
                    "weight": spec["weight"],
                    "deserved": parse_resource_list(_times(spec["deserved"], factor)),
                    "guarantee": parse_resource_list(_times(spec["guarantee"], factor)),
                    "capability": parse_resource_list(_times(spec["capability"], factor)),
                },
            )
            services.save_quota_group(
                None,
                {
                    "name": dept,
                    "parent": root_group.name,
                    "is_parent": True,
                    "min": parse_resource_list(_times(spec["deserved"], factor)),
                    "max": parse_resource_list(_times(spec["capability"], factor)),
                },
            )
            dept_team = Group.objects.create(name=f"{dept}-dept")
            Queue.objects.get(name=dept).teams.add(dept_team)
            QuotaGroup.objects.get(name=dept).teams.add(dept_team)
            lead = User.objects.create_user(f"{dept}-lead", password=f"demo-{dept}")
            lead.groups.add(dept_team)
            for team, (small_deserved, small_guarantee, weight, ns_weight) in spec["teams"].items():
                deserved, guarantee = _times(small_deserved, factor), _times(small_guarantee, factor)
                services.save_queue(
                    None,
                    {
                        "name": team,
                        "parent": dept,
                        "weight": weight,
                        "deserved": parse_resource_list(deserved),
                        "guarantee": parse_resource_list(guarantee),
                    },
                )
                services.save_quota_group(
                    None,
                    {
                        "name": team,
                        "parent": dept,
                        "is_parent": False,
                        "min": parse_resource_list(deserved),
                        "max": parse_resource_list(_scale(deserved, 2)),
                    },
                )
                group = Group.objects.create(name=team)
                Queue.objects.get(name=team).teams.add(group)
                QuotaGroup.objects.get(name=team).teams.add(group)
                user = User.objects.create_user(f"{team}-lead", password=f"demo-{team}")
                user.groups.add(group)
                for suffix, w in (("", ns_weight), ("-dev", 1)):
                    Namespace.objects.create(
                        name=f"{team}{suffix}",
                        weight=w,
                        default_queue=Queue.objects.get(name=team),
                        quota_group=QuotaGroup.objects.get(name=team),
                        hard=parse_resource_list(
                            _times({"cpu": "2000", "memory": "8000Gi", "nvidia.com/gpu": "128"}, factor)
                        ),
                    )

    def _nodes(self, cluster: Cluster, size: Size) -> None:
        now = timezone.now()
        cpu, gpu = parse_resource_list(CPU_NODE), parse_resource_list(GPU_NODE)
        width = max(2, len(str(max(size.cpu_nodes, size.gpu_nodes))))
        Node.objects.bulk_create(
            [
                *(
                    Node(
                        cluster=cluster,
                        name=f"cpu-{i + 1:0{width}d}",
                        allocatable=cpu,
                        labels={"node.kubernetes.io/instance-type": "c-32", "zone": f"zone-{i % 3 + 1}"},
                        last_heartbeat=now,
                    )
                    for i in range(size.cpu_nodes)
                ),
                *(
                    Node(
                        cluster=cluster,
                        name=f"gpu-{i + 1:0{width}d}",
                        allocatable=gpu,
                        labels={
                            "node.kubernetes.io/instance-type": "g-64",
                            "accelerator": "a100",
                            "zone": f"zone-{i % 3 + 1}",
                        },
                        taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
                        last_heartbeat=now,
                    )
                    for i in range(size.gpu_nodes)
                ),
            ],
            batch_size=1000,
        )

    def _jobs(self, cluster: Cluster, size: Size) -> None:
        namespaces = {ns.name: ns for ns in Namespace.objects.filter(name__in=[team for team, *_ in JOBS])}
        queues = {q.name: q for q in Queue.objects.filter(name__in=[team for team, *_ in JOBS])}
        groups = []
        for copy in range(size.copies):
            for team, job, pods, request, priority in JOBS:
                req = parse_resource_list(request)
                groups.append(
                    PodGroup(
                        cluster=cluster,
                        namespace=namespaces[team],
                        name=job if size.copies == 1 else f"{job}-{copy:03d}",
                        queue=queues[team],
                        min_member=pods,
                        min_resources=ResourceList({k: v * pods for k, v in req.items()}),
                        priority=priority,
                    )
                )
        PodGroup.objects.bulk_create(groups, batch_size=1000)
        shapes = {job: (pods, request) for _, job, pods, request, _ in JOBS}
        gpu_toleration = [{"key": "nvidia.com/gpu", "operator": "Exists", "value": "", "effect": "NoSchedule"}]
        rows = []
        for pg in groups:
            pods, request = shapes[pg.name if size.copies == 1 else pg.name.rsplit("-", 1)[0]]
            req = parse_resource_list(request)
            tolerations = gpu_toleration if "nvidia.com/gpu" in request else []
            rows.extend(
                Pod(
                    cluster=cluster,
                    namespace=pg.namespace,
                    name=f"{pg.name}-{k}",
                    podgroup=pg,
                    request=req,
                    priority=pg.priority,
                    quota_group=pg.namespace.quota_group,
                    tolerations=tolerations,
                    duration_seconds=300 + 30 * k,
                )
                for k in range(pods)
            )
        Pod.objects.bulk_create(rows, batch_size=2000)
