"""The presenters: what the pages print, computed from plain trees and the engine's values (no page rendered)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from engine import rules
from engine.changes import ProposalError, apply_changes, compare, node_values
from engine.values import compute_values
from frontend.presenters import balances, details, overview, tree_table, trees, whatif
from scheduling.models import Cluster
from scheduling.store import load_snapshot
from tests.frontend import builders as b


def node(
    name: str, parent: str | None = "root", children: tuple[str, ...] = (), **amounts: Mapping[str, int]
) -> trees.TreeNode:
    fields: dict[str, Any] = {k: {} for k in ("floor", "entitled", "used", "cap", "request", "borrowed", "lent")}
    fields.update(amounts)
    return trees.TreeNode(
        kind="queue", name=name, parent=parent, depth=0 if parent is None else 1, children=children, **fields
    )


def tree_of(*nodes: trees.TreeNode, total: Mapping[str, int] | None = None) -> trees.Tree:
    return trees.Tree(
        "queue",
        {n.name: n for n in nodes},
        tuple(n.name for n in nodes),
        tuple(n.name for n in nodes if n.parent is None),
        total or {"cpu": 10_000},
    )


def test_balance_prints_what_a_node_borrows_and_lends_and_which_is_larger() -> None:
    borrower = node("a", borrowed={"cpu": 2_000}, lent={"cpu": 500})
    assert balances.balance(borrower, "cpu") == {"borrowed": "2 cores", "lent": "0.5 cores", "css": "borrows"}
    assert balances.balance(borrower, "cpu", unit=False)["borrowed"] == "2"
    assert balances.balance(node("b"), "cpu") == {"borrowed": "", "lent": "", "css": ""}


def test_tree_rows_print_an_unset_cap_as_unlimited() -> None:
    t = tree_of(
        node("root", None, ("a",), cap={"cpu": 8_000}, entitled={"cpu": 8_000}),
        node("a", entitled={"cpu": 3_000}, used={"cpu": 1_500}),
    )
    rows = tree_table.tree_rows(t, "cpu", {"root": "/queues/root/", "a": "/queues/a/"})
    assert [(r["name"], r["cap"], r["entitled"], r["used"], r["leaf"]) for r in rows] == [
        ("root", "8", "8", "0", False),
        ("a", "unlimited", "3", "1.5", True),
    ]


def test_top_balances_rank_by_share_of_the_cluster_and_skip_the_root_and_idle_nodes() -> None:
    t = tree_of(
        node("root", None, ("a", "b", "c"), borrowed={"cpu": 9_000}),
        node("a", borrowed={"cpu": 1_000}),
        node("b", lent={"cpu": 4_000}),
        node("c"),
    )
    ranked = overview.top_balances(t, ["cpu"])
    assert [n.name for n in ranked] == ["b", "a"]
    rows = overview.top_rows([("queue", ranked, {"a": "/a/", "b": "/b/"})], ["cpu", "memory"])
    assert [(r["name"], [i["resource"] for i in r["items"]]) for r in rows] == [("b", ["cpu"]), ("a", ["cpu"])]


def test_capacity_rows_give_the_allocated_percentage_and_zero_without_capacity() -> None:
    rows = overview.capacity_rows(["cpu", "memory"], {"cpu": 8_000}, {"cpu": 2_000}, {"cpu": 6_000})
    assert rows[0] == {
        "resource": "cpu",
        "total": "8 cores",
        "allocated": "2 cores",
        "requested": "6 cores",
        "pct": 25.0,
    }
    assert rows[1]["pct"] == 0.0


def test_namespace_display_prints_only_the_shown_resources() -> None:
    row = {"namespace": "ns", "request": {"cpu": 1_500, "pods": 3_000}, "deserved": {"cpu": 2_000}, "allocated": {}}
    [shown] = details.namespace_display([row], ["cpu"])
    assert (shown["request_h"], shown["deserved_h"], shown["allocated_h"]) == ("1.5 cores", "2 cores", "")
    assert shown["request"] == {"cpu": 1_500, "pods": 3_000}  # the raw amounts stay for the figure


def test_namespace_rows_are_the_queues_own_in_name_order(db: Any) -> None:
    """A queue page's namespace table: that queue's namespaces only, by name, read without building the other
    queues' entries (with a namespace per job, every entry of a big cluster took a third of a second)."""
    b.seed000_table2()
    snapshot = load_snapshot(Cluster.objects.get(name="default"))
    values = compute_values(snapshot)
    queues = sorted({q for q, _ in values.namespaces})
    assert len(queues) >= 2
    for queue in queues:
        fresh = compute_values(snapshot)
        rows = details.namespace_rows(fresh, queue)
        expected = [(ns, v) for (q, ns), v in sorted(values.namespaces.items()) if q == queue]
        assert [r["namespace"] for r in rows] == [ns for ns, _ in expected]
        for row, (_, v) in zip(rows, expected, strict=True):
            assert (row["weight"], row["deserved"], row["request"]) == (v.weight, dict(v.deserved), dict(v.request))
        assert fresh is not values
        assert {queues[block] for block, _ in fresh.namespaces._cache} == {queue}  # no other queue's entry built
    assert details.namespace_rows(values, "no-such-queue") == []


def test_whole_trees_are_built_once_per_values_object(db: Any) -> None:
    b.seed000_table2()
    snapshot = load_snapshot(Cluster.objects.get(name="default"))
    values = compute_values(snapshot)
    first = trees.whole("queue", snapshot, values)
    assert trees.whole("queue", snapshot, values) is first
    assert trees.whole("quota", snapshot, values) is not first
    again = trees.whole("queue", snapshot, compute_values(snapshot))
    assert again is not first and again == first


def test_whatif_rows_print_the_engine_difference_per_resource(db: Any) -> None:
    """Seed 000, table 2: ns1's weight 3 -> 1 moves q1's deserved cpu between its two namespaces."""
    b.seed000_table2()
    snapshot = load_snapshot(Cluster.objects.get(name="default"))
    before = compute_values(snapshot)
    after = compute_values(
        apply_changes(snapshot, [{"op": "set_weight", "kind": "namespace", "name": "ns1", "weight": 1}])
    )

    rows = whatif.diff_rows(node_values(before), node_values(after), compare(before, after)["diff"])
    shown = {(r["node"], r["field"]): (r["before"], r["after"], r["delta"], r["css"]) for r in rows}
    assert shown[("q1/ns1", "deserved · cpu")] == ("3 cores", "2 cores", "-1 core", "down")
    assert shown[("q1/ns1", "weight")] == ("3", "1", "", "")
    assert all(r["section"] == "Namespaces" for r in rows)


def test_whatif_errors_name_the_staged_change() -> None:
    exc = ProposalError(
        [rules.FieldError("changes.1.spec.deserved.cpu", "too much"), rules.FieldError("changes", "empty")]
    )
    entries = [{"summary": "first"}, {"summary": "edit queue a"}]
    assert whatif.errors(exc, entries) == ["change 2 (edit queue a): too much", "empty"]


@pytest.mark.parametrize(("delta", "expected"), [(1_000, "up"), (-1_000, "down")])
def test_entitled_rows_are_ordered_by_the_size_of_the_move(delta: int, expected: str) -> None:
    before = {"queues": {"a": {"deserved": {"cpu": 4_000}}, "b": {"deserved": {"cpu": 4_000}}}}
    after = {"queues": {"a": {"deserved": {"cpu": 4_000 + delta}}, "b": {"deserved": {"cpu": 4_000 - 3 * delta}}}}
    diff = {"queues": {"a": {"deserved": {}}, "b": {"deserved": {}}}}
    rows = whatif.entitled_rows(before, after, diff, "queues", "cpu")
    assert [name for name, _, _ in rows] == ["b", "a"]
    assert (rows[1][2] > rows[1][1]) == (expected == "up")
