"""The demo's organisation, cluster and jobs (``load_demo``) and its scheduler policy (``ensure_schedules``), as
plain data: no Django here, so the benchmarks build the same cluster in memory (``bench/bench_reclaim.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# department -> (deserved, guarantee, capability, weight), teams -> (deserved, guarantee, weight, ns weight).
# A team's deserved (its quota group's min too) holds each of its jobs (ml-research's 8 x 4-GPU llm-pretrain: 32 GPUs)
# and, on every resource, its GPUs' worth of GPU jobs: 8 cores and 64 GiB per GPU (the GPU machines' ratio, and the
# workload generator's GPU jobs'), the rest of its cores at 4 GiB each (the CPU machines' ratio). The departments add
# up to the cluster (1,024 cores, 6,144 GiB, 64 GPUs) on every resource (docs/recycling-and-gangs.md, "The demo's
# quotas cover its gangs"; tests/test_project.py checks both).
ORG: dict[str, dict[str, Any]] = {
    "research": {
        "deserved": {"cpu": "456", "memory": "3360Gi", "nvidia.com/gpu": "48"},
        "guarantee": {"cpu": "96", "memory": "576Gi", "nvidia.com/gpu": "8"},
        "capability": {"cpu": "800", "memory": "4800Gi", "nvidia.com/gpu": "64"},
        "weight": 4,
        "teams": {
            "ml-research": (
                {"cpu": "256", "memory": "2048Gi", "nvidia.com/gpu": "32"},
                {"cpu": "48", "memory": "288Gi", "nvidia.com/gpu": "4"},
                3,
                2,
            ),
            "nlp": (
                {"cpu": "100", "memory": "656Gi", "nvidia.com/gpu": "8"},
                {"cpu": "24", "memory": "144Gi", "nvidia.com/gpu": "2"},
                2,
                1,
            ),
            "vision": (
                {"cpu": "100", "memory": "656Gi", "nvidia.com/gpu": "8"},
                {"cpu": "24", "memory": "144Gi", "nvidia.com/gpu": "2"},
                2,
                1,
            ),
        },
    },
    "engineering": {
        "deserved": {"cpu": "372", "memory": "1872Gi", "nvidia.com/gpu": "12"},
        "guarantee": {"cpu": "96", "memory": "576Gi", "nvidia.com/gpu": "0"},
        "capability": {"cpu": "800", "memory": "4800Gi", "nvidia.com/gpu": "32"},
        "weight": 4,
        "teams": {
            "platform": (
                {"cpu": "160", "memory": "768Gi", "nvidia.com/gpu": "4"},
                {"cpu": "48", "memory": "288Gi"},
                2,
                1,
            ),
            "data-eng": (
                {"cpu": "140", "memory": "688Gi", "nvidia.com/gpu": "4"},
                {"cpu": "24", "memory": "144Gi"},
                2,
                2,
            ),
            "search": (
                {"cpu": "72", "memory": "416Gi", "nvidia.com/gpu": "4"},
                {"cpu": "24", "memory": "144Gi"},
                1,
                1,
            ),
        },
    },
    "operations": {
        "deserved": {"cpu": "196", "memory": "912Gi", "nvidia.com/gpu": "4"},
        "guarantee": {"cpu": "32", "memory": "192Gi", "nvidia.com/gpu": "0"},
        "capability": {"cpu": "512", "memory": "3072Gi", "nvidia.com/gpu": "16"},
        "weight": 2,
        "teams": {
            "analytics": (
                {"cpu": "96", "memory": "512Gi", "nvidia.com/gpu": "4"},
                {"cpu": "16", "memory": "96Gi"},
                2,
                3,
            ),
            "batch-etl": ({"cpu": "100", "memory": "400Gi"}, {"cpu": "16", "memory": "96Gi"}, 1, 1),
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
