"""Kueue's levers stored on the dashboard's trees drive the live sessions as ``fairway simulate`` drives the same
manifests (issue 28 item 9): Kueue objects imported by the Kubernetes adapter (a cluster that owns the trees) keep
their levers on the queues (``queueingStrategy: StrictFIFO``, ``preemption.withinClusterQueue``, a ClusterQueue named
``root``), the Celery session (``run_scheduling_session``) then binds and evicts exactly what simulate binds and
evicts, a lever cleared from the stored queue changes the decision in both alike, and ``fairway export --format
kueue`` of the stored trees simulates to the same numbers (the round trip)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from django.utils import timezone

from engine.manifests import load_manifests
from engine.manifests.export import export_trees
from engine.manifests.kueue import KUEUE_POLICY
from engine.simulate import simulate

pytestmark = pytest.mark.django_db

CQ = """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {name}}}
spec:
  namespaceSelector: {{}}
{levers}  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources:
      - {{name: cpu, nominalQuota: "{cpu}"}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq, namespace: {namespace}}}
spec: {{clusterQueue: {name}}}
"""
STRICT = "  queueingStrategy: StrictFIFO\n"
PREEMPT = "  preemption: {withinClusterQueue: LowerPriority}\n"
FIXED = """---
apiVersion: v1
kind: Node
metadata: {name: n0}
status:
  allocatable: {cpu: "2", memory: 64Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "6", memory: 64Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
"""


def _pod(namespace: str, name: str, cpu: int, *, high: bool = False, running: bool = False, second: int = 0) -> str:
    """A plain pod; ``second``: its creation. (The live mirror dates a plain pod's podgroup when it mirrors it, in
    document order, the simulated one by the pod's creation: later pods are given later seconds so that both see
    the same order, which Kueue's candidate order reads: the newer admitted is preempted first.)"""
    spec = "priorityClassName: high, " if high else ""
    node = "nodeName: n0, " if running else ""
    status = "\nstatus: {phase: Running}" if running else ""
    return f"""---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}
  creationTimestamp: "2026-01-01T00:00:{second:02d}Z"
  labels: {{kueue.x-k8s.io/queue-name: lq}}
spec: {{{spec}{node}schedulerName: fairway, containers: [{{name: c, resources: {{requests: {{cpu: "{cpu}"}}}}}}]}}{status}
"""


# ClusterQueue ``root`` (4 cpu): a 5-cpu job of high priority waits first, a 1-cpu one behind it; ClusterQueue
# ``team-b`` (2 cpu) runs two low-priority pods on n0 (full), and a high-priority one waits
JOBS = (
    _pod("team-a", "big", 5, high=True)
    + _pod("team-a", "small", 1)
    + _pod("team-b", "low-0", 1, running=True)
    + _pod("team-b", "low-1", 1, running=True, second=1)
    + _pod("team-b", "urgent", 1, high=True)
)


def _tree(strict: bool, preempt: bool) -> str:
    return CQ.format(name="root", namespace="team-a", cpu=4, levers=STRICT if strict else "") + CQ.format(
        name="team-b", namespace="team-b", cpu=2, levers=PREEMPT if preempt else ""
    )


def _simulated(text: str) -> tuple[set[str], set[str]]:
    """(pods bound, pods evicted) by one simulated session of ``text``."""
    doc = simulate(load_manifests([("in.yaml", text)]).snapshot, now=1_000.0).document
    return set(doc["bindings"]), {e.split(" ")[0] if " " in e else e for e in doc["evictions"]}


def _live(cluster: Any) -> tuple[set[str], set[str]]:
    """(pods bound, pods evicted) by one live session of the cluster."""
    from scheduling import sessions
    from scheduling.models import Eviction, Pod

    before = set(Eviction.objects.values_list("pk", flat=True))
    sessions.run_scheduling_session(cluster)
    bound = {
        f"{ns}/{name}"
        for ns, name, status in Pod.objects.filter(cluster=cluster).values_list("namespace__name", "name", "status")
        if status in ("Bound", "Binding", "Allocated")
    }
    evicted = {
        f"{ns}/{name}"
        for pk, ns, name in Eviction.objects.values_list("pk", "pod__namespace__name", "pod__name")
        if pk not in before
    }
    return bound, evicted


@pytest.fixture
def kueue_cluster(db: Any) -> Any:
    from quotas import services
    from scheduling.models import Cluster

    services.ensure_builtins()
    return Cluster.objects.create(
        name="kq", source="kubernetes", tree_source="kubernetes", scheduler_policy=KUEUE_POLICY.to_yaml()
    )


def _import(cluster: Any, text: str) -> None:
    """The adapter's mirror of ``text``'s objects; a second pass finds the stored levers equal and writes no queue."""
    from scheduling.kube.mirror_in import mirror

    report = mirror(cluster, list(yaml.safe_load_all(text)), timezone.now())
    assert not report.problems, report.problems
    again = mirror(cluster, list(yaml.safe_load_all(text)), timezone.now())
    assert not again.problems and again.written["Queue"] == 0


def test_stored_levers_decide_in_the_live_session_as_simulate_does(kueue_cluster: Any) -> None:
    from quotas.models import Queue

    text = FIXED + _tree(strict=True, preempt=True) + JOBS
    _import(kueue_cluster, text)
    stored = Queue.objects.get(name="root-clusterqueue").kueue
    assert stored == {"kind": "ClusterQueue", "name": "root", "queueingStrategy": "StrictFIFO"}
    assert Queue.objects.get(name="team-b").kueue == {
        "preemption": {
            "reclaimWithinCohort": "Never",
            "borrowWithinCohort": {"policy": "Never"},
            "withinClusterQueue": "LowerPriority",
        }
    }
    simulated = _simulated(text)
    live = _live(kueue_cluster)
    assert live == simulated
    bound, evicted = live
    assert "team-a/small" not in bound  # StrictFIFO: behind the big job that cannot be admitted
    assert len(evicted & {"team-b/low-0", "team-b/low-1"}) == 1  # LowerPriority: one low pod makes room


def test_a_lever_cleared_on_the_stored_queue_changes_the_live_decision_as_in_simulate(kueue_cluster: Any) -> None:
    from quotas import services
    from quotas.models import Queue
    from scheduling.models import Cluster

    _import(kueue_cluster, FIXED + _tree(strict=True, preempt=False) + JOBS)
    Cluster.objects.filter(pk=kueue_cluster.pk).update(tree_source="fairway")  # the dashboard edits the trees now
    kueue_cluster.refresh_from_db()
    queue = Queue.objects.get(name="root-clusterqueue")
    services.save_queue(queue, {"kueue": {"kind": "ClusterQueue", "name": "root"}})
    live = _live(kueue_cluster)
    assert live == _simulated(FIXED + _tree(strict=False, preempt=False) + JOBS)
    assert "team-a/small" in live[0] and not live[1]  # BestEffortFIFO: the small job goes ahead; no preemption


def test_the_kueue_export_of_the_stored_trees_simulates_to_the_same_numbers(kueue_cluster: Any) -> None:
    from scheduling import store

    text = FIXED + _tree(strict=True, preempt=True) + JOBS
    _import(kueue_cluster, text)
    stored = store.load_snapshot(kueue_cluster)
    docs = export_trees(stored, "kueue")
    by_kind = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    assert by_kind[("ClusterQueue", "root")]["spec"]["queueingStrategy"] == "StrictFIFO"
    assert by_kind[("ClusterQueue", "team-b")]["spec"]["preemption"]["withinClusterQueue"] == "LowerPriority"
    # the trees as exported, with the stored LocalQueues
    assert {(d["metadata"]["namespace"], d["metadata"]["name"]) for d in docs if d["kind"] == "LocalQueue"} == {
        ("team-a", "lq"),
        ("team-b", "lq"),
    }
    trees = [d for d in docs if d["kind"] != "ResourceFlavor"]
    exported = FIXED + yaml.safe_dump_all(trees, sort_keys=False) + JOBS
    assert _simulated(exported) == _simulated(text)
    # Kueue's candidate order: of two equal priorities the newer admitted goes first
    assert _simulated(exported)[1] == {"team-b/low-1"} and "team-a/small" not in _simulated(exported)[0]


# Kueue's namespaceSelector on stored trees: the namespaces' labels come from the cluster (the adapter) or the API
SELECTED = """---
apiVersion: v1
kind: Namespace
metadata: {name: ns-gold, labels: {tier: gold}}
---
apiVersion: v1
kind: Namespace
metadata: {name: ns-plain, labels: {tier: bronze}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: gold}
spec:
  namespaceSelector: {matchLabels: {tier: gold}}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: "4"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: ns-gold}
spec: {clusterQueue: gold}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: ns-plain}
spec: {clusterQueue: gold}
"""


def test_namespace_labels_from_the_cluster_decide_the_selector_in_the_live_session_as_in_simulate(
    kueue_cluster: Any, client: Any, django_user_model: Any
) -> None:
    from quotas.models import Namespace
    from scheduling.models import Cluster

    text = FIXED + SELECTED + _pod("ns-gold", "g", 1) + _pod("ns-plain", "p", 1)
    _import(kueue_cluster, text)
    assert Namespace.objects.get(name="ns-gold").labels == {"tier": "gold"}
    live = _live(kueue_cluster)
    assert live == _simulated(text)
    assert live[0] == {"ns-gold/g"}  # ns-plain (tier: bronze) does not match the selector: never admitted

    # the dashboard owns the trees now; an admin relabels ns-plain through the API, and its job is admitted
    Cluster.objects.filter(pk=kueue_cluster.pk).update(tree_source="fairway")
    kueue_cluster.refresh_from_db()
    admin = django_user_model.objects.create_superuser("ns-admin", password="pw-ns-admin")
    client.force_login(admin)
    url = "/api/v1/namespaces/ns-plain/"
    refused = client.patch(url, {"labels": {"tier": "gold", "bad key": "x"}}, content_type="application/json")
    assert refused.status_code == 400, refused.content
    (error,) = refused.json()["errors"]
    assert error["attr"] == "labels" and error["detail"].startswith("labels.bad key: 'bad key' is not a label key")
    assert Namespace.objects.get(name="ns-plain").labels == {"tier": "bronze"}  # nothing written
    answer = client.patch(url, {"labels": {"tier": "gold"}}, content_type="application/json")
    assert answer.status_code == 200, answer.content
    assert answer.json()["labels"] == {"tier": "gold"}
    assert "ns-plain/p" in _live(kueue_cluster)[0]


def test_namespace_labels_survive_the_export() -> None:
    text = FIXED + SELECTED + _pod("ns-gold", "g", 1) + _pod("ns-plain", "p", 1)
    snapshot = load_manifests([("in.yaml", text)]).snapshot
    assert snapshot.namespaces["ns-gold"].labels == (("tier", "gold"),)
    docs = export_trees(snapshot, "kueue")
    namespaces = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Namespace"}
    assert namespaces["ns-gold"]["metadata"]["labels"] == {"tier": "gold"}
    assert namespaces["ns-plain"]["metadata"]["labels"] == {"tier": "bronze"}
    pods = _pod("ns-gold", "g", 1) + _pod("ns-plain", "p", 1)
    # with the LocalQueues read, which the export writes back
    trees = [d for d in docs if d["kind"] != "ResourceFlavor"]
    exported = FIXED + yaml.safe_dump_all(trees, sort_keys=False) + pods
    assert _simulated(exported) == _simulated(text) == ({"ns-gold/g"}, set())
