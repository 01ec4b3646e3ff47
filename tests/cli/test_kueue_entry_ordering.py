"""Kueue's order of a scheduling cycle's heads, as whole ``fairway simulate`` sessions: ``TestEntryOrdering``
(kubernetes-sigs/kueue at commit ff69552e79ad21652c36caa97038382e55625cf7, ``pkg/scheduler/scheduler_test.go``; Fair
Sharing off, ``makeClassicalIterator``): the less borrowing first (Kueue's ``Borrowing``, the height of the lowest
Cohort whose quota holds the workload), then the higher priority, then the older.

How a case becomes a session: each entry is the one pending job (one core) of a ClusterQueue of its own, in a tree
``t`` with two child Cohorts ``s1`` and ``s2``: an entry that borrows nothing has a ClusterQueue of one core in
``s1``; one of ``Borrowing: 1`` a ClusterQueue without quota in ``s1`` (the quota is ``s1``'s, height 1); one of
``Borrowing: 2`` a ClusterQueue without quota in ``s2`` (the quota is ``t``'s, height 2). A lender ClusterQueue in
``s1`` has one core for every borrower but the last Kueue takes, so every head fits as the cycle opens (Kueue
nominates them all on one snapshot) and all but the last still fit when their turn comes: the last waits, and its
message names the heads taken before it, in the order taken. When the case's last entry borrows nothing (it would
fit whenever it comes), a witness is added: one more head, borrowing at height 1, created last, which Kueue takes
after every head that borrows nothing and which finds no room left. The workloads are named as Kueue's with ``-`` for
``_``; their ClusterQueues ``q1``, ``q2``, ... in the case's input order, so that two heads equal on all three keys
keep that order, as Kueue's sort of so few entries does (Fairway then goes by name). The pods, nodes and flavors are
the scheduler table's (``tests/cli/test_kueue_scheduler_table.py``), with its ClusterQueues.

Not rows, with the reason: ``SKIPPED``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controlplane.cli import main
from tests.cli.test_kueue_scheduler_table import CQ, WL, Row, manifests, pod_name, with_base

# an entry: name, borrowing height (Kueue's ``assignment.Borrowing``), priority, creation (seconds)
Entry = tuple[str, int, int, int]

INPUT: list[Entry] = [
    ("old-borrowing", 1, 0, 0),
    ("old", 0, 0, 1),
    ("new", 0, 0, 3),
    ("high-pri-borrowing", 1, 1, 3),
    ("new-high-pri", 0, 1, 4),
    ("new-borrowing", 1, 0, 3),
    ("evicted-borrowing", 1, 0, 1),  # Kueue: evicted at second 2 (PodsReady timeout); the creation is used here
    ("recently-evicted", 0, 0, 0),  # Kueue: evicted at second 2 (PodsReady timeout); the creation is used here
    ("high-pri-borrowing-more", 2, 1, 3),
]
PREEMPTED_INPUT: list[Entry] = [
    ("old-mid-recently-preempted-in-queue", 0, 1, 0),
    ("old-mid-recently-reclaimed-while-borrowing", 0, 1, 0),
    ("old-mid-more-recently-reclaimed-while-borrowing", 0, 1, 0),
    ("old-mid-not-preempted-yet", 0, 1, 1),
    ("preemptor", 0, 2, 7),
]
PREEMPTOR_INPUT: list[Entry] = [
    ("preemptor-borrowing", 1, 1, 1),
    ("preemptor-not-borrowing", 0, 1, 2),
    ("not-preemptor-not-borrowing", 0, 2, 0),
]

CASES: dict[str, tuple[list[Entry], list[str]]] = {
    "Priority sorting is enabled (default) using pods-ready Creation timestamp": (
        INPUT,
        [
            "new-high-pri",
            "recently-evicted",
            "old",
            "new",
            "high-pri-borrowing",
            "old-borrowing",
            "evicted-borrowing",
            "new-borrowing",
            "high-pri-borrowing-more",
        ],
    ),
    "Some workloads are preempted; Priority sorting is enabled": (
        PREEMPTED_INPUT,
        [
            "preemptor",
            "old-mid-recently-preempted-in-queue",
            "old-mid-recently-reclaimed-while-borrowing",
            "old-mid-more-recently-reclaimed-while-borrowing",
            "old-mid-not-preempted-yet",
        ],
    ),
    "Some workloads are preemptors; PrioritizePreemptorWorkloads is disabled": (
        PREEMPTOR_INPUT,
        ["not-preemptor-not-borrowing", "preemptor-not-borrowing", "preemptor-borrowing"],
    ),
}
SKIPPED = {
    "Priority sorting is enabled (default) using pods-ready Eviction timestamp (default)": "Kueue orders a workload "
    "evicted by waitForPodsReady's timeout by the time of its eviction; Fairway keeps no such time (a released gang "
    "waits its backoff, then is ordered by its creation)",
    "Priority sorting is disabled using pods-ready Eviction timestamp": "the feature gate PrioritySortingWithinCohort "
    "off (on by default); Fairway always sorts by priority; and the eviction time, as above",
    "Priority sorting is disabled using pods-ready Creation timestamp": "PrioritySortingWithinCohort off, as above",
    "Some workloads are preempted; Priority sorting is disabled": "PrioritySortingWithinCohort off, as above (with "
    "it off Kueue also orders a workload reclaimed while borrowing by the time of its preemption)",
    "Some workloads are preemptors; PrioritizePreemptorWorkloads is enabled": "the feature gate "
    "PrioritizePreemptorWorkloads (alpha, off by default): Fairway has no head waiting for its victims across cycles "
    "(a session evicts them and places the preemptor at once)",
}
WITNESS: Entry = ("witness", 1, 0, 59)


def row_of(entries: list[Entry]) -> tuple[Row, dict[str, str]]:
    """The session's row, and each ClusterQueue's entry."""
    queues: dict[str, CQ] = {}
    workloads: list[WL] = []
    names: dict[str, str] = {}
    for i, (name, level, priority, second) in enumerate(entries, 1):
        queue = f"q{i}"
        cohort, quota = ("s2" if level == 2 else "s1"), ("cpu@default=1" if level == 0 else "cpu@default=0")
        queues[queue] = CQ(cohort, quota)
        workloads.append(WL(f"{queue}/{name}", queue, "cpu=1", priority=priority, second=second))
        names[queue] = name
    borrowers = sum(1 for _, level, _, _ in entries if level)
    queues["lender"] = CQ("s1", f"cpu@default={borrowers - 1}")
    row = Row(
        with_base(**queues),
        tuple(workloads),
        {},
        cohorts=(("t", None, ""), ("s1", "t", ""), ("s2", "t", "")),
    )
    return row, names


def cycle_order(tmp_path: Path, capsys: Any, entries: list[Entry]) -> list[str]:
    """The order the session's cycle took the heads in: those admitted, as the waiting head's message names them,
    then the waiting head."""
    row, names = row_of(entries)
    path = tmp_path / "in.yaml"
    path.write_text(manifests(row))
    code = main(["simulate", "-f", str(path), "-o", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    keys = {f"{queue}/{pod_name(f'{queue}/{name}')}": name for queue, name in names.items()}
    waiting = [k for k in keys if "no longer fits once" in doc["podgroups"][k].get("message", "")]
    assert len(waiting) == 1, {k: doc["podgroups"][k].get("message") for k in keys}
    message = doc["podgroups"][waiting[0]]["message"]
    before = message.split("no longer fits once ", 1)[1].split(" took theirs", 1)[0].split(", ")
    assert sum(1 for k in keys if doc["podgroups"][k]["phase"] != "Pending") == len(before)
    return [keys[k] for k in before] + [keys[waiting[0]]]


@pytest.mark.parametrize("name", sorted(CASES))
def test_kueue_entry_ordering(tmp_path: Path, capsys: Any, name: str) -> None:
    entries, want = CASES[name]
    if not next(level for n, level, _, _ in entries if n == want[-1]):  # Kueue's last borrows nothing
        entries, want = [*entries, WITNESS], [*want, WITNESS[0]]
    assert cycle_order(tmp_path, capsys, entries) == want
