"""Replay in virtual time (issue 29): the trace format (``trace``), the virtual-time loop on the real engine
(``loop``) and its report (``report``). Pure: no Django, no clock (time comes from the trace)."""

from __future__ import annotations

from engine.replay.loop import ReplayError, ReplayRun, replay, tree_snapshot
from engine.replay.report import compare_reports, render_table, run_report
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
    "run_report",
    "trace_lines",
    "tree_snapshot",
]


def replay_document(trace: Trace, **kwargs: object) -> dict[str, object]:
    """The replay's document: ``baseline`` (and with ``changes``, ``proposal`` and ``differences``)."""
    changes = kwargs.pop("changes", None)
    baseline = run_report(replay(trace, **kwargs))  # type: ignore[arg-type]
    doc: dict[str, object] = {"version": 1, "seed": kwargs.get("seed", 0), "baseline": baseline}
    if changes:
        proposal = run_report(replay(trace, changes=changes, **kwargs))  # type: ignore[arg-type]
        doc["proposal"] = proposal
        doc["differences"] = compare_reports(baseline, proposal)
    return doc
