"""Load the demo organisation: 3 departments and 8 teams as a queue tree and a quota tree, 24 nodes (8 with
GPUs), namespaces with weights, team accounts, and a few jobs. Every object goes through the same services
(and rules) as the API. Idempotent: does nothing when the demo is already there."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from engine.resources import ResourceList, parse_resource_list
from quotas import services
from quotas.models import Namespace, Queue, QuotaGroup
from scheduling.models import Cluster, Node, Pod, PodGroup

# department -> (deserved, guarantee, capability, weight), teams -> (deserved, guarantee, weight, ns weight)
ORG: dict[str, dict[str, Any]] = {
    "research": {
        "deserved": {"cpu": "400", "memory": "2400Gi", "nvidia.com/gpu": "40"},
        "guarantee": {"cpu": "96", "memory": "576Gi", "nvidia.com/gpu": "8"},
        "capability": {"cpu": "800", "memory": "4800Gi", "nvidia.com/gpu": "64"},
        "weight": 4,
        "teams": {
            "ml-research": (
                {"cpu": "200", "memory": "1200Gi", "nvidia.com/gpu": "24"},
                {"cpu": "48", "memory": "288Gi", "nvidia.com/gpu": "4"},
                3,
                2,
            ),
            "nlp": (
                {"cpu": "100", "memory": "600Gi", "nvidia.com/gpu": "8"},
                {"cpu": "24", "memory": "144Gi", "nvidia.com/gpu": "2"},
                2,
                1,
            ),
            "vision": (
                {"cpu": "100", "memory": "600Gi", "nvidia.com/gpu": "8"},
                {"cpu": "24", "memory": "144Gi", "nvidia.com/gpu": "2"},
                2,
                1,
            ),
        },
    },
    "engineering": {
        "deserved": {"cpu": "400", "memory": "2400Gi", "nvidia.com/gpu": "16"},
        "guarantee": {"cpu": "96", "memory": "576Gi", "nvidia.com/gpu": "0"},
        "capability": {"cpu": "800", "memory": "4800Gi", "nvidia.com/gpu": "32"},
        "weight": 4,
        "teams": {
            "platform": (
                {"cpu": "160", "memory": "960Gi", "nvidia.com/gpu": "4"},
                {"cpu": "48", "memory": "288Gi"},
                2,
                1,
            ),
            "data-eng": (
                {"cpu": "140", "memory": "840Gi", "nvidia.com/gpu": "4"},
                {"cpu": "24", "memory": "144Gi"},
                2,
                2,
            ),
            "search": (
                {"cpu": "100", "memory": "600Gi", "nvidia.com/gpu": "8"},
                {"cpu": "24", "memory": "144Gi"},
                1,
                1,
            ),
        },
    },
    "operations": {
        "deserved": {"cpu": "224", "memory": "1344Gi", "nvidia.com/gpu": "8"},
        "guarantee": {"cpu": "32", "memory": "192Gi", "nvidia.com/gpu": "0"},
        "capability": {"cpu": "512", "memory": "3072Gi", "nvidia.com/gpu": "16"},
        "weight": 2,
        "teams": {
            "analytics": (
                {"cpu": "124", "memory": "744Gi", "nvidia.com/gpu": "8"},
                {"cpu": "16", "memory": "96Gi"},
                2,
                3,
            ),
            "batch-etl": ({"cpu": "100", "memory": "600Gi"}, {"cpu": "16", "memory": "96Gi"}, 1, 1),
        },
    },
}

CPU_NODE = {"cpu": "32", "memory": "128Gi", "pods": "110"}
GPU_NODE = {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8", "pods": "110"}

# (team, job name, pods, per-pod request, priority)
JOBS = [
    ("ml-research", "llm-pretrain", 8, {"cpu": "16", "memory": "96Gi", "nvidia.com/gpu": "4"}, 100),
    ("ml-research", "hparam-sweep", 16, {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"}, 10),
    ("nlp", "tokenizer-train", 4, {"cpu": "8", "memory": "32Gi"}, 10),
    ("vision", "detector-finetune", 2, {"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": "2"}, 50),
    ("platform", "ci-batch", 12, {"cpu": "4", "memory": "8Gi"}, 0),
    ("data-eng", "nightly-etl", 6, {"cpu": "8", "memory": "32Gi"}, 20),
    ("search", "index-rebuild", 3, {"cpu": "16", "memory": "64Gi"}, 30),
    ("analytics", "weekly-report", 4, {"cpu": "4", "memory": "16Gi"}, 0),
]


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

    def handle(self, *args: Any, **options: Any) -> None:
        if Queue.objects.filter(name="research").exists():
            self.stdout.write("demo already loaded")
            return
        with transaction.atomic():
            self._load()
        self.stdout.write(
            self.style.SUCCESS(
                "demo loaded: 3 departments, 8 teams, 24 nodes, 8 jobs; team logins <team>-lead / demo-<team>"
            )
        )

    def _load(self) -> None:
        User = get_user_model()
        root_group = QuotaGroup.objects.get(name="root")
        for dept, spec in ORG.items():
            services.save_queue(
                None,
                {
                    "name": dept,
                    "parent": "root",
                    "weight": spec["weight"],
                    "deserved": parse_resource_list(spec["deserved"]),
                    "guarantee": parse_resource_list(spec["guarantee"]),
                    "capability": parse_resource_list(spec["capability"]),
                },
            )
            services.save_quota_group(
                None,
                {
                    "name": dept,
                    "parent": root_group.name,
                    "is_parent": True,
                    "min": parse_resource_list(spec["deserved"]),
                    "max": parse_resource_list(spec["capability"]),
                },
            )
            dept_team = Group.objects.create(name=f"{dept}-dept")
            Queue.objects.get(name=dept).teams.add(dept_team)
            QuotaGroup.objects.get(name=dept).teams.add(dept_team)
            lead = User.objects.create_user(f"{dept}-lead", password=f"demo-{dept}")
            lead.groups.add(dept_team)
            for team, (deserved, guarantee, weight, ns_weight) in spec["teams"].items():
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
                        hard=parse_resource_list({"cpu": "2000", "memory": "8000Gi", "nvidia.com/gpu": "128"}),
                    )
        cluster = Cluster.objects.get(name="default")
        now = timezone.now()
        for i in range(16):
            Node.objects.create(
                cluster=cluster,
                name=f"cpu-{i + 1:02d}",
                allocatable=parse_resource_list(CPU_NODE),
                labels={"node.kubernetes.io/instance-type": "c-32", "zone": f"zone-{i % 3 + 1}"},
                last_heartbeat=now,
            )
        for i in range(8):
            Node.objects.create(
                cluster=cluster,
                name=f"gpu-{i + 1:02d}",
                allocatable=parse_resource_list(GPU_NODE),
                labels={"node.kubernetes.io/instance-type": "g-64", "accelerator": "a100", "zone": f"zone-{i % 3 + 1}"},
                taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
                last_heartbeat=now,
            )
        for team, job, size, request, priority in JOBS:
            ns = Namespace.objects.get(name=team)
            req = parse_resource_list(request)
            pg = PodGroup.objects.create(
                cluster=cluster,
                namespace=ns,
                name=job,
                queue=Queue.objects.get(name=team),
                min_member=size,
                min_resources=ResourceList({k: v * size for k, v in req.items()}),
                priority=priority,
            )
            tolerations = (
                [{"key": "nvidia.com/gpu", "operator": "Exists", "value": "", "effect": "NoSchedule"}]
                if "nvidia.com/gpu" in request
                else []
            )
            for k in range(size):
                Pod.objects.create(
                    cluster=cluster,
                    namespace=ns,
                    name=f"{job}-{k}",
                    podgroup=pg,
                    request=req,
                    priority=priority,
                    quota_group=ns.quota_group,
                    tolerations=tolerations,
                    duration_seconds=300 + 30 * k,
                )
