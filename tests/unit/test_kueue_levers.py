"""Kueue's admission levers (issue 28 items 5 and 6; ``engine.admission``, ``engine.manifests.kueuelevers``,
``engine.manifests.kueueconfig``, ``engine.session.admission``): what the readers make of each field, the errors
that name a bad one, and the session rules beyond what ``tests/cli/test_simulate_kueue_levers.py`` shows."""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

import pytest

from engine.admission import AdmissionFairSharing, AdmissionLevers, LabelSelector, LocalQueueSpec, SelectorTerm
from engine.manifests import ManifestError, load_manifests
from engine.objects import PodGroupPhase
from engine.session.run import run_session

FLAVOR = """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
"""


def nodes(count: int) -> str:
    return "".join(
        f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\nstatus: {{allocatable: {{cpu: '1', pods: '9'}}}}\n"
        for i in range(count)
    )


def cq(name: str, cpu: str, extra: str = "") -> str:
    return f"""---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {name}}}
spec:
{extra}  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{{name: default-flavor, resources: [{{name: cpu, nominalQuota: {cpu}}}]}}]
"""


def lq(namespace: str, target: str, extra: str = "") -> str:
    return f"""---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq, namespace: {namespace}}}
spec: {{clusterQueue: {target}}}
{extra}"""


def job(namespace: str, name: str, cpu: int, minute: int, labels: str = "") -> str:
    return f"""---
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: {namespace}
  creationTimestamp: "2026-01-01T00:{minute:02d}:00Z"
  labels: {{kueue.x-k8s.io/queue-name: lq{labels}}}
spec:
  parallelism: {cpu}
  template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]}}}}
"""


def config(body: str, api: str = "v1beta2") -> str:
    return f"---\napiVersion: config.kueue.x-k8s.io/{api}\nkind: Configuration\n{body}"


def load(text: str) -> Any:
    return load_manifests([("in.yaml", text)])


def error(text: str) -> str:
    with pytest.raises(ManifestError) as caught:
        load(text)
    return str(caught.value)


# -- the data ------------------------------------------------------------------------------------------------------


def test_label_selectors_as_kubernetes_matches_them() -> None:
    sel = LabelSelector(
        {"team": "a"},
        (SelectorTerm("env", "NotIn", ("prod",)), SelectorTerm("tier", "Exists"), SelectorTerm("x", "DoesNotExist")),
    )
    assert sel.matches({"team": "a", "tier": "1"})  # NotIn matches a missing key
    assert not sel.matches({"team": "a", "tier": "1", "env": "prod"})
    assert not sel.matches({"team": "a"}) and not sel.matches({"team": "a", "tier": "1", "x": ""})
    assert not sel.matches({"team": "b", "tier": "1"})
    assert str(sel) == "team=a,env notin (prod),tier,!x" and str(LabelSelector()) == "everything"
    assert LabelSelector().matches({})


def test_the_entry_penalty_rate_is_kueues() -> None:
    assert AdmissionFairSharing(half_life=300.0, sampling_interval=300.0).alpha == 0.5
    assert AdmissionFairSharing(half_life=0.0).alpha == 0.0  # a half-life of 0 forgets at once: no penalty
    assert not AdmissionLevers() and AdmissionLevers(strict_fifo=frozenset({"q"}))


# -- reading -------------------------------------------------------------------------------------------------------


def test_the_readers_take_each_lever_and_leave_them_off_otherwise() -> None:
    plain = load(nodes(1) + FLAVOR + cq("a", "2") + lq("a", "a") + job("a", "j", 1, 0))
    # no lever on; the LocalQueue is kept for the Kueue export only
    assert not plain.snapshot.admission
    assert plain.snapshot.admission == AdmissionLevers(local_queue_specs=(LocalQueueSpec("a", "lq", "a"),))
    levers = (
        "  queueingStrategy: StrictFIFO\n  stopPolicy: HoldAndDrain\n"
        "  namespaceSelector: {matchLabels: {team: a}}\n"
        "  admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}\n"
    )
    text = (
        nodes(1)
        + FLAVOR
        + cq("a", "2", levers)
        + lq(
            "a", "a", "status: {fairSharing: {admissionFairSharingStatus: {consumedResources: {cpu: 1500m}}}}\n"
        ).replace("spec: {clusterQueue: a}", 'spec: {clusterQueue: a, fairSharing: {weight: "0.5"}}')
        + job("a", "j", 1, 0, ", kueue.x-k8s.io/priority-class: top")
        + "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: top}\nvalue: 77\n"
        + "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: a, labels: {team: a}}\n"
        + config("admissionFairSharing: {usageHalfLifeTime: 1h, resourceWeights: {cpu: 2.5}}\n")
    )
    got = load(text).snapshot
    levers_read = got.admission
    assert levers_read.strict_fifo == {"a"} and levers_read.draining == {"a"}
    assert levers_read.namespace_selectors["a"] == LabelSelector({"team": "a"})
    assert levers_read.labels_of("a") == {"team": "a", "kubernetes.io/metadata.name": "a"}
    assert levers_read.fair_sharing == AdmissionFairSharing(3600.0, 300.0, {"cpu": Fraction(5, 2)})
    assert levers_read.fair_sharing_queues == {"a"}
    usage = levers_read.local_queues[("a", "lq")]
    assert usage.weight == Fraction(1, 2) and usage.consumed == {"cpu": 1500}
    assert levers_read.podgroup_local_queue == {"a/j": ("a", "lq")}
    assert got.podgroups["a/j"].priority == 77
    assert got.queues["a"].state == "Closed"


@pytest.mark.parametrize(
    ("field", "said"),
    [
        ("  queueingStrategy: Random\n", "spec.queueingStrategy: 'Random' is not one of BestEffortFIFO, StrictFIFO"),
        (
            "  namespaceSelector: {matchExpressions: [{key: team, operator: In}]}\n",
            "spec.namespaceSelector.matchExpressions[0].values: operator In needs at least one value",
        ),
        (
            "  namespaceSelector: {matchExpressions: [{key: team, operator: Exists, values: [a]}]}\n",
            "spec.namespaceSelector.matchExpressions[0].values: operator Exists takes no values",
        ),
        (
            "  namespaceSelector: {matchLabels: {team: 1}}\n",
            "spec.namespaceSelector.matchLabels.team: expected a string",
        ),
        (
            "  admissionScope: {admissionMode: Sometimes}\n",
            "spec.admissionScope.admissionMode: 'Sometimes' is not one of",
        ),
    ],
)
def test_a_bad_cluster_queue_field_is_named(field: str, said: str) -> None:
    message = error(FLAVOR + cq("a", "2", field))
    assert "ClusterQueue a" in message and said in message, message


def test_bad_workload_priority_class_local_queue_weight_and_configuration_are_named() -> None:
    wpc = "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: top}\n"
    assert "value: missing" in error(wpc)
    assert "value: expected an integer" in error(wpc + "value: high\n")
    weight = lq("a", "a").replace("spec: {clusterQueue: a}", 'spec: {clusterQueue: a, fairSharing: {weight: "-1"}}')
    assert "spec.fairSharing.weight: '-1' must not be negative" in error(FLAVOR + cq("a", "2") + weight)
    assert "admissionFairSharing.usageHalfLifeTime: missing" in error(config("admissionFairSharing: {}\n"))
    bad_weight = config("admissionFairSharing: {usageHalfLifeTime: 1h, resourceWeights: {cpu: lots}}\n")
    assert "admissionFairSharing.resourceWeights.cpu: expected a number" in error(bad_weight)
    backoff = "waitForPodsReady: {requeuingStrategy: {backoffBaseSeconds: 90, backoffMaxSeconds: 60}}\n"
    assert "backoffMaxSeconds: 60 is below backoffBaseSeconds (90)" in error(config(backoff))
    assert "waitForPodsReady.enable: expected true or false" in error(
        config("waitForPodsReady: {enable: yes please}\n", "v1beta1")
    )


def test_wait_for_pods_ready_defaults_per_version_and_keeps_other_enqueue_arguments() -> None:
    off = load(config("manageJobsWithoutQueueName: false\n", "v1beta1")).snapshot.policy.enqueue_args()
    assert off.gang_repair_timeout == 0  # v1beta1: off unless enabled
    on = load(config("waitForPodsReady: {}\n", "v1beta2")).snapshot.policy.enqueue_args()
    assert (on.gang_repair_timeout, on.requeue_backoff, on.requeue_backoff_max) == (1800.0, 60.0, 3600.0)
    recovery = config("waitForPodsReady: {enable: true, timeout: 2m, recoveryTimeout: 45s}\n", "v1beta1")
    assert load(recovery).snapshot.policy.enqueue_args().gang_repair_timeout == 45.0
    policy = """---
apiVersion: v1
kind: ConfigMap
metadata: {name: volcano-scheduler-configmap, namespace: volcano-system}
data:
  volcano-scheduler.conf: |
    actions: "enqueue, allocate"
    configurations:
    - name: enqueue
      arguments: {requeueAfterSessions: 7}
"""
    args = load(policy + config("waitForPodsReady: {timeout: 1m}\n")).snapshot.policy.enqueue_args()
    assert (args.requeue_after_sessions, args.gang_repair_timeout) == (7, 60.0)


# -- the session ---------------------------------------------------------------------------------------------------


def test_strict_fifo_is_not_blocked_by_a_backing_off_or_refused_namespace_head() -> None:
    """The oldest job is in its requeue backoff and the next one's namespace is refused: neither blocks the third,
    which fits; the fourth, too big for the quota, blocks the fifth."""
    strict = "  queueingStrategy: StrictFIFO\n  namespaceSelector: {matchLabels: {team: a}}\n"
    text = (
        nodes(4)
        + FLAVOR
        + cq("a", "3", strict)
        + lq("a", "a")
        + lq("b", "a")
        + "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: a, labels: {team: a}}\n"
        + job("a", "waiting", 1, 0)
        + job("b", "stranger", 1, 1)
        + job("a", "fits", 1, 2)
        + job("a", "huge", 4, 3)
        + job("a", "after", 1, 4)
    )
    snap = load(text).snapshot
    waiting = dataclasses.replace(snap.podgroups["a/waiting"], requeues=1, backoff_until=10_000.0)
    result = run_session(snap.with_podgroups([waiting]), now=100.0)
    bound = {b.task.split("/")[1].rsplit("-", 1)[0] for b in result.bindings}
    assert bound == {"fits"}
    assert "namespaceSelector: namespace b (kubernetes.io/metadata.name=b) does not match team=a" in (
        result.podgroups["b/stranger"].message
    )
    assert "not admitted again before" in result.podgroups["a/waiting"].message
    assert "its first waiting job, a/huge, cannot be admitted yet" in result.podgroups["a/after"].message


def test_admission_fair_sharing_adds_each_admissions_entry_penalty_at_once() -> None:
    """a used 10 cpu, b 10.4; a half-life of one sampling interval makes each admission add half its cpu: after
    a's first job a stands at 10.5, so b's job goes before a's second (2 cpu of quota: a1 and b1)."""
    afs = "  admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}\n"
    used = "status: {{fairSharing: {{admissionFairSharingStatus: {{consumedResources: {{cpu: '{}'}}}}}}}}\n"
    base = (
        nodes(4)
        + FLAVOR
        + cq("s", "2", afs)
        + lq("a", "s", used.format("10"))
        + lq("b", "s", used.format("10400m"))
        + job("a", "a1", 1, 0)
        + job("a", "a2", 1, 1)
        + job("b", "b1", 1, 2)
    )

    def admitted(text: str) -> set[str]:
        result = run_session(load(text).snapshot, now=100.0)
        return {k for k, s in result.podgroups.items() if s.phase != PodGroupPhase.PENDING}

    assert admitted(base + config("admissionFairSharing: {usageHalfLifeTime: 5m, usageSamplingInterval: 5m}\n")) == {
        "a/a1",
        "b/b1",
    }
    # a half-life of 0: no penalty; a stays below b and takes both
    assert admitted(base + config("admissionFairSharing: {usageHalfLifeTime: 0s}\n")) == {"a/a1", "a/a2"}


def test_hold_and_drain_sends_an_admitted_job_back_to_pending() -> None:
    text = nodes(2) + FLAVOR + cq("a", "2", "  stopPolicy: HoldAndDrain\n") + lq("a", "a") + job("a", "j", 1, 0)
    snap = load(text).snapshot
    admitted = dataclasses.replace(snap.podgroups["a/j"], phase=PodGroupPhase.INQUEUE)
    status = run_session(snap.with_podgroups([admitted]), now=100.0).podgroups["a/j"]
    assert status.phase == PodGroupPhase.PENDING and status.reason == "ClusterQueueStopped"


def test_hold_cancels_a_reservation_and_keeps_what_runs() -> None:
    """Kueue's ``Hold``: an admitted workload that runs nothing yet loses its reservation; one that runs goes on."""
    running = """---
apiVersion: v1
kind: Pod
metadata: {name: r0, namespace: a, labels: {kueue.x-k8s.io/queue-name: lq}}
spec: {nodeName: n0, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
status: {phase: Running}
"""
    text = nodes(2) + FLAVOR + cq("a", "2", "  stopPolicy: Hold\n") + lq("a", "a") + job("a", "j", 1, 0) + running
    snap = load(text).snapshot
    assert snap.admission.held == {"a"} and snap.admission.draining == frozenset()
    admitted = dataclasses.replace(snap.podgroups["a/j"], phase=PodGroupPhase.INQUEUE)
    result = run_session(snap.with_podgroups([admitted]), now=100.0)
    status = result.podgroups["a/j"]
    assert status.phase == PodGroupPhase.PENDING and "stopPolicy Hold: the reservation" in status.message
    assert result.evictions == [] and result.podgroups["a/podgroup-r0"].phase == PodGroupPhase.RUNNING


def test_the_kueue_export_writes_the_levers_back() -> None:
    """``fairway export --format kueue`` of a tree read with the levers reads back to the same levers."""
    import yaml

    from engine.manifests.export import export_trees

    levers = (
        "  queueingStrategy: StrictFIFO\n  stopPolicy: HoldAndDrain\n"
        "  namespaceSelector: {matchLabels: {team: a}, matchExpressions: [{key: env, operator: NotIn, values: [x]}]}\n"
        "  admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}\n"
    )
    afs = config("admissionFairSharing: {usageHalfLifeTime: 1h}\n")
    snap = load(FLAVOR + cq("a", "2", levers) + cq("b", "2") + afs).snapshot
    # the Configuration is not a tree object: given again beside the export
    again = load(yaml.safe_dump_all(export_trees(snap, "kueue")) + afs).snapshot.admission
    assert again.strict_fifo == {"a"} and again.draining == {"a"} and again.fair_sharing_queues == {"a"}
    assert again.namespace_selectors == snap.admission.namespace_selectors
    assert "b" not in again.namespace_selectors


def test_a_pods_workload_priority_class_is_its_podgroups_priority() -> None:
    pod = """---
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: a
  labels: {kueue.x-k8s.io/queue-name: lq, kueue.x-k8s.io/priority-class: top}
spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
"""
    wpc = "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: top}\nvalue: -5\n"
    snap = load(FLAVOR + cq("a", "2") + lq("a", "a") + wpc + pod).snapshot
    assert snap.podgroups["a/podgroup-p"].priority == -5
    assert snap.tasks["a/p"].priority == 0  # the pod's own priority (its PriorityClass) is left as it is


def test_without_an_enqueue_action_allocate_still_refuses_other_namespaces() -> None:
    policy = """---
apiVersion: v1
kind: ConfigMap
metadata: {name: volcano-scheduler-configmap, namespace: volcano-system}
data:
  volcano-scheduler.conf: |
    actions: "allocate, backfill"
    tiers:
    - plugins: [{name: priority}, {name: gang}]
    - plugins: [{name: predicates}, {name: capacity}]
"""
    text = (
        nodes(4)
        + FLAVOR
        + cq("a", "4", "  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: a}}\n")
        + lq("a", "a")
        + lq("b", "a")
        + job("a", "mine", 1, 0)
        + job("b", "theirs", 1, 1)
        + policy
    )
    result = run_session(load(text).snapshot, now=100.0)
    assert [b.task for b in result.bindings] == ["a/mine-0"]
    assert "does not match kubernetes.io/metadata.name=a: jobs of" in result.podgroups["b/theirs"].message
