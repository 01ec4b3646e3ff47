"""Waits to start per tree node (``engine.waits``), the one computation of the replay's report and the audit: a job
counts for its queue, its quota group and every ancestor of each; percentiles are nearest rank over the jobs that
started; the longest wait counts a job still waiting with its wait so far."""

from __future__ import annotations

from engine.waits import JobWait, TreeParents, lineage, node_waits, percentile

QUEUES = {"root": None, "research": "root", "nlp": "research", "vision": "research"}
GROUPS = {"root": None, "nlp-q": "root"}
PARENTS = TreeParents(QUEUES, GROUPS)


def test_percentiles_are_nearest_rank() -> None:
    assert percentile([], 0.5) is None
    assert percentile([30.0], 0.95) == 30.0
    assert percentile([600.0, 30.0, 60.0], 0.5) == 60.0  # the second of three
    assert percentile([600.0, 30.0, 60.0], 0.95) == 600.0
    assert percentile([float(i) for i in range(1, 101)], 0.95) == 95.0


def test_a_cycle_in_the_parents_is_cut_where_it_closes() -> None:
    assert lineage("a", {"a": "b", "b": "a"}) == ["a", "b"]
    assert lineage(None, QUEUES) == []


def test_each_job_counts_for_its_queue_its_group_and_their_ancestors() -> None:
    jobs = [
        JobWait("nlp", "nlp-q", submit=0.0, start=30.0, finished=True, preempted=2),
        JobWait("nlp", None, submit=100.0, start=None, finished=False),
        JobWait("vision", None, submit=0.0, start=600.0, finished=False, recycled=1),
    ]
    out = node_waits(jobs, PARENTS, end=1000.0)
    nlp, vision, research = out[("queue", "nlp")], out[("queue", "vision")], out[("queue", "research")]
    assert (nlp.started, nlp.waiting, nlp.finished, nlp.p50, nlp.p95, nlp.longest) == (1, 1, 1, 30.0, 30.0, 900.0)
    assert (nlp.preempted, nlp.recycled) == (2, 0)
    assert (vision.started, vision.p50, vision.longest, vision.recycled) == (1, 600.0, 600.0, 1)
    assert (research.started, research.waiting, research.p50, research.p95, research.longest) == (
        2,
        1,
        30.0,
        600.0,
        900.0,
    )
    assert out[("queue", "root")].started == 2
    group = out[("quota", "nlp-q")]
    assert (group.started, group.waiting, group.preempted) == (1, 0, 2)  # only the job counted in it
    assert out[("quota", "root")].started == 1
    assert ("quota", "vision") not in out  # no job's group


def test_a_node_with_only_waiting_jobs_has_no_percentiles_but_a_longest_wait() -> None:
    out = node_waits([JobWait("nlp", None, submit=10.0, start=None, finished=False)], PARENTS, end=70.0)
    nlp = out[("queue", "nlp")]
    assert (nlp.p50, nlp.p95, nlp.longest, nlp.waiting) == (None, None, 60.0, 1)


def test_periods_are_whole_hours_or_days_by_submission_and_leave_out_empty_ones() -> None:
    from engine.waits import waits_by_period

    day = 86400.0
    jobs = [
        JobWait("nlp", None, submit=day + 10, start=day + 70, finished=True),  # day 1: waited 60 s
        JobWait("nlp", None, submit=day + 20, start=day + 620, finished=True),  # day 1: 600 s
        JobWait("vision", None, submit=3 * day + 5, start=None, finished=False),  # day 3: still waiting
    ]
    out = waits_by_period(jobs, PARENTS, 4 * day, day, [("queue", "nlp"), ("queue", "research")])
    nlp = out[("queue", "nlp")]
    assert [(p.time, p.started, p.waiting, p.p50, p.p95) for p in nlp] == [(day, 2, 0, 60.0, 600.0)]
    research = out[("queue", "research")]
    assert [(p.time, p.started, p.waiting, p.p95) for p in research] == [(day, 2, 0, 600.0), (3 * day, 0, 1, None)]


def test_a_subtree_is_its_tops_and_everything_under_them() -> None:
    assert PARENTS.subtree("queue", ["research"]) == {"research", "nlp", "vision"}
    assert PARENTS.subtree("queue", ["nlp", "vision"]) == {"nlp", "vision"}
    assert PARENTS.subtree("quota", []) == set()
    assert PARENTS.path("nlp", "nlp-q") == [
        ("queue", "nlp"),
        ("queue", "research"),
        ("queue", "root"),
        ("quota", "nlp-q"),
        ("quota", "root"),
    ]
