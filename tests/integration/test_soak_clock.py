"""A soak's trace submits each job when the live sessions saw it created (issue 29 item 3).

The session orders the jobs of one priority by their creation (``engine.session.framework``: the job order's
plugins, then the creation, then the key), and the replay gives a job its trace's ``submit`` as its creation. With
the demo loaded on the wall clock before the soak's virtual clock started, the demo's first jobs were created after
every job of the virtual hours, so the live sessions put them last among the jobs of their priority, while the
trace submitted them at the soak's start, first: with quotas that made ``ml-research/hparam-sweep`` (priority 10)
tie with jobs of its priority, the replay admitted it two sessions before the live loop did, and 69 of 1,060 jobs
started more than a period later. A few rounds of the soak show it, whatever the quotas: each job's creation as the
live sessions saw it is its trace's submit, and the replay's sessions see the same."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.soak import START, Soak

pytestmark = [pytest.mark.django_db(transaction=True)]

STEP = 60
ROUNDS = 3


def test_the_live_sessions_and_the_replays_see_each_job_created_when_the_trace_submits_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from engine.replay import replay
    from engine.session import run as engine_run

    seen: dict[str, dict[str, float | None]] = {"live": {}, "replay": {}}  # job -> creation its first session saw
    future: list[tuple[str, float, float]] = []  # (job, its creation, the session's now) created after the session
    side = ["live"]
    real = engine_run.run_session

    def watched(snapshot: Any, **kwargs: Any) -> Any:
        for key, pg in snapshot.podgroups.items():
            seen[side[0]].setdefault(key, pg.creation_timestamp)
            if pg.creation_timestamp is not None and pg.creation_timestamp > kwargs["now"]:
                future.append((key, pg.creation_timestamp, kwargs["now"]))
        return real(snapshot, **kwargs)

    monkeypatch.setattr(engine_run, "run_session", watched)  # the store's sessions and the replay's call it
    soak = Soak(hours=ROUNDS * STEP / 3600, step=STEP, stall_broken_gangs=False)
    report = soak.run()
    trace = soak.trace()
    side[0] = "replay"
    replay(trace)

    assert report.sessions == ROUNDS and report.violations == [], report.violations[:5]
    assert future == [], future[:5]
    live = seen["live"]
    submits = {job.key: job.submit for job in trace.jobs}
    assert "ml-research/hparam-sweep" in live and len(live) > 8  # the demo's first jobs and generated ones
    assert live.keys() <= submits.keys(), sorted(live.keys() - submits.keys())[:5]
    differ = {key: (created, submits[key]) for key, created in live.items() if created != submits[key]}
    assert differ == {}, list(differ.items())[:5]
    assert submits["ml-research/hparam-sweep"] == START.timestamp()
    # the replay's sessions order the same jobs by the same creations
    assert {k: v for k, v in seen["replay"].items() if k in live} == live
