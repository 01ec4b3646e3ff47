"""The golden corpus of ``fairway simulate`` (issue 10, item 8): proof that a restructure did not move behaviour.

A *case* is a cluster snapshot written as Kubernetes manifests (plus, maybe, a ``--policy`` file) and the
arguments of one run (``--sessions N``, ``--recycle``). Cases come from three places:

* **generated** (``gen-NNNN``): ``snapshot(seed)`` draws a cluster from ``random.Random(seed)`` and nothing else
  (no clock, no environment): 1-40 nodes (GPUs, taints, cordoned and NotReady nodes, labels), Volcano queues flat or
  in trees of depth 2-4 (weight, capability, deserved, guarantee, reclaimable, priority, states, the old
  ``volcano.sh/hierarchy`` annotations), namespaces with their queue and ResourceQuotas (weights, hard limits),
  priority classes, Koordinator ElasticQuota trees (parent / is-parent / allow-lent labels, shared-weight and
  namespaces annotations) or scheduler-plugins ElasticQuotas, PodGroups (minMember, minTaskMember, minResources,
  priority classes, phases), pods Pending, Running, Bound, Succeeded, Failed and Releasing (a ``deletionTimestamp``)
  on their nodes, bare pods, vcjobs, and one of the ``POLICIES`` given with ``--policy`` or in the
  ``volcano-scheduler-configmap``. Over half of them are under pressure (a queue borrowing most of the cluster with
  low-priority pods, some Releasing, while higher-priority jobs wait), so that reclaim, preempt and recycling evict.
  A few seeds break a tree rule on purpose (exit 2) or add what only warns. Each seed also draws its run and the
  form of its files (block YAML, JSON documents, one ``kind: List``; one file or two).
* **acceptance** (``acc-…``): every input the acceptance tests under ``tests/acceptance/`` hand to
  ``fairway simulate``, the snapshots their session tests run sessions on (as the manifests ``dump_yaml`` writes)
  and the unmutated seeds of the fuzz test, captured once by running those tests through
  ``tests/support/acceptance_capture.py`` and kept, as they were, in ``tests/golden/acceptance-inputs.jsonl.gz``;
  each is run as its test ran it, with one session, and with three sessions and ``--recycle``.
* **peers** (``peer-…``): the peers' manifests beside the repository, read in place when they are there.

Each case is run through ``controlplane/simulate_cli.py`` itself (its ``run``, the function ``fairway simulate``
calls, loaded from its file so that the Django-configured ``controlplane`` package is not imported) with ``-o json``,
the default limits and the clock fixed at ``CLOCK``, and its outcome is kept: the exit code, the JSON document without
any ``duration_ms``, and stderr's lines (the warnings, or the one error line of an exit 2). The recording is
``tests/golden/simulate.jsonl.gz``, one JSON line per case, with a digest of the case's input (so that a changed
generator is told apart from changed behaviour) and notes for people.

Commands (see ``tests/acceptance/test_golden_simulate.py``)::

    python -m tests.support.corpus --record               # rewrite the recording (a deliberate act: explain the diff)
    python -m tests.support.corpus --capture-acceptance   # re-capture the acceptance inputs (runs those tests)
    python -m tests.support.corpus --show gen-0042 DIR    # write a case's files to DIR and print its command line
    python -m tests.support.corpus --check                # compare, as the test does, and print every difference
    python -m tests.support.corpus --stats                # count what the recorded corpus holds

Pure Python: nothing here imports Django.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import gzip
import hashlib
import importlib.util
import io
import json
import random
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden"
RECORDING = GOLDEN / "simulate.jsonl.gz"
ACCEPTANCE_INPUTS = GOLDEN / "acceptance-inputs.jsonl.gz"
# The CLI's own module: ``fairway simulate`` is controlplane.cli.main -> simulate_cli.run(args).
SIMULATE_CLI = REPO / "controlplane" / "simulate_cli.py"

SEEDS = range(400)
GPU = "nvidia.com/gpu"
Gi = 2**30
Mi = 2**20

# -- policies -----------------------------------------------------------------------------------------------------

# Copied, as it was when the corpus was recorded, from scheduling/management/commands/ensure_schedules.py (a Django
# module this pure file cannot import); the corpus keeps its own copy so that the inputs never change under it.
DEMO_POLICY = """\
actions: "enqueue, allocate, backfill, reclaim, preempt"
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
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: nodeorder
"""

POLICIES: dict[str, str | None] = {
    # Volcano's default: no policy file and no ConfigMap (enqueue, allocate, backfill; proportion).
    "volcano-default": None,
    "proportion-reclaim-preempt": """\
actions: "enqueue, allocate, backfill, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
""",
    "capacity-hierarchy": """\
actions: "enqueue, allocate, reclaim, backfill, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: capacity
    enableHierarchy: true
  - name: nodeorder
""",
    "capacity-flat": """\
actions: "enqueue, allocate, backfill, reclaim"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: capacity
  - name: nodeorder
""",
    "demo-elasticquota": DEMO_POLICY,
    "drf-namespace-order": """\
actions: "enqueue, allocate, backfill, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
    enableNamespaceOrder: true
  - name: predicates
  - name: proportion
  - name: nodeorder
""",
    "elasticquota-parent-check": """\
actions: "enqueue, allocate, backfill, preempt"
configurations:
- name: enqueue
  arguments: {requeueAfterSessions: 1, requeueBackoff: 0s}
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
  - name: elasticquota
    arguments: {enableCheckParentQuota: true, monitorAllQuotas: true, delayEvictTime: 0s, enableMinQuotaScale: false}
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
""",
}
POLICY_WEIGHTS = {
    "volcano-default": 3,
    "proportion-reclaim-preempt": 4,
    "capacity-hierarchy": 4,
    "capacity-flat": 2,
    "demo-elasticquota": 4,
    "drf-namespace-order": 3,
    "elasticquota-parent-check": 2,
}
ELASTIC_POLICIES = ("demo-elasticquota", "elasticquota-parent-check")

# -- quantities -----------------------------------------------------------------------------------------------------


def _cpu(milli: int, rng: random.Random | None = None) -> str:
    if rng is not None and milli % 100 == 0 and milli % 1000 and rng.random() < 0.2:
        return str(milli / 1000)  # "1.5": a decimal, as people write it
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def _mem(n: int, rng: random.Random | None = None) -> str:
    if rng is not None and rng.random() < 0.05:
        return str(n)  # plain bytes
    if n % Gi == 0:
        return f"{n // Gi}Gi"
    if n % Mi == 0:
        return f"{n // Mi}Mi"
    return str(n)


def _rl(amounts: dict[str, int], rng: random.Random | None = None) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, amount in amounts.items():
        if name == "cpu":
            out[name] = _cpu(amount, rng)
        elif name in ("memory", "ephemeral-storage"):
            out[name] = _mem(amount, rng)
        else:
            out[name] = str(amount)
    return out


def _scale(amounts: dict[str, int], num: int, den: int) -> dict[str, int]:
    """``amounts * num / den``, rounded down to whole cpus, Mi and GPUs so that the manifests read as people's."""
    out = {}
    for name, amount in amounts.items():
        unit = 1000 if name == "cpu" else Mi if name in ("memory", "ephemeral-storage") else 1
        out[name] = amount * num // den // unit * unit
    return out


# -- the generator ----------------------------------------------------------------------------------------------------


@dataclass
class _Node:
    name: str
    free: dict[str, int]
    taints: list[dict[str, str]]
    gpu: bool


@dataclass
class _Queue:
    name: str
    parent: str
    depth: int
    deserved: dict[str, int] | None = None
    guarantee: dict[str, int] | None = None
    capability: dict[str, int] | None = None
    children: list[str] = field(default_factory=list)
    state: str = "Open"
    weight: int = 1


@dataclass
class _Group:
    name: str
    parent: str | None
    min: dict[str, int]
    max: dict[str, int]
    is_parent: bool = False


class _Generator:
    """One snapshot, drawn from ``rng`` only."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.docs: list[dict[str, Any]] = []
        self.notes: list[str] = []  # what is special about this case (for people reading a failure)

    # ---- helpers
    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, items: Sequence[Any]) -> Any:
        return items[self.rng.randrange(len(items))]

    # ---- the whole snapshot
    def build(self) -> tuple[list[dict[str, Any]], str, str]:
        rng = self.rng
        self.policy_name = rng.choices(list(POLICY_WEIGHTS), weights=list(POLICY_WEIGHTS.values()))[0]
        size = rng.choices(["tiny", "small", "medium", "large"], weights=[2, 4, 3, 2])[0]
        n_nodes = {"tiny": (1, 2), "small": (3, 6), "medium": (7, 16), "large": (17, 40)}[size]
        self.nodes(rng.randint(*n_nodes))
        self.priority_classes()
        self.queues()
        self.namespaces()
        elastic = self.policy_name in ELASTIC_POLICIES
        self.quota_mode = rng.choices(
            ["none", "koordinator", "scheduler-plugins"], weights=[1, 6, 1] if elastic else [4, 3, 1]
        )[0]
        self.groups: list[_Group] = []
        if self.quota_mode == "koordinator":
            self.koordinator_tree()
        elif self.quota_mode == "scheduler-plugins":
            self.scheduler_plugins_quotas()
        self.jobs(size)
        self.oddities()
        delivery = "none"
        if POLICIES[self.policy_name] is not None:
            delivery = "flag" if self.chance(0.5) else "configmap"
            if delivery == "configmap":
                self.docs.append(
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
                        "data": {"volcano-scheduler.conf": POLICIES[self.policy_name]},
                    }
                )
        if self.chance(0.2):
            rng.shuffle(self.docs)  # in no particular order, as a dump of a cluster may be
        return self.docs, self.policy_name, delivery

    # ---- nodes
    def nodes(self, count: int) -> None:
        rng = self.rng
        self.node_list: list[_Node] = []
        with_gpus = self.chance(0.45)
        self.total: dict[str, int] = {"cpu": 0, "memory": 0}
        for i in range(count):
            gpu = with_gpus and (i % 3 == 0 or self.chance(0.2))
            cores = self.pick([16, 32, 64, 96] if gpu else [2, 4, 8, 16, 32, 64])
            alloc: dict[str, int] = {
                "cpu": cores * 1000 - self.pick([0, 0, 100, 250]),
                "memory": cores * self.pick([2, 4, 8]) * Gi,
            }
            if gpu:
                alloc[GPU] = self.pick([1, 2, 4, 8, 8])
            if self.chance(0.3):
                alloc["pods"] = self.pick([16, 32, 110])
            if self.chance(0.1):
                alloc["ephemeral-storage"] = self.pick([50, 100, 200]) * Gi
            name = f"{'gpu' if gpu else 'cpu'}-{i:02d}"
            labels = {
                "kubernetes.io/hostname": name,
                "topology.kubernetes.io/zone": self.pick(["zone-a", "zone-b", "zone-c"]),
            }
            if gpu:
                labels["nvidia.com/gpu.present"] = "true"
            if self.chance(0.3):
                labels["node.kubernetes.io/instance-type"] = self.pick(["m5.2xlarge", "c6i.8xlarge", "p4d.24xlarge"])
            taints: list[dict[str, str]] = []
            if gpu and self.chance(0.5):
                taints.append({"key": GPU, "value": "present", "effect": "NoSchedule"})
            if self.chance(0.08):
                taints.append({"key": "dedicated", "value": "infra", "effect": "NoSchedule"})
            if self.chance(0.06):
                taints.append({"key": "spot", "effect": "PreferNoSchedule"})
            doc: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}
            spec: dict[str, Any] = {}
            if taints:
                spec["taints"] = taints
            if self.chance(0.07):
                spec["unschedulable"] = True
                self.notes.append(f"node {name} cordoned")
            if spec:
                doc["spec"] = spec
            status: dict[str, Any] = {"capacity" if self.chance(0.05) else "allocatable": _rl(alloc, rng)}
            ready = not self.chance(0.05)
            if not ready or self.chance(0.2):
                status["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
            if not ready:
                self.notes.append(f"node {name} NotReady")
            doc["status"] = status
            self.docs.append(doc)
            for k, v in alloc.items():
                if k in ("cpu", "memory", GPU):
                    self.total[k] = self.total.get(k, 0) + v
            self.node_list.append(_Node(name, dict(alloc), taints, gpu))
        # the resources queues and quotas speak of
        self.keys = ["cpu", "memory"] + ([GPU] if GPU in self.total else [])

    # ---- priority classes
    def priority_classes(self, force: bool = False) -> None:
        self.classes: list[str] = []
        if not force and not self.chance(0.6):
            return
        default = self.chance(0.2)
        for name, value in (("low", 100), ("normal", 1000), ("high", 100000)):
            doc: dict[str, Any] = {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
            }
            if name == "normal" and default:
                doc["globalDefault"] = True
            if name == "high" and self.chance(0.25):
                doc["preemptionPolicy"] = "Never"
            self.docs.append(doc)
            self.classes.append(name)

    # ---- queues
    def queues(self) -> None:
        rng = self.rng
        self.queue_map: dict[str, _Queue] = {}
        depth = 1 if self.chance(0.4) else rng.randint(2, 4)
        self.queue_depth = depth
        tops = rng.randint(1, 4)
        weights = [rng.randint(1, 6) for _ in range(tops)]
        with_deserved = self.chance(0.65)
        for i in range(tops):
            q = _Queue(name=f"q{i + 1}", parent="root", depth=1)
            if with_deserved:
                q.deserved = _scale(self._tree_total(), weights[i] * rng.randint(5, 10), sum(weights) * 10)
                if self.chance(0.4):
                    q.guarantee = _scale(q.deserved, rng.randint(1, 5), 10)
            if self.chance(0.35):
                base = q.deserved or self._tree_total()
                q.capability = {
                    k: max(v, base.get(k, 0)) for k, v in _scale(self._tree_total(), rng.randint(5, 12), 10).items()
                }
            self._add_queue(q, weights[i])
            self._children(q, depth)
        for q in self.queue_map.values():
            if not q.children and self.chance(0.06):
                q.state = self.pick(["Closed", "Closing"])
                self.notes.append(f"queue {q.name} {q.state}")
        self.leaves = [q.name for q in self.queue_map.values() if not q.children]
        self.open_leaves = [q for q in self.leaves if self.queue_map[q].state == "Open"] or self.leaves
        for q in self.queue_map.values():
            self.docs.append(self._queue_doc(q))

    def _tree_total(self) -> dict[str, int]:
        return {k: self.total[k] for k in self.keys}

    def _children(self, parent: _Queue, depth: int) -> None:
        if parent.depth >= depth:
            return
        # q1, q1-1, q1-1-1... always go on, so that the tree is as deep as drawn
        must = parent.name == "q1" + "-1" * (parent.depth - 1)
        if not must and self.chance(0.35):
            return
        count = self.rng.randint(1, 3)
        weights = [self.rng.randint(1, 4) for _ in range(count)]
        for j in range(count):
            child = _Queue(name=f"{parent.name}-{j + 1}", parent=parent.name, depth=parent.depth + 1)
            if parent.deserved is not None and self.chance(0.8):
                child.deserved = _scale(parent.deserved, weights[j] * self.rng.randint(6, 10), sum(weights) * 10)
                if parent.guarantee is not None and self.chance(0.6):
                    share = _scale(parent.guarantee, weights[j], sum(weights))
                    child.guarantee = {k: min(v, child.deserved.get(k, 0)) for k, v in share.items()}
            ceiling = self._capability_above(parent)
            if self.chance(0.3):
                cap = _scale(ceiling or self._tree_total(), self.rng.randint(4, 10), 10)
                floor = child.deserved or {}
                child.capability = {k: max(v, floor.get(k, 0)) for k, v in cap.items()}
                if ceiling:
                    child.capability = {k: min(v, ceiling.get(k, v)) for k, v in child.capability.items()}
                    if child.deserved and any(child.deserved.get(k, 0) > v for k, v in child.capability.items()):
                        child.capability = None
            parent.children.append(child.name)
            self._add_queue(child, weights[j])
            self._children(child, depth)

    def _capability_above(self, q: _Queue) -> dict[str, int] | None:
        node: _Queue | None = q
        while node is not None:
            if node.capability is not None:
                return node.capability
            node = self.queue_map.get(node.parent)
        return None

    def _add_queue(self, q: _Queue, weight: int) -> None:
        q.weight = weight
        self.queue_map[q.name] = q

    def _queue_doc(self, q: _Queue) -> dict[str, Any]:
        rng = self.rng
        spec: dict[str, Any] = {}
        if q.weight != 1 or self.chance(0.5):
            spec["weight"] = q.weight
        if q.parent != "root" or self.chance(0.3):
            spec["parent"] = q.parent
        if q.deserved is not None:
            spec["deserved"] = _rl(q.deserved, rng)
        if q.guarantee is not None:
            spec["guarantee"] = {"resource": _rl(q.guarantee, rng)}
        if q.capability is not None:
            spec["capability"] = _rl(q.capability, rng)
        if self.chance(0.15):
            spec["reclaimable"] = False
        if self.chance(0.1):
            spec["priority"] = rng.randint(1, 10)
        meta: dict[str, Any] = {"name": q.name}
        if self.queue_depth == 1 and self.chance(0.1):
            dept = self.pick(["research", "prod"])
            meta["annotations"] = {
                "volcano.sh/hierarchy": f"root/{dept}/{q.name}",
                "volcano.sh/hierarchy-weights": f"1/{rng.randint(1, 4)}/{q.weight}",
            }
        doc: dict[str, Any] = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": meta}
        doc["spec"] = spec
        if q.state != "Open" or self.chance(0.3):
            doc["status"] = {"state": q.state}
        return doc

    # ---- namespaces
    def namespaces(self) -> None:
        rng = self.rng
        count = rng.randint(1, 6)
        self.ns_names = [f"team-{chr(ord('a') + i)}" for i in range(count)]
        self.ns_queue: dict[str, str] = {}
        for ns in self.ns_names:
            annotations = {}
            if self.chance(0.4):
                self.ns_queue[ns] = self.pick(self.open_leaves)
                annotations["scheduling.volcano.sh/queue-name"] = self.ns_queue[ns]
            if self.chance(0.85):
                meta: dict[str, Any] = {"name": ns}
                if annotations:
                    meta["annotations"] = annotations
                self.docs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": meta})
            for k in range(2 if self.chance(0.1) else 1):
                hard: dict[str, str] = {}
                if self.chance(0.5):
                    weight = str(rng.randint(1, 5))
                    if self.chance(0.05):
                        weight = self.pick(["0", "1.5", "-2"])
                    hard["volcano.sh/namespace.weight"] = weight
                if self.chance(0.25):
                    hard["requests.cpu"] = _cpu(rng.randint(4, 64) * 1000)
                    hard["requests.memory"] = _mem(rng.randint(8, 256) * Gi)
                    if GPU in self.total and self.chance(0.5):
                        hard[f"requests.{GPU}"] = str(rng.randint(1, 8))
                    if self.chance(0.3):
                        hard["limits.memory"] = _mem(rng.randint(16, 512) * Gi)
                if hard:
                    self.docs.append(
                        {
                            "apiVersion": "v1",
                            "kind": "ResourceQuota",
                            "metadata": {"name": f"quota-{k}", "namespace": ns},
                            "spec": {"hard": hard},
                        }
                    )

    # ---- quota trees
    def koordinator_tree(self) -> None:
        rng = self.rng
        total = self._tree_total()
        depth = rng.randint(1, 3)
        tops = rng.randint(1, 4)
        weights = [rng.randint(1, 5) for _ in range(tops)]
        for i in range(tops):
            mn = _scale(total, weights[i] * rng.randint(4, 10), sum(weights) * 10)
            mx = _scale(total, rng.randint(5, 15), 10)
            mx = {k: max(v, mn[k]) for k, v in mx.items()}
            self._group_tree(_Group(f"eq-{i + 1}", None, mn, mx), depth)
        leaves = [g for g in self.groups if not g.is_parent]
        self.leaf_groups = [g.name for g in leaves]
        # namespaces annotations: each namespace belongs to at most one group
        self.ns_group: dict[str, str] = {}
        for ns in self.ns_names:
            if self.chance(0.35):
                self.ns_group[ns] = self.pick(self.leaf_groups)
        for g in self.groups:
            labels = {"quota.scheduling.koordinator.sh/is-parent": "true" if g.is_parent else "false"}
            if g.parent is not None:
                labels["quota.scheduling.koordinator.sh/parent"] = g.parent
            elif self.chance(0.2):
                labels["quota.scheduling.koordinator.sh/parent"] = "koordinator-root-quota"
            if self.chance(0.15):
                labels["quota.scheduling.koordinator.sh/allow-lent-resource"] = "false"
            annotations = {}
            if self.chance(0.25):
                annotations["quota.scheduling.koordinator.sh/shared-weight"] = json.dumps(
                    _rl(_scale(g.max, rng.randint(1, 4), 2))
                )
            mine = sorted(ns for ns, name in self.ns_group.items() if name == g.name)
            if mine:
                annotations["quota.scheduling.koordinator.sh/namespaces"] = json.dumps(mine)
            meta: dict[str, Any] = {"name": g.name, "namespace": self.pick(self.ns_names), "labels": labels}
            if annotations:
                meta["annotations"] = annotations
            self.docs.append(
                {
                    "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
                    "kind": "ElasticQuota",
                    "metadata": meta,
                    "spec": {"min": _rl(g.min, rng), "max": _rl(g.max, rng)},
                }
            )

    def _group_tree(self, group: _Group, depth: int, level: int = 1) -> None:
        rng = self.rng
        self.groups.append(group)
        if level >= depth or self.chance(0.3):
            return
        group.is_parent = True
        count = rng.randint(1, 3)
        weights = [rng.randint(1, 4) for _ in range(count)]
        for j in range(count):
            # siblings' min sum within the parent's; a child's max may exceed its parent's (Koordinator allows it)
            mn = _scale(group.min, weights[j] * rng.randint(5, 10), sum(weights) * 10)
            mx = _scale(group.max, rng.randint(5, 14), 10)
            mx = {k: max(v, mn[k]) for k, v in mx.items()}
            self._group_tree(_Group(f"{group.name}-{j + 1}", group.name, mn, mx), depth, level + 1)

    def scheduler_plugins_quotas(self) -> None:
        total = self._tree_total()
        self.ns_group = {}
        self.leaf_groups = []
        for ns in self.ns_names:
            if not self.chance(0.7):
                continue
            mn = _scale(total, self.rng.randint(1, 4), 10)
            mx = {k: max(v, mn[k]) for k, v in _scale(total, self.rng.randint(3, 12), 10).items()}
            self.docs.append(
                {
                    "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                    "kind": "ElasticQuota",
                    "metadata": {"name": "quota", "namespace": ns},
                    "spec": {"min": _rl(mn, self.rng), "max": _rl(mx, self.rng)},
                }
            )
            self.ns_group[ns] = ns

    # ---- jobs and pods
    def jobs(self, size: str) -> None:
        rng = self.rng
        budget = {"tiny": 10, "small": 20, "medium": 40, "large": 64}[size]
        self.pods = 0
        index = 0
        # Releasing pods (being deleted, still on their node) in some snapshots only: the others stay a control group
        # for the announced change of how a Releasing pod is counted.
        self.with_releasing = self.chance(0.45)
        self.contended = self.chance(0.8 if self.with_releasing else 0.45)
        if self.contended:
            index = self.contention(budget)
        while self.pods < budget:
            ns = self.pick(self.ns_names)
            kind = rng.choices(["podgroup", "bare", "vcjob"], weights=[17, 2, 1])[0]
            getattr(self, f"_{kind}")(ns, index)
            index += 1
            if index > 60:
                break

    def contention(self, budget: int) -> int:
        """Pressure for reclaim, preempt and recycling to act on: one queue (and quota group) borrowing most of the
        cluster with low-priority pods running (minMember 1, so that they can be taken back one by one, some of them
        already Releasing), then higher-priority jobs waiting in other queues and in the borrower's own. Returns the
        next job index."""
        rng = self.rng
        if not self.classes:
            self.priority_classes(force=True)
        borrower = self.pick(self.open_leaves)
        others = [q for q in self.open_leaves if q != borrower]
        groups = list(getattr(self, "leaf_groups", [])) if self.quota_mode == "koordinator" else []
        hog_group = self.pick(groups) if groups else None
        ns = self.pick(self.ns_names)
        # pods of half or a quarter of a typical node, so that a few of them fill the cluster
        sizes = sorted(n.free["cpu"] for n in self.node_list)
        chunk = max(1000, sizes[len(sizes) // 2] // self.pick([2, 4]) // 1000 * 1000)
        target = self.total["cpu"] * rng.randint(75, 95) // 100
        used, index, tries = 0, 0, 0
        while used < target and self.pods < budget * 2 // 3 and tries < 12:
            tries += 1
            running = self._podgroup(
                ns,
                index,
                queue=borrower,
                state=self.pick(["running", "running", "releasing"]),
                replicas=rng.randint(2, 6),
                min_member=1,
                request={"cpu": chunk, "memory": chunk // 1000 * Gi},
                priority_class="low",
                quota=hog_group,
                name="hog",
            )
            used += running * chunk
            index += 1
        self.notes.append(f"queue {borrower} runs {used // 1000} of {self.total['cpu'] // 1000} cpus")
        for queue in [*rng.sample(others, min(len(others), rng.randint(1, 3))), borrower]:
            replicas = rng.randint(1, 4)
            waiting_group = self.pick([g for g in groups if g != hog_group] or groups) if groups else None
            self._podgroup(
                self.pick(self.ns_names),
                index,
                queue=queue,
                state="pending",
                replicas=replicas,
                min_member=self.pick([1, replicas]),
                request={"cpu": chunk, "memory": chunk // 1000 * Gi},
                priority_class=self.pick(["normal", "high"]),
                quota=waiting_group,
                name="want",
            )
            index += 1
        return index

    def _request(self, gpu_job: bool) -> dict[str, int]:
        rng = self.rng
        if gpu_job:
            cpu = self.pick([1000, 2000, 4000, 8000])
            return {"cpu": cpu, "memory": cpu // 1000 * self.pick([2, 4, 8]) * Gi, GPU: self.pick([1, 1, 2, 4, 8])}
        req = {
            "cpu": self.pick([100, 250, 500, 1000, 1000, 2000, 4000]),
            "memory": self.pick([128, 512, 1024, 4096, 8192]) * Mi,
        }
        if rng.random() < 0.05:
            req["ephemeral-storage"] = self.pick([1, 10]) * Gi
        return req

    def _pod_spec(self, request: dict[str, int], gpu_job: bool) -> dict[str, Any]:
        rng = self.rng
        containers = [{"name": "main", "image": "busybox", "resources": {"requests": _rl(request, rng)}}]
        if self.chance(0.1):  # a sidecar: the requests add up
            half = _scale({"cpu": request["cpu"]}, 1, 4)
            if half["cpu"]:
                containers[0]["resources"]["requests"] = _rl({**request, "cpu": request["cpu"] - half["cpu"]})
                containers.append({"name": "sidecar", "image": "busybox", "resources": {"requests": _rl(half)}})
        spec: dict[str, Any] = {"containers": containers}
        if self.chance(0.06):  # an init container larger than the rest: the pod's request is its
            spec["initContainers"] = [
                {"name": "init", "image": "busybox", "resources": {"requests": {"cpu": _cpu(request["cpu"] * 2)}}}
            ]
        if self.chance(0.04):
            spec["overhead"] = {"cpu": "100m", "memory": "64Mi"}
        tolerations = []
        if gpu_job and self.chance(0.8):
            tolerations.append({"key": GPU, "operator": "Exists", "effect": "NoSchedule"})
        if self.chance(0.05):
            tolerations.append({"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"})
        if tolerations:
            spec["tolerations"] = tolerations
        if self.chance(0.08):
            spec["nodeSelector"] = {"topology.kubernetes.io/zone": self.pick(["zone-a", "zone-b"])}
        elif gpu_job and self.chance(0.3):
            spec["nodeSelector"] = {"nvidia.com/gpu.present": "true"}
        if self.classes and self.chance(0.3):
            spec["priorityClassName"] = self.pick(self.classes)
        elif self.chance(0.08):
            spec["priority"] = self.pick([0, 5, 50, 500])
        return spec

    def _place(self, request: dict[str, int], spec: dict[str, Any]) -> str | None:
        """A node the pod fits on and tolerates (its running pods then hold that room), or None."""
        tolerated = {t["key"] for t in spec.get("tolerations", [])}
        selector = spec.get("nodeSelector", {})
        candidates = list(self.node_list)
        self.rng.shuffle(candidates)
        for node in candidates:
            if any(t["effect"] == "NoSchedule" and t["key"] not in tolerated for t in node.taints):
                continue
            if selector.get("nvidia.com/gpu.present") and not node.gpu:
                continue
            if all(node.free.get(k, 0) >= v for k, v in request.items() if v):
                for k, v in request.items():
                    node.free[k] = node.free.get(k, 0) - v
                if "pods" in node.free:
                    node.free["pods"] -= 1
                return node.name
        return None

    def _quota_labels(self, ns: str) -> dict[str, str]:
        labels: dict[str, str] = {}
        if self.quota_mode == "koordinator" and ns not in self.ns_group and self.chance(0.75):
            labels["quota.scheduling.koordinator.sh/name"] = self.pick(self.leaf_groups)
        if self.quota_mode != "none" and self.chance(0.1):
            labels["quota.scheduling.koordinator.sh/preemptible"] = "false"
        return labels

    def _podgroup(
        self,
        ns: str,
        index: int,
        *,
        queue: str | None = None,
        state: str | None = None,
        replicas: int | None = None,
        min_member: int | None = None,
        request: dict[str, int] | None = None,
        priority_class: str | None = None,
        quota: str | None = None,
        name: str = "job",
    ) -> int:
        """A PodGroup and its pods (drawn, but for what the arguments fix); returns how many pods run."""
        rng = self.rng
        gpu_job = GPU in request if request is not None else GPU in self.total and self.chance(0.35)
        replicas = replicas or rng.randint(1, 4 if gpu_job else 8)
        name = f"{name}-{index}"
        request = request or self._request(gpu_job)
        spec_template = self._pod_spec(request, gpu_job)
        if priority_class is not None:
            spec_template["priorityClassName"] = priority_class
        if state is None:
            states = ["pending", "running", "partial", "finished", "releasing", "bound"]
            state = rng.choices(states, weights=[8, 8, 3, 2, 3, 1])[0]
        if state == "releasing" and not self.with_releasing:
            state = "running"
        if min_member is None:
            min_member = rng.choices([replicas, 1, 0, max(1, replicas // 2), replicas + 1], weights=[10, 4, 1, 3, 1])[0]
        roles = None
        if replicas >= 2 and self.chance(0.1):
            roles = {"ps": 1, "worker": replicas - 1}
        pg_spec: dict[str, Any] = {"minMember": min_member}
        if queue is not None:
            pg_spec["queue"] = queue
        elif not (ns in self.ns_queue and self.chance(0.5)):
            pg_spec["queue"] = self.pick(self.open_leaves if self.chance(0.95) else self.leaves)
        if roles and self.chance(0.7):
            pg_spec["minTaskMember"] = {"ps": 1, "worker": max(0, min(min_member, replicas) - 1)}
        if self.chance(0.5):
            pg_spec["minResources"] = _rl(_scale(request, max(min_member, 1) * self.pick([1, 1, 2]), self.pick([1, 2])))
        if priority_class is not None:
            pg_spec["priorityClassName"] = priority_class
        elif self.classes and self.chance(0.4):
            pg_spec["priorityClassName"] = self.pick(self.classes)
        labels = self._quota_labels(ns)
        if quota is not None:
            labels["quota.scheduling.koordinator.sh/name"] = quota
        pods: list[dict[str, Any]] = []
        running = 0
        for k in range(replicas):
            spec = json.loads(json.dumps(spec_template))
            status, node, deleting = "Pending", None, False
            wants_node = state in ("running", "releasing", "bound", "finished") or (state == "partial" and k % 2 == 0)
            if wants_node:
                node = self._place(request, spec)
            if node is not None:
                status = "Running"
                if state == "finished":
                    status = self.pick(["Succeeded", "Succeeded", "Failed", "Running"])
                elif state == "bound" and k == 0:
                    status = "Pending"  # nodeName set, not yet running: Bound
                elif state == "releasing" and (k == 0 or self.chance(0.4)):
                    deleting = True
                if status == "Running" and not deleting:
                    running += 1
                spec["nodeName"] = node
            annotations = {"scheduling.k8s.io/group-name": name}
            if roles:
                annotations["volcano.sh/task-spec"] = "ps" if k == 0 else "worker"
            meta: dict[str, Any] = {"name": f"{name}-{k}", "namespace": ns, "annotations": annotations}
            if labels:
                meta["labels"] = dict(labels)
            if self.chance(0.4):
                meta["creationTimestamp"] = f"2026-01-01T{index // 60 % 24:02d}:{index % 60:02d}:{k % 60:02d}Z"
            if deleting:
                meta["deletionTimestamp"] = "2026-01-02T00:00:00Z"
            pod_status: dict[str, Any] = {"phase": status}
            if status == "Running" and self.chance(0.5):
                pod_status["startTime"] = f"2026-01-01T12:{index % 60:02d}:00Z"
            pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": pod_status})
        phase = "Pending"
        if running and running >= max(min_member, 1):
            phase = "Running"
        elif state == "finished" and not running:
            phase = self.pick(["Completed", "Running"])
        elif state == "pending" and "minResources" in pg_spec and self.chance(0.4):
            phase = "Inqueue"
        elif running:
            phase = self.pick(["Running", "Unknown", "Inqueue"])
        if state == "releasing" and any("deletionTimestamp" in p["metadata"] for p in pods):
            self.notes.append(f"{ns}/{name} has Releasing pods")
        pg: dict[str, Any] = {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": ns},
            "spec": pg_spec,
        }
        if phase != "Pending" or self.chance(0.5):
            pg["status"] = {"phase": phase}
        self.docs.append(pg)
        self.docs.extend(pods)
        self.pods += replicas
        return running

    def _bare(self, ns: str, index: int) -> None:
        """A pod with no PodGroup: it gets one of its own (minMember 1)."""
        request = self._request(False)
        spec = self._pod_spec(request, False)
        meta: dict[str, Any] = {"name": f"solo-{index}", "namespace": ns}
        if self.chance(0.3):
            meta["annotations"] = {"scheduling.volcano.sh/queue-name": self.pick(self.open_leaves)}
        labels = self._quota_labels(ns)
        if labels:
            meta["labels"] = labels
        status = {"phase": "Pending"}
        if self.chance(0.4):
            node = self._place(request, spec)
            if node is not None:
                spec["nodeName"] = node
                status = {"phase": "Running"}
        self.docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status})
        self.pods += 1

    def _vcjob(self, ns: str, index: int) -> None:
        rng = self.rng
        workers = rng.randint(1, 4)
        request = self._request(False)
        spec: dict[str, Any] = {
            "minAvailable": rng.randint(1, workers + 1),
            "queue": self.pick(self.open_leaves),
            "tasks": [
                {
                    "name": "ps",
                    "replicas": 1,
                    "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}]}},
                },
                {
                    "name": "worker",
                    "replicas": workers,
                    "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": _rl(request, rng)}}]}},
                },
            ],
        }
        if self.classes and self.chance(0.5):
            spec["priorityClassName"] = self.pick(self.classes)
        self.docs.append(
            {
                "apiVersion": "batch.volcano.sh/v1alpha1",
                "kind": "Job",
                "metadata": {"name": f"vcjob-{index}", "namespace": ns},
                "spec": spec,
            }
        )
        self.pods += workers + 1

    # ---- what only warns, and what breaks a rule on purpose
    def oddities(self) -> None:
        rng = self.rng
        if self.chance(0.04):
            self.docs.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}})
            self.notes.append("a skipped kind")
        if self.chance(0.03):
            ns = self.pick(self.ns_names)
            self.docs.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": "fpga-0", "namespace": ns},
                    "spec": {"containers": [{"name": "c", "resources": {"requests": {"example.com/fpga": "1"}}}]},
                }
            )
            self.notes.append("a resource no node offers")
        if self.chance(0.03):
            # a tree rule broken: a child queue above its parent's capability, or a quota child's min above the parent's
            queues = [d for d in self.docs if d["kind"] == "Queue" and d["spec"].get("parent", "root") != "root"]
            groups = [d for d in self.docs if d["kind"] == "ElasticQuota" and "parent" in str(d["metadata"])]
            if groups and self.chance(0.5):
                doc = self.pick(groups)
                doc["spec"]["min"] = {"cpu": _cpu(self.total["cpu"] * 4)}
                doc["spec"]["max"] = {"cpu": _cpu(self.total["cpu"] * 4)}
                self.notes.append(f"quota {doc['metadata']['name']} breaks a rule")
            elif queues:
                doc = self.pick(queues)
                doc["spec"]["guarantee"] = {"resource": {"cpu": _cpu(self.total["cpu"] * 2 + rng.randint(1, 9) * 1000)}}
                self.notes.append(f"queue {doc['metadata']['name']} breaks a rule")


@dataclass(frozen=True)
class Drawn:
    """Generated snapshot ``seed``: its documents and what was drawn (for people, and for ``--stats``)."""

    seed: int
    docs: list[dict[str, Any]]
    policy: str  # a key of POLICIES
    delivery: str  # none (Volcano's default), flag (--policy) or configmap (in the manifests)
    nodes: int
    queue_depth: int
    quota: str  # none, koordinator or scheduler-plugins
    contention: bool
    notes: tuple[str, ...]

    def kinds(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for doc in self.docs:
            kind = doc["kind"] if doc["kind"] != "ElasticQuota" else f"ElasticQuota ({doc['apiVersion'].split('/')[0]})"
            out[kind] = out.get(kind, 0) + 1
        return out

    def releasing(self) -> int:
        return sum(1 for d in self.docs if d["kind"] == "Pod" and "deletionTimestamp" in d["metadata"])


def snapshot(seed: int) -> Drawn:
    """Generated snapshot ``seed``, drawn from ``random.Random(seed)`` alone."""
    gen = _Generator(seed)
    docs, policy, delivery = gen.build()
    return Drawn(
        seed=seed,
        docs=docs,
        policy=policy,
        delivery=delivery,
        nodes=len(gen.node_list),
        queue_depth=gen.queue_depth,
        quota=gen.quota_mode,
        contention=gen.contended,
        notes=tuple(gen.notes),
    )


# -- cases -------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One run of ``fairway simulate -f FILE... [--policy P] --sessions N [--recycle] -o json``."""

    id: str
    files: tuple[tuple[str, bytes], ...]
    policy: tuple[str, bytes] | None = None
    sessions: int = 1
    recycle: bool = False
    notes: tuple[str, ...] = ()

    def argv(self, directory: Path) -> list[str]:
        args = ["simulate"]
        for name, _ in self.files:
            args += ["-f", str(directory / name)]
        if self.policy is not None:
            args += ["--policy", str(directory / self.policy[0])]
        args += ["--sessions", str(self.sessions)]
        if self.recycle:
            args.append("--recycle")
        return [*args, "-o", "json"]

    def write(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        for name, data in (*self.files, *([self.policy] if self.policy else [])):
            (directory / name).write_bytes(data)

    def digest(self) -> str:
        """What was fed to simulate (file names, contents, arguments), so that a changed input is told apart from
        changed behaviour."""
        h = hashlib.sha256()
        for name, data in (*self.files, *([self.policy] if self.policy else [])):
            h.update(f"{name}\0{len(data)}\0".encode())
            h.update(data)
        h.update(f"sessions={self.sessions} recycle={self.recycle}".encode())
        return h.hexdigest()[:16]


def _variants(runs: Iterable[tuple[int, bool]]) -> list[tuple[int, bool]]:
    return sorted(set(runs))


def _suffix(sessions: int, recycle: bool) -> str:
    return f"@s{sessions}{'+recycle' if recycle else ''}"


def _dump(docs: Sequence[dict[str, Any]], form: str) -> bytes:
    """The documents as people write them (``yaml``: block YAML, one document each), as ``kubectl get -o json`` prints
    them (``list``: one ``kind: List``) or as JSON documents (``json``: JSON is YAML; fast to write and read)."""
    if form == "yaml":
        dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
        return yaml.dump_all(docs, Dumper=dumper, sort_keys=False).encode("utf-8")
    if form == "list":
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": list(docs)}, indent=1).encode("utf-8")
    return "---\n".join(json.dumps(doc) + "\n" for doc in docs).encode("utf-8")


def generated_case(seed: int) -> Case:
    """Seed ``seed``'s case: its snapshot, and how it is run (drawn from the seed too)."""
    drawn = snapshot(seed)
    docs, policy, delivery = drawn.docs, drawn.policy, drawn.delivery
    rng = random.Random(f"run-{seed}")
    elastic = policy in ELASTIC_POLICIES
    # three sessions more often where pods are Releasing: evictions in session 1 then meet them in sessions 2 and 3
    sessions = 3 if rng.random() < (0.8 if drawn.releasing() else 0.5) else 1
    recycle = rng.random() < (0.7 if elastic else 0.3)
    form = rng.choices(["yaml", "json", "list"], weights=[3, 5, 2])[0]
    files: tuple[tuple[str, bytes], ...]
    if rng.random() < 0.15:  # two files, merged in order: the machines, then everything else
        nodes = [d for d in docs if d["kind"] == "Node"]
        rest = [d for d in docs if d["kind"] != "Node"]
        files = (("nodes.yaml", _dump(nodes, form)), ("cluster.yaml", _dump(rest, form)))
    else:
        files = (("cluster.yaml", _dump(docs, form)),)
    text = POLICIES[policy]
    given = ("volcano-scheduler.conf", text.encode()) if delivery == "flag" and text is not None else None
    return Case(
        id=f"gen-{seed:04d}{_suffix(sessions, recycle)}",
        files=files,
        policy=given,
        sessions=sessions,
        recycle=recycle,
        notes=(f"policy {policy} ({delivery}), {form}", *drawn.notes),
    )


def generated_cases(seeds: Iterable[int] = SEEDS) -> Iterator[Case]:
    for seed in seeds:
        yield generated_case(seed)


# The runs of every captured or peer input: the run the acceptance test made (if any), one session, and three
# sessions followed by a recycling pass (pods evicted in session 1 are gone in session 2, SIMULATE.md).
STANDARD_RUNS = ((1, False), (3, True))


def _bytes(entry: str | dict[str, str]) -> bytes:
    return base64.b64decode(entry["base64"]) if isinstance(entry, dict) else entry.encode("utf-8")


def _entry(data: bytes) -> str | dict[str, str]:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}


def acceptance_cases(path: Path = ACCEPTANCE_INPUTS) -> Iterator[Case]:
    """The inputs the acceptance tests gave simulate (captured into ``path``), each in its runs."""
    for record in _read_jsonl(path):
        files = tuple((name, _bytes(data)) for name, data in record["files"])
        policy = (record["policy"][0], _bytes(record["policy"][1])) if record["policy"] else None
        for sessions, recycle in _variants([*map(tuple, record["runs"]), *STANDARD_RUNS]):
            yield Case(
                id=record["id"] + _suffix(sessions, recycle),
                files=files,
                policy=policy,
                sessions=sessions,
                recycle=recycle,
                notes=(f"captured from {record['test']}",),
            )


def peer_cases(directory: Path | None = None) -> Iterator[Case]:
    """The peers' manifests beside the repository (``../shared/fixtures/manifests``, as the acceptance tests read
    them), when they are there; they are read at test time, never copied into the repository."""
    directory = directory or _peer_directory()
    if not directory.is_dir():
        return
    for path in sorted(directory.glob("*/*.yaml")):
        rel = path.relative_to(directory)
        for sessions, recycle in STANDARD_RUNS:
            yield Case(
                id=f"peer-{rel.parent.name}/{rel.name}{_suffix(sessions, recycle)}",
                files=((path.name, path.read_bytes()),),
                sessions=sessions,
                recycle=recycle,
                notes=(f"the peers' {rel}",),
            )


def _peer_directory() -> Path:
    import os

    return Path(os.environ.get("FAIRWAY_PEER_MANIFESTS") or REPO.parent / "shared" / "fixtures" / "manifests")


def all_cases() -> Iterator[Case]:
    yield from acceptance_cases()
    yield from peer_cases()
    yield from generated_cases()


# -- running a case as the CLI does ---------------------------------------------------------------------------------


def simulate_cli() -> ModuleType:
    """``controlplane/simulate_cli.py``, the module behind ``fairway simulate``, loaded from its file: importing it as
    ``controlplane.simulate_cli`` would run ``controlplane/__init__.py``, which configures Celery with Django."""
    module = sys.modules.get("_golden_simulate_cli")
    if module is None:
        spec = importlib.util.spec_from_file_location("_golden_simulate_cli", SIMULATE_CLI)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules["_golden_simulate_cli"] = module
    return module


def _parser(cli: ModuleType) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fairway")
    cli.add_parser(parser.add_subparsers(dest="command", required=True))
    return parser


# The wall clock the runs see: simulate starts its sessions at ``time.time()``, and the document says when a requeued
# podgroup may be admitted again ("not admitted again before 03:52:27 UTC"), so the clock is fixed for the recording.
# A day after the generated manifests' timestamps.
CLOCK = 1767398400.0  # 2026-01-03T00:00:00Z


def limit_variables() -> list[str]:
    """The ``FAIRWAY_*`` variables the CLI reads its limits from."""
    from engine.limits import ENV_VARS

    return sorted(ENV_VARS.values())


@contextlib.contextmanager
def _as_recorded() -> Iterator[None]:
    """The conditions of the recording: the default limits (the CLI reads ``FAIRWAY_*`` variables) and ``CLOCK``."""
    import os
    import time

    saved = {k: os.environ.pop(k) for k in limit_variables() if k in os.environ}
    clock = time.time
    time.time = lambda: CLOCK
    try:
        yield
    finally:
        time.time = clock
        os.environ.update(saved)


def strip_durations(value: Any) -> Any:
    """The document without any ``duration_ms`` (the only field that changes from run to run)."""
    if isinstance(value, dict):
        return {k: strip_durations(v) for k, v in value.items() if k != "duration_ms"}
    if isinstance(value, list):
        return [strip_durations(v) for v in value]
    return value


def run_case(case: Case, directory: Path) -> dict[str, Any]:
    """The outcome of ``case``: ``exit``, ``document`` (exit 0) and ``stderr`` (its lines, file paths relative)."""
    case.write(directory)
    cli = simulate_cli()
    args = _parser(cli).parse_args(case.argv(directory))
    out, err = io.StringIO(), io.StringIO()
    with _as_recorded(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.run(args)
    prefix = f"{directory}/"
    outcome: dict[str, Any] = {
        "exit": code,
        "stderr": [line.replace(prefix, "") for line in err.getvalue().splitlines()],
    }
    if code == 0:
        outcome["document"] = strip_durations(json.loads(out.getvalue()))
    return outcome


def run_cases(cases: Iterable[Case]) -> Iterator[tuple[Case, dict[str, Any]]]:
    with tempfile.TemporaryDirectory(prefix="golden-") as tmp:
        for i, case in enumerate(cases):
            yield case, run_case(case, Path(tmp) / f"{i:05d}")


# -- the recording ----------------------------------------------------------------------------------------------------


def _read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def _write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    # mtime=0: the same recording gives the same bytes (no spurious diff in git)
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, compresslevel=9) as gz:
        for record in records:
            gz.write((json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n").encode("utf-8"))
            count += 1
    return count


def read_recording(path: Path = RECORDING) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in _read_jsonl(path)}


def record(path: Path = RECORDING) -> int:
    """Run every case and write the recording (acceptance, peers when present, generated)."""

    def records() -> Iterator[dict[str, Any]]:
        for case, outcome in run_cases(all_cases()):
            yield {"id": case.id, "digest": case.digest(), "notes": list(case.notes), **outcome}

    return _write_jsonl(path, records())


# -- comparing ----------------------------------------------------------------------------------------------------------

_MISSING = object()
OUTCOME = ("exit", "document", "stderr")  # what a recorded line holds of the run (beside id, digest and notes)


# Keys the contract gained after the recording was made (it only grows): absent from a recorded entry and empty now is
# no difference (nothing in the recorded inputs sets them); a value now is one.
GROWN_KEYS = frozenset({"borrowingLimit", "lendingLimit"})


def differences(expected: Any, actual: Any, path: str = "$") -> Iterator[tuple[str, Any, Any]]:
    """(JSON path, recorded, now) for every leaf that differs; a key present on one side only is one difference
    (but for ``GROWN_KEYS`` the recording predates, when they are empty now)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in sorted(set(expected) | set(actual)):
            if key in GROWN_KEYS and key not in expected and actual[key] in ({}, None):
                continue
            sub = f"{path}.{key}" if key.replace("-", "_").isidentifier() else f"{path}[{json.dumps(key)}]"
            yield from differences(expected.get(key, _MISSING), actual.get(key, _MISSING), sub)
    elif isinstance(expected, list) and isinstance(actual, list):
        for i in range(max(len(expected), len(actual))):
            yield from differences(
                expected[i] if i < len(expected) else _MISSING,
                actual[i] if i < len(actual) else _MISSING,
                f"{path}[{i}]",
            )
    elif expected != actual or type(expected) is not type(actual):
        yield path, expected, actual


def _show(value: Any, width: int = 160) -> str:
    if value is _MISSING:
        return "(absent)"
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= width else text[: width - 3] + "..."


def describe(case: Case, recorded: dict[str, Any] | None, outcome: dict[str, Any], limit: int = 6) -> str | None:
    """``None`` when ``outcome`` is the recording; else a few lines: the case, the first differing paths, both values."""
    if recorded is None:
        return f"{case.id}: not in the recording (new case? run python -m tests.support.corpus --record)"
    notes = [*case.notes[:4], "..."] if len(case.notes) > 4 else list(case.notes)
    head = f"{case.id} ({'; '.join(notes)})" if notes else case.id
    if recorded.get("digest") != case.digest():
        return f"{head}: its input is not the recorded one (the generator or the captured input changed, not simulate)"
    expected = {k: v for k, v in recorded.items() if k in OUTCOME}
    found = list(differences(expected, outcome))
    if not found:
        return None
    lines = [f"{head}: {len(found)} field(s) differ"]
    for path, was, now in found[:limit]:
        lines.append(f"    {path}: recorded {_show(was)}, now {_show(now)}")
    if len(found) > limit:
        lines.append(f"    ... and {len(found) - limit} more")
    lines.append(f"    (reproduce: python -m tests.support.corpus --show {case.id} /tmp/case)")
    return "\n".join(lines)


def check(cases: Iterable[Case], recording: dict[str, dict[str, Any]]) -> tuple[list[str], list[str]]:
    """Run ``cases`` and compare each with ``recording``: (the ids run, one description per differing case), the
    recorded cases no longer produced (peers' cases aside when their directory is absent) counted as differing."""
    ran, failures = [], []
    # A recording made where the peers' manifests were absent has none of their cases: those are then not compared.
    with_peers = any(i.startswith("peer-") for i in recording)
    for case, outcome in run_cases(c for c in cases if with_peers or not c.id.startswith("peer-")):
        ran.append(case.id)
        problem = describe(case, recording.get(case.id), outcome)
        if problem is not None:
            failures.append(problem)
    peers = _peer_directory().is_dir()
    gone = sorted(set(recording) - set(ran))
    failures += [
        f"{i}: recorded, but the corpus no longer has this case" for i in gone if peers or not i.startswith("peer-")
    ]
    return ran, failures


# -- what the corpus holds ------------------------------------------------------------------------------------------------


def stats(recording: dict[str, dict[str, Any]]) -> str:
    """Counts of the corpus as recorded: cases by source and exit code, and what the generated snapshots hold."""
    from collections import Counter

    by_source: Counter[str] = Counter()
    for case_id, r in recording.items():
        by_source[f"{case_id.split('-')[0]} exit {r['exit']}"] += 1
    policy_runs: Counter[tuple[str, str]] = Counter()
    drawn_counts: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    pressure: Counter[str] = Counter()
    for seed in SEEDS:
        case = generated_case(seed)
        drawn = snapshot(seed)
        r = recording.get(case.id, {})
        doc = r.get("document") or {}
        run = case.id.split("@")[1]
        policy_runs[(drawn.policy, run)] += 1
        nodes = next(f"{lo}-{hi}" for lo, hi in ((1, 2), (3, 6), (7, 16), (17, 40)) if drawn.nodes <= hi)
        drawn_counts.update(
            [
                f"nodes {nodes}",
                f"queue depth {drawn.queue_depth}",
                f"quota {drawn.quota}",
                f"policy given: {drawn.delivery}",
                f"form {case.notes[0].rsplit(', ', 1)[1]}",
            ]
            + (["contention"] if drawn.contention else [])
            + (["GPUs"] if any(GPU in str(d.get("status", "")) for d in drawn.docs if d["kind"] == "Node") else [])
        )
        kinds.update(drawn.kinds())
        sessions = doc.get("sessions", [])
        pressure.update(
            [
                label
                for label, hit in (
                    ("exit 2", r.get("exit") == 2),
                    ("any eviction", bool(doc.get("evictions"))),
                    ("evictions in session 1 of 3", len(sessions) == 3 and sessions[0]["evicted"] > 0),
                    ("Releasing pods in the input", drawn.releasing() > 0),
                    ("Releasing pods, 3 sessions", drawn.releasing() > 0 and len(sessions) == 3),
                    (
                        "Releasing pods, evictions in session 1 of 3",
                        drawn.releasing() > 0 and len(sessions) == 3 and sessions[0]["evicted"] > 0,
                    ),
                    (
                        "recycle evicted",
                        case.recycle and len(doc.get("evictions", [])) > sum(s["evicted"] for s in sessions),
                    ),
                    ("pipelined", bool(doc.get("pipelined"))),
                )
                if hit
            ]
        )
    runs = sorted({run for _, run in policy_runs})
    lines = ["cases: " + ", ".join(f"{k}: {v}" for k, v in sorted(by_source.items()))]
    lines.append(f"generated, policy x run ({', '.join(runs)}):")
    for policy in POLICIES:
        row = [policy_runs[(policy, run)] for run in runs]
        lines.append(f"  {policy:28} {row}  total {sum(row)}")
    lines.append("generated, drawn: " + ", ".join(f"{k}: {v}" for k, v in sorted(drawn_counts.items())))
    lines.append("generated, documents: " + ", ".join(f"{k}: {v}" for k, v in sorted(kinds.items())))
    lines.append("generated, outcomes: " + ", ".join(f"{k}: {v}" for k, v in pressure.items()))
    return "\n".join(lines)


# -- command line -------------------------------------------------------------------------------------------------------


def find_case(case_id: str) -> Case:
    """The case of that id (or its first run when the ``@…`` part is left out), built alone (a generated one from its
    seed)."""
    if case_id.startswith("gen-"):
        case = generated_case(int(case_id[4:].split("@")[0]))
        cases: Iterable[Case] = [case]
    elif case_id.startswith("peer-"):
        cases = peer_cases()
    else:
        cases = acceptance_cases()
    for case in cases:
        if case.id == case_id or ("@" not in case_id and case.id.startswith(f"{case_id}@")):
            return case
    raise KeyError(f"no case {case_id}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.corpus", description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--record", action="store_true", help=f"rewrite {RECORDING.relative_to(REPO)}")
    group.add_argument(
        "--capture-acceptance",
        action="store_true",
        help=f"run the acceptance tests and rewrite {ACCEPTANCE_INPUTS.relative_to(REPO)} with what they simulate",
    )
    group.add_argument("--check", action="store_true", help="compare every case with the recording")
    group.add_argument("--show", nargs=2, metavar=("CASE", "DIR"), help="write a case's files to DIR")
    group.add_argument("--stats", action="store_true", help="count what the recorded corpus holds")
    parser.add_argument(
        "--without-peers",
        action="store_true",
        help="with --record: record although the peers' manifests are absent (their cases are then left out)",
    )
    args = parser.parse_args(argv)
    out = sys.stdout
    if args.record and not args.without_peers and not _peer_directory().is_dir():
        # A recording without the peers' cases stops comparing them for everyone after it: refuse unless asked.
        raise SystemExit(
            f"the peers' manifests are absent ({_peer_directory()}): set FAIRWAY_PEER_MANIFESTS to their directory, "
            "or pass --without-peers to record without their cases"
        )
    if args.record:
        count = record()
        out.write(f"{RECORDING.relative_to(REPO)}: {count} cases, {RECORDING.stat().st_size} bytes\n")
    elif args.capture_acceptance:
        from tests.support.acceptance_capture import capture

        count = capture(ACCEPTANCE_INPUTS)
        out.write(f"{ACCEPTANCE_INPUTS.relative_to(REPO)}: {count} inputs; now run --record\n")
    elif args.check:
        ran, failures = check(all_cases(), read_recording())
        out.write("\n".join(failures) + ("\n" if failures else ""))
        out.write(f"{len(ran)} cases run, {len(failures)} differences from the recording\n")
        return 1 if failures else 0
    elif args.stats:
        out.write(stats(read_recording()) + "\n")
    else:
        try:
            case = find_case(args.show[0])
        except KeyError as exc:
            raise SystemExit(str(exc)) from None
        directory = Path(args.show[1])
        case.write(directory)
        out.write("\n".join(case.notes) + "\n" if case.notes else "")
        out.write("fairway " + " ".join(case.argv(directory)) + "\n")
        out.write(f"(recorded with the clock at {CLOCK:.0f}, 2026-01-03T00:00:00Z: requeue times differ on yours)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
