"""A trace exported from a cluster orders its jobs and pods as the live sessions did (issue 29 item 3).

The session takes the jobs of one priority by their creation, then their key, and a job's pods by their creation,
then the index in their name (``engine.session``). The live sessions read both from the rows: when Fairway stored
them (``created``), not Kubernetes' ``metadata.creationTimestamp``, which the adapter does not keep. Two places where
a trace used to give the replay another order than the live sessions had:

* a job already running when the Kubernetes adapter first mirrored it: its pods' start is the adapter's round, its
  row is written a moment later; the export submits it at that start (a trace's start may not come before its
  submit), and the replay ordered it by that submit for good. The trace now keeps its row's creation (``created``):
  the replay places it at its start, as it was (ordered by its submit, before the jobs mirrored with it, which the
  live sessions never had to place it against), and orders it by its row's creation once it runs, as every live
  session that saw it did;
* an evicted pod: on a cluster of simulated node agents its replacement is a new pod ``<name>-r<N>`` created at the
  eviction (``scheduling.agent.replace_members``), so it comes after the job's other waiting pods; the replay made the
  pod Pending again under its old name and creation, first. The trace now says how the cluster replaces a pod
  (``replacements``), and the replay does the same.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
STEP = 60

POLICY = """\
actions: "enqueue, allocate, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
"""


def _watch(monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, dict[str, float | None]], list[str]]:
    """What the sessions see (the store's and the replay's both call ``engine.session.run.run_session``): per side,
    each job's and pod's creation when first seen, and (``live running``, ``replay running``) when first seen with
    the pod running. Set ``side[0]`` to the side running."""
    from engine.objects import TaskStatus
    from engine.session import run as engine_run

    seen: dict[str, dict[str, float | None]] = {k: {} for k in ("live", "replay", "live running", "replay running")}
    side = ["live"]
    real = engine_run.run_session

    def watched(snapshot: Any, **kwargs: Any) -> Any:
        for key, pg in snapshot.podgroups.items():
            seen[side[0]].setdefault(f"job {key}", pg.creation_timestamp)
        for uid, task in snapshot.tasks.items():
            seen[side[0]].setdefault(f"pod {uid}", task.creation_timestamp)
            if task.status is TaskStatus.RUNNING:
                running = seen[f"{side[0]} running"]
                running.setdefault(f"pod {uid}", task.creation_timestamp)
                running.setdefault(f"job {task.podgroup}", snapshot.podgroups[task.podgroup].creation_timestamp)
        return real(snapshot, **kwargs)

    monkeypatch.setattr(engine_run, "run_session", watched)
    return seen, side


def _round_trip(trace: Any) -> Any:
    from engine.replay import read_trace, trace_lines

    return read_trace(list(trace_lines(trace)))


# -- a job already running when the adapter first mirrored it -------------------------------------------------------

MIRRORED = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: a}
spec: {weight: 1}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: running, namespace: team, creationTimestamp: "2026-01-01T00:00:00Z"}
spec: {queue: a, minMember: 1}
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata:
  name: running-0
  namespace: team
  creationTimestamp: "2026-01-01T00:00:00Z"
  annotations: {scheduling.k8s.io/group-name: running}
spec: {nodeName: n1, schedulerName: fairway, containers: [{name: c, resources: {requests: {cpu: "2"}}}]}
status: {phase: Running}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: waiting, namespace: team, creationTimestamp: "2026-01-01T00:00:01Z"}
spec: {queue: a, minMember: 1}
---
apiVersion: v1
kind: Pod
metadata:
  name: waiting-0
  namespace: team
  creationTimestamp: "2026-01-01T00:00:01Z"
  annotations: {scheduling.k8s.io/group-name: waiting}
spec: {schedulerName: fairway, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
"""


def test_a_job_running_when_first_mirrored_keeps_the_creation_the_live_session_ordered_it_by(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import time_machine

    from engine.replay import replay
    from planning.trace import build_trace
    from quotas import services
    from scheduling import sessions
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import Cluster, PodGroup

    services.ensure_builtins()
    cluster = Cluster.objects.create(name="fd2k", source="kubernetes", tree_source="kubernetes")
    seen, side = _watch(monkeypatch)
    written = T0 + timedelta(seconds=1.5)
    with time_machine.travel(written, tick=False):
        # the adapter's round began at T0 (its pods' start) and wrote the rows 1.5 s later (their ``created``)
        report = mirror(cluster, list(yaml.safe_load_all(MIRRORED)), T0)
        assert not report.problems, report.problems
        sessions.run_scheduling_session(cluster)
    running = PodGroup.objects.get(name="running")
    assert running.created == written
    live = seen["live"]
    # the live session orders by the rows' creation, not by Kubernetes' creationTimestamp (2026-01-01)
    assert live["job team/running"] == live["job team/waiting"] == written.timestamp()
    trace = _round_trip(build_trace(cluster, T0 - timedelta(minutes=1), T0 + timedelta(hours=1), period=STEP))
    jobs = {j.name: j for j in trace.jobs}
    assert jobs["running"].start == jobs["running"].submit == T0.timestamp()  # submitted at its first start
    assert jobs["running"].created == written.timestamp()  # and created when the live session saw it created
    assert jobs["waiting"].created is None and jobs["waiting"].submit == written.timestamp()
    assert trace.header.replacements == "same"  # a cluster mirrored from Kubernetes: its controllers make them
    side[0] = "replay"
    replay(trace)
    # the replay places it at its start, as it was, before the job mirrored with it; the sessions that see it running
    # then see it created when the live sessions did, which order its replacements and victims by it
    assert seen["replay"]["job team/running"] == T0.timestamp()
    ran = {"job team/running": written.timestamp(), "pod team/running-0": written.timestamp()}
    assert seen["live running"] == ran  # (live, waiting is bound but no agent reports it running)
    assert {k: v for k, v in seen["replay running"].items() if k in ran} == ran
    assert seen["replay"]["job team/waiting"] == live["job team/waiting"]


# -- an evicted pod's replacement on a cluster of simulated node agents ---------------------------------------------

# One node of 2 cpu. ``low`` (priority 0, three pods of 1 cpu, minMember 1, 600 s, 600 s and 60 s of work) takes the
# node at 08:00 with its pods 0 and 1, pod 2 waits. ``high`` (priority 100, 1 cpu, 120 s) comes at 08:01 and preempts
# one of low's running pods, runs 08:02-08:04. At 08:05 one cpu is free: live, the waiting low-2 (created at 08:00)
# goes before the replacement low-N-r1 (created at 08:01) and runs 60 s; the replacement starts at 08:07 and low
# finishes at 08:17. A replay that kept the evicted pod's name and creation placed it first (it finished at 08:15).
JOBS = (
    # name, at (s), priority, pods' durations (s)
    ("low", 0, 0, (600, 600, 60)),
    ("high", 60, 100, (120,)),
)


def _submit(cluster: Any, name: str, priority: int, durations: tuple[int, ...]) -> None:
    from quotas.models import Namespace, Queue
    from scheduling.models import Pod, PodGroup

    ns = Namespace.objects.get(name="team")
    pg = PodGroup.objects.create(
        cluster=cluster, namespace=ns, name=name, queue=Queue.objects.get(name="a"), min_member=1, priority=priority
    )
    Pod.objects.bulk_create(
        Pod(
            cluster=cluster,
            namespace=ns,
            name=f"{name}-{i}",
            podgroup=pg,
            request={"cpu": 1000},
            priority=priority,
            duration_seconds=seconds,
        )
        for i, seconds in enumerate(durations)
    )


def _live_loop(cluster: Any, rounds: int) -> None:
    """The demo's loop, as the soak runs it: arrivals, the session, the simulated agent (start, finish, replace)."""
    import time_machine
    from django.utils import timezone

    from scheduling import agent, sessions

    with time_machine.travel(T0, tick=False) as clock:
        for k in range(rounds):
            for name, at, priority, durations in JOBS:
                if at == k * STEP:
                    _submit(cluster, name, priority, durations)
            sessions.run_scheduling_session(cluster)
            agent.agent_tick(cluster, timezone.now())
            clock.shift(timedelta(seconds=STEP))


def test_an_evicted_pods_replacement_comes_after_its_jobs_waiting_pods_as_it_did_live(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import time_machine

    from engine.replay import replay
    from engine.resources import parse_resource_list
    from planning.trace import build_trace
    from quotas import services
    from quotas.models import Namespace, Queue
    from scheduling.models import Cluster, Node, Pod

    with time_machine.travel(T0 - timedelta(minutes=1), tick=False):  # the tree, a minute before the jobs
        services.ensure_builtins()
        queue = services.save_queue(None, {"name": "a", "weight": 1})
        Namespace.objects.create(name="team", default_queue=Queue.objects.get(pk=queue.pk))
        cluster = Cluster.objects.create(name="fd2s", simulated=True, scheduler_policy=POLICY)
        allocatable = parse_resource_list({"cpu": "2", "memory": "8Gi", "pods": "110"})
        Node.objects.create(cluster=cluster, name="n1", allocatable=allocatable)
    seen, side = _watch(monkeypatch)
    _live_loop(cluster, rounds=20)
    [replacement] = Pod.objects.filter(cluster=cluster, name__endswith="-r1")
    assert replacement.created == T0 + timedelta(seconds=STEP) and replacement.status == "Succeeded"
    trace = _round_trip(build_trace(cluster, T0, T0 + timedelta(seconds=19 * STEP), period=STEP, tree_at=T0))
    recorded = {j.key: (j.start, j.finish) for j in trace.jobs}
    at = T0.timestamp()
    assert recorded == {"team/low": (at, at + 17 * STEP), "team/high": (at + 2 * STEP, at + 4 * STEP)}
    assert trace.header.replacements == "new"
    side[0] = "replay"
    run = replay(trace)
    assert {k: (o.start, o.finish) for k, o in run.outcomes.items()} == recorded
    # the replay's sessions saw the same pods, the replacement among them, created when the live sessions saw them
    assert seen["replay"] == seen["live"]
    assert seen["live"][f"pod team/{replacement.name}"] == at + STEP


def test_a_trace_without_the_new_keys_reads_as_before_and_with_them_round_trips() -> None:
    """``created`` and ``replacements`` are written only where they say something: a trace without them is what an
    older fairway wrote, and reads with each job created at its submit and pods replaced under their own name."""
    import json
    from dataclasses import replace

    from engine.replay import TraceError, read_trace, trace_lines
    from engine.replay.trace import Trace, TraceHeader, TraceJob, TraceRole
    from engine.resources import ResourceList

    header = TraceHeader(cluster="c", start=0.0, end=3600.0, period=60.0)
    role = TraceRole(name="w", pods=1, request=ResourceList({"cpu": 1000}))
    job = TraceJob(namespace="ns", name="j", queue="a", submit=60.0, roles=(role,), start=60.0)
    lines = list(trace_lines(Trace(header=header, jobs=[job])))
    assert "replacements" not in json.loads(lines[0]) and "created" not in json.loads(lines[-1])
    again = read_trace(lines)
    assert again.header.replacements == "same" and again.jobs[0].created is None
    moved = Trace(header=TraceHeader(cluster="c", start=0.0, end=3600.0, period=60.0, replacements="new"))
    moved.jobs = [TraceJob(namespace="ns", name="j", queue="a", submit=60.0, roles=(role,), start=60.0, created=61.5)]
    lines = list(trace_lines(moved))
    assert (
        json.loads(lines[0])["replacements"] == "new"
        and json.loads(lines[-1])["created"] == "1970-01-01T00:01:01.500000Z"
    )
    # written in the lowest version that holds it: version 1 (no flavors), whose readers skip the new keys
    assert read_trace(lines).jobs == moved.jobs and read_trace(lines).header == replace(moved.header, version=1)
    with pytest.raises(TraceError, match=r"line 1: replacements: must be one of same, new, got 'renamed'"):
        read_trace([lines[0].replace('"new"', '"renamed"')])
    with pytest.raises(TraceError, match=r"line 2 \(Job ns/j\): created"):
        read_trace([lines[0], lines[-1].replace("1970-01-01T00:01:01.500000Z", "soon")])
