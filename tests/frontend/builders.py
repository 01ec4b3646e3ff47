"""Small builders of trees, clusters and jobs for the page tests and the browser tests, and the seeds'
examples as database rows. Tree nodes go through ``quotas.services`` (the rules run); jobs and pods are rows."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.contrib.auth.models import Group

from engine.resources import ResourceList, parse_resource_list
from quotas.models import Namespace, Queue, QuotaGroup
from scheduling.models import Cluster, Node, Pod, PodGroup
from tests.support import factories as f

PASSWORD = "pw-frontend-1"


def rl(data: Mapping[str, Any] | None) -> ResourceList | None:
    return None if data is None else parse_resource_list(dict(data))


def cluster(name: str = "default") -> Cluster:
    return f.ClusterFactory(name=name)


def node(name: str, **allocatable: str) -> Node:
    return f.NodeFactory(cluster=cluster(), name=name, allocatable=allocatable)


def queue(name: str, parent: str = "root", weight: int = 1, **lists: Mapping[str, str]) -> Queue:
    return f.QueueFactory(name=name, parent=parent, weight=weight, **lists)


def group(
    name: str, parent: str = "root", *, is_parent: bool = False, allow_lent: bool = True, **lists: Mapping[str, str]
) -> QuotaGroup:
    return f.QuotaGroupFactory(name=name, parent=parent, is_parent=is_parent, allow_lent=allow_lent, **lists)


def namespace(name: str, weight: int = 1, queue_name: str | None = None, group_name: str | None = None) -> Namespace:
    return f.NamespaceFactory(
        name=name,
        weight=weight,
        default_queue=Queue.objects.get(name=queue_name) if queue_name else None,
        quota_group=QuotaGroup.objects.get(name=group_name) if group_name else None,
    )


def job(
    ns: str,
    name: str,
    queue_name: str,
    pods: int,
    request: Mapping[str, str],
    *,
    running: int = 0,
    on: str | None = None,
    group_name: str | None = None,
    priority: int = 0,
    phase: str | None = None,
    reason: str = "",
    message: str = "",
) -> PodGroup:
    """A podgroup of ``pods`` pods (the first ``running`` Running on node ``on``)."""
    namespace_obj = f.NamespaceFactory(name=ns)
    pg = f.PodGroupFactory(
        cluster=cluster(),
        namespace=namespace_obj,
        name=name,
        queue=Queue.objects.get(name=queue_name),
        min_member=1,
        priority=priority,
        phase=phase or ("Running" if running else "Pending"),
        reason=reason,
        message=message,
    )
    target = Node.objects.get(name=on) if on else None
    quota = QuotaGroup.objects.get(name=group_name) if group_name else None
    for k in range(pods):
        f.PodFactory(
            podgroup=pg,
            name=f"{name}-{k}",
            request=request,
            priority=priority,
            quota_group=quota,
            status="Running" if k < running else "Pending",
            node=target if k < running else None,
        )
    return pg


def pod(ns: str, name: str, request: Mapping[str, str], *, group_name: str, running_on: str | None = None) -> Pod:
    """A pod without a podgroup (it gets its own), counted in quota group ``group_name``."""
    return f.PodFactory(
        cluster=cluster(),
        namespace=f.NamespaceFactory(name=ns),
        name=name,
        request=request,
        quota_group=QuotaGroup.objects.get(name=group_name),
        status="Running" if running_on else "Pending",
        node=Node.objects.get(name=running_on) if running_on else None,
    )


def user(username: str, *, staff: bool = False, teams: Iterable[str] = ()) -> Any:
    return f.UserFactory(username=username, password=PASSWORD, is_staff=staff, teams=teams)


def team(name: str, *, queues: Iterable[str] = (), groups: Iterable[str] = ()) -> Group:
    """A team (Django group) linked to tree nodes."""
    return f.TeamFactory(name=name, queues=queues, groups=groups)


# -- the seeds' examples -------------------------------------------------------------------------------------


def seed001_runtime(unit: str = "") -> None:
    """Seed 001's runtime example: cluster 100; A/B/C/D min 10/15/20/15, max 40/60/50/80, request 5/20/40/70
    (``unit``: "" for whole cpus, "m" for millicores). Runtimes: 5/20/35/40 in quota units, or in whole cpus
    5 / 20 / 35385m / 39615m (shared-weight = max, split to the millicore)."""
    node("n1", cpu=f"100{unit}", memory="1000Gi")
    for name, low, high, req in (("a", 10, 40, 5), ("b", 15, 60, 20), ("c", 20, 50, 40), ("d", 15, 80, 70)):
        group(name, min={"cpu": f"{low}{unit}"}, max={"cpu": f"{high}{unit}"})
        pod("seed001", f"{name}-pod", {"cpu": f"{req}{unit}"}, group_name=name)


def seed001_tree() -> None:
    """Seed 001's hierarchy example (in millicores): parent-a min 20 / parent-b min 80 (max 100); a-1, a-2 min 10
    max 10; b-1 min 20 max 40; b-2 min 40 max 70; every leaf asks 100. Runtimes 20/80, 10/10, 27/53."""
    node("n1", cpu="100m", memory="1000Gi")
    group("parent-a", is_parent=True, min={"cpu": "20m"}, max={"cpu": "100m"})
    group("parent-b", is_parent=True, min={"cpu": "80m"}, max={"cpu": "100m"})
    for name, parent, low, high in (
        ("a-1", "parent-a", 10, 10),
        ("a-2", "parent-a", 10, 10),
        ("b-1", "parent-b", 20, 40),
        ("b-2", "parent-b", 40, 70),
    ):
        group(name, parent, min={"cpu": f"{low}m"}, max={"cpu": f"{high}m"})
        pod("seed001", f"{name}-pod", {"cpu": "100m"}, group_name=name)


SEED000_TABLE2 = [("q1", "ns1", 3, 5), ("q1", "ns2", 1, 10), ("q2", "ns3", 2, 10), ("q2", "ns4", 6, 2)]


def seed000_table2() -> None:
    """Seed 000's table 2 on a 16-cpu cluster: q1 weight 1, q2 weight 3; ns1 w3 asks 5, ns2 w1 asks 10 (in q1),
    ns3 w2 asks 10, ns4 w6 asks 2 (in q2), 1-cpu pods. q1 deserves 4 (ns1 3, ns2 1), q2 12 (ns3 10, ns4 2)."""
    node("seed000-n1", cpu="16", memory="64Gi")
    queue("q1", weight=1)
    queue("q2", weight=3)
    for q, ns, weight, cpus in SEED000_TABLE2:
        namespace(ns, weight, queue_name=q)
        job(ns, f"{q}-{ns}", q, cpus, {"cpu": "1"})


def lending() -> None:
    """Two quota groups that share 100 cpu: x (min 50, max 100) runs 80 cpu and waits for 20 more, y (min 50, max
    100) runs 10. x borrows 30 and y lends 30 (nobody else is entitled to anything); x's runtime is 90. Each has a
    leaf queue (xq, yq) and a namespace."""
    node("n1", cpu="100", memory="400Gi")
    group("x", min={"cpu": "50"}, max={"cpu": "100"})
    group("y", min={"cpu": "50"}, max={"cpu": "100"})
    queue("xq", weight=1)
    queue("yq", weight=1)
    namespace("x-ns", queue_name="xq", group_name="x")
    namespace("y-ns", queue_name="yq", group_name="y")
    job("x-ns", "train", "xq", 8, {"cpu": "10"}, running=8, on="n1", group_name="x", priority=5)
    job("y-ns", "serve", "yq", 1, {"cpu": "10"}, running=1, on="n1", group_name="y")
    job(
        "x-ns",
        "eval",
        "xq",
        1,
        {"cpu": "20"},
        group_name="x",
        reason="NotEnoughResources",
        message="quota group x runtime: insufficient cpu, requested 20, available 10",
    )
