"""Kueue's scheduling cycle in ``fairway simulate`` (``engine.flavors._Cycle``) beyond the one cycle of the
TestSchedule rows (``test_kueue_scheduler_table``): what the next sessions do, as Kueue's next cycles, and the
reason a waiting job is given."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from controlplane.cli import main
from tests.cli.test_kueue_scheduler_table import ROWS, WL, manifests, pod_name

LP_ROW = "capacity blocked when lending clusterqueue not guaranteed to reclaim (ReclaimWithinCohort=LowerPriority)"
OVER_ROW = "cannot borrow if cohort was assigned and would result in overadmission"


def simulate(tmp_path: Path, capsys: Any, text: str, sessions: int) -> dict[str, Any]:
    path = tmp_path / "in.yaml"
    path.write_text(text)
    code = main(["simulate", "-f", str(path), "-o", "json", "--sessions", str(sessions)])
    out = capsys.readouterr()
    assert code == 0, out.err
    doc: dict[str, Any] = json.loads(out.out)
    return doc


def nodes_of(doc: dict[str, Any], queue: str, workload: str) -> set[str]:
    prefix = f"{queue}/{pod_name(workload)}-"
    return {n for k, n in doc["bindings"].items() if k.startswith(prefix)}


def test_the_quota_kept_for_a_preemption_without_candidates_holds_one_session(tmp_path: Path, capsys: Any) -> None:
    # Kueue: the lender's head keeps its quota for one cycle, is set aside as inadmissible, and the next cycle admits
    # the borrower
    one = simulate(tmp_path, capsys, manifests(ROWS[LP_ROW]), 1)
    assert one["bindings"] == {}
    message = one["podgroups"]["clusterqueueb/eng-beta--b1-pending"]["message"]
    assert "clusterqueuea keeps 2 GPUs of example.com/gpu (on-demand)" in message
    assert "reclaimWithinCohort (LowerPriority)" in message
    two = simulate(tmp_path, capsys, manifests(ROWS[LP_ROW]), 2)
    assert nodes_of(two, "clusterqueueb", "eng-beta/b1-pending") == {"node-on-demand"}
    assert not nodes_of(two, "clusterqueuea", "eng-alpha/a2-pending")


def test_a_head_that_no_longer_fits_takes_the_next_flavor_next_session(tmp_path: Path, capsys: Any) -> None:
    one = simulate(tmp_path, capsys, manifests(ROWS[OVER_ROW]), 1)
    assert not nodes_of(one, "eng-beta", "eng-beta/new")
    message = one["podgroups"]["eng-beta/eng-beta--new"]["message"]
    assert "no longer fits once eng-alpha/eng-alpha--new took theirs" in message
    two = simulate(tmp_path, capsys, manifests(ROWS[OVER_ROW]), 2)
    assert nodes_of(two, "eng-alpha", "eng-alpha/new") == {"node-on-demand"}
    assert nodes_of(two, "eng-beta", "eng-beta/new") == {"node-spot"}


def test_later_jobs_of_a_waiting_head_wait_behind_it(tmp_path: Path, capsys: Any) -> None:
    # a second, younger job of eng-beta would fit at once; it waits behind its head, as in Kueue, where
    # the head comes back first in the next cycle
    row = ROWS[OVER_ROW]
    row = replace(row, workloads=(*row.workloads, WL("eng-beta/second", "eng-beta", "cpu=1", 1, second=5)))
    one = simulate(tmp_path, capsys, manifests(row), 1)
    assert not nodes_of(one, "eng-beta", "eng-beta/second")
    message = one["podgroups"]["eng-beta/eng-beta--second"]["message"]
    assert "waits behind eng-beta/eng-beta--new" in message
    two = simulate(tmp_path, capsys, manifests(row), 2)
    assert nodes_of(two, "eng-beta", "eng-beta/new") == {"node-spot"}
    assert nodes_of(two, "eng-beta", "eng-beta/second") == {"node-on-demand"}  # within its own nominal quota
