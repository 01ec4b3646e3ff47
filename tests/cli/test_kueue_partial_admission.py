"""Kueue's partial admission (``kueue.x-k8s.io/job-min-parallelism``; ``engine.partial``) through ``fairway simulate``:
the count a Job is admitted with, a Job whose least count does not fit, two Jobs sized on one quota, the annotation's
checks, and the pods of a multi-pod workload pipelined beside the victims Kueue's preemption takes for the rest.

Kueue's own cases (``TestSchedule``'s partial admission rows, its example ``sample-job-partial-admission.yaml``) are in
``test_kueue_scheduler_table.py`` and ``test_kueue_examples.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controlplane.cli import main
from engine.manifests import load_manifests
from engine.objects import PodGroupInfo, TaskInfo
from engine.partial import PartialAdmission, _largest
from engine.vocabulary import PodGroupPhase, TaskStatus


def cluster(cpu: int, nodes: int = 1, node_cpu: int = 64, preemption: str = "") -> str:
    """One ClusterQueue ``cq`` of ``cpu`` cores (``preemption``: its ``spec.preemption``) and its LocalQueue, on
    ``nodes`` nodes of ``node_cpu`` cores."""
    spec = f"preemption: {preemption}, " if preemption else ""
    docs = [
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: default}",
        f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: cq}}\nspec: {{{spec}"
        f"resourceGroups: [{{coveredResources: [cpu], flavors: [{{name: default, resources: [{{name: cpu, "
        f"nominalQuota: {cpu}}}]}}]}}]}}",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: team}\n"
        "spec: {clusterQueue: cq}",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: -10",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 10",
    ]
    docs += [
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\n"
        f"status: {{allocatable: {{cpu: '{node_cpu}', memory: 256Gi, pods: '500'}}}}"
        for i in range(nodes)
    ]
    return "".join(f"---\n{d}\n" for d in docs)


def job(
    name: str,
    pods: int,
    least: str | None = None,
    cpu: str = "1",
    completions: int | None = None,
    second: int = 0,
    priority: str = "high",
) -> str:
    annotations = f", annotations: {{kueue.x-k8s.io/job-min-parallelism: '{least}'}}" if least is not None else ""
    more = f", completions: {completions}" if completions is not None else ""
    return (
        f"---\napiVersion: batch/v1\nkind: Job\nmetadata: {{name: {name}, namespace: team, "
        f'creationTimestamp: "2026-01-01T00:00:{second:02d}Z", labels: {{kueue.x-k8s.io/queue-name: lq}}'
        f"{annotations}}}\nspec: {{parallelism: {pods}{more}, template: {{spec: {{priorityClassName: {priority}, "
        f"containers: [{{name: c, resources: {{requests: {{cpu: '{cpu}'}}}}}}]}}}}}}\n"
    )


def running(name: str, pods: int, cpu: str = "1") -> str:
    """``pods`` admitted workloads of one Running pod each, of low priority, on ``n0``."""
    return "".join(
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}-{i}, namespace: team, "
        'creationTimestamp: "2026-01-01T00:00:00Z", labels: {kueue.x-k8s.io/queue-name: lq}}\n'
        f"spec: {{nodeName: n0, priorityClassName: low, containers: [{{name: c, resources: {{requests: "
        f"{{cpu: '{cpu}'}}}}}}]}}\nstatus: {{phase: Running, startTime: '2026-01-01T00:00:00Z'}}\n"
        for i in range(pods)
    )


def simulate(tmp_path: Path, capsys: Any, text: str, *more: str) -> tuple[int, dict[str, Any] | str]:
    path = tmp_path / "in.yaml"
    path.write_text(text)
    code = main(["simulate", "-f", str(path), "-o", "json", *more])
    out = capsys.readouterr()
    return code, (json.loads(out.out) if code == 0 else out.err)


def bound_of(doc: dict[str, Any], name: str) -> int:
    return sum(1 for pod in doc["bindings"] if pod.startswith(f"team/{name}-"))


def test_a_job_is_admitted_with_the_most_pods_that_fit(tmp_path: Path, capsys: Any) -> None:
    code, doc = simulate(tmp_path, capsys, cluster(7) + job("train", 12, "3"))
    assert code == 0 and isinstance(doc, dict)
    assert bound_of(doc, "train") == 7
    entry = doc["podgroups"]["team/train"]["partialAdmission"]
    assert entry == {
        "count": 12,
        "minCount": 3,
        "admittedCount": 7,
        "sizing": "all 12 pods: does not fit; 7 pods (the most from 3 up): fits",
    }


def test_a_job_that_fits_whole_is_admitted_whole(tmp_path: Path, capsys: Any) -> None:
    code, doc = simulate(tmp_path, capsys, cluster(20) + job("train", 12, "3"))
    assert code == 0 and isinstance(doc, dict)
    assert bound_of(doc, "train") == 12
    assert doc["podgroups"]["team/train"]["partialAdmission"]["admittedCount"] == 12
    assert doc["podgroups"]["team/train"]["partialAdmission"]["sizing"] == "all 12 pods: fits"


def test_a_job_whose_least_count_does_not_fit_waits_whole(tmp_path: Path, capsys: Any) -> None:
    code, doc = simulate(tmp_path, capsys, cluster(2) + job("train", 12, "3"))
    assert code == 0 and isinstance(doc, dict)
    assert bound_of(doc, "train") == 0
    entry = doc["podgroups"]["team/train"]["partialAdmission"]
    assert entry["admittedCount"] is None
    assert entry["sizing"] == "all 12 pods: does not fit; no count from 3 up may be admitted: it waits for all 12"


def test_without_the_annotation_the_job_waits_for_all_its_pods(tmp_path: Path, capsys: Any) -> None:
    code, doc = simulate(tmp_path, capsys, cluster(7) + job("train", 12))
    assert code == 0 and isinstance(doc, dict)
    assert bound_of(doc, "train") == 0
    assert "partialAdmission" not in doc["podgroups"]["team/train"]


def test_two_jobs_sized_on_one_quota_the_second_waits_and_is_sized_again(tmp_path: Path, capsys: Any) -> None:
    # both are sized on the 7 free cores (Kueue nominates on one snapshot); the older takes them, the other waits
    # whole, and in the next session it is sized on what is left: nothing from 3 up
    text = cluster(7) + job("first", 12, "3") + job("second", 12, "3", second=1)
    code, doc = simulate(tmp_path, capsys, text, "--sessions", "2")
    assert code == 0 and isinstance(doc, dict)
    assert bound_of(doc, "first") == 7
    assert bound_of(doc, "second") == 0
    second = doc["podgroups"]["team/second"]["partialAdmission"]
    assert second["admittedCount"] is None
    assert second["sizing"].endswith("no count from 3 up may be admitted: it waits for all 12")


def test_completions_below_parallelism_are_the_jobs_pods(tmp_path: Path, capsys: Any) -> None:
    code, doc = simulate(tmp_path, capsys, cluster(20) + job("train", 12, "3", completions=5))
    assert code == 0 and isinstance(doc, dict)
    assert bound_of(doc, "train") == 5
    assert doc["podgroups"]["team/train"]["partialAdmission"]["count"] == 5


@pytest.mark.parametrize(
    ("least", "pods", "completions", "error"),
    [
        ("many", 12, None, "metadata.annotations.kueue.x-k8s.io/job-min-parallelism: 'many' is not a whole number"),
        ("0", 12, None, "metadata.annotations.kueue.x-k8s.io/job-min-parallelism: 0 should be between 1 and 11"),
        ("12", 12, None, "metadata.annotations.kueue.x-k8s.io/job-min-parallelism: 12 should be between 1 and 11"),
        ("5", 12, 5, "metadata.annotations.kueue.x-k8s.io/job-min-parallelism: 5 should be between 1 and 4"),
    ],
)
def test_a_bad_minimum_is_refused_naming_the_annotation(
    tmp_path: Path, capsys: Any, least: str, pods: int, completions: int | None, error: str
) -> None:
    code, err = simulate(tmp_path, capsys, cluster(7) + job("train", pods, least, completions=completions))
    assert code == 2
    assert error in str(err)
    assert "Job team/train" in str(err)


def test_a_multi_pod_workload_preempts_for_the_pods_the_free_room_lacks(tmp_path: Path, capsys: Any) -> None:
    # 20 cores of quota, 10 held by a low-priority workload: a high-priority Job of 20 one-core pods fits once it is gone.
    # Kueue preempts for the whole workload; the session pipelines the 10 pods that fit the free room and evicts the
    # victim for the other 10 (with or without partial admission: the whole Job comes first)
    for least in (None, "5"):
        text = cluster(20, node_cpu=20, preemption="{withinClusterQueue: LowerPriority}")
        text += running("old", 1, cpu="10") + job("new", 20, least)
        code, doc = simulate(tmp_path, capsys, text)
        assert code == 0 and isinstance(doc, dict)
        assert doc["evictions"] == ["team/old-0"]
        assert sum(1 for pod in doc["pipelined"] if pod.startswith("team/new-")) == 20


@pytest.mark.parametrize("full", [2, 3, 7, 20, 50])
def test_the_bisection_finds_the_largest_count_that_is_admitted(full: int) -> None:
    for least in range(1, full):
        for threshold in range(0, full + 1):
            asked: list[int] = []

            def admits(n: int, threshold: int = threshold, asked: list[int] = asked) -> tuple[bool, str]:
                asked.append(n)
                return n <= threshold, "fits" if n <= threshold else "does not fit"

            count, answer = _largest(full, least, admits)
            best = max((n for n in range(least, full) if n <= threshold), default=0)
            assert count == best
            assert answer == ("fits" if best else "")
            assert len(asked) <= (full - least).bit_length()  # a bisection, not a scan


def test_an_admitted_job_evicted_later_gets_its_pods_back_and_is_sized_again() -> None:
    text = cluster(7) + job("train", 12, "3")
    snapshot = load_manifests([("in.yaml", text)]).snapshot
    partial = PartialAdmission(snapshot)
    cut = partial.before(snapshot)
    kept = [t for t in cut.tasks.values() if t.podgroup == "team/train"]
    assert len(kept) == 7 and cut.podgroups["team/train"].min_member == 7
    # the session admits it: its pods on n0, the podgroup Running; the cut is kept
    placed = cut.with_tasks(t.evolve(node="n0", status=TaskStatus.RUNNING) for t in kept)
    placed = placed.with_podgroups([cut.podgroups["team/train"].evolve(phase=PodGroupPhase.RUNNING)])
    after = partial.after(placed, {"team/train"})
    assert sum(1 for t in after.tasks.values() if t.podgroup == "team/train") == 7
    assert partial.before(after) is after  # admitted: not sized again
    # evicted: Pending again, no pod on a node: its 12 pods back, sized afresh on the free quota
    evicted = after.with_tasks(
        t.evolve(node=None, status=TaskStatus.PENDING) for t in after.tasks.values() if t.podgroup == "team/train"
    )
    evicted = evicted.with_podgroups([after.podgroups["team/train"].evolve(phase=PodGroupPhase.PENDING)])
    again = partial.before(evicted)
    pods: list[TaskInfo] = [t for t in again.tasks.values() if t.podgroup == "team/train"]
    group: PodGroupInfo = again.podgroups["team/train"]
    assert len(pods) == 7 and group.min_member == 7
    assert "team/train" not in partial.admitted


def test_a_multi_pod_workload_reclaims_from_its_cohort_for_the_pods_the_free_quota_lacks(
    tmp_path: Path, capsys: Any
) -> None:
    # cq-a and cq-b lend to each other (10 cores each); cq-b borrows 5 of cq-a's for one 15-core workload. A Job of
    # 10 one-core pods in cq-a finds 5 free: Kueue reclaims cq-b's workload for the whole Job (reclaimWithinCohort:
    # Any); the 5 that fit the free quota are pipelined beside that eviction, the other 5 take what it frees
    cq = (
        "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec: {{cohortName: "
        "co, {more}resourceGroups: [{{coveredResources: [cpu], flavors: [{{name: default, resources: [{{name: cpu, "
        "nominalQuota: 10}}]}}]}}]}}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: "
        "{{name: lq, namespace: {ns}}}\nspec: {{clusterQueue: {name}}}\n"
    )
    text = "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: default}\n"
    text += cq.format(name="cq-a", ns="a", more="preemption: {reclaimWithinCohort: Any}, ")
    text += cq.format(name="cq-b", ns="b", more="")
    text += (
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: n0}\n"
        "status: {allocatable: {cpu: '64', memory: 256Gi, pods: '500'}}\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: big, namespace: b, labels: {kueue.x-k8s.io/queue-name: lq}, "
        "creationTimestamp: '2026-01-01T00:00:00Z'}\nspec: {nodeName: n0, containers: [{name: c, resources: "
        "{requests: {cpu: '15'}}}]}\nstatus: {phase: Running, startTime: '2026-01-01T00:00:00Z'}\n"
        "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: want, namespace: a, labels: "
        "{kueue.x-k8s.io/queue-name: lq}, creationTimestamp: '2026-01-01T00:01:00Z'}\nspec: {parallelism: 10, "
        "template: {spec: {containers: [{name: c, resources: {requests: {cpu: '1'}}}]}}}\n"
    )
    code, doc = simulate(tmp_path, capsys, text)
    assert code == 0 and isinstance(doc, dict)
    assert doc["evictions"] == ["b/big"]
    assert sum(1 for pod in doc["pipelined"] if pod.startswith("a/want-")) == 10
