"""Per-user limits inside a queue or quota group (``engine.userlimits``, ``engine.session.userlimits``): a user's,
a group's and each user's (``*``) limit on running jobs and on resources binds at admission (enqueue) and at
placement (allocate), in the job's queue, its quota group, and their ancestors; the reason names the limit; no
limit, no change; the API form's checks name the entry and the field."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine.objects import PodGroupInfo, QueueSpec, QuotaGroupSpec, Snapshot, TaskInfo
from engine.resources import ResourceList
from engine.session.run import run_session
from engine.session.userlimits import UserLimitBook
from engine.userlimits import UserLimit, parse_user_limits, stored_user_limits, user_limits_from_stored
from tests.unit.test_session_support import ST, Q, group, node, pod, podgroup, policy, queue, rl, snapshot

GPU = "nvidia.com/gpu"
ENQUEUE = policy("enqueue, allocate, backfill", ["priority", "gang"], ["drf", "proportion", "predicates"])
ALLOCATE_ONLY = policy("allocate, backfill", ["priority", "gang"], ["drf", "proportion", "predicates"])


def jobs_limit(kind: str, name: str, n: int) -> UserLimit:
    return UserLimit(kind, name, max_jobs=n)  # type: ignore[arg-type]


def gpus(kind: str, name: str, n: int) -> UserLimit:
    return UserLimit(kind, name, max_resources=ResourceList({GPU: n * 1000}))  # type: ignore[arg-type]


def job(
    name: str,
    user: str,
    *,
    groups: tuple[str, ...] = (),
    queue_name: str = "nlp",
    phase: Q = Q.PENDING,
    gpu: int = 1,
    created: float = 0.0,
    min_res: bool = True,
) -> tuple[PodGroupInfo, TaskInfo]:
    request = rl("1", "1Gi", **{GPU: str(gpu)})
    pg = replace(
        podgroup("ns", name, queue_name, 1, phase=phase, min_resources=request if min_res else None, created=created),
        user=user,
        user_groups=groups,
    )
    status = ST.RUNNING if phase == Q.RUNNING else ST.PENDING
    task = pod("ns", f"{name}-0", name, "1", "1Gi", status=status, node="n1" if status == ST.RUNNING else None,
               **{GPU: str(gpu)})  # fmt: skip
    return pg, task


def snap(
    jobs: list[tuple[PodGroupInfo, TaskInfo]],
    *,
    queues: list[QueueSpec] | None = None,
    groups: list[QuotaGroupSpec] = (),  # type: ignore[assignment]
) -> Snapshot:
    return snapshot(
        nodes=[node("n1", "64", "256Gi", **{GPU: "16"})],
        queues=queues or [queue("nlp")],
        groups=groups,
        podgroups=[pg for pg, _ in jobs],
        pods=[t for _, t in jobs],
    )


def nlp(*limits: UserLimit, parent: str = "root") -> QueueSpec:
    return replace(queue("nlp", parent=parent), user_limits=tuple(limits))


def placed(result: object) -> list[str]:
    return sorted(b.task.split("/")[1].rsplit("-", 1)[0] for b in result.bindings)  # type: ignore[attr-defined]


@pytest.mark.parametrize("pol", [ENQUEUE, ALLOCATE_ONLY], ids=["enqueue", "allocate-only"])
def test_a_user_runs_at_most_its_jobs(pol: object) -> None:
    running = [job(f"r{i}", "alice", phase=Q.RUNNING) for i in range(2)]
    waiting = [job("a1", "alice", created=1.0), job("a2", "alice", created=2.0), job("b1", "bob", created=3.0)]
    result = run_session(snap(running + waiting, queues=[nlp(jobs_limit("user", "alice", 3))]), now=10.0, policy=pol)  # type: ignore[arg-type]
    assert placed(result) == ["a1", "b1"]
    status = result.podgroups["ns/a2"]
    assert "user alice runs 3 of at most 3 jobs in queue nlp" in status.message
    assert status.blocker is not None and (status.blocker.kind, status.blocker.name) == ("queue", "nlp")


def test_a_job_without_minimum_is_held_to_the_jobs_limit_too() -> None:
    jobs = [job("a1", "alice", min_res=False, created=1.0), job("a2", "alice", min_res=False, created=2.0)]
    result = run_session(snap(jobs, queues=[nlp(jobs_limit("user", "alice", 1))]), now=10.0, policy=ENQUEUE)
    assert placed(result) == ["a1"]
    assert result.podgroups["ns/a2"].phase == Q.PENDING
    assert "user alice runs 1 of at most 1 job in queue nlp" in result.podgroups["ns/a2"].message


def test_a_group_shares_its_resources_limit() -> None:
    interns = ("ml-interns",)
    jobs = [
        job("a1", "alice", groups=interns, gpu=4, phase=Q.RUNNING),
        job("c1", "carol", groups=interns, gpu=4, created=1.0),
        job("c2", "carol", groups=interns, gpu=1, created=2.0),
        job("d1", "dave", gpu=4, created=3.0),
    ]
    result = run_session(snap(jobs, queues=[nlp(gpus("group", "ml-interns", 8))]), now=10.0, policy=ENQUEUE)
    assert placed(result) == ["c1", "d1"]
    message = result.podgroups["ns/c2"].message
    assert "would use 9 of at most 8 GPUs allowed to group ml-interns in queue nlp" in message


def test_each_user_counts_alone_under_the_wildcard_and_a_named_limit_wins() -> None:
    jobs = [
        job("a1", "alice", gpu=2, created=1.0),
        job("a2", "alice", gpu=2, created=2.0),
        job("b1", "bob", gpu=2, created=3.0),
        job("b2", "bob", gpu=2, created=4.0),
        job("v1", "vip", gpu=2, created=5.0),
        job("v2", "vip", gpu=2, created=6.0),
    ]
    limits = nlp(gpus("user", "*", 2), gpus("user", "vip", 8))
    result = run_session(snap(jobs, queues=[limits]), now=10.0, policy=ENQUEUE)
    assert placed(result) == ["a1", "b1", "v1", "v2"]
    assert "allowed to each user (bob) in queue nlp" in result.podgroups["ns/b2"].message


def test_an_ancestor_queue_limit_binds_the_jobs_below_it() -> None:
    queues = [
        replace(queue("research"), user_limits=(jobs_limit("user", "alice", 1),)),
        queue("nlp", parent="research"),
        queue("vision", parent="research"),
    ]
    jobs = [job("a1", "alice", phase=Q.RUNNING), job("a2", "alice", queue_name="vision", created=1.0)]
    result = run_session(snap(jobs, queues=queues), now=10.0, policy=ENQUEUE)
    assert placed(result) == []
    status = result.podgroups["ns/a2"]
    assert "user alice runs 1 of at most 1 job in queue research" in status.message
    assert status.blocker is not None and status.blocker.kind == "ancestor"


def test_a_quota_group_limit_binds_at_placement() -> None:
    groups = [
        replace(
            group("team", is_parent=True, max=rl("64", "256Gi", **{GPU: "16"})), user_limits=(gpus("user", "*", 3),)
        ),
        group("team-a", parent="team", max=rl("64", "256Gi", **{GPU: "16"})),
    ]
    jobs = [
        job("a1", "alice", gpu=2, created=1.0, min_res=False),
        job("a2", "alice", gpu=2, created=2.0, min_res=False),
    ]
    jobs = [(pg, replace(t, quota_group="team-a")) for pg, t in jobs]
    result = run_session(snap(jobs, groups=groups), now=10.0, policy=ENQUEUE)
    assert placed(result) == ["a1"]
    status = result.podgroups["ns/a2"]
    assert "would use 4 of at most 3 GPUs allowed to each user (alice) in quota group team" in status.message
    assert status.blocker is not None and (status.blocker.kind, status.blocker.name) == ("quota", "team")
    assert (status.blocker.resource, status.blocker.requested, status.blocker.available) == (GPU, 2000, 1000)


RECLAIM = policy("reclaim, allocate, backfill", ["priority", "gang"], ["drf", "proportion", "predicates"])


@pytest.mark.parametrize("limited", [True, False], ids=["at-her-limit", "no-limit"])
def test_reclaim_takes_nothing_back_for_a_user_at_her_limit(limited: bool) -> None:
    """nlp is below its half of the 16 GPUs and vision above it: reclaim takes a vision pod back for a starving nlp
    job, unless the job's user already uses what her limit allows in nlp (the gate allocate asks, asked by reclaim
    too: a reclaimer cannot pass a user limit)."""
    alice = [job(f"a{i}", "alice", phase=Q.RUNNING, min_res=False) for i in range(2)]
    vision = [job(f"v{i}", "vic", queue_name="vision", phase=Q.RUNNING, min_res=False) for i in range(14)]
    waiting = job("a9", "alice", phase=Q.INQUEUE, min_res=False, created=5.0)
    nlp_queue = nlp(gpus("user", "alice", 2)) if limited else queue("nlp")
    snapshot_ = snap([*alice, *vision, waiting], queues=[nlp_queue, queue("vision")])
    result = run_session(snapshot_, now=10.0, policy=RECLAIM)
    if not limited:
        assert len(result.evictions) == 1 and result.evictions[0].task.startswith("ns/v")
        return
    assert result.evictions == [] and placed(result) == []
    assert "would use 3 of at most 2 GPUs allowed to user alice in queue nlp" in result.podgroups["ns/a9"].message


def test_a_job_of_an_unnamed_user_counts_as_its_namespace() -> None:
    jobs = [job("a1", "", phase=Q.RUNNING), job("a2", "", created=1.0)]
    result = run_session(snap(jobs, queues=[nlp(jobs_limit("user", "ns", 1))]), now=10.0, policy=ENQUEUE)
    assert placed(result) == []
    assert "user ns runs 1 of at most 1 job in queue nlp" in result.podgroups["ns/a2"].message


def test_no_limit_no_book_and_the_same_decisions() -> None:
    jobs = [job(f"a{i}", "alice", created=float(i)) for i in range(4)]
    assert UserLimitBook.open(snap(jobs)) is None
    assert placed(run_session(snap(jobs), now=10.0, policy=ENQUEUE)) == ["a0", "a1", "a2", "a3"]


def test_the_book_shows_each_users_use() -> None:
    jobs = [job("a1", "alice", gpu=2, phase=Q.RUNNING), job("b1", "bob", gpu=1, phase=Q.RUNNING), job("b2", "bob")]
    book = UserLimitBook.of_snapshot(snap(jobs, queues=[nlp(gpus("user", "*", 4), jobs_limit("group", "ml", 2))]))
    rows = [(r.limit.kind, r.limit.name, r.subject, r.jobs, dict(r.used)) for r in book.rows("queue", "nlp")]
    assert rows == [
        ("user", "*", "alice", 1, {GPU: 2000}),
        ("user", "*", "bob", 1, {GPU: 1000}),
        ("group", "ml", "ml", 0, {}),
    ]


def test_the_api_form_reads_and_names_each_problem() -> None:
    limits, errors = parse_user_limits(
        [{"user": "alice", "max_resources": {GPU: "4", "memory": "64Gi"}, "max_jobs": 3}, {"group": "*", "max_jobs": 1}]
    )
    assert errors == []
    assert limits[0] == UserLimit("user", "alice", ResourceList({GPU: 4000, "memory": 64 * 2**30}), 3)
    assert user_limits_from_stored(stored_user_limits(limits)) == limits
    _, errors = parse_user_limits(
        [
            {"user": "alice", "max_jobs": 1},
            {"user": "alice", "max_jobs": 2},
            {"user": "bob", "group": "x", "max_jobs": 1},
            {"group": " bad", "max_jobs": 1},
            {"user": "carol", "max_resources": {GPU: "-1"}},
            {"user": "dave", "max_jobs": -1},
            {"user": "erin"},
            {"user": "frank", "max_job": 1},
        ]
    )
    found = {e.field: e.message for e in errors}
    assert "has a limit already (entry 0)" in found["user_limits.1.user"]
    assert "exactly one of user and group" in found["user_limits.2"]
    assert "is not a group name" in found["user_limits.3.group"]
    assert f"user_limits.4.max_resources.{GPU}" in found
    assert "between 0 and" in found["user_limits.5.max_jobs"]
    assert "limits nothing" in found["user_limits.6"]
    assert "unknown key 'max_job'" in found["user_limits.7.max_job"]
    _, errors = parse_user_limits({"user": "alice"})
    assert errors[0].field == "user_limits" and "expected a list" in errors[0].message


SIMULATED = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "32", memory: 64Gi, nvidia.com/gpu: "8"}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata:
  name: nlp
  annotations:
    fairway.io/user-limits: '[{"user": "*", "max_jobs": 1}]'
spec: {weight: 1}
"""


def _job_docs(name: str, user: str, created: str) -> str:
    return f"""
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: {name}
  namespace: ml
  creationTimestamp: "{created}"
  annotations: {{yunikorn.apache.org/user.info: '{{"user": "{user}", "groups": ["ml"]}}'}}
spec: {{queue: nlp, minMember: 1}}
---
apiVersion: v1
kind: Pod
metadata:
  name: {name}-0
  namespace: ml
  annotations: {{scheduling.k8s.io/group-name: {name}}}
spec:
  containers: [{{name: main, image: x, resources: {{requests: {{cpu: "1", nvidia.com/gpu: "1"}}}}}}]
"""


def test_simulate_reads_the_limits_and_users_from_the_manifests_and_holds_the_job() -> None:
    from engine.manifests import load_manifests

    text = (
        SIMULATED + _job_docs("a1", "alice", "2026-01-01T00:00:00Z") + _job_docs("a2", "alice", "2026-01-01T00:01:00Z")
    )
    text += _job_docs("b1", "bob", "2026-01-01T00:02:00Z")
    snap = load_manifests([("in.yaml", text)]).snapshot
    assert snap.queues["nlp"].user_limits == (UserLimit("user", "*", ResourceList(), 1),)
    result = run_session(snap, now=10.0, policy=ENQUEUE)
    assert placed(result) == ["a1", "b1"]
    assert (
        "user alice runs 1 of at most 1 job in queue nlp, the limit of each user" in result.podgroups["ml/a2"].message
    )


def test_the_exports_carry_the_limits_and_kueue_says_it_has_no_place_for_them() -> None:
    import yaml

    from engine.manifests import load_manifests
    from engine.manifests.export import export_notes, export_trees

    limits = (UserLimit("user", "*", ResourceList({GPU: 2000}), 3), UserLimit("group", "ml", ResourceList(), 1))
    snap = Snapshot(
        queues={"nlp": replace(queue("nlp"), user_limits=limits)},
        quota_groups={"team": replace(group("team"), user_limits=limits[:1])},
    )
    docs = export_trees(snap, "volcano") + export_trees(snap, "koordinator")
    back = load_manifests([("x.yaml", yaml.safe_dump_all(docs))]).snapshot
    assert back.queues["nlp"].user_limits == limits and back.quota_groups["team"].user_limits == limits[:1]
    assert any(
        n.startswith("user_limits of queues nlp: Kueue has no place for it") for n in export_notes(snap, "kueue")
    )
