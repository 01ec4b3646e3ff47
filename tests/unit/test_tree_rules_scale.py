"""Issue 25, item 2: the tree rules on a 20,000-level chain and on wide trees, by behaviour (no timings).

A chain is refused at the first node past the depth limit, naming it and its depth; the rules run inside a request's
budget (their ``checkpoint`` is called as they go); the whole-tree check agrees with the node-by-node check the
simulate command used before (property test), and the wide tree of the benchmark is accepted.
"""

from __future__ import annotations

import io
import json
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import rules
from engine.limits import BudgetExceeded, Deadline, Limits
from engine.objects import ROOT_GROUP, ROOT_QUEUE, QueueSpec, QuotaGroupSpec, Snapshot
from engine.resources import ResourceList
from engine.simulate import SimulationError, validate_snapshot

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_tree_rules

from tests.support.examples import examples

CHAIN = 20_000


def queue_chain(n: int) -> dict[str, QueueSpec]:
    queues = {ROOT_QUEUE: QueueSpec(name=ROOT_QUEUE, parent=None)}
    parent = ROOT_QUEUE
    for i in range(n):
        name = f"q{i:05d}"
        queues[name] = QueueSpec(name=name, parent=parent)
        parent = name
    return queues


def quota_chain(n: int) -> dict[str, QuotaGroupSpec]:
    one, ten = ResourceList({"cpu": 1000}), ResourceList({"cpu": 10_000})
    groups = {ROOT_GROUP: QuotaGroupSpec(name=ROOT_GROUP, parent=None, is_parent=True)}
    parent = ROOT_GROUP
    for i in range(n):
        name = f"g{i:05d}"
        groups[name] = QuotaGroupSpec(name=name, parent=parent, is_parent=i < n - 1, min=one, max=ten)
        parent = name
    return groups


def test_a_20000_queue_chain_is_refused_at_the_first_queue_past_the_depth() -> None:
    errors = rules.validate_queue_tree(queue_chain(CHAIN), max_depth=5)
    assert [(e.field, e.code) for e in errors] == [("parent", "depth")]
    assert errors[0].message == ("queue q00005: depth 6 under parent q00004 exceeds the maximum allowed depth of 5")
    first = next(iter(rules.queue_tree_errors(queue_chain(CHAIN), max_depth=5)))
    assert first[0] == "q00005"


def test_a_20000_quota_group_chain_is_refused_at_the_first_group_past_the_depth() -> None:
    errors = rules.validate_quota_tree(quota_chain(CHAIN), max_depth=10)
    assert [(e.field, e.code) for e in errors] == [("parent", "depth")]
    assert errors[0].message == (
        "quota group g00010: depth 11 under parent g00009 exceeds the maximum allowed depth of 10"
    )


def test_simulate_names_the_document_of_the_first_node_past_the_depth() -> None:
    snap = Snapshot(queues=queue_chain(CHAIN))
    origins = {("Queue", f"q{i:05d}"): ("chain.yaml", i + 1, None) for i in range(CHAIN)}
    with pytest.raises(SimulationError) as caught:
        validate_snapshot(snap, origins, Limits(max_queue_depth=5))
    assert str(caught.value) == (
        "chain.yaml: document 6 (Queue q00005): parent: queue q00005: depth 6 under parent q00004 exceeds the "
        "maximum allowed depth of 5"
    )
    with pytest.raises(SimulationError, match=r"^ElasticQuota g00003: parent: quota group g00003: depth 4 "):
        validate_snapshot(Snapshot(quota_groups=quota_chain(CHAIN)), None, Limits(max_quota_group_depth=3))
    validate_snapshot(Snapshot(queues=queue_chain(7)), None, Limits(max_queue_depth=7))  # the setting decides


def test_a_20000_long_loop_is_refused_with_a_short_message() -> None:
    queues = queue_chain(CHAIN)
    queues["q00000"] = QueueSpec(name="q00000", parent=f"q{CHAIN - 1:05d}")  # closes the chain into a loop
    errors = rules.validate_queue_tree(queues, max_depth=5)
    assert {e.code for e in errors} == {"cycle"} and len(errors) == CHAIN
    assert errors[0].message.startswith("queue q00000: parent q19999 makes the parent chain loop (q00000 -> q19999")
    assert max(len(e.message) for e in errors) < 300
    small = {**queue_chain(3), "q00000": QueueSpec(name="q00000", parent="q00002")}
    assert "(q00000 -> q00002 -> q00001 -> q00000)" in rules.validate_queue_tree(small)[0].message


def test_a_missing_ancestor_names_the_queue_whose_parent_is_missing() -> None:
    queues = queue_chain(4)
    queues["q00000"] = QueueSpec(name="q00000", parent="gone")
    messages = [e.message for e in rules.validate_queue_tree(queues)]
    assert messages == [
        "queue q00000: parent queue gone does not exist",
        "queue q00001: ancestor queue gone (parent of q00000) does not exist",
        "queue q00002: ancestor queue gone (parent of q00000) does not exist",
        "queue q00003: ancestor queue gone (parent of q00000) does not exist",
    ]


class _Clock:
    """A clock that the test moves: the rules' checkpoint reads it, nothing waits."""

    def __init__(self) -> None:
        self.now = 0.0
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        if self.reads > 3:  # time passes once the rules are under way
            self.now = 100.0
        return self.now


@pytest.mark.parametrize("tree", ["queues", "quota groups"])
def test_the_rules_check_the_deadline_inside_their_loop(tree: str) -> None:
    deadline = Deadline(1.0, "FAIRWAY_REQUEST_BUDGET_SECONDS", clock=_Clock())
    deadline.progress = "checking the queue and quota trees"
    wide = {f"t{i:05d}": QueueSpec(name=f"t{i:05d}", parent=ROOT_QUEUE) for i in range(5_000)}
    with pytest.raises(BudgetExceeded, match=r"\(checking the queue and quota trees\)"):
        if tree == "queues":
            rules.validate_queue_tree(
                {ROOT_QUEUE: QueueSpec(name=ROOT_QUEUE, parent=None), **wide}, checkpoint=deadline.check
            )
        else:
            groups = {n: QuotaGroupSpec(name=n, parent=ROOT_GROUP) for n in wide}
            rules.validate_quota_tree(groups, checkpoint=deadline.check)
    assert deadline.clock.reads < 10  # stopped at the first checkpoint after the time passed, not at the end


def test_the_benchmarks_wide_tree_is_accepted_and_simulated(tmp_path: Path) -> None:
    from controlplane.cli import main

    path = bench_tree_rules.write(tmp_path / "wide.yaml", bench_tree_rules.wide_quota_tree(3, 40, nodes=2, pods=20))
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["simulate", "-f", str(path), "-o", "json"])
    assert code == 0, err.getvalue()
    doc = json.loads(out.getvalue())
    teams = [n for n in doc["quotas"] if "-team-" in n]
    assert len(teams) == 120 and len(doc["bindings"]) == 20
    # a team's min is 1 cpu, its max 2; runtime never passes max
    assert doc["quotas"]["dept-000-team-0000"]["min"] == {"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": "1"}
    assert doc["quotas"]["dept-000"]["min"]["cpu"] == "40"


# -- the whole-tree check against the node-by-node check simulate made before ---------------------------------------
NAMES = [f"n{i}" for i in range(8)]
AMOUNT = st.sampled_from([0, 1000, 2000, 4000])
# The strategies the composites draw from, made once: a strategy built inside a composite is looked up again in
# Hypothesis's cache (or built and checked again) at every draw, which cost more than the values themselves.
_CHOSEN = st.lists(st.sampled_from(NAMES), min_size=1, max_size=8, unique=True)
_QUEUE_PARENT = st.sampled_from([ROOT_QUEUE, *NAMES, "ghost"])
_GROUP_PARENT = st.sampled_from([ROOT_GROUP, *NAMES, "ghost"])
_GUARANTEE = {d: st.sampled_from([0, d]) for d in (0, 1000, 2000, 4000)}
_CAPABILITY = st.one_of(st.none(), AMOUNT)
_BOOLEANS = st.booleans()


@st.composite
def queue_trees(draw: Any) -> dict[str, QueueSpec]:
    queues = {ROOT_QUEUE: QueueSpec(name=ROOT_QUEUE, parent=None, capability=ResourceList({"cpu": 8000}))}
    for name in draw(_CHOSEN):
        parent = draw(_QUEUE_PARENT)
        deserved = draw(AMOUNT)
        guarantee = draw(_GUARANTEE[deserved])
        capability = draw(_CAPABILITY)
        queues[name] = QueueSpec(
            name=name,
            parent=parent,
            deserved=ResourceList({"cpu": deserved}),
            guarantee=ResourceList({"cpu": guarantee}),
            capability=ResourceList({} if capability is None else {"cpu": max(capability, deserved)}),
        )
    return queues


@st.composite
def quota_trees(draw: Any) -> dict[str, QuotaGroupSpec]:
    groups = {ROOT_GROUP: QuotaGroupSpec(name=ROOT_GROUP, parent=None, is_parent=True)}
    for name in draw(_CHOSEN):
        parent = draw(_GROUP_PARENT)
        mn = draw(AMOUNT)
        groups[name] = QuotaGroupSpec(
            name=name,
            parent=parent,
            is_parent=draw(_BOOLEANS),
            min=ResourceList({"cpu": mn}),
            max=ResourceList({"cpu": mn + draw(AMOUNT)}),
        )
    return groups


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(queue_trees(), st.integers(min_value=1, max_value=4))
def test_the_linear_queue_check_accepts_what_every_queue_alone_accepts(
    queues: dict[str, QueueSpec], depth: int
) -> None:
    alone = [
        n
        for n in sorted(queues)
        if n != ROOT_QUEUE
        and rules.validate_queue(
            {k: v for k, v in queues.items() if k != n}, queues[n], None, protect_root=False, max_depth=depth
        )
    ]
    assert bool(rules.validate_queue_tree(queues, max_depth=depth)) == bool(alone)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(quota_trees(), st.integers(min_value=1, max_value=4))
def test_the_linear_quota_check_accepts_what_every_group_alone_accepts(
    groups: dict[str, QuotaGroupSpec], depth: int
) -> None:
    alone = [
        n
        for n in sorted(groups)
        if n != ROOT_GROUP
        and rules.validate_quota_group({k: v for k, v in groups.items() if k != n}, groups[n], None, max_depth=depth)
    ]
    assert bool(rules.validate_quota_tree(groups, max_depth=depth)) == bool(alone)
