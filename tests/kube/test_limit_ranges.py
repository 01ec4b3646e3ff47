"""A namespace's LimitRanges: the requests its pods get, and the Kueue workloads they keep pending
(``engine.manifests.limitranges``), read from manifests and live, and through the store's sessions."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from engine.manifests import load_objects
from engine.manifests.limitranges import (
    LIMIT_RANGE_WAIT,
    RESOURCES_INVALID,
    LimitRangeItem,
    read_limit_range,
    summarize,
)
from engine.resources import ResourceList
from tests.kube.conftest import node, pod
from tests.kube.test_kueue_jobs import LOCAL_QUEUE, QUEUE_LABEL, job

CLUSTER_QUEUE = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "ml"},
                 "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                     {"name": "default", "resources": [{"name": "cpu", "nominalQuota": "8"}]}]}]}}  # fmt: skip
FLAVOR = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "default"}}


def limit_range(name: str = "limits", ns: str = "team", *items: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": name, "namespace": ns},
            "spec": {"limits": list(items)}}  # fmt: skip


def bare_job(name: str, parallelism: int, container: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """``job`` with its one container's ``resources`` replaced by ``container`` (``{}``: none)."""
    out = job(name, parallelism, **spec)
    out["spec"]["template"]["spec"]["containers"][0]["resources"] = container
    return out


DEFAULTS = {"type": "Container", "default": {"cpu": "2", "memory": "1Gi"}, "defaultRequest": {"cpu": "500m"}}


# -- the items and their summary ----------------------------------------------------------------------------------


def test_an_item_is_completed_as_the_api_server_completes_it() -> None:
    """A container item's missing default limit is its max, a missing default request the default limit, else the
    min (the API server's ``SetDefaults_LimitRangeItem``; ``test_limit_ranges_real`` checks this against it)."""
    [item] = read_limit_range({"limits": [{"type": "Container", "max": {"cpu": "4", "memory": "8Gi"},
                                           "min": {"cpu": "100m", "nvidia.com/gpu": "0"},
                                           "default": {"memory": "2Gi"}}]})  # fmt: skip
    assert item.default.raw == {"cpu": 4000, "memory": 2 * 2**30}
    assert item.default_request.raw == {"cpu": 4000, "memory": 2 * 2**30, "nvidia.com/gpu": 0}
    # a Pod item is not completed, a PersistentVolumeClaim item bounds no pod
    assert read_limit_range({"limits": [{"type": "Pod", "max": {"cpu": "4"}}, {"type": "PersistentVolumeClaim"}]}) == (
        LimitRangeItem("Pod", max=ResourceList({"cpu": 4000})),
    )


def test_several_limit_ranges_are_summarized_as_kueue_does() -> None:
    """The lowest max, the highest min, the first default and default request of each resource (in name order)."""
    a = read_limit_range({"limits": [{"type": "Container", "max": {"cpu": "8"}, "min": {"cpu": "1"},
                                      "default": {"cpu": "2"}, "defaultRequest": {"cpu": "1"}}]})  # fmt: skip
    b = read_limit_range({"limits": [{"type": "Container", "max": {"cpu": "4", "memory": "4Gi"},
                                      "min": {"cpu": "2"}, "default": {"cpu": "3", "memory": "1Gi"}}]})  # fmt: skip
    c = summarize([a, b]).container
    assert c is not None
    assert (c.max.raw, c.min.raw) == ({"cpu": 4000, "memory": 4 * 2**30}, {"cpu": 2000})
    assert (c.default.raw, c.default_request.raw) == ({"cpu": 2000, "memory": 2**30}, {"cpu": 1000, "memory": 2**30})


def test_a_bad_item_is_refused_naming_its_field() -> None:
    _, invalid = load_objects([limit_range("bad", "team", {"type": "Node"})])
    assert [i.message for i in invalid] == ["spec.limits[0].type: 'Node' is not one of Container, Pod, "
                                            "PersistentVolumeClaim"]  # fmt: skip
    _, invalid = load_objects([limit_range("bad", "team", {"type": "Pod", "max": {"cpu": "lots"}})])
    assert invalid and invalid[0].message.startswith("spec.limits[0].max")


# -- what the pods and Kueue's templates are given ---------------------------------------------------------------


def test_a_suspended_job_without_requests_is_sized_with_the_defaults_live_and_in_simulate() -> None:
    """Kueue sizes the workload with the LimitRange's defaults before the Job has pods; so does Fairway, live and
    in simulate; a container's limit without a request is its request, as the API server makes it."""
    objects = [LOCAL_QUEUE, limit_range("limits", "team", DEFAULTS), bare_job("train", 4, {}, suspend=True),
               bare_job("tune", 2, {"limits": {"cpu": "3"}}, suspend=True)]  # fmt: skip
    for live in (True, False):
        result, invalid = load_objects(objects, live=live)
        assert not invalid, invalid
        groups = result.snapshot.podgroups
        assert groups["team/train"].min_resources.raw == {"cpu": 2000, "memory": 4 * 2**30}, live
        # the limit is the request (the API server's order; Kueue would count the default request of 500m here)
        assert groups["team/tune"].min_resources.raw == {"cpu": 6000, "memory": 2 * 2**30}, live
        assert not result.snapshot.admission.pod_group_waits
    # another namespace's pods are not touched; a pod read live already has what the API server gave it
    other = bare_job("train", 4, {}, ns="elsewhere", suspend=True)
    other["metadata"]["labels"] = {QUEUE_LABEL: "lq"}
    lq = {**LOCAL_QUEUE, "metadata": {"name": "lq", "namespace": "elsewhere"}}
    result, _ = load_objects([lq, limit_range("limits", "team", DEFAULTS), other], live=True)
    assert result.snapshot.podgroups["elsewhere/train"].min_resources.raw == {}
    bare = pod("team", "p", scheduler="fairway")
    bare["spec"]["containers"][0].pop("resources", None)
    live_pod, _ = load_objects([limit_range("limits", "team", DEFAULTS), bare], live=True)
    assert live_pod.snapshot.tasks["team/p"].request.raw == {}
    offline, _ = load_objects([limit_range("limits", "team", DEFAULTS), bare])
    assert offline.snapshot.tasks["team/p"].request.raw == {"cpu": 500, "memory": 2**30}


def test_a_job_outside_the_ranges_waits_with_kueues_words_and_a_pod_outside_them_is_refused() -> None:
    ranges = limit_range("limits", "team", {"type": "Container", "max": {"cpu": "2"}},
                         {"type": "Pod", "min": {"memory": "1Gi"}})  # fmt: skip
    big = bare_job("big", 2, {"requests": {"cpu": "3", "memory": "2Gi"}, "limits": {"cpu": "3"}}, suspend=True)
    for live in (True, False):
        result, invalid = load_objects([LOCAL_QUEUE, ranges, big, job("fine", 1, suspend=True)], live=live)
        assert [i.name for i in invalid] == [], invalid
        waits = dict(result.snapshot.admission.pod_group_waits)
        assert waits["team/big"] == (
            f"{LIMIT_RANGE_WAIT}: spec.template.spec.containers[0]: cpu (2 cores): requests must not be above the "
            "LimitRange max"
        )
        # the fine Job asks for 1 core (under the max) and its default limit of 2; no memory: below the pod's min
        assert waits["team/fine"] == (
            f"{LIMIT_RANGE_WAIT}: the pod: memory (1 GiB): requests must not be below the LimitRange min"
        )
        if live:
            assert result.kueue_jobs["team/big"].stored()["limitRange"] == waits["team/big"]
    # a request above the limit the LimitRange gives it
    over = bare_job("over", 1, {"requests": {"cpu": "3"}}, suspend=True)
    result, _ = load_objects([LOCAL_QUEUE, limit_range("limits", "team", DEFAULTS), over], live=True)
    assert dict(result.snapshot.admission.pod_group_waits)["team/over"].endswith(
        "containers[0]: cpu: requests must not exceed its limits"
    )
    # a pod from manifests outside the ranges: the API server would refuse it
    too_big = pod("team", "p", scheduler="fairway", cpu="3")
    _, invalid = load_objects([ranges, too_big])
    assert [(i.kind, i.name) for i in invalid] == [("Pod", "p")]
    assert "requests must not be above the LimitRange max" in invalid[0].message
    assert "the API server's LimitRanger refuses such a pod" in invalid[0].message


def test_a_pod_range_counts_the_overhead_for_kueue_and_the_limits_for_the_api_server() -> None:
    """Type Pod: Kueue checks a workload's templates by their request, a RuntimeClass's overhead included, against
    both bounds; the API server's LimitRanger checks a pod's limits against the max and its requests against the
    min, its overhead in neither (tests/kube/real/test_apiserver.py checks the real one)."""
    from tests.unit.test_manifests import KATA

    ranges = limit_range("limits", "team", {"type": "Pod", "max": {"cpu": "1"}})
    within = {"requests": {"cpu": "900m"}, "limits": {"cpu": "900m"}}
    suspended = bare_job("kata", 1, within, suspend=True)
    suspended["spec"]["template"]["spec"]["runtimeClassName"] = "kata"
    result, invalid = load_objects([KATA, LOCAL_QUEUE, ranges, suspended])
    assert not invalid and dict(result.snapshot.admission.pod_group_waits)["team/kata"] == (
        f"{LIMIT_RANGE_WAIT}: the pod: cpu (1 core): requests must not be above the LimitRange max"
    )  # 900m + 250m of overhead
    kata_pod = pod("team", "p", scheduler="fairway", cpu="900m")
    kata_pod["spec"]["runtimeClassName"] = "kata"
    kata_pod["spec"]["containers"][0]["resources"]["limits"] = {"cpu": "900m"}
    result, invalid = load_objects([KATA, ranges, kata_pod])
    assert not invalid and result.snapshot.tasks["team/p"].request.raw["cpu"] == 1150  # admitted, overhead counted
    loose = pod("team", "q", scheduler="fairway", cpu="500m")
    loose["spec"]["containers"][0]["resources"]["limits"] = {"cpu": "1500m"}
    _, invalid = load_objects([ranges, loose])
    assert [i.message for i in invalid] == [
        "the pod: the maximum cpu of a pod is 1 core, but its limit is 1.5 cores (the API server's LimitRanger "
        "refuses such a pod)"
    ]


def test_a_jobset_outside_the_ranges_waits_in_simulate() -> None:
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
              "metadata": {"name": "js", "namespace": "team", "labels": {QUEUE_LABEL: "lq"}},
              "spec": {"replicatedJobs": [{"name": "w", "replicas": 1, "template": {"spec": {"parallelism": 2,
                       "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}}}]}}  # fmt: skip
    result, invalid = load_objects([LOCAL_QUEUE, limit_range("limits", "team", DEFAULTS), jobset])
    assert not invalid, invalid
    assert result.snapshot.podgroups["team/js"].min_resources.raw == {"cpu": 1000, "memory": 2 * 2**30}
    assert not result.snapshot.admission.pod_group_waits
    ranges = limit_range("limits", "team", {"type": "Container", "min": {"cpu": "1"}, "defaultRequest": {"cpu": "1"},
                                            "max": {"memory": "512Mi"}, "default": {"memory": "1Gi"}})  # fmt: skip
    result, _ = load_objects([LOCAL_QUEUE, ranges, jobset])
    why = dict(result.snapshot.admission.pod_group_waits)["team/js"]
    assert why.startswith(f"{LIMIT_RANGE_WAIT}: spec.replicatedJobs[0]") and "memory (512 MiB)" in why


# -- live, through the store's sessions ----------------------------------------------------------------------------


@pytest.mark.django_db
def test_live_a_job_outside_the_ranges_is_never_admitted_and_one_within_is_resumed_with_the_defaults() -> None:
    from scheduling import sessions
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import PodGroup
    from tests.kube.test_kueue_jobs import _world

    cluster = _world()
    ranges = limit_range("limits", "team", {**DEFAULTS, "max": {"cpu": "2"}})
    objects = [node("n1"), LOCAL_QUEUE, ranges, bare_job("train", 2, {}, suspend=True),
               bare_job("big", 1, {"requests": {"cpu": "3"}, "limits": {"cpu": "3"}}, suspend=True)]  # fmt: skip
    report = mirror(cluster, objects, timezone.now())
    assert not report.problems, report.problems
    big, train = PodGroup.objects.get(cluster=cluster, name="big"), PodGroup.objects.get(cluster=cluster, name="train")
    assert big.kueue_job["limitRange"].startswith(LIMIT_RANGE_WAIT)
    assert train.min_resources == {"cpu": 1000, "memory": 2 * 2**30}
    for _ in range(2):
        assert sessions.run_scheduling_session(cluster).status == "ok"
    big.refresh_from_db()
    train.refresh_from_db()
    assert train.phase == "Inqueue", (train.phase, train.message)
    assert big.phase == "Pending" and "requests must not be above the LimitRange max" in big.message, big.message
    # the LimitRange raised: the next read of the Job lets it in
    mirror(cluster, [*objects[:2], limit_range("limits", "team", {**DEFAULTS, "max": {"cpu": "4"}}), *objects[3:]],
           timezone.now())  # fmt: skip
    big.refresh_from_db()
    assert "limitRange" not in big.kueue_job
    sessions.run_scheduling_session(cluster)
    big.refresh_from_db()
    assert LIMIT_RANGE_WAIT not in big.message


# -- Kueue's own table ---------------------------------------------------------------------------------------------

# Kueue's scheduler integration test "The workload's podSet resource requests are not valid"
# (test/integration/singlecluster/scheduler/scheduler_test.go): a ClusterQueue of 5 cores, one LimitRange (type
# Container unless given) with the case's max and min cpu, one workload of one pod asking for ``req`` and limited to
# ``limit``; the start of its wait as Kueue words it, or admitted.
KUEUE_VALIDATION_CASES: dict[str, tuple[str, str | None, str | None, str | None, str | None, str | None]] = {
    "request more that limits": ("3", "2", None, None, "Container", RESOURCES_INVALID),
    "request over container limits": ("2", "3", None, "1", "Container", LIMIT_RANGE_WAIT),
    "request under container limits": ("2", "3", "3", None, "Container", LIMIT_RANGE_WAIT),
    "request over pod limits": ("2", "3", None, "1", "Pod", LIMIT_RANGE_WAIT),
    "request under pod limits": ("2", "3", "3", None, "Pod", LIMIT_RANGE_WAIT),
    "valid": ("2", "3", "1", "4", "Container", None),
    # and the two cases of Kueue's TestSchedule (pkg/scheduler/scheduler_test.go) about them. In the first, Kueue's
    # unit test stores its LimitRange (max 300m) as written; the API server completes it with a default limit of 300m
    # (the max), which the container of 500m without a limit gets: its request is then above its limit, which Kueue
    # too checks first on a real cluster (tests/kube/real/test_kueue_jobs_real.py reads the completed item)
    "container does not satisfy limitRange constraints": ("500m", None, None, "300m", "Container", RESOURCES_INVALID),
    "container resource requests exceed limits": ("200m", "100m", None, None, None, RESOURCES_INVALID),
}


@pytest.mark.parametrize("case", list(KUEUE_VALIDATION_CASES))
def test_kueues_resource_validation_cases_through_simulate(case: str, tmp_path: Any, capsys: Any) -> None:
    """Each case of Kueue's table as a ``fairway simulate`` run of a suspended Job: it waits with Kueue's words, or
    its pod is bound."""
    import yaml

    from tests.cli.test_kueue_partial_admission import cluster, simulate

    req, limit, low, high, kind, wanted = KUEUE_VALIDATION_CASES[case]
    item: dict[str, Any] = {"type": kind, **({"min": {"cpu": low}} if low else {})}
    item.update({"max": {"cpu": high}} if high else {})
    container = {"requests": {"cpu": req}, **({"limits": {"cpu": limit}} if limit else {})}
    docs = [limit_range("limit", "team", item)] if kind else []
    docs.append(bare_job("workload", 1, container, suspend=True))
    docs[-1]["metadata"]["labels"] = {QUEUE_LABEL: "lq"}
    text = cluster(5) + "".join(f"---\n{yaml.safe_dump(d)}" for d in docs)
    code, doc = simulate(tmp_path, capsys, text)
    assert code == 0 and isinstance(doc, dict), doc
    group = doc["podgroups"]["team/workload"]
    if wanted is None:
        assert group["phase"] == "Running" and doc["bindings"], group
    else:
        assert (group["phase"], group["reason"]) == ("Pending", "Misconfigured"), group
        assert group["message"].startswith(
            f"not admitted (Pending -> Inqueue): gang team/workload template: {wanted}: "
        )
        assert not doc["bindings"]
