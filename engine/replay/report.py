"""The replay's report (``docs/replay.md``): per team (each queue and quota group) and for the cluster, from a
``ReplayRun``; with a proposal, both runs and their differences team by team.

Amounts are for people: GPU-hours in GPUs (``nvidia.com/gpu`` and every other GPU resource together), waiting times
in seconds (JSON) or "12 min" (table), utilisation as a fraction of the schedulable nodes' allocatable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.objects import ROOT_GROUP, ROOT_QUEUE
from engine.replay.loop import ReplayRun
from engine.replay.trace import format_time
from engine.resources import is_gpu, whole_gpus
from engine.waits import QUEUE, QUOTA, JobWait, TreeParents, node_waits
from engine.wording import duration

__all__ = ["REPORT_VERSION", "compare_reports", "render_table", "run_report"]

REPORT_VERSION = 1
_TEAM_METRICS = (
    ("waiting", "p50"),
    ("waiting", "p95"),
    ("waiting", "max"),
    ("jobs", "started"),
    ("jobs", "finished"),
    ("jobs", "waiting"),
    ("gpuHours", "used"),
    ("gpuHours", "borrowed"),
    ("gpuHours", "lent"),
    ("evictions", "preempted"),
    ("evictions", "recycled"),
)


def _team() -> dict[str, Any]:
    return {
        "waiting": {"p50": None, "p95": None, "max": None},
        "jobs": {"started": 0, "finished": 0, "waiting": 0},
        "gpuHours": {"used": 0.0, "borrowed": 0.0, "lent": 0.0},
        "evictions": {"preempted": 0, "recycled": 0},
        "share": [],
    }


def run_report(run: ReplayRun) -> dict[str, Any]:
    """The report of one run (JSON-ready)."""
    teams: dict[str, dict[str, Any]] = {}

    parents = TreeParents(run.parents, run.group_parents)

    def nodes_of(queue: str, group: str | None) -> list[str]:
        return [f"{tree}/{name}" for tree, name in parents.path(queue, group)]

    jobs = [
        JobWait(
            queue=o.job.queue,
            group=o.group,
            submit=o.job.submit,
            start=o.start,
            finished=o.finish is not None,
            preempted=sum(n for a, n in o.evictions.items() if a != "recycle"),
            recycled=o.evictions.get("recycle", 0),
        )
        for _key, o in sorted(run.outcomes.items())
        if o.job.submit <= run.end
    ]
    for (tree, name), w in node_waits(jobs, parents, run.end).items():
        team = teams[f"{tree}/{name}"] = _team()
        team["waiting"] = {"p50": w.p50, "p95": w.p95, "max": w.longest}
        team["jobs"] = {"started": w.started, "finished": w.finished, "waiting": w.waiting}
        team["evictions"] = {"preempted": w.preempted, "recycled": w.recycled}
    for _job, queue, group, start, end, request in run.runs:
        gpu_hours = whole_gpus(request) * (end - start) / 3600
        if gpu_hours:
            for node in nodes_of(queue, group):
                teams.setdefault(node, _team())["gpuHours"]["used"] += gpu_hours
    _borrowing(run, teams)
    for team in teams.values():
        for k, v in team["gpuHours"].items():
            team["gpuHours"][k] = round(v, 2)
    return {
        "window": {"from": format_time(run.start), "to": format_time(run.end), "period": run.period},
        "sessions": run.sessions,
        "periodsSkipped": max(0, run.grid_points - run.sessions),
        "teams": dict(sorted(teams.items())),
        "roots": sorted(
            f"{tree}/{name}"
            for tree, parents_of in ((QUEUE, run.parents), (QUOTA, run.group_parents))
            for name, parent in parents_of.items()
            if parent is None and f"{tree}/{name}" in teams
        ),
        "cluster": _cluster(run),
        "jobs": _jobs(run),
        "warnings": list(run.warnings),
    }


def _jobs(run: ReplayRun) -> dict[str, dict[str, Any]]:
    """Each job's submit, start and finish in the replay, its recorded start, and its flavors."""
    return {
        key: {
            "submit": format_time(o.job.submit),
            "start": None if o.start is None else format_time(o.start),
            "finish": None if o.finish is None else format_time(o.finish),
            "recordedStart": None if o.job.start is None else format_time(o.job.start),
            # Kueue's ResourceFlavors (only where the cluster has some): the replay's and the recorded one
            **({"flavors": dict(sorted(o.flavors.items()))} if o.flavors else {}),
            **({"recordedFlavors": dict(sorted(o.job.flavors.items()))} if o.job.flavors else {}),
        }
        for key, o in sorted(run.outcomes.items())
    }


def _borrowing(run: ReplayRun, teams: dict[str, dict[str, Any]]) -> None:
    """Borrowed and lent GPU-hours and the share series, from each session's values at open, held until the next."""
    for i, (t, values) in enumerate(run.values):
        nxt = run.values[i + 1][0] if i + 1 < len(run.values) else t
        hours = (nxt - t) / 3600
        stamp = format_time(t)
        for name in values.queues:
            key = f"queue/{name}"
            if key not in teams:
                continue
            allocated, deserved, q_borrowed, q_lent = values.queues.flows_of(name)
            team = teams[key]
            team["gpuHours"]["borrowed"] += whole_gpus(q_borrowed) * hours
            team["gpuHours"]["lent"] += whole_gpus(q_lent) * hours
            point = [stamp, round(whole_gpus(allocated), 3), round(whole_gpus(deserved), 3)]
            if not team["share"] or team["share"][-1][1:] != point[1:]:
                team["share"].append(point)
        borrowed, lent = values.quotas.amounts("borrowed"), values.quotas.amounts("lent")
        used, runtime = values.quotas.amounts("used"), values.quotas.amounts("runtime")
        for name in values.quotas:
            key = f"quota/{name}"
            if key not in teams:
                continue
            team = teams[key]
            team["gpuHours"]["borrowed"] += whole_gpus(borrowed.get(name)) * hours
            team["gpuHours"]["lent"] += whole_gpus(lent.get(name)) * hours
            point = [stamp, round(whole_gpus(used.get(name)), 3), round(whole_gpus(runtime.get(name)), 3)]
            if not team["share"] or team["share"][-1][1:] != point[1:]:
                team["share"].append(point)


def _cluster(run: ReplayRun) -> dict[str, Any]:
    utilisation: dict[str, list[list[Any]]] = {}
    idle = 0.0
    for i, s in enumerate(run.samples):
        nxt = run.samples[i + 1].time if i + 1 < len(run.samples) else run.end
        cap_gpu, used_gpu = whole_gpus(s.capacity), whole_gpus(s.used)
        if s.waiting:
            idle += max(0.0, cap_gpu - used_gpu) * (nxt - s.time) / 3600
        for r in sorted(set(s.capacity) | set(s.used)):
            if r not in ("cpu", "memory") and not is_gpu(r):
                continue
            cap = s.capacity.get(r, 0)
            frac = round(s.used.get(r, 0) / cap, 4) if cap else 0.0
            series = utilisation.setdefault(r, [])
            if not series or series[-1][1] != frac:
                series.append([format_time(s.time), frac])
    completed = sum(1 for o in run.outcomes.values() if o.finish is not None)
    gpu_hours = sum(whole_gpus(req) * (end - start) / 3600 for _j, _q, _g, start, end, req in run.runs)
    return {
        "utilisation": utilisation,
        "completedJobs": completed,
        "gpuHoursUsed": round(gpu_hours, 2),
        "idleGpuHoursWhileWaiting": round(idle, 2),
    }


def compare_reports(baseline: dict[str, Any], proposal: dict[str, Any]) -> dict[str, Any]:
    """Per team, each metric that differs: ``{"before", "after", "change"}`` (change: after - before, or null)."""
    out: dict[str, Any] = {}
    for team in sorted(set(baseline["teams"]) | set(proposal["teams"])):
        a, b = baseline["teams"].get(team, _team()), proposal["teams"].get(team, _team())
        diffs: dict[str, Any] = {}
        for group, metric in _TEAM_METRICS:
            x, y = a[group][metric], b[group][metric]
            if x != y:
                change = None if x is None or y is None else round(y - x, 2)
                diffs[f"{group}.{metric}"] = {"before": x, "after": y, "change": change}
        if diffs:
            out[team] = diffs
    ca, cb = baseline["cluster"], proposal["cluster"]
    cluster = {
        k: {"before": ca[k], "after": cb[k], "change": round(cb[k] - ca[k], 2)}
        for k in ("completedJobs", "gpuHoursUsed", "idleGpuHoursWhileWaiting")
        if ca[k] != cb[k]
    }
    return {"teams": out, "cluster": cluster}


#: the trees' roots of a report written before reports listed them (``roots``)
_DEFAULT_ROOTS = (f"{QUEUE}/{ROOT_QUEUE}", f"{QUOTA}/{ROOT_GROUP}")


def tree_roots(document: Mapping[str, Any]) -> set[str]:
    """The teams of a replay's document (``baseline`` and ``proposal``) that are a tree's root: each counts every job
    of its tree, the cluster's figures rather than a team's."""
    runs = [document[run] for run in ("baseline", "proposal") if isinstance(document.get(run), Mapping)]
    return {name for run in runs for name in run.get("roots", _DEFAULT_ROOTS)}


def _wait(seconds: float | None) -> str:
    return "-" if seconds is None else duration(seconds)


def _table(rows: list[list[str]], headers: list[str]) -> list[str]:
    cells = [headers, *rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]


def _team_rows(report: Mapping[str, Any]) -> list[str]:
    """A row per team; a tree's root says that it counts every job of its tree."""
    rows = []
    roots = set(report.get("roots", ()))
    for name, t in report["teams"].items():
        w, j, g, e = t["waiting"], t["jobs"], t["gpuHours"], t["evictions"]
        rows.append(
            [
                f"{name} (every job)" if name in roots else name,
                f"{_wait(w['p50'])} / {_wait(w['p95'])} / {_wait(w['max'])}",
                f"{j['started']} / {j['finished']} / {j['waiting']}",
                f"{g['used']:g} / {g['borrowed']:g} / {g['lent']:g}",
                f"{e['preempted']} / {e['recycled']}",
            ]
        )
    return _table(
        rows,
        [
            "TEAM",
            "WAIT P50 / P95 / MAX",
            "STARTED / FINISHED / WAITING",
            "GPU-H USED / BORROWED / LENT",
            "PREEMPTED / RECYCLED",
        ],
    )


def _cluster_lines(report: Mapping[str, Any]) -> list[str]:
    c = report["cluster"]
    lines = [
        f"sessions run: {report['sessions']} ({report['periodsSkipped']} periods skipped)",
        f"completed jobs: {c['completedJobs']}",
        f"GPU-hours used: {c['gpuHoursUsed']:g}",
        f"idle GPU-hours while work waited: {c['idleGpuHoursWhileWaiting']:g}",
    ]
    for r, series in c["utilisation"].items():
        if series:
            mean = sum(p[1] for p in series) / len(series)
            lines.append(f"utilisation {r}: {len(series)} changes, mean of the points {mean:.0%}")
    return lines


def render_table(document: Mapping[str, Any]) -> str:
    """The report for people: with a proposal, the differences team by team first."""
    lines: list[str] = []
    if "proposal" in document:
        lines += ["DIFFERENCES (baseline -> proposal)", *_difference_lines(document["differences"]), "", "BASELINE"]
    lines += [*_team_rows(document["baseline"]), "", *_cluster_lines(document["baseline"])]
    if "proposal" in document:
        lines += ["", "PROPOSAL", *_team_rows(document["proposal"]), "", *_cluster_lines(document["proposal"])]
    for w in document.get("warnings", []):
        lines.append(f"warning: {w}")
    return "\n".join(lines)


def _difference_lines(diff: Mapping[str, Any]) -> list[str]:
    """A line per difference that shows at the table's precision (a wait that moved by less than a second, as
    ``0 s -> 0 s``, is left out and counted)."""
    lines, hidden = [], 0
    for team, metrics in diff["teams"].items():
        for metric, d in metrics.items():
            before, after = _say(metric, d["before"]), _say(metric, d["after"])
            if before == after:
                hidden += 1
                continue
            lines.append(f"  {team} {metric}: {before} -> {after}")
    lines += [f"  cluster {metric}: {d['before']:g} -> {d['after']:g}" for metric, d in diff["cluster"].items()]
    if hidden:
        lines.append(f"  (and {hidden} under a second or below the shown precision)")
    return lines or ["  none"]


def _say(metric: str, value: Any) -> str:
    if metric.startswith("waiting."):
        return _wait(value)
    return "-" if value is None else f"{value:g}"
