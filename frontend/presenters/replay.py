"""A replay run's result for people (``planning.replay``): the table a team lead reads (per team: waits, jobs, GPU-hours,
preemptions, before and after), and the rows the run page's Plotly figures take (``frontend.figures.replay_*``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.urls import reverse

from engine.objects import ROOT_QUEUE
from engine.replay import tree_roots
from engine.wording import duration

#: the most teams a chart shows (the table shows them all)
CHART_TEAMS = 25

_EMPTY_TEAM: dict[str, Any] = {
    "waiting": {"p50": None, "p95": None, "max": None},
    "jobs": {"started": 0, "finished": 0, "waiting": 0},
    "gpuHours": {"used": 0.0, "borrowed": 0.0, "lent": 0.0},
    "evictions": {"preempted": 0, "recycled": 0},
}


def _teams(result: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any], Mapping[str, Any]]]:
    before, after = result["baseline"]["teams"], result.get("proposal", result["baseline"])["teams"]
    roots = tree_roots(result)
    names = sorted((set(before) | set(after)) - roots, key=lambda n: (not n.startswith("queue/"), n))
    return [(n, before.get(n, _EMPTY_TEAM), after.get(n, _EMPTY_TEAM)) for n in names]


def _wait(seconds: float | None) -> str:
    return "no job started" if seconds is None else duration(seconds)


def _num(value: float) -> str:
    return f"{value:,.1f}".rstrip("0").rstrip(".") if isinstance(value, float) else f"{value:,}"


def _cell(before: Any, after: Any, kind: str, better: str) -> dict[str, Any]:
    """One "before → after" cell: ``kind`` "wait" (durations) or "count"; ``better`` "lower" or "higher" colours
    the change (``up``/``down`` as the what-if's deltas, ``good``/``bad`` for the reader)."""
    say = _wait if kind == "wait" else _num
    text_before, text_after = say(before), say(after)
    css = ""
    if better and before is not None and after is not None and before != after:
        improved = (after < before) if better == "lower" else (after > before)
        css = "good" if improved else "bad"
    changed = text_before != text_after  # what a person reads: 0.8 s and 0.7 s are both "0 s"
    return {"before": text_before, "after": text_after, "changed": changed, "css": css if changed else ""}


def _link(team: str) -> str:
    kind, _, name = team.partition("/")
    return reverse("frontend:queue" if kind == "queue" else "frontend:quota", args=[name])


def team_rows(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per team (every queue, then every quota group): waits p50 and p95, jobs started and finished, GPU-hours used,
    borrowed and lent, pods preempted (reclaim, preempt) and recycled, each before → after."""
    rows = []
    for name, b, a in _teams(result):
        kind, _, short = name.partition("/")
        rows.append(
            {
                "team": short,
                "kind": "queue" if kind == "queue" else "quota group",
                "url": _link(name),
                "cells": [
                    _cell(b["waiting"]["p50"], a["waiting"]["p50"], "wait", "lower"),
                    _cell(b["waiting"]["p95"], a["waiting"]["p95"], "wait", "lower"),
                    _cell(b["jobs"]["started"], a["jobs"]["started"], "count", "higher"),
                    _cell(b["jobs"]["finished"], a["jobs"]["finished"], "count", "higher"),
                    _cell(b["jobs"]["waiting"], a["jobs"]["waiting"], "count", "lower"),
                    _cell(b["gpuHours"]["used"], a["gpuHours"]["used"], "count", "higher"),
                    _cell(b["gpuHours"]["borrowed"], a["gpuHours"]["borrowed"], "count", "higher"),
                    _cell(b["gpuHours"]["lent"], a["gpuHours"]["lent"], "count", "lower"),
                    _cell(b["evictions"]["preempted"], a["evictions"]["preempted"], "count", "lower"),
                    _cell(b["evictions"]["recycled"], a["evictions"]["recycled"], "count", "lower"),
                ],
            }
        )
    for row in rows:
        row["changed"] = any(c["changed"] for c in row["cells"])
    return rows


def _label(name: str) -> str:
    kind, _, short = name.partition("/")
    return short if kind == "queue" else f"{short} (quota)"


def wait_rows(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The teams that started a job in either run, the longest p95 first, at most ``CHART_TEAMS``."""
    rows = [
        {
            "team": _label(n),
            "p50": (b["waiting"]["p50"], a["waiting"]["p50"]),
            "p95": (b["waiting"]["p95"], a["waiting"]["p95"]),
        }
        for n, b, a in _teams(result)
        if b["jobs"]["started"] or a["jobs"]["started"]
    ]
    rows.sort(key=lambda r: -max(v or 0.0 for v in r["p95"]))
    return rows[:CHART_TEAMS]


def borrow_rows(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The teams that borrowed or lent GPUs in either run, the most first, at most ``CHART_TEAMS``."""
    rows = [
        {
            "team": _label(n),
            "borrowed": (b["gpuHours"]["borrowed"], a["gpuHours"]["borrowed"]),
            "lent": (b["gpuHours"]["lent"], a["gpuHours"]["lent"]),
        }
        for n, b, a in _teams(result)
        if any((b["gpuHours"][k], a["gpuHours"][k]) != (0, 0) for k in ("borrowed", "lent"))
    ]
    rows.sort(key=lambda r: -max(*r["borrowed"], *r["lent"]))
    return rows[:CHART_TEAMS]


def _held(points: list[list[Any]], end: str) -> list[list[Any]]:
    """A step series (each value held until the next point) with its last value held to the window's ``end``, so
    that a chart draws it across the whole window (a single point draws no line)."""
    return [*points, [end, points[-1][1]]] if points else points


def utilisation(result: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per resource (cpu, memory, each GPU resource): the baseline's and the proposal's utilisation series, each
    held to the window's end."""
    end = result["baseline"]["window"]["to"]
    before = result["baseline"]["cluster"]["utilisation"]
    after = result.get("proposal", result["baseline"])["cluster"]["utilisation"]
    order = sorted(set(before) | set(after), key=lambda r: (r not in ("cpu", "memory"), r != "cpu", r))
    return {r: {"before": _held(before.get(r, []), end), "after": _held(after.get(r, []), end)} for r in order}


def cluster_rows(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The cluster's totals, before → after: the waits of every job (the queue tree's root's), then the totals."""
    b, a = result["baseline"], result.get("proposal", result["baseline"])
    root = f"queue/{ROOT_QUEUE}"
    every_b, every_a = b["teams"].get(root, _EMPTY_TEAM)["waiting"], a["teams"].get(root, _EMPTY_TEAM)["waiting"]
    return [
        {"label": "Wait p50, every job that started", **_cell(every_b["p50"], every_a["p50"], "wait", "lower")},
        {"label": "Wait p95, every job that started", **_cell(every_b["p95"], every_a["p95"], "wait", "lower")},
        {
            "label": "Jobs completed",
            **_cell(b["cluster"]["completedJobs"], a["cluster"]["completedJobs"], "count", "higher"),
        },
        {
            "label": "GPU-hours used",
            **_cell(b["cluster"]["gpuHoursUsed"], a["cluster"]["gpuHoursUsed"], "count", "higher"),
        },
        {
            "label": "Idle GPU-hours while work waited",
            **_cell(
                b["cluster"]["idleGpuHoursWhileWaiting"], a["cluster"]["idleGpuHoursWhileWaiting"], "count", "lower"
            ),
        },
        {"label": "Scheduling sessions replayed", **_cell(b["sessions"], a["sessions"], "count", "")},
    ]
