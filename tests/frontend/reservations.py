"""A cluster whose reason cannot be read without the reservations (the issue's example, as database rows):
queue engineering (capability 32 GPUs) on 40 GPUs holds 12 GPUs with a Running job, two admitted (Inqueue) jobs
reserve 9 GPUs each and one of their pods is pipelined, and a Pending job asking 8 GPUs waits with the reason the
session gives it. Quota group research (max 32 GPUs) holds the same pods. The team ``eng-team`` owns both."""

from __future__ import annotations

from typing import Any

from scheduling.models import Node, Pod, PodGroup
from tests.frontend import builders as b

GPU = "nvidia.com/gpu"
MINUS = "\u2212"
REASON = (
    "not admitted (Pending -> Inqueue): queue engineering realCapability: insufficient nvidia.com/gpu, "
    f"requested 8, available 2 = 32 capability {MINUS} 12 allocated {MINUS} 18 reserved by 2 admitted jobs"
)


def _gpus(n: int) -> dict[str, str]:
    return {"cpu": "1", "memory": "4Gi", GPU: str(n)}


def engineering() -> dict[str, Any]:
    """Build the rows; returns the names the tests read."""
    for i in range(5):
        b.node(f"gpu-{i}", cpu="32", memory="256Gi", **{GPU: "8"})
    b.queue("engineering", capability={"cpu": "100", "memory": "1000Gi", GPU: "32"})
    b.group(
        "research", min={"cpu": "10", "memory": "40Gi", GPU: "8"}, max={"cpu": "100", "memory": "1000Gi", GPU: "32"}
    )
    b.namespace("eng", queue_name="engineering", group_name="research")
    train = b.job("eng", "train", "engineering", 3, _gpus(4), running=3, on="gpu-0", group_name="research")
    PodGroup.objects.filter(pk=train.pk).update(min_member=3, min_resources=b.rl(_gpus(12)))
    for name in ("tune-a", "tune-b"):
        pg = b.job("eng", name, "engineering", 3, _gpus(3), group_name="research", phase="Inqueue")
        minimum = b.rl({"cpu": "3", "memory": "12Gi", GPU: "9"})
        PodGroup.objects.filter(pk=pg.pk).update(min_member=3, min_resources=minimum)
    Pod.objects.filter(name="tune-a-0").update(status="Pipelined", node=Node.objects.get(name="gpu-1"))
    waiting = b.job(
        "eng", "eval", "engineering", 2, _gpus(4), group_name="research", reason="Unschedulable", message=REASON
    )
    PodGroup.objects.filter(pk=waiting.pk).update(min_member=2, min_resources=b.rl(_gpus(8)))
    b.team("eng-team", queues=["engineering"], groups=["research"])
    return {"queue": "engineering", "group": "research", "waiting": "eval"}
