"""Replay in virtual time (issue 29): the trace format (``trace``), the virtual-time loop on the real engine
(``loop``) and its report (``report``). Pure: no Django, no clock (time comes from the trace)."""

from __future__ import annotations

from typing import Any

from engine.replay.loop import ReplayError, ReplayRun, replay, tree_snapshot
from engine.replay.report import compare_reports, render_table, run_report, tree_roots
from engine.replay.trace import VERSION, Trace, TraceError, read_trace, trace_lines

__all__ = [
    "VERSION",
    "ReplayError",
    "ReplayRun",
    "Trace",
    "TraceError",
    "compare_reports",
    "read_trace",
    "render_table",
    "replay",
    "replay_document",
    "replay_result",
    "run_report",
    "trace_lines",
    "tree_roots",
    "tree_snapshot",
]


def replay_document(trace: Trace, **kwargs: object) -> dict[str, object]:
    """The replay's document: ``baseline`` (and with ``changes``, ``proposal`` and ``differences``)."""
    changes = kwargs.pop("changes", None)
    baseline = run_report(replay(trace, **kwargs))  # type: ignore[arg-type]
    proposal = run_report(replay(trace, changes=changes, **kwargs)) if changes else None  # type: ignore[arg-type]
    return replay_result(baseline, proposal, seed=kwargs.get("seed", 0))


def replay_result(
    baseline: dict[str, Any], proposal: dict[str, Any] | None = None, *, seed: object = 0
) -> dict[str, object]:
    """The document of a baseline's report and, when there is one, a proposal's with the differences team by
    team (what ``fairway replay -o json`` prints)."""
    doc: dict[str, object] = {"version": 1, "seed": seed, "baseline": baseline}
    if proposal is not None:
        doc["proposal"] = proposal
        doc["differences"] = compare_reports(baseline, proposal)
    return doc
