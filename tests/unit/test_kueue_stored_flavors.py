"""Kueue's ResourceFlavors on stored trees (issue 28 item 7), without a database: the Kueue reader keeps each
ClusterQueue's flavored resource groups and ``flavorFungibility`` on its queue's ``kueue`` field, and
``engine.manifests.kueuestored.with_stored_flavors`` gives a snapshot read from stored rows (queues per flavor, nodes
and pods with their plain resources) the same ``kueue_flavors``, nodes and pods the reader gives ``fairway
simulate``; the flavor assignment on both is the same."""

from __future__ import annotations

import dataclasses

from engine.flavors import assign_flavors, flavors_sentence, unflavored
from engine.kueuepolicy import parse_kueue_policy
from engine.manifests import load_manifests
from engine.manifests.kueuestored import with_stored_flavors
from engine.resources import QuantityError, ResourceList, parse_resource_list
from tests.scheduling.test_kueue_flavors_live import TEXT


def _stored(text: str) -> tuple[object, object]:
    """(the simulated snapshot, the snapshot the rows give: queues per flavor, nodes and pods plain, no flavors)."""
    simulated = load_manifests([("in.yaml", text)]).snapshot
    plain = unflavored(simulated)
    rows = plain.replace(queues=simulated.queues)
    specs = dict(simulated.kueue_flavors.flavors)
    return simulated, with_stored_flavors(rows, lambda: specs)


def test_the_stored_flavors_give_the_snapshot_simulate_gives() -> None:
    simulated, live = _stored(TEXT)
    assert live.kueue_flavors == simulated.kueue_flavors
    assert {n: dict(v.allocatable) for n, v in live.nodes.items()} == {
        n: dict(v.allocatable) for n, v in simulated.nodes.items()
    }
    assert {u: dict(t.request) for u, t in live.tasks.items()} == {
        u: dict(t.request) for u, t in simulated.tasks.items()
    }
    _, chosen_live = assign_flavors(live)
    _, chosen_sim = assign_flavors(simulated)
    assert {k: c.sentence() for k, c in chosen_live.items()} == {k: c.sentence() for k, c in chosen_sim.items()}
    assert with_stored_flavors(live, dict).nodes == live.nodes  # twice: nothing more


def test_the_reader_keeps_the_groups_and_fungibility_on_the_queue() -> None:
    queue = load_manifests([("in.yaml", TEXT)]).snapshot.queues["team-a"]
    assert queue.kueue == {
        "resourceGroups": [{"coveredResources": ["cpu", "memory"], "flavors": ["on-demand", "spot"]}],
        "flavorFungibility": {"whenCanBorrow": "TryNextFlavor"},
    }
    assert parse_kueue_policy(queue.kueue) == (queue.kueue, [])  # normalized: read back as it is


def test_a_tree_without_flavors_is_the_snapshot_itself() -> None:
    snapshot = unflavored(load_manifests([("in.yaml", TEXT)]).snapshot)
    plain = snapshot.replace(queues={n: dataclasses.replace(q, kueue=None) for n, q in snapshot.queues.items()})
    assert with_stored_flavors(plain, dict) is plain


def test_flavored_keys_parse_and_a_bad_flavor_name_is_refused_naming_the_field() -> None:
    assert parse_resource_list({"cpu@spot": "8", "nvidia.com/gpu@a100": 2}, "deserved") == ResourceList(
        {"cpu@spot": 8_000, "nvidia.com/gpu@a100": 2_000}
    )
    try:
        parse_resource_list({"cpu@Spot!": "8"}, "deserved")
    except QuantityError as exc:
        assert exc.field == "deserved.cpu@Spot!"
        assert "'Spot!' is not a valid ResourceFlavor name" in exc.message
    else:  # pragma: no cover - the assertion
        raise AssertionError("refused")


def test_the_flavors_read_for_people() -> None:
    given = {"memory": "spot", "nvidia.com/gpu": "a100", "cpu": "spot"}
    assert flavors_sentence(given) == "spot for cpu, memory; a100 for nvidia.com/gpu"
    assert flavors_sentence({}) == ""
    each = {"master": {"cpu": "on-demand"}, "worker": {"cpu": "spot", "memory": "spot"}}
    assert (
        flavors_sentence({"cpu": "on-demand"}, each)
        == "pod set master: on-demand for cpu; pod set worker: spot for cpu, memory"
    )
    assert flavors_sentence({"cpu": "spot"}, None) == flavors_sentence({"cpu": "spot"}, {}) == "spot for cpu"


def test_the_volcano_export_says_it_writes_the_quota_per_flavor_as_is() -> None:
    from engine.manifests.export import export_notes

    snapshot = load_manifests([("in.yaml", TEXT)]).snapshot
    assert export_notes(snapshot, "volcano") == [
        "queues team-a: their quota per Kueue ResourceFlavor (cpu@spot) is written as is; Volcano reads each such key "
        "as a resource of its own, which no node offers (export --format kueue keeps them)"
    ]
    assert export_notes(unflavored(snapshot), "volcano") == []


def test_a_memo_hands_the_same_flavored_objects_for_what_did_not_change() -> None:
    """``engine.flavors.FlavorMemo`` (issue 28: a flavored cluster's sessions on the engine's kept state): a node or
    pod that is the same object gets the flavored object of the last pass again; a changed pod, a pod moved to a
    node of another flavor, a changed node and changed ResourceFlavors get new ones, equal to what no memo gives."""
    from engine.flavors import FlavorMemo, with_kept_flavors
    from engine.objects import TaskStatus

    simulated, _ = _stored(TEXT)
    rows = unflavored(simulated).replace(queues=simulated.queues)
    specs = dict(simulated.kueue_flavors.flavors)
    memo, session = FlavorMemo(), FlavorMemo()

    def read(snapshot: object, flavors: object = None) -> object:
        got = with_stored_flavors(snapshot, lambda: flavors or specs, memo)
        got = assign_flavors(with_kept_flavors(got, {}, session), session)[0]
        plain = assign_flavors(with_kept_flavors(with_stored_flavors(snapshot, lambda: flavors or specs), {}))[0]
        assert dict(got.tasks) == dict(plain.tasks) and dict(got.nodes) == dict(plain.nodes)
        assert dict(got.podgroups) == dict(plain.podgroups)
        return got

    first = read(rows)
    again = read(rows.replace(tasks=dict(rows.tasks), nodes=dict(rows.nodes)))  # new mappings, the same objects
    assert all(again.tasks[u] is t for u, t in first.tasks.items())
    assert all(again.nodes[n] is v for n, v in first.nodes.items())
    assert all(again.podgroups[k] is pg for k, pg in first.podgroups.items())
    # the running pod moves to the spot node (a new row object), the spot node's labels change
    running = rows.tasks["team-a/running"]
    moved = rows.with_tasks([dataclasses.replace(running, node="spot-1", status=TaskStatus.RUNNING)])
    third = read(moved)
    assert dict(third.tasks["team-a/running"].request) == {"cpu@spot": 2_000, "memory@spot": 2**30}
    assert third.tasks["team-a/running"] is not again.tasks["team-a/running"]
    assert third.nodes["od-1"] is again.nodes["od-1"]
    relabelled = moved.with_nodes([dataclasses.replace(moved.nodes["spot-1"], labels={"type": "on-demand"})])
    fourth = read(relabelled)
    assert "cpu@on-demand" in fourth.nodes["spot-1"].allocatable.raw
    assert dict(fourth.tasks["team-a/running"].request) == {"cpu@on-demand": 2_000, "memory@on-demand": 2**30}
    # other ResourceFlavors: everything counted again
    spot = dataclasses.replace(specs["spot"], node_labels={"type": "other"})
    fifth = read(relabelled, {**specs, "spot": spot})
    assert fifth.nodes["od-1"] is not fourth.nodes["od-1"]
