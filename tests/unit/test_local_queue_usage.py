"""The usage Admission Fair Sharing keeps per LocalQueue across live sessions (``engine.localqueues``), against Kueue's
formulas: a sample once the sampling interval has passed decays the consumed resources towards what the admitted jobs
hold (``consumed x (1 - a) + admitted x a``, ``a = 1 - 0.5^(elapsed / half-life)``, Kueue's
``CalculateDecayedConsumed``) and drops the entry penalties; an admission adds ``alpha x`` its requests at once
(``CalculateEntryPenalty``); the session reads consumed plus penalty with the LocalQueue's weight (``CalculateUsage``).
And the Kueue export writes the LocalQueues a snapshot keeps, with their weights."""

from __future__ import annotations

from fractions import Fraction

from engine.admission import AdmissionFairSharing, LocalQueueSpec, LocalQueueUsage
from engine.localqueues import (
    LocalQueueState,
    admitted_usage,
    newly_admitted,
    sample,
    usage_table,
    with_penalties,
)
from engine.manifests import load_manifests
from engine.manifests.export import export_trees

HOUR = 3600.0
FAIR = AdmissionFairSharing(half_life=HOUR, sampling_interval=300.0)
A, B = ("team-a", "lq"), ("team-b", "lq")


def test_a_sample_decays_towards_the_admitted_usage_with_the_half_life() -> None:
    record = {A: LocalQueueState({"cpu": 8000}, {"cpu": 400}, updated=0.0)}
    # one half-life later: half the old usage and half of what its admitted jobs hold (2 cpu); the penalty is settled
    out = sample(record, {A: {"cpu": 2000}}, [A], HOUR, FAIR)
    assert out == {A: LocalQueueState({"cpu": 5000}, {}, HOUR)}
    # two half-lives with nothing admitted: a quarter left
    assert sample(record, {}, [A], 2 * HOUR, FAIR)[A].consumed == {"cpu": 2000}


def test_no_sample_before_the_sampling_interval_and_a_first_sample_only_starts_the_clock() -> None:
    record = {A: LocalQueueState({"cpu": 8000}, {"cpu": 400}, updated=100.0)}
    assert sample(record, {A: {"cpu": 2000}}, [A], 100.0 + 299.0, FAIR) == record  # 5 minutes not passed yet
    seeded = {A: LocalQueueState({"cpu": 30000})}  # from Kueue's status: never sampled here
    assert sample(seeded, {}, [A, B], 50.0, FAIR) == {
        A: LocalQueueState({"cpu": 30000}, {}, 50.0),
        B: LocalQueueState({}, {}, 50.0),  # a new LocalQueue starts at 0
    }


def test_a_half_life_of_0_forgets_at_each_sample_and_a_deleted_local_queue_is_forgotten() -> None:
    record = {A: LocalQueueState({"cpu": 8000}, {"cpu": 400}, 0.0), B: LocalQueueState({"cpu": 1}, {}, 0.0)}
    out = sample(record, {A: {"cpu": 2000}}, [A], 600.0, AdmissionFairSharing(half_life=0.0))
    assert out == {A: LocalQueueState({}, {}, 600.0)}


def test_an_admission_adds_its_entry_penalty_at_once_and_the_session_reads_consumed_plus_penalty() -> None:
    alpha = 1 - 0.5 ** (300 / 3600)
    record = with_penalties({A: LocalQueueState({"cpu": 1000}, {}, 0.0)}, [(A, {"cpu": 3000, "pods": 1})], FAIR)
    assert record[A].penalty == {"cpu": round(alpha * 3000)}
    specs = [LocalQueueSpec("team-a", "lq", "shared", Fraction(1, 2)), LocalQueueSpec("team-b", "lq", "shared")]
    assert usage_table(record, specs) == {
        A: LocalQueueUsage(Fraction(1, 2), {"cpu": 1000 + round(alpha * 3000)}),
        B: LocalQueueUsage(Fraction(1), {}),
    }


def test_the_admitted_usage_and_the_jobs_admitted_by_a_session() -> None:
    jobs = [(A, "Running", {"cpu": 2000, "pods": 2}), (A, "Inqueue", {"cpu": 1000}), (B, "Pending", {"cpu": 5000})]
    assert admitted_usage(jobs) == {A: {"cpu": 3000}}
    before = {"ns/a": "Pending", "ns/b": "Pending", "ns/c": "Inqueue"}
    after = {"ns/a": "Inqueue", "ns/b": "Pending", "ns/c": "Running"}
    assert newly_admitted(before, after) == ["ns/a"]


LOCAL_QUEUES = """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: shared}
spec:
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: "4"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: research, namespace: team-a}
spec: {clusterQueue: shared, fairSharing: {weight: "750m"}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: team-b}
spec: {clusterQueue: shared}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-c, annotations: {scheduling.volcano.sh/queue-name: shared}}
"""


def test_the_kueue_export_writes_the_local_queues_with_their_weights() -> None:
    snapshot = load_manifests([("in.yaml", LOCAL_QUEUES)]).snapshot
    docs = export_trees(snapshot, "kueue")
    local = {(d["metadata"]["namespace"], d["metadata"]["name"]): d["spec"] for d in docs if d["kind"] == "LocalQueue"}
    assert local == {
        ("team-a", "research"): {"clusterQueue": "shared", "fairSharing": {"weight": "0.75"}},
        ("team-b", "lq"): {"clusterQueue": "shared"},
        ("team-c", "default"): {"clusterQueue": "shared"},  # a namespace without one keeps its `default`
    }
    again = load_manifests([("out.yaml", "".join(f"---\n{_dump(d)}" for d in docs))]).snapshot
    # read back: the same LocalQueues and weights, and team-c's `default` is now one of them
    assert again.admission.local_queue_specs == (
        LocalQueueSpec("team-a", "research", "shared", Fraction(3, 4)),
        LocalQueueSpec("team-b", "lq", "shared"),
        LocalQueueSpec("team-c", "default", "shared"),
    )
    assert snapshot.admission.local_queue_specs == again.admission.local_queue_specs[:2]


def _dump(doc: object) -> str:
    import yaml

    return yaml.safe_dump(doc, sort_keys=False)
