"""Two clauses of Kueue's preemption that Kueue's tables do not reach on their own, each with a case where it decides:

* fair sharing preempts **nothing when no victim set makes the workload fit** (``fair_targets`` answers the set it
  took with ``fits`` false): in the ``kueuefair`` plugin's victims (``_targets``) and in the flavor assigner's
  preemption oracle (``engine.flavors._Assigner._simulate``: such a flavor has no candidates);
* the flavor assigner looks for victims beyond a ClusterQueue's nominal quota when the request fits a Cohort below the
  top of its tree (a **hierarchical advantage**, Kueue's ``mayReclaimInHierarchy`` in ``fitsResourceQuota``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import engine.session.run  # noqa: F401  (imports the plugins of a session)
from engine.manifests import load_manifests
from engine.session.session import Session
from tests.cli.test_kueue_cycle import nodes_of, simulate
from tests.cli.test_kueue_fair_preemption_sessions import manifests as fair_manifests
from tests.cli.test_kueue_scheduler_table import ANY, CQ, LP, WL, Row, manifests, with_base
from tests.unit.test_kueue_fair_preemption import cohort, cq

FAIR_CONFIGURATION = (
    "---\napiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nfairSharing: {enable: true}\n"
)


def test_fair_sharing_takes_no_victims_when_no_set_makes_room() -> None:
    # a (4 cpu) runs a0 at priority 10, which its policy may not preempt; b (0) borrows 3. An incoming 4 cpu of a at
    # priority 5: even with b's three gone, a0 leaves 3 of the cohort's 4. Fair sharing's strategies take b1 and b2
    # and stop; the set does not make room, so Kueue preempts nothing
    spec = {
        "nodes": [cq("a", "all", 4), cq("b", "all", 0), cohort("all")],
        "admitted": [("a0", "a", 1, 10), ("b1", "b", 1, 0), ("b2", "b", 1, 0), ("b3", "b", 1, 0)],
        "incoming": ("a", 4, 5),
    }
    snapshot = load_manifests([("in.yaml", fair_manifests(spec))]).snapshot
    ssn = Session(snapshot, snapshot.policy, 0.0)
    plugin = ssn.framework.plugin("kueuefair")
    assert plugin is not None
    tasks = {t.uid: t for job in ssn.jobs.values() for t in job.tasks}
    others = [tasks[k] for k in ("a/a0", "b/b1", "b/b2", "b/b3")]
    assert plugin.reclaimable(tasks["a/incoming"], others) == []
    assert plugin.preemptable(tasks["a/incoming"], others) == []


def test_a_flavor_where_fair_sharing_finds_no_set_is_passed_over(tmp_path: Path, capsys: Any) -> None:
    # the same numbers on flavor f1; on f2, a's 4 cpu are free. With whenCanPreempt MayStopSearch a flavor that
    # fits by reclaiming would stop the search; f1 has no candidates (no set makes room), so f2 is taken at once
    queues = {
        "a": CQ("all", "cpu@f1=4,cpu@f2=4", within=LP, reclaim=ANY, when_can_preempt="MayStopSearch"),
        "b": CQ("all", "cpu@f1=0,cpu@f2=0"),
    }
    row = Row(
        with_base(**queues),
        (
            WL("a/a0", "a", "cpu=1", priority=10, flavor="f1"),
            *(WL(f"b/b{i}", "b", "cpu=1", flavor="f1") for i in (1, 2, 3)),
            WL("a/incoming", "a", "cpu=4", priority=5, second=1),
        ),
        {},
    )
    doc = simulate(tmp_path, capsys, manifests(row) + FAIR_CONFIGURATION, 1)
    assert doc["evictions"] == []
    assert nodes_of(doc, "a", "a/incoming") == {"node-f2"}


def test_a_hierarchical_advantage_lets_the_assigner_reclaim_beyond_nominal(tmp_path: Path, capsys: Any) -> None:
    # root <- team (4 cpu on f1) <- a (0); root <- b (4 cpu on f2), which borrows 3 of team's f1. An incoming 2 cpu of
    # a is beyond a's nominal quota (0) and a may not preempt while borrowing, but it fits team's own quota: Kueue's
    # oracle reclaims b's workload on f1, and with whenCanPreempt MayStopSearch that flavor is taken over f2, where it
    # would only borrow
    queues = {
        "a": CQ("team", "cpu@f1=0,cpu@f2=0", reclaim=ANY, when_can_preempt="MayStopSearch"),
        "b": CQ("root", "cpu@f1=0,cpu@f2=4"),
    }
    row = Row(
        with_base(**queues),
        (WL("b/b1", "b", "cpu=3", flavor="f1"), WL("a/incoming", "a", "cpu=2", second=1)),
        {},
        cohorts=(("root", None, ""), ("team", "root", "cpu@f1=4")),
    )
    doc = simulate(tmp_path, capsys, manifests(row), 1)
    assert doc["evictions"] == ["b/b--b1"]
    assert {k: v for k, v in doc["pipelined"].items() if k.startswith("a/")} == {"a/a--incoming-0": "node-f1"}
