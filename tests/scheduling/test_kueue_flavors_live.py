"""Kueue's ResourceFlavors stored on the dashboard's trees (issue 28 item 7): the Kubernetes adapter stores a cluster's
ResourceFlavors and each queue's quota per flavor (``cpu@spot``) instead of adding the flavors up; a live session on
the stored trees gives each waiting job the flavor ``fairway simulate`` gives it on the same manifests (the same
``engine.flavors`` code), keeps it on the job's row (``PodGroup.flavors``, ``flavor_assignment``), and binds the same
pods; ``fairway export --format kueue`` of the stored trees writes the flavors back as they came in."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from django.utils import timezone

from engine.manifests import load_manifests
from engine.manifests.export import export_trees
from engine.manifests.kueue import KUEUE_POLICY
from engine.simulate import simulate

pytestmark = pytest.mark.django_db

FLAVORS = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: on-demand}
spec: {nodeLabels: {type: on-demand}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: spot}
spec:
  nodeLabels: {type: spot}
  nodeTaints: [{key: spot, value: "true", effect: NoSchedule}]
  tolerations: [{key: spot, operator: Equal, value: "true", effect: NoSchedule}]
  topologyName: default
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-a}
spec:
  namespaceSelector: {}
  flavorFungibility: {whenCanBorrow: TryNextFlavor}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: on-demand
      resources: [{name: cpu, nominalQuota: 4}, {name: memory, nominalQuota: 16Gi}]
    - name: spot
      resources: [{name: cpu, nominalQuota: 8, borrowingLimit: 0}, {name: memory, nominalQuota: 32Gi}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: team-a, name: lq}
spec: {clusterQueue: team-a}
"""
NODES = """
---
apiVersion: v1
kind: Node
metadata: {name: od-1, labels: {type: on-demand}}
status:
  allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: v1
kind: Node
metadata: {name: spot-1, labels: {type: spot}}
spec: {taints: [{key: spot, value: "true", effect: NoSchedule}]}
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
"""


def _pod(name: str, cpu: int, created: str, node: str = "") -> str:
    placed = f"nodeName: {node}, " if node else ""
    status = "Running" if node else "Pending"
    return f"""
---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: team-a
  creationTimestamp: "{created}"
  labels: {{kueue.x-k8s.io/queue-name: lq}}
spec: {{{placed}schedulerName: fairway, containers: [{{name: c, resources: {{requests: {{cpu: "{cpu}", memory: 1Gi}}}}}}]}}
status: {{phase: {status}}}
"""


# on-demand has 4 cpu, 2 of them taken by ``running``: ``big`` (3 cpu, first) does not fit there and goes to spot,
# ``small`` (2 cpu) then fits on-demand; ``huge`` (20 cpu) fits in no flavor: held on the first, it waits
JOBS = (
    _pod("running", 2, "2026-01-01T00:00:00Z", node="od-1")
    + _pod("big", 3, "2026-01-01T00:01:00Z")
    + _pod("small", 2, "2026-01-01T00:02:00Z")
    + _pod("huge", 20, "2026-01-01T00:03:00Z")
)
TEXT = FLAVORS + NODES + JOBS


@pytest.fixture
def kueue_cluster(db: Any) -> Any:
    from quotas import services
    from scheduling.models import Cluster

    services.ensure_builtins()
    return Cluster.objects.create(
        name="kfl", source="kubernetes", tree_source="kubernetes", scheduler_policy=KUEUE_POLICY.to_yaml()
    )


def _import(cluster: Any, text: str) -> Any:
    from scheduling.kube.mirror_in import mirror

    report = mirror(cluster, list(yaml.safe_load_all(text)), timezone.now())
    assert not report.problems, report.problems
    return report


def _simulated(text: str) -> tuple[dict[str, str], dict[str, dict[str, str]], dict[str, str]]:
    """(pod -> node bound, podgroup -> flavors, podgroup -> why those flavors) of one simulated session of ``text``."""
    doc = simulate(load_manifests([("in.yaml", text)]).snapshot, now=1_000.0).document
    flavors = {k: v["flavors"] for k, v in doc["podgroups"].items() if v.get("flavors")}
    why = {k: v["flavorAssignment"] for k, v in doc["podgroups"].items() if v.get("flavorAssignment")}
    return dict(doc["bindings"]), flavors, why


def test_the_adapter_stores_the_flavors_apart(kueue_cluster: Any) -> None:
    from quotas.models import Queue, ResourceFlavor
    from scheduling.models import Node, Pod

    report = _import(kueue_cluster, TEXT)
    assert report.written["ResourceFlavor"] == 2
    spot = ResourceFlavor.objects.get(name="spot")
    assert spot.node_labels == {"type": "spot"}
    assert spot.node_taints == [{"key": "spot", "value": "true", "effect": "NoSchedule"}]
    assert spot.tolerations == [{"key": "spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"}]
    assert spot.topology_name == "default"
    queue = Queue.objects.get(name="team-a")
    assert queue.deserved == {
        "cpu@on-demand": 4_000, "cpu@spot": 8_000, "memory@on-demand": 16 * 2**30, "memory@spot": 32 * 2**30,
    }  # fmt: skip
    assert queue.borrowing_limit == {"cpu@spot": 0}
    assert queue.kueue == {
        "resourceGroups": [{"coveredResources": ["cpu", "memory"], "flavors": ["on-demand", "spot"]}],
        "flavorFungibility": {"whenCanBorrow": "TryNextFlavor"},
    }
    # nodes and pods keep their plain resources (the sessions count them per flavor as they read them)
    assert Node.objects.get(name="spot-1").allocatable["cpu"] == 8_000
    assert Pod.objects.get(name="running").request["cpu"] == 2_000
    again = _import(kueue_cluster, TEXT)  # nothing changed: nothing written
    assert again.written["ResourceFlavor"] == 0 and again.written["Queue"] == 0


def test_a_flavor_the_cluster_drops_goes_after_the_queues_stop_naming_it(kueue_cluster: Any) -> None:
    from quotas.models import Queue, ResourceFlavor

    _import(kueue_cluster, TEXT)
    one = FLAVORS.split("---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue")[0].split("---")[0]
    single = (
        one
        + """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-a}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: on-demand, resources: [{name: cpu, nominalQuota: 4}]}]
"""
        + NODES
    )
    report = _import(kueue_cluster, single)
    assert report.deleted["ResourceFlavor"] == 1
    assert list(ResourceFlavor.objects.values_list("name", flat=True)) == ["on-demand"]
    assert Queue.objects.get(name="team-a").deserved == {"cpu": 4_000}  # one flavor: the plain resource again


def test_the_live_session_gives_the_flavor_simulate_gives(kueue_cluster: Any) -> None:
    from scheduling import sessions
    from scheduling.models import Pod, PodGroup

    _import(kueue_cluster, TEXT)
    bindings, flavors, why = _simulated(TEXT)
    assert bindings == {"team-a/big": "spot-1", "team-a/small": "od-1"}
    sessions.run_scheduling_session(kueue_cluster)
    live = {
        f"team-a/{name}": node
        for name, node in Pod.objects.filter(
            cluster=kueue_cluster, status__in=("Bound", "Binding", "Allocated")
        ).values_list("name", "node__name")
    }
    assert live == bindings
    rows = {f"{ns}/{name}": (fl, why) for ns, name, fl, why in PodGroup.objects.values_list(
        "namespace__name", "name", "flavors", "flavor_assignment"
    )}  # fmt: skip
    assert {k: v[0] for k, v in rows.items() if v[0]} == flavors
    assert {k: v[1] for k, v in rows.items() if v[1]} == why
    assert flavors["team-a/podgroup-big"] == {"cpu": "spot", "memory": "spot"}
    assert rows["team-a/podgroup-big"][1] == (
        "flavor spot for cpu, memory (tried on-demand: would need a preemption its ClusterQueue may not make "
        "(3 cores of cpu asked, 2 cores unused); spot: fits)"
    )
    assert rows["team-a/podgroup-small"][1] == "flavor on-demand for cpu, memory (tried on-demand: fits)"
    assert rows["team-a/podgroup-huge"][1].startswith(
        "no flavor fits: held on flavor on-demand for cpu, memory (tried "
    )
    assert rows["team-a/podgroup-running"] == ({"cpu": "on-demand", "memory": "on-demand"}, None)


def test_the_kueue_export_of_the_stored_trees_gives_the_flavors_back(kueue_cluster: Any) -> None:
    from scheduling import store

    _import(kueue_cluster, TEXT)
    docs = export_trees(store.load_snapshot(kueue_cluster), "kueue")
    by_kind = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    original = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(FLAVORS)}
    for name in ("on-demand", "spot"):
        assert by_kind[("ResourceFlavor", name)]["spec"] == original[("ResourceFlavor", name)]["spec"]
    cq = by_kind[("ClusterQueue", "team-a")]["spec"]
    assert cq["flavorFungibility"]["whenCanBorrow"] == "TryNextFlavor"
    groups = [g for g in cq["resourceGroups"] if len(g["flavors"]) > 1]
    # (a ClusterQueue without a cohort borrows nothing: the export leaves its borrowingLimit 0 out, as before)
    assert groups == [
        {
            "coveredResources": ["cpu", "memory"],
            "flavors": [
                {"name": "on-demand", "resources": [{"name": "cpu", "nominalQuota": "4"}, {"name": "memory", "nominalQuota": "16Gi"}]},
                {"name": "spot", "resources": [{"name": "cpu", "nominalQuota": "8"}, {"name": "memory", "nominalQuota": "32Gi"}]},
            ],
        }
    ]  # fmt: skip
    local = [d for d in yaml.safe_load_all(FLAVORS) if d["kind"] == "LocalQueue"]
    exported = yaml.safe_dump_all([*docs, *local], sort_keys=False) + NODES + JOBS
    assert _simulated(exported) == _simulated(TEXT)


def test_a_what_ifs_impact_gives_the_waiting_jobs_their_flavors() -> None:
    import dataclasses

    from engine.resources import ResourceList
    from planning.values_api import session_impact

    before = load_manifests([("in.yaml", TEXT)]).snapshot
    queue = before.queues["team-a"]
    smaller = dataclasses.replace(queue, deserved=ResourceList({**queue.deserved.raw, "cpu@spot": 2_000}))
    after = before.replace(queues={**before.queues, "team-a": smaller})
    changed = session_impact(before, after)["podgroups"]
    # before, ``big`` is given spot and placed; with 2 spot cpu it fits no flavor and waits
    assert changed["team-a/podgroup-big"]["before"]["placed"] == 1
    assert changed["team-a/podgroup-big"]["after"]["placed"] == 0


GANG = """
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: gang, namespace: team-a}
spec: {queue: team-a, minMember: 1}
status: {phase: Running}
"""


def _member(name: str, node: str = "") -> str:
    placed = f"nodeName: {node}, " if node else ""
    return f"""
---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: team-a
  annotations: {{scheduling.k8s.io/group-name: gang}}
spec: {{{placed}schedulerName: fairway, containers: [{{name: c, resources: {{requests: {{cpu: "2"}}}}}}]}}
status: {{phase: {"Running" if node else "Pending"}}}
"""


def test_an_admitted_jobs_pods_keep_its_flavor_in_the_next_sessions(kueue_cluster: Any) -> None:
    """The rows keep a pod's plain request: a job running on spot whose second pod waits gets that pod placed on
    spot (its flavor kept), as simulate, where its pods keep the flavored keys, places it."""
    from scheduling import sessions
    from scheduling.models import Pod, PodGroup

    text = FLAVORS + NODES + GANG + _member("g-0", node="spot-1") + _member("g-1")
    _import(kueue_cluster, text)
    sessions.run_scheduling_session(kueue_cluster)
    assert Pod.objects.get(name="g-1").node.name == "spot-1"
    assert _simulated(text)[0] == {"team-a/g-1": "spot-1"}
    assert PodGroup.objects.get(name="gang").flavors == {"cpu": "spot"}


def test_an_admitted_job_without_a_pod_on_a_node_keeps_the_flavor_kept_with_it() -> None:
    import dataclasses

    from engine.flavors import with_kept_flavors
    from engine.objects import PodGroupPhase

    snapshot = load_manifests([("in.yaml", TEXT)]).snapshot
    key = "team-a/podgroup-small"
    admitted = snapshot.replace(
        podgroups={**snapshot.podgroups, key: dataclasses.replace(snapshot.podgroups[key], phase=PodGroupPhase.INQUEUE)}
    )
    kept = with_kept_flavors(admitted, {key: {"cpu": "spot", "memory": "spot"}})
    [pod] = kept.tasks_by_podgroup[key]
    assert dict(pod.request) == {"cpu@spot": 2_000, "memory@spot": 2**30}
    assert any(t.key == "spot" for t in pod.tolerations)  # the flavor's tolerations
    waiting = with_kept_flavors(snapshot, {key: {"cpu": "spot"}})  # a waiting job is the assignment's
    assert dict(waiting.tasks_by_podgroup[key][0].request) == {"cpu": 2_000, "memory": 2**30}


def _many_nodes(count: int) -> str:
    out = ""
    for i in range(count):
        kind = "spot" if i % 2 else "on-demand"
        taint = 'spec: {taints: [{key: spot, value: "true", effect: NoSchedule}]}\n' if kind == "spot" else ""
        out += f"""
---
apiVersion: v1
kind: Node
metadata: {{name: n-{i}, labels: {{type: {kind}}}}}
{taint}status:
  allocatable: {{cpu: "2", memory: 8Gi, pods: "110"}}
  conditions: [{{type: Ready, status: "True"}}]
"""
    return out


def test_a_flavored_cluster_under_churn_runs_its_sessions_on_the_kept_state(
    kueue_cluster: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 28: the mirror keeps the nodes and pods counted per flavor and the session the flavors it gives, as the
    same objects for what did not change, so that a flavored cluster's sessions under churn open on the engine's kept
    state (``engine.session.carry``: an update, not a full build), on the very snapshot a fresh read gives (the
    store's, the flavors given afresh), and decide what the engine decides from scratch."""
    import dataclasses
    import random

    from django.db import transaction

    from engine.flavors import assign_flavors, with_kept_flavors
    from engine.session import run as engine_run
    from scheduling import sessions, store
    from scheduling.models import Node, Pod, PodGroup
    from scheduling.store.flavors import kept_flavors

    real = engine_run.run_session
    opened: list[str] = []

    def checked(snapshot: Any, *, now: float, carry: Any = None, **kwargs: Any) -> Any:
        result = real(snapshot, now=now, carry=carry, **kwargs)
        assert carry is not None, "the flavored session runs without the kept state"
        opened.append(carry.last)
        # the snapshot a fresh read of the rows gives, the flavors given afresh (no memo)
        fresh = store.read_cluster(kueue_cluster)[0]
        fresh = assign_flavors(with_kept_flavors(fresh, kept_flavors(kueue_cluster).flavors))[0]
        assert dict(fresh.tasks) == dict(snapshot.tasks)  # (the mirror's order is its own: by primary key)
        assert dict(fresh.nodes) == dict(snapshot.nodes)
        assert dict(fresh.podgroups) == dict(snapshot.podgroups)
        others = {k: v for k, v in kwargs.items() if k != "on_bindings"}
        scratch = real(dataclasses.replace(snapshot), now=now, **others)  # from scratch, no kept state
        assert result.bindings == scratch.bindings and result.evictions == scratch.evictions
        assert list(result.podgroups.items()) == list(scratch.podgroups.items())
        assert result.queue_values == scratch.queue_values
        return result

    monkeypatch.setattr(engine_run, "run_session", checked)
    jobs = "".join(_pod(f"r-{i}", 1, f"2026-01-01T00:{i:02d}:00Z") for i in range(12))
    _import(kueue_cluster, FLAVORS + _many_nodes(12) + jobs)
    assert sessions.run_scheduling_session(kueue_cluster).status == "ok"
    rng = random.Random(28)
    template = PodGroup.objects.filter(cluster=kueue_cluster).order_by("id").first()
    assert template is not None
    for step in range(14):
        with transaction.atomic():
            running = list(
                Pod.objects.filter(cluster=kueue_cluster, status__in=("Bound", "Running", "Binding", "Allocated"))
                .order_by("id")
                .values_list("id", flat=True)
            )
            done = rng.sample(running, min(len(running), rng.randint(1, 3)))
            Pod.objects.filter(pk__in=done).update(status="Succeeded")
            if step == 7:  # a spot node relabelled on-demand (its taint stays): it and its pods counted anew
                node = Node.objects.get(cluster=kueue_cluster, name="n-1")
                node.labels = {"type": "on-demand"}
                node.save(update_fields=["labels"])
            for k in range(rng.randint(1, 3)):
                pg = PodGroup.objects.create(
                    cluster=kueue_cluster,
                    namespace_id=template.namespace_id,
                    name=f"churn-{step}-{k}",
                    queue_id=template.queue_id,
                    min_member=1,
                )
                Pod.objects.create(
                    cluster=kueue_cluster,
                    namespace_id=template.namespace_id,
                    name=f"churn-{step}-{k}",
                    podgroup=pg,
                    request={"cpu": rng.choice((500, 1000, 2000)), "memory": 2**30},
                )
        assert sessions.run_scheduling_session(kueue_cluster).status == "ok"
    assert opened[0].startswith("full build"), opened
    assert all(o.startswith("update") for o in opened[1:]), opened
    assert len(opened) == 15
    # only what the churn and the last session changed is counted again (the pods on nodes, counted per flavor, and
    # the waiting pods given the same flavor are the objects of the last session)
    assert all(int(o.split()[1]) <= 10 for o in opened[2:]), opened
    assert opened[8].endswith("1 node changed"), opened  # the session after step 7's relabelling: an update too
    assert Pod.objects.filter(
        cluster=kueue_cluster, status__in=("Bound", "Binding"), node__labels__type="spot"
    ).exists()


def test_the_trace_export_carries_the_flavors_and_its_replay_places_the_waiting_jobs(kueue_cluster: Any) -> None:
    """Issue 28 with issue 29: ``fairway trace export`` of a flavored cluster writes its queue tree as Kueue's objects
    (the ResourceFlavors, the ClusterQueue's quota per flavor) and each job's flavors, in a version-2 trace; its replay
    gives the waiting jobs the flavors the live session gave them and places them."""
    from datetime import timedelta

    from engine.replay import read_trace, trace_lines
    from engine.replay.loop import replay
    from planning.trace import build_trace
    from scheduling import sessions
    from scheduling.models import PodGroup

    _import(kueue_cluster, TEXT)
    sessions.run_scheduling_session(kueue_cluster)
    assert PodGroup.objects.get(name="podgroup-big").flavors == {"cpu": "spot", "memory": "spot"}
    now = timezone.now()
    trace = build_trace(kueue_cluster, now - timedelta(hours=1), now + timedelta(hours=1), period=60, tree_at=now)
    lines = list(trace_lines(trace))
    assert json.loads(lines[0])["version"] == 2
    kinds = {(o["kind"], o["metadata"]["name"]) for o in trace.tree or ()}
    assert {("ResourceFlavor", "spot"), ("ResourceFlavor", "on-demand"), ("ClusterQueue", "team-a")} <= kinds
    assert not any(kind == "Queue" for kind, _ in kinds)  # a Volcano Queue cannot hold a flavor
    [cq] = [o for o in trace.tree or () if o["kind"] == "ClusterQueue"]
    assert [f["name"] for f in cq["spec"]["resourceGroups"][0]["flavors"]] == ["on-demand", "spot"]
    jobs = {j.name: j for j in read_trace(lines).jobs}
    assert jobs["podgroup-big"].flavors == {"cpu": "spot", "memory": "spot"}
    assert jobs["podgroup-running"].flavors == {"cpu": "on-demand", "memory": "on-demand"}
    assert jobs["podgroup-huge"].flavors == {"cpu": "on-demand", "memory": "on-demand"}  # the flavor it waits on
    out = replay(read_trace(lines)).outcomes
    assert out["team-a/podgroup-big"].flavors == {"cpu": "spot", "memory": "spot"}
    assert out["team-a/podgroup-small"].flavors == {"cpu": "on-demand", "memory": "on-demand"}
    assert out["team-a/podgroup-big"].start is not None and out["team-a/podgroup-small"].start is not None
    assert out["team-a/podgroup-huge"].start is None


def test_a_removed_jobs_history_row_keeps_its_flavors(kueue_cluster: Any) -> None:
    """The job history (``scheduling.history``): a flavored job garbage-collected or deleted keeps its flavors on its
    ``JobRecord``, which the trace export writes (a job without flavors: null)."""
    from datetime import timedelta

    from planning.trace import build_trace
    from scheduling import history, sessions
    from scheduling.models import JobRecord, PodGroup

    _import(kueue_cluster, TEXT)
    sessions.run_scheduling_session(kueue_cluster)
    big = PodGroup.objects.get(name="podgroup-big")
    assert history.record_removed([big.pk]) == 1
    assert JobRecord.objects.get(name="podgroup-big").flavors == {"cpu": "spot", "memory": "spot"}
    PodGroup.objects.filter(pk=big.pk).delete()
    now = timezone.now()
    trace = build_trace(kueue_cluster, now - timedelta(hours=1), now, period=60, tree_at=now)
    assert {j.name: j.flavors for j in trace.jobs}["podgroup-big"] == {"cpu": "spot", "memory": "spot"}


def test_the_replays_page_replays_a_flavored_cluster_with_its_flavors(
    kueue_cluster: Any, make_user: Any, django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The what-if page's "replay the last 7 days" (``planning.replay``) on a flavored cluster: the baseline places
    the jobs the live session placed, each on its flavor; without the spot node (the proposal) the job given spot
    finds no place, and the differences say so."""
    from planning import replay
    from scheduling import sessions

    _import(kueue_cluster, TEXT)
    sessions.run_scheduling_session(kueue_cluster)
    monkeypatch.setattr(replay, "send", lambda pk: None)
    boss = make_user("boss", staff=True)
    with django_capture_on_commit_callbacks(execute=True):
        run = replay.start(boss, [{"op": "remove", "kind": "node", "name": "spot-1"}], window="1h", cluster="kfl")
    assert replay.execute(run.pk) == "done"
    run.refresh_from_db()
    base, prop = run.result["baseline"]["teams"]["queue/team-a"], run.result["proposal"]["teams"]["queue/team-a"]
    assert base["jobs"]["started"] == 3  # running (on-demand), big (spot), small (on-demand); huge fits nowhere
    assert prop["jobs"]["started"] == 2  # no spot node: big waits


def _torch_pod(role: str, index: int, select: str) -> str:
    """A pod of PyTorchJob ``pt`` as the training operator makes it (its controller, its replica type labelled)."""
    return f"""
---
apiVersion: v1
kind: Pod
metadata:
  name: pt-{role}-{index}
  namespace: team-a
  creationTimestamp: "2026-01-01T00:05:00Z"
  labels: {{training.kubeflow.org/job-name: pt, training.kubeflow.org/replica-type: {role}}}
  ownerReferences: [{{apiVersion: kubeflow.org/v1, kind: PyTorchJob, name: pt, uid: uid-pt, controller: true}}]
spec:
  schedulerName: fairway
  nodeSelector: {{type: {select}}}
  containers: [{{name: c, resources: {{requests: {{cpu: "1", memory: 1Gi}}}}}}]
status: {{phase: Pending}}
"""


# a PyTorchJob whose Master selects on-demand nodes and whose Workers select spot: no flavor matches every pod, so it
# is admitted only with a flavor per pod set, as Kueue gives them (the Master on-demand, the Workers spot)
TORCH = """
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: pt
  namespace: team-a
  uid: uid-pt
  creationTimestamp: "2026-01-01T00:05:00Z"
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          schedulerName: fairway
          nodeSelector: {type: on-demand}
          containers: [{name: c, resources: {requests: {cpu: "1", memory: 1Gi}}}]
    Worker:
      replicas: 2
      template:
        spec:
          schedulerName: fairway
          nodeSelector: {type: spot}
          containers: [{name: c, resources: {requests: {cpu: "1", memory: 1Gi}}}]
"""


def test_a_live_pytorchjob_gets_a_flavor_per_pod_set_as_simulate_gives(kueue_cluster: Any) -> None:
    """Live, the pods the operator made are the workload's; its pod sets are kept on its row (``kueue_job``'s
    ``podSets``) so that each gets its own flavor there too: the same bindings as ``fairway simulate`` of the
    PyTorchJob alone."""
    from scheduling import sessions
    from scheduling.models import Pod, PodGroup

    live = FLAVORS + NODES + TORCH + _torch_pod("master", 0, "on-demand") + "".join(
        _torch_pod("worker", i, "spot") for i in range(2))  # fmt: skip
    _import(kueue_cluster, live)
    assert PodGroup.objects.get(name="pt").kueue_job["podSets"] == ["master", "worker"]
    bindings, _, why = _simulated(FLAVORS + NODES + TORCH)
    assert bindings == {"team-a/pt-master-0": "od-1", "team-a/pt-worker-0": "spot-1", "team-a/pt-worker-1": "spot-1"}
    assert why["team-a/pt"].startswith("pod set master: flavor on-demand for cpu, memory; pod set worker: flavor spot")
    sessions.run_scheduling_session(kueue_cluster)
    placed = Pod.objects.filter(cluster=kueue_cluster, status__in=("Bound", "Binding", "Allocated"))
    assert {f"team-a/{name}": node for name, node in placed.values_list("name", "node__name")} == bindings
    assert PodGroup.objects.get(name="pt").flavor_assignment == why["team-a/pt"]


def _suspended(name: str, pods: int, *, spot_only: bool = False) -> dict[str, Any]:
    """A suspended Kueue Job of LocalQueue ``lq`` in team-a, ``pods`` pods of 1 core (``spot_only``: its template
    selects the spot nodes and tolerates their taint)."""
    from tests.kube.test_kueue_jobs import job

    out = job(name, pods, ns="team-a", suspend=True)
    if spot_only:
        out["spec"]["template"]["spec"] |= {
            "nodeSelector": {"type": "spot"},
            "tolerations": [{"key": "spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"}],
        }
    return out


def test_a_suspended_job_is_given_its_flavors_from_its_template_and_its_pods_keep_them(kueue_cluster: Any) -> None:
    """A suspended Job has no pods: its template stands for them, so Kueue's flavor assigner gives it its flavors
    (``big`` does not fit on-demand's 2 free cores and goes to spot; ``pinned``'s template selects spot; ``small``
    fits on-demand), the session admits it on that flavor's quota and the flavors are kept with its row. An admitted
    Job whose pods are not made yet holds its quota in the assignment, as Kueue counts an admitted workload: ``later``
    finds on-demand full and goes to spot. Once resumed, the pods its controller makes ask for the kept flavor and
    are placed on its nodes."""
    from scheduling import sessions
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import Pod, PodGroup
    from tests.kube.test_kueue_jobs import job_pod

    base = list(yaml.safe_load_all(FLAVORS + NODES + _pod("running", 2, "2026-01-01T00:00:00Z", node="od-1")))
    jobs = [_suspended("big", 3), _suspended("pinned", 1, spot_only=True), _suspended("small", 2)]
    report = mirror(kueue_cluster, [*base, *jobs], timezone.now())
    assert not report.problems, report.problems
    template = PodGroup.objects.get(name="pinned").kueue_job["template"]
    assert template["nodeSelector"] == {"type": "spot"} and template["tolerations"][0]["key"] == "spot"
    sessions.run_scheduling_session(kueue_cluster)
    rows = {name: (phase, fl, why) for name, phase, fl, why in PodGroup.objects.filter(
        name__in=("big", "pinned", "small")).values_list("name", "phase", "flavors", "flavor_assignment")}  # fmt: skip
    assert {n: (r[0], r[1]) for n, r in rows.items()} == {
        "big": ("Inqueue", {"cpu": "spot"}), "pinned": ("Inqueue", {"cpu": "spot"}),
        "small": ("Inqueue", {"cpu": "on-demand"})}  # fmt: skip
    assert "on-demand: does not match (node selector type=spot excludes it)" in rows["pinned"][2]
    assert not Pod.objects.filter(cluster=kueue_cluster).exclude(name="running").exists()
    # small, admitted without pods, holds on-demand's last 2 cores: later goes to spot
    report = mirror(kueue_cluster, [*base, *jobs, _suspended("later", 2)], timezone.now())
    sessions.run_scheduling_session(kueue_cluster)
    later = PodGroup.objects.get(name="later")
    assert (later.phase, later.flavors) == ("Inqueue", {"cpu": "spot"}), later.flavor_assignment
    assert PodGroup.objects.get(name="small").flavors == {"cpu": "on-demand"}  # kept while it has no pods
    # resumed: the Job controller makes the pods, with the template's plain request; they keep the Job's flavor
    resumed = [{**j, "spec": {**j["spec"], "suspend": False}} for j in jobs]
    pods = [job_pod(j, f"{j}-{i}", ns="team-a") for j, n in (("big", 3), ("pinned", 1), ("small", 2)) for i in range(n)]
    for made in pods:  # as the template asks (1 core)
        del made["spec"]["containers"][0]["resources"]["requests"]["memory"]
        if made["metadata"]["name"] == "pinned-0":
            made["spec"] |= {k: v for k, v in jobs[1]["spec"]["template"]["spec"].items() if k != "containers"}
    report = mirror(kueue_cluster, [*base, *resumed, _suspended("later", 2), *pods], timezone.now())
    assert not report.problems, report.problems
    for _ in range(2):
        sessions.run_scheduling_session(kueue_cluster)
    placed = dict(Pod.objects.filter(cluster=kueue_cluster).exclude(name="running").values_list("name", "node__name"))
    assert placed == {"big-0": "spot-1", "big-1": "spot-1", "big-2": "spot-1", "pinned-0": "spot-1",
                      "small-0": "od-1", "small-1": "od-1"}  # fmt: skip


def test_a_suspended_job_stored_without_its_template_waits_in_a_flavored_queue() -> None:
    """A row written before the adapter kept templates (or one whose template cannot be read) does not say where the
    Job's pods may run: in a flavored ClusterQueue it waits, saying so, until the adapter reads the Job again; in one
    without flavors it is admissible as before."""
    from engine.manifests.kueuejobs import SUSPENDED_FLAVORED
    from scheduling.store.read import KueueCount, with_pod_group_waits

    snapshot = load_manifests([("in.yaml", TEXT)]).snapshot
    key = "team-a/podgroup-small"
    without = snapshot.replace(tasks={k: t for k, t in snapshot.tasks.items() if t.podgroup != key})
    old = {key: KueueCount(1, {"minCount": None, "suspended": True})}
    assert dict(with_pod_group_waits(without, old).admission.pod_group_waits) == {key: SUSPENDED_FLAVORED}
    bad = {key: KueueCount(1, {"minCount": None, "suspended": True, "template": {"tolerations": "none"}})}
    assert dict(with_pod_group_waits(without, bad).admission.pod_group_waits) == {key: SUSPENDED_FLAVORED}
    kept = {key: KueueCount(1, {"minCount": None, "suspended": True, "template": {"nodeSelector": {"type": "spot"}}})}
    levers = with_pod_group_waits(without, kept).admission
    assert not levers.pod_group_waits
    [(_, template)] = levers.templates
    assert (template.node_selector, template.request.raw) == ({"type": "spot"}, {"cpu": 2000, "memory": 2**30})
    plain = without.replace(kueue_flavors=None)
    assert not with_pod_group_waits(plain, old).admission.pod_group_waits


def test_a_suspended_pytorchjob_is_given_a_flavor_per_pod_set_from_its_templates(kueue_cluster: Any) -> None:
    """Kueue's webhook leaves a PyTorchJob suspended: it has no pods, and its pod sets' templates stand for them
    (kept on its row, ``kueue_job``'s ``podSetTemplates``), so each pod set is given its own flavor as for the
    unsuspended one (the Master on-demand, the Workers spot), the workload is admitted holding each pod set's part of
    its quota in that pod set's flavor (``later``, 4 cores, then finds on-demand's 3 free cores too few and goes to
    spot: the Master's 1 core is held there, the Workers' 2 on spot), and the pod sets' flavors are kept on its row
    (``pod_set_flavors``) while it has no pods, resumed or not.
    The pods its operator then makes are placed on their own pod set's flavor's nodes."""
    from scheduling import sessions
    from scheduling.models import Pod, PodGroup

    suspended = TORCH.replace(
        "spec:\n  pytorchReplicaSpecs:", "spec:\n  runPolicy: {suspend: true}\n  pytorchReplicaSpecs:"
    )
    later = _suspended("later", 4)
    later["metadata"]["creationTimestamp"] = "2026-01-01T00:06:00Z"
    base = list(yaml.safe_load_all(FLAVORS + NODES + suspended))
    report = _import(kueue_cluster, FLAVORS + NODES + suspended)
    templates = PodGroup.objects.get(name="pt").kueue_job["podSetTemplates"]
    assert [(t["name"], t["count"], t["request"]["cpu"], t["placement"]) for t in templates] == [
        ("master", 1, 1000, {"nodeSelector": {"type": "on-demand"}}),
        ("worker", 2, 2000, {"nodeSelector": {"type": "spot"}}),
    ], report.warnings
    sessions.run_scheduling_session(kueue_cluster)
    pt = PodGroup.objects.get(name="pt")
    each = {"master": {"cpu": "on-demand", "memory": "on-demand"}, "worker": {"cpu": "spot", "memory": "spot"}}
    assert (pt.phase, pt.flavors, pt.pod_set_flavors) == ("Inqueue", each["master"], each), pt.flavor_assignment
    assert pt.flavor_assignment.startswith("pod set master: flavor on-demand for cpu, memory; pod set worker")
    from django.contrib.auth import get_user_model

    from planning.why import why_podgroup

    why = why_podgroup(pt, get_user_model().objects.create_superuser("why-admin", password="pw"))
    assert why["pod_set_flavors"] == each
    assert why["flavors_text"] == "pod set master: on-demand for cpu, memory; pod set worker: spot for cpu, memory"
    from scheduling.kube.mirror_in import mirror

    assert not mirror(kueue_cluster, [*base, later], timezone.now()).problems
    sessions.run_scheduling_session(kueue_cluster)
    got = PodGroup.objects.get(name="later")
    assert (got.phase, got.flavors) == ("Inqueue", {"cpu": "spot"}), got.flavor_assignment
    assert "(4 cores of cpu asked, 3 cores unused)" in got.flavor_assignment  # the Master's 1 core held there
    # resumed, its pods not made yet: still each pod set's
    resumed = [d for d in base if d.get("kind") != "PyTorchJob"]
    torch = next(d for d in base if d.get("kind") == "PyTorchJob")
    torch = {**torch, "spec": {**torch["spec"], "runPolicy": {"suspend": False}}}
    assert not mirror(kueue_cluster, [*resumed, torch, later], timezone.now()).problems
    sessions.run_scheduling_session(kueue_cluster)
    assert PodGroup.objects.get(name="pt").pod_set_flavors == each
    pods = list(yaml.safe_load_all(_torch_pod("master", 0, "on-demand") + _torch_pod("worker", 0, "spot")
                                   + _torch_pod("worker", 1, "spot")))  # fmt: skip
    assert not mirror(kueue_cluster, [*resumed, torch, later, *pods], timezone.now()).problems
    for _ in range(2):
        sessions.run_scheduling_session(kueue_cluster)
    placed = dict(Pod.objects.filter(cluster=kueue_cluster, podgroup__name="pt").values_list("name", "node__name"))
    assert placed == {"pt-master-0": "od-1", "pt-worker-0": "spot-1", "pt-worker-1": "spot-1"}
    assert PodGroup.objects.get(name="pt").pod_set_flavors == each
