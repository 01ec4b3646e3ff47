"""Kueue's LocalQueues stored beside the trees drive Admission Fair Sharing in the live sessions as ``fairway
simulate`` does on the same objects (issue 28 items 5 and 9): the adapter imports the LocalQueues with their weights
and Kueue's recorded usage, each job keeps its LocalQueue, the live session admits the lighter LocalQueue's job first
as simulate does, the usage the sessions keep (one row per cluster and LocalQueue) carries the entry penalty of an
admission into the next session, and the Kueue export of the stored trees writes the LocalQueues back with their
weights so that simulate on it admits the same jobs.

The setup is Kueue's own (``site/content/en/docs/concepts/admission_fair_sharing.md`` and the scheduler's
admission-fair-sharing cases): two LocalQueues of one ClusterQueue whose ``admissionScope`` is
``UsageBasedAdmissionFairSharing``, room for one of two waiting jobs, the one of the LocalQueue with less usage per
weight admitted first even when it came later."""

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

NODES = """---
apiVersion: v1
kind: Node
metadata: {name: n0}
status:
  allocatable: {cpu: "8", memory: 64Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kueue-manager-config, namespace: kueue-system}
data:
  controller_manager_config.yaml: |
    apiVersion: config.kueue.x-k8s.io/v1beta2
    kind: Configuration
    admissionFairSharing:
      usageHalfLifeTime: 168h
      usageSamplingInterval: 5m
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: shared}
spec:
  namespaceSelector: {}
  admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: "4"}
"""


def _local_queue(namespace: str, weight: str | None = None, consumed: str | None = None) -> str:
    spec = "{clusterQueue: shared" + (f', fairSharing: {{weight: "{weight}"}}' if weight else "") + "}"
    status = (
        f'status: {{fairSharing: {{admissionFairSharingStatus: {{consumedResources: {{cpu: "{consumed}"}}}}}}}}\n'
        if consumed
        else ""
    )
    return f"""---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq-{namespace}, namespace: {namespace}}}
spec: {spec}
{status}"""


def _pod(namespace: str, name: str, cpu: int, second: int) -> str:
    return f"""---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}
  creationTimestamp: "2026-01-01T00:00:{second:02d}Z"
  labels: {{kueue.x-k8s.io/queue-name: lq-{namespace}}}
spec: {{schedulerName: fairway, containers: [{{name: c, resources: {{requests: {{cpu: "{cpu}"}}}}}}]}}
"""


# a's 3-cpu job came first, b's second; the ClusterQueue has room for one
JOBS = _pod("team-a", "ja", 3, 0) + _pod("team-b", "jb", 3, 1)


def _simulated(text: str) -> set[str]:
    doc = simulate(load_manifests([("in.yaml", text)]).snapshot, now=1_000.0).document
    return set(doc["bindings"])


def _live(cluster: Any) -> set[str]:
    from scheduling import sessions
    from scheduling.models import Pod

    sessions.run_scheduling_session(cluster)
    return {
        f"{ns}/{name}"
        for ns, name, status in Pod.objects.filter(cluster=cluster).values_list("namespace__name", "name", "status")
        if status in ("Bound", "Binding", "Allocated", "Running")
    }


@pytest.fixture
def kueue_cluster(db: Any) -> Any:
    from quotas import services
    from scheduling.models import Cluster

    services.ensure_builtins()
    return Cluster.objects.create(
        name="kq", source="kubernetes", tree_source="kubernetes", scheduler_policy=KUEUE_POLICY.to_yaml()
    )


def _import(cluster: Any, text: str) -> None:
    from scheduling.kube.mirror_in import mirror

    report = mirror(cluster, list(yaml.safe_load_all(text)), timezone.now())
    assert not report.problems, report.problems
    cluster.refresh_from_db()


@pytest.mark.parametrize(
    ("a", "b", "first"),
    [
        # Kueue's documented case: a used 30 cpu lately, b 10: b's later job goes first
        (("1", "30"), ("1", "10"), "team-b/jb"),
        # b's weight a quarter of a's: its usage counts four times (40 > 30), a's job goes first
        (("1", "30"), ("250m", "10"), "team-a/ja"),
        # a's weight 0: admitted last whatever its usage
        (("0", None), ("1", "10"), "team-b/jb"),
    ],
)
def test_the_live_session_orders_local_queues_by_usage_as_simulate_does(
    kueue_cluster: Any, a: tuple[str, str | None], b: tuple[str, str | None], first: str
) -> None:
    from quotas.models import LocalQueue
    from scheduling.models import LocalQueueUsage, PodGroup

    text = NODES + _local_queue("team-a", *a) + _local_queue("team-b", *b) + JOBS
    _import(kueue_cluster, text)
    stored = {str(row): row.weight for row in LocalQueue.objects.all()}
    assert stored == {"team-a/lq-team-a": a[0], "team-b/lq-team-b": "0.25" if b[0] == "250m" else b[0]}
    assert set(PodGroup.objects.values_list("local_queue", flat=True)) == {"lq-team-a", "lq-team-b"}
    seeded = {str(u.local_queue): u.consumed for u in LocalQueueUsage.objects.filter(cluster=kueue_cluster)}
    assert seeded == {f"{ns}/lq-{ns}": {"cpu": int(c) * 1000} for ns, c in (("team-a", a[1]), ("team-b", b[1])) if c}
    simulated = _simulated(text)
    assert simulated == {first}
    assert _live(kueue_cluster) == simulated


def test_without_the_stored_usage_the_older_job_goes_first(kueue_cluster: Any) -> None:
    """The control of the case above: the LocalQueues' recorded usage is what puts b's later job first."""
    from scheduling.models import LocalQueueUsage

    _import(kueue_cluster, NODES + _local_queue("team-a", "1", "30") + _local_queue("team-b", "1", "10") + JOBS)
    LocalQueueUsage.objects.all().delete()
    assert _live(kueue_cluster) == {"team-a/ja"}


def test_the_usage_kept_across_sessions_carries_an_admission_into_the_next(kueue_cluster: Any) -> None:
    """No recorded usage. First session: a's job a1, the only one waiting, is admitted, and its entry penalty is kept
    on lq-team-a. Second session (a1 gone): a2 came before b1, but lq-team-a's kept penalty
    puts b1 first. Without the kept usage both LocalQueues would be at 0 and a2, the older, would go first."""
    from scheduling.feed import mirror as feed
    from scheduling.models import LocalQueueUsage

    base = NODES + _local_queue("team-a") + _local_queue("team-b")
    _import(kueue_cluster, base + _pod("team-a", "a1", 3, 0))
    assert _live(kueue_cluster) == {"team-a/a1"}
    (kept,) = LocalQueueUsage.objects.filter(cluster=kueue_cluster, local_queue__name="lq-team-a")
    # alpha = 1 - 0.5^(5m / 168h): the 3-cpu job's entry penalty, in millicores
    alpha = 1 - 0.5 ** (300 / (168 * 3600))
    assert kept.penalty == {"cpu": round(alpha * 3000)} and kept.penalty["cpu"] > 0
    # a1 finished and went; a2 (older) and b1 wait, room for one
    _import(kueue_cluster, base + _pod("team-a", "a2", 3, 2) + _pod("team-b", "b1", 3, 3))
    feed.forget(kueue_cluster.pk)  # a restart (or another worker): the kept usage is in the rows, not the process
    assert _live(kueue_cluster) == {"team-b/b1"}


def test_the_kueue_export_of_the_stored_local_queues_simulates_to_the_same_admissions(kueue_cluster: Any) -> None:
    from scheduling import store

    text = NODES + _local_queue("team-a", "1") + _local_queue("team-b", "250m") + JOBS
    _import(kueue_cluster, text)
    docs = export_trees(store.load_snapshot(kueue_cluster), "kueue")
    local = {(d["metadata"]["namespace"], d["metadata"]["name"]): d["spec"] for d in docs if d["kind"] == "LocalQueue"}
    assert local == {
        ("team-a", "lq-team-a"): {"clusterQueue": "shared"},
        ("team-b", "lq-team-b"): {"clusterQueue": "shared", "fairSharing": {"weight": "0.25"}},
    }
    # with the recorded usage Kueue keeps in the LocalQueues' status (the export writes specs, not status)
    usage = {"lq-team-a": "30", "lq-team-b": "10"}
    for d in docs:
        if d["kind"] == "LocalQueue":
            d["status"] = {
                "fairSharing": {
                    "admissionFairSharingStatus": {"consumedResources": {"cpu": usage[d["metadata"]["name"]]}}
                }
            }
    config = [d for d in yaml.safe_load_all(NODES) if d["kind"] in ("Node", "ConfigMap")]
    exported = yaml.safe_dump_all(config + docs, sort_keys=False) + JOBS
    original = NODES + _local_queue("team-a", "1", "30") + _local_queue("team-b", "250m", "10") + JOBS
    assert _simulated(exported) == _simulated(original) == {"team-a/ja"}


def test_a_later_session_samples_the_kept_usage_with_the_half_life(kueue_cluster: Any) -> None:
    """Kueue's LocalQueue controller, in the live sessions: once the sampling interval has passed, a LocalQueue's
    consumed resources decay towards what its admitted jobs hold, and the entry penalties are dropped. One half-life
    (168h) after the last sample, with a's 3-cpu job running: half of 0 plus half of 3 cpu."""
    from datetime import timedelta

    from scheduling.models import LocalQueueUsage

    _import(kueue_cluster, NODES + _local_queue("team-a") + _local_queue("team-b") + _pod("team-a", "a1", 3, 0))
    assert _live(kueue_cluster) == {"team-a/a1"}
    rows = LocalQueueUsage.objects.filter(cluster=kueue_cluster, local_queue__name="lq-team-a")
    (kept,) = rows
    assert kept.consumed == {} and kept.penalty["cpu"] > 0
    rows.update(sampled=kept.sampled - timedelta(hours=168))
    _live(kueue_cluster)
    (sampled,) = rows.all()
    assert (sampled.consumed, sampled.penalty) == ({"cpu": 1500}, {})
    assert sampled.sampled > kept.sampled  # sampled now: the next sample is one interval away


def test_a_local_queue_the_readers_refuse_keeps_its_row_and_a_deleted_one_goes(kueue_cluster: Any) -> None:
    from quotas.models import LocalQueue
    from scheduling.kube.mirror_in import mirror

    _import(kueue_cluster, NODES + _local_queue("team-a", "2") + _local_queue("team-b"))
    bad = NODES + _local_queue("team-a", "-1") + _local_queue("team-b")
    report = mirror(kueue_cluster, list(yaml.safe_load_all(bad)), timezone.now())
    (problem,) = report.problems.items()
    assert problem[0] == ("LocalQueue", "team-a", "lq-team-a") and "must not be negative" in problem[1], problem
    assert dict(LocalQueue.objects.values_list("name", "weight")) == {"lq-team-a": "2", "lq-team-b": "1"}
    _import(kueue_cluster, NODES + _local_queue("team-b"))
    assert list(LocalQueue.objects.values_list("name", flat=True)) == ["lq-team-b"]


def test_the_what_if_orders_local_queues_by_their_kept_usage(kueue_cluster: Any, admin_api: Any) -> None:
    """The what-if's sessions read the LocalQueues' kept usage as the live ones do. Before the proposal the
    ClusterQueue has room for one job: the lighter LocalQueue's (b, 10 cpu used lately, later job) is admitted, so
    raising the quota to room for both admits a's job in the session after. Without the kept usage the older job (a's)
    would be the one admitted before, and b's the one the proposal admits."""
    from scheduling.models import LocalQueueUsage

    _import(kueue_cluster, NODES + _local_queue("team-a", "1", "30") + _local_queue("team-b", "1", "10") + JOBS)
    change = {
        "op": "update",
        "kind": "queue",
        "name": "shared",
        "spec": {"deserved": {"cpu": "6"}, "capability": {"cpu": "6"}},
    }
    body = {"cluster": kueue_cluster.name, "changes": [change], "session": True}

    def admitted_by_the_proposal() -> set[str]:
        r = admin_api.post("/api/v1/whatif/", body, format="json")
        assert r.status_code == 200, r.json()
        changed = r.json()["impact"]["podgroups"]
        return {key for key, c in changed.items() if c["after"]["placed"] > c["before"]["placed"]}

    assert admitted_by_the_proposal() == {"team-a/podgroup-ja"}
    LocalQueueUsage.objects.all().delete()  # the control: no kept usage, the older job goes first
    assert admitted_by_the_proposal() == {"team-b/podgroup-jb"}


def test_the_what_if_page_reads_the_kept_usage_too(kueue_cluster: Any) -> None:
    """The what-if page's impact (``frontend.presenters.impact``) on the same proposal: a's job is the one it admits."""
    from frontend.presenters import impact
    from planning import whatif

    _import(kueue_cluster, NODES + _local_queue("team-a", "1", "30") + _local_queue("team-b", "1", "10") + JOBS)
    before, values = whatif.state_of(kueue_cluster)
    spec = {"deserved": {"cpu": "6"}, "capability": {"cpu": "6"}}
    change = {"op": "update", "kind": "queue", "name": "shared", "spec": spec}
    after = whatif.evaluate(before, values, [change]).after
    rows = impact.impact(before, after, kueue_cluster)
    assert [r["key"] for r in rows["admitted"]] == ["team-a/podgroup-ja"]
