"""The replay's result for people (``frontend.presenters.replay``): each cell "as it happened → with the changes" in
words, a change only where the words differ, coloured by what is better for the team; utilisation held to the
window's end; the charts' teams chosen and capped."""

from __future__ import annotations

import copy
from typing import Any

from frontend.presenters import replay as present


def _team(**over: Any) -> dict[str, Any]:
    team: dict[str, Any] = {
        "waiting": {"p50": 30.0, "p95": 600.0, "max": 900.0},
        "jobs": {"started": 4, "finished": 3, "waiting": 1},
        "gpuHours": {"used": 12.5, "borrowed": 2.0, "lent": 0.0},
        "evictions": {"preempted": 2, "recycled": 0},
        "share": [],
    }
    for path, value in over.items():
        group, metric = path.split("__")
        team[group][metric] = value
    return team


def _report(teams: dict[str, Any], util: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "window": {"from": "2026-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z", "period": 1.0},
        "sessions": 10,
        "teams": teams,
        "cluster": {
            "utilisation": util or {},
            "completedJobs": 3,
            "gpuHoursUsed": 12.5,
            "idleGpuHoursWhileWaiting": 1.0,
        },
    }


def test_cells_say_before_and_after_in_words_and_colour_what_is_better() -> None:
    before = _report({"queue/nlp": _team(), "quota/nlp": _team()})
    after = copy.deepcopy(before)
    after["teams"]["queue/nlp"] = _team(waiting__p50=30.4, waiting__p95=300.0, jobs__started=6, evictions__preempted=5)
    rows = {(r["kind"], r["team"]): r for r in present.team_rows({"baseline": before, "proposal": after})}
    queue = rows[("queue", "nlp")]
    p50, p95, started = queue["cells"][0], queue["cells"][1], queue["cells"][2]
    assert (p50["before"], p50["after"], p50["changed"]) == ("30 s", "30 s", False)  # 30.4 s reads as 30 s
    assert (p95["before"], p95["after"], p95["css"]) == ("10 min", "5 min", "good")  # a shorter wait
    assert (started["before"], started["after"], started["css"]) == ("4", "6", "good")
    assert queue["cells"][8]["css"] == "bad"  # more pods preempted
    assert queue["changed"] and not rows[("quota group", "nlp")]["changed"]
    assert queue["url"] == "/queues/nlp/" and rows[("quota group", "nlp")]["url"] == "/quotas/nlp/"


def test_utilisation_is_held_to_the_windows_end_and_cpu_comes_first() -> None:
    util = {"nvidia.com/gpu": [["2026-01-01T00:00:00Z", 0.5]], "cpu": [["2026-01-01T00:00:00Z", 0.25]]}
    series = present.utilisation({"baseline": _report({}, util), "proposal": _report({}, {})})
    assert list(series) == ["cpu", "nvidia.com/gpu"]
    assert series["cpu"]["before"] == [["2026-01-01T00:00:00Z", 0.25], ["2026-01-02T00:00:00Z", 0.25]]
    assert series["cpu"]["after"] == []


def test_the_charts_show_the_teams_with_work_the_longest_waits_first_at_most_25() -> None:
    teams = {f"queue/t{i:02}": _team(waiting__p95=float(i)) for i in range(30)}
    teams["queue/idle"] = _team(jobs__started=0, waiting__p50=None, waiting__p95=None, gpuHours__borrowed=0.0)
    rows = present.wait_rows({"baseline": _report(teams), "proposal": _report(teams)})
    assert len(rows) == present.CHART_TEAMS and rows[0]["team"] == "t29"
    assert "idle" not in [r["team"] for r in rows]
    borrowers = present.borrow_rows({"baseline": _report(teams), "proposal": _report(teams)})
    assert "idle" not in [r["team"] for r in borrowers]


def test_the_trees_roots_are_the_clusters_waits_not_teams() -> None:
    """A tree's root counts every job of its tree: its row is the cluster's, so the table and the charts leave the
    roots out (those the report lists, and ``root`` of both trees in a result stored before it listed them), and the
    cluster's table gives the queue tree's root's waits, a sub-second median read as "under 1 s"."""
    before = _report({"queue/root": _team(waiting__p50=0.4), "quota/org": _team(), "queue/nlp": _team()})
    before["roots"] = ["queue/root", "quota/org"]
    after = copy.deepcopy(before)
    after["teams"]["queue/root"] = _team(waiting__p50=0.4, waiting__p95=60.0)
    result = {"baseline": before, "proposal": after}
    assert [(r["kind"], r["team"]) for r in present.team_rows(result)] == [("queue", "nlp")]
    assert [r["team"] for r in present.wait_rows(result)] == ["nlp"]
    assert [r["team"] for r in present.borrow_rows(result)] == ["nlp"]
    rows = {r["label"]: r for r in present.cluster_rows(result)}
    p50, p95 = rows["Wait p50, every job that started"], rows["Wait p95, every job that started"]
    assert (p50["before"], p50["after"], p50["changed"]) == ("under 1 s", "under 1 s", False)
    assert (p95["before"], p95["after"], p95["css"]) == ("10 min", "1 min", "good")
    stored_before = _report({"queue/root": _team(), "quota/root": _team(), "quota/nlp": _team()})
    assert [r["team"] for r in present.team_rows({"baseline": stored_before})] == ["nlp"]
