"""Hours of ``make run`` in virtual time (issue 8; two here, six in ``bench/bench_soak.py``): the real loop (store,
engine, simulated agent, workload generator, node checks, recycling) with a machine that dies and comes back and a
control-plane outage, and the invariants checked after every session (``tests/support/soak.py``): no node over its
allocatable, no pod bound twice, no pod lost, no podgroup Inqueue for more than three sessions without a place, every
waiting podgroup with a reason, GPUs at least 85 % allocated whenever admissible demand exceeds them, borrowing and
lending in every hour, no gang holding nodes below its minimum past its repair bound, no pod evicted by reclaim or
preempt within its minimum runtime by an evictor of no higher priority. ``bench/bench_soak.py`` runs the same soak at
a finer period for docs/benchmarks.md."""

from __future__ import annotations

import json
import os

import pytest

from tests.support.soak import Fault, Soak

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

HOURS = 2  # bench/bench_soak.py runs 6 hours at a round every 10 s
STEP = 90  # one round (session, recycling, agent, node check) every 90 virtual seconds keeps the test near 2 minutes


def test_hours_of_the_demo_keep_every_invariant() -> None:
    faults = (
        # a GPU machine dies for 15 minutes: gpu-01, the one the demo's binpack fills first (ties go by name), so it
        # holds pods whatever the placements before
        Fault(at=1800, kind="node-down", node="gpu-01", seconds=900),
        Fault(at=3600, kind="outage", seconds=120),  # nothing runs for two minutes (broker down)
        Fault(at=5400, kind="node-down", node="cpu-05", seconds=240),  # back before its pods are lost
    )
    report = Soak(hours=HOURS, step=STEP, faults=faults).run()
    summary = report.summary()
    print(json.dumps(summary, indent=1))  # noqa: T201 - the soak's figures in the test log

    assert report.violations == [], "\n".join(report.violations[:20])
    assert report.sessions >= HOURS * 3600 // STEP - 3  # every round but the outage's ran a session
    assert report.binds > 1000 and report.completed_jobs > 500
    # borrowing and lending hour after hour, not only in the first minutes
    assert report.borrowing_hours == set(range(HOURS)), summary
    assert report.lending_hours == set(range(HOURS)), summary
    # GPUs busy whenever admissible demand exceeds them
    assert all(u >= 0.85 for u in report.gpu_utilisation), summary
    # the dead machine's pods were lost and replaced, the short one kept its pods; the outage condemned nothing
    assert report.evictions["node-lost"] > 0, summary
    assert report.max_unplaced_inqueue <= 3
    # issue 26: no gang holds nodes below its minimum past the repair bound, no pod evicted within the minimum
    # runtime by an evictor of no higher priority (both also violations above; named here for the log)
    assert report.broken_gang_gpu_seconds == 0 and report.thrash == 0, summary


def test_half_an_hour_of_ten_second_rounds_evicts_no_task_twice_in_a_minute() -> None:
    """Issue 26's last goal, at the period where it can be seen (a round every 10 s; at 90 s two evictions of one
    task are never within a minute): no job's task, its replacements included, evicted again within 60 s, and no
    preempt victim within its minimum runtime (the demo's ``minRuntimeHigherPriority: wait``; a violation above).
    ``SOAK_SEED`` picks the workload's seed (1 by default; 1 to 5 measured over an hour in
    docs/recycling-and-gangs.md). With ``minRuntimeHigherPriority: cut`` (the option's default) seed 1 evicts 4 tasks
    twice in a minute in this half hour."""
    seed = int(os.environ.get("SOAK_SEED", "1"))
    report = Soak(hours=0.5, step=10, seed=seed).run()
    summary = report.summary()
    print(json.dumps(summary, indent=1))  # noqa: T201 - the soak's figures in the test log
    assert report.violations == [], "\n".join(report.violations[:20])
    assert report.binds > 1000 and report.evictions["preempt"] > 0, summary  # preemption did happen
    assert report.evicted_twice_in_a_minute == 0, summary
    # issue 26's GPU figure: at least 90 % of the GPUs allocated in every saturated round where admitted work could
    # start on the free room (the rounds where no admitted job fits it are counted apart: docs/recycling-and-gangs.md,
    # "The rounds below 90 %"); seeds 1 to 5 over an hour: 93.8 to 100 % at worst
    assert all(u >= 0.9 for u in report.gpu_utilisation_usable), summary
