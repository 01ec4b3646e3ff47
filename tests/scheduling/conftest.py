"""Fixtures of the scheduling store tests: a small world in the database, hand-made engine results, and a fake
engine for tests about the plumbing (locks, tasks) rather than about scheduling."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from engine.resources import ResourceList, parse_resource_list

GIB = 2**30


def rl(**amounts: str) -> ResourceList:
    """``rl(cpu="2", memory="4Gi")`` in base units; ``nvidia_com_gpu`` stands for ``nvidia.com/gpu``."""
    return parse_resource_list({k.replace("nvidia_com_gpu", "nvidia.com/gpu"): v for k, v in amounts.items()})


@dataclass
class World:
    """A two-team organisation and a three-node cluster, built through the same services as the API."""

    cluster: Any
    nodes: dict[str, Any] = field(default_factory=dict)
    podgroups: dict[str, Any] = field(default_factory=dict)
    pods: dict[str, Any] = field(default_factory=dict)

    def pod(self, uid: str) -> Any:
        from scheduling.models import Pod

        ns, name = uid.split("/")
        return Pod.objects.select_related("node").get(cluster=self.cluster, namespace__name=ns, name=name)


def build_world(cluster_name: str = "c1", *, nodes: int = 3, node_cpu: str = "8") -> World:
    """Queues ``dept`` > ``team-a``, ``team-b``; quota groups ``qdept`` > ``qa``, ``qb``; namespaces ``ns-a`` and
    ``ns-b``; nodes ``n1..`` with 8 cpu / 32Gi; podgroup ``ns-a/pg-a`` (minMember 2) with pods ``a-0``, ``a-1``
    (2 cpu, 4Gi each); a plain pod ``ns-b/solo`` without a podgroup (1 cpu)."""
    from quotas import services
    from quotas.models import Namespace, Queue, QuotaGroup
    from scheduling.models import Cluster, Node, Pod, PodGroup

    services.ensure_builtins()
    Cluster.objects.get_or_create(name="default")
    if not Queue.objects.filter(name="dept").exists():
        services.save_queue(None, {"name": "dept", "weight": 1})
        services.save_queue(None, {"name": "team-a", "parent": "dept", "weight": 2})
        services.save_queue(None, {"name": "team-b", "parent": "dept", "weight": 1})
        services.save_quota_group(None, {"name": "qdept", "is_parent": True, "min": rl(cpu="24"), "max": rl(cpu="24")})
        services.save_quota_group(None, {"name": "qa", "parent": "qdept", "min": rl(cpu="12"), "max": rl(cpu="24")})
        services.save_quota_group(None, {"name": "qb", "parent": "qdept", "min": rl(cpu="12"), "max": rl(cpu="24")})
        Namespace.objects.create(
            name="ns-a",
            weight=2,
            default_queue=Queue.objects.get(name="team-a"),
            quota_group=QuotaGroup.objects.get(name="qa"),
        )
        Namespace.objects.create(
            name="ns-b",
            weight=1,
            default_queue=Queue.objects.get(name="team-b"),
            quota_group=QuotaGroup.objects.get(name="qb"),
        )
    cluster = Cluster.objects.create(name=cluster_name)
    world = World(cluster=cluster)
    for i in range(1, nodes + 1):
        world.nodes[f"n{i}"] = Node.objects.create(
            cluster=cluster, name=f"n{i}", allocatable=rl(cpu=node_cpu, memory="32Gi", pods="110")
        )
    ns_a, ns_b = Namespace.objects.get(name="ns-a"), Namespace.objects.get(name="ns-b")
    pg = PodGroup.objects.create(
        cluster=cluster,
        namespace=ns_a,
        name="pg-a",
        queue=Queue.objects.get(name="team-a"),
        min_member=2,
        min_resources=rl(cpu="4", memory="8Gi"),
    )
    world.podgroups["ns-a/pg-a"] = pg
    for k in range(2):
        world.pods[f"ns-a/a-{k}"] = Pod.objects.create(
            cluster=cluster,
            namespace=ns_a,
            name=f"a-{k}",
            podgroup=pg,
            request=rl(cpu="2", memory="4Gi"),
            quota_group=ns_a.quota_group,
            duration_seconds=60,
        )
    world.pods["ns-b/solo"] = Pod.objects.create(
        cluster=cluster, namespace=ns_b, name="solo", request=rl(cpu="1", memory="1Gi"), quota_group=ns_b.quota_group
    )
    return world


@pytest.fixture
def world(db: Any) -> World:
    return build_world()


# -- a fake engine for the plumbing tests ----------------------------------------------------------------------


class GreedyEngine:
    """Places every pending task on the first schedulable node with room (cpu only), gang or not, and records the
    calls. Enough for lock, task and worker tests; the scheduling itself is the real engine's (tests/unit)."""

    def __init__(self) -> None:
        self.calls: list[float] = []
        self.recycle_calls: list[Mapping[str, float]] = []
        self.recycle_answer: Callable[..., Any] | None = None

    def run_session(
        self, snapshot: Any, *, now: float, policy: Any = None, carry: Any = None, on_bindings: Any = None
    ) -> Any:
        from engine.objects import TaskStatus
        from engine.session.decisions import Binding, PodGroupStatus, SessionResult

        self.calls.append(now)
        free = {n.name: n.allocatable["cpu"] for n in snapshot.schedulable_nodes}
        for name, used in snapshot.node_used.items():
            if name in free:
                free[name] -= used["cpu"]
        bindings = []
        for task in sorted(snapshot.tasks.values(), key=lambda t: t.uid):
            if task.status is not TaskStatus.PENDING:
                continue
            for node in sorted(free):
                if free[node] >= task.request["cpu"]:
                    free[node] -= task.request["cpu"]
                    bindings.append(Binding(task=task.uid, node=node))
                    if on_bindings is not None:  # as a session hands each committed job's bindings over
                        on_bindings(bindings[-1:])
                    break
        placed = {b.task for b in bindings}
        statuses = {
            key: PodGroupStatus(key=key, phase="Running")
            if all(t.uid in placed or t.status is not TaskStatus.PENDING for t in snapshot.podgroup_tasks(key))
            else PodGroupStatus(key=key, phase="Pending", reason="NotEnoughResources", message="no room")
            for key in snapshot.podgroups
        }
        return SessionResult(bindings=bindings, podgroups=statuses)

    def run_recycle(
        self, snapshot: Any, *, now: float, over_since: Mapping[str, float], delay: float | None = None
    ) -> tuple[list[Any], dict[str, float]]:
        self.recycle_calls.append(dict(over_since))
        if self.recycle_answer is not None:
            return self.recycle_answer(snapshot, now, over_since)  # type: ignore[no-any-return]
        return [], dict(over_since)


@pytest.fixture
def fake_engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[GreedyEngine]:
    from scheduling import sessions

    engine = GreedyEngine()
    monkeypatch.setattr(sessions, "run", engine)
    yield engine
