"""The demo's organisation, cluster and jobs (``load_demo``) and its scheduler policy (``ensure_schedules``), as
plain data: no Django here, so the benchmarks build the same cluster in memory (``bench/bench_reclaim.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# department -> (deserved, guarantee, capability, weight), teams -> (deserved, guarantee, weight, ns weight). A team's
# deserved is also its quota group's min, and covers its largest job's minimum on every resource, as a careful admin
# sets it (issue 26: ml-research's 8 x 4-GPU llm-pretrain needs 32 GPUs; with a min of 24 it started only while others
# lent and was recycled whole when they took their guarantees back). The 8 GPUs came from search and analytics, which
# run only the generator's small GPU jobs (sized to half their queue's deserved: 2 GPUs now, 4 before), and research's
# deserved grew by 8 to hold it, rather than take them from nlp and vision (nlp's guarantee grows to 6 GPUs in the
# change-request example, docs/change-requests.md). The departments' deserved still add up to the cluster's 64 GPUs
# (docs/recycling-and-gangs.md, "The demo's quotas cover its gangs"; checked by ``tests/test_project.py``; a tree
# write that breaks it is warned of, ``below_job_minimum``).
ORG: dict[str, dict[str, Any]] = {
    "research": {
        "deserved": {"cpu": "400", "memory": "2400Gi", "nvidia.com/gpu": "48"},
        "guarantee": {"cpu": "96", "memory": "576Gi", "nvidia.com/gpu": "8"},
        "capability": {"cpu": "800", "memory": "4800Gi", "nvidia.com/gpu": "64"},
        "weight": 4,
        "teams": {
            "ml-research": (
                {"cpu": "200", "memory": "1200Gi", "nvidia.com/gpu": "32"},
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
        "deserved": {"cpu": "400", "memory": "2400Gi", "nvidia.com/gpu": "12"},
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
                {"cpu": "100", "memory": "600Gi", "nvidia.com/gpu": "4"},
                {"cpu": "24", "memory": "144Gi"},
                1,
                1,
            ),
        },
    },
    "operations": {
        "deserved": {"cpu": "224", "memory": "1344Gi", "nvidia.com/gpu": "4"},
        "guarantee": {"cpu": "32", "memory": "192Gi", "nvidia.com/gpu": "0"},
        "capability": {"cpu": "512", "memory": "3072Gi", "nvidia.com/gpu": "16"},
        "weight": 2,
        "teams": {
            "analytics": (
                {"cpu": "124", "memory": "744Gi", "nvidia.com/gpu": "4"},
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


@dataclass(frozen=True)
class Size:
    """How big a demo: quotas multiplied by ``factor``, ``cpu_nodes`` + ``gpu_nodes`` machines, ``copies`` of each
    job of ``JOBS``."""

    factor: int
    cpu_nodes: int
    gpu_nodes: int
    copies: int

    @property
    def nodes(self) -> int:
        return self.cpu_nodes + self.gpu_nodes

    @property
    def jobs(self) -> int:
        return len(JOBS) * self.copies

    @property
    def pods(self) -> int:
        return sum(size for _, _, size, _, _ in JOBS) * self.copies


SIZES = {"small": Size(1, 16, 8, 1), "large": Size(200, 3334, 1666, 900)}

# The policy ``ensure_schedules --simulated`` gives the demo's cluster: reclaim and preempt on, hierarchical
# capacity, Koordinator's elastic quota with the overuse monitor on and a 30 s eviction delay; every victim filter in
# the first tier. Fairway's own settings are on (docs/sessions.md, "Recommended policy"): recycling chooses victims with gangs
# in mind (revokeWholeGangs), and so does preempt (wholeGangs; not reclaim: measured, docs/recycling-and-gangs.md
# "Reclaim and preempt with gangs in mind"); reclaim and preempt keep a pod for a minute after it starts (minRuntime),
# against more important jobs too (minRuntimeHigherPriority: wait; the pods just placed are mostly the replacements of
# pods just evicted: docs/recycling-and-gangs.md "No thrash"). Pods are packed onto
# the fewest GPU machines (binpack, GPUs weighted 5): spread out (nodeorder alone), the small GPU jobs left no
# machine with 4 free GPUs, and a released 8 x 4-GPU gang found 32 GPUs free and nowhere to run (GPUs 50 %
# allocated; bench/bench_gangs.py, docs/benchmarks.md).
DEMO_POLICY = """\
actions: "enqueue, allocate, backfill, reclaim, preempt"
configurations:
- name: reclaim
  arguments: {minRuntime: 60s, minRuntimeHigherPriority: wait}
- name: preempt
  arguments: {minRuntime: 60s, wholeGangs: true, minRuntimeHigherPriority: wait}
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
  - name: capacity
    enableHierarchy: true
  - name: elasticquota
    arguments:
      monitorAllQuotas: true
      delayEvictTime: 30s
      revokeWholeGangs: true
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: nodeorder
  - name: binpack
    arguments:
      binpack.weight: 10
      binpack.resources: nvidia.com/gpu
      binpack.resources.nvidia.com/gpu: 5
"""

# The demo's second cluster: the same organisation (the trees are shared by every cluster) on half the machines, with
# fairness over time on in both trees (docs/fair-share.md, "Fairness over time"): the capacity queues are ordered, and
# reclaimed from, by their past usage, and the quota groups' surplus is split by weights divided by it. The memory is
# short so that the ratios move within minutes of ``make run`` (usage of an hour ago counts half). It starts without
# jobs: the workload generator submits the teams' jobs as it does in the default cluster, which keeps its own policy.
FAIR_CLUSTER = "lab"
FAIR_CLUSTER_DESCRIPTION = "Demo: the same teams on half the machines, with fairness over time on"
FAIR_SIZE = Size(1, 8, 4, 0)
_CAPACITY = "  - name: capacity\n    enableHierarchy: true\n"
_ELASTIC = "      revokeWholeGangs: true\n"
FAIR_POLICY = DEMO_POLICY.replace(
    _CAPACITY, _CAPACITY + "    arguments: {fairnessOverTime: true, usageHalfLife: 1h, usageWindow: 1d}\n"
).replace(_ELASTIC, _ELASTIC + "      fairnessOverTime: true\n      usageHalfLife: 1h\n      usageWindow: 1d\n")
