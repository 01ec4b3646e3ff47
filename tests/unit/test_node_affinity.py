"""A pod's required node affinity in the session: the predicates plugin keeps a pod off the nodes it excludes, as
kube-scheduler's ``NodeAffinity`` filter does (terms ORed, requirements ANDed, an empty term matching no node), the
vectorised mask agrees with the scalar reading node by node, and a pod no node matches waits with the reason."""

from __future__ import annotations

import dataclasses
import pickle
import random
import re
from typing import Any

import pytest
import yaml

from engine.manifests import ManifestError, load_manifests
from engine.manifests.export import node_affinity_spec
from engine.objects import NodeAffinity, NodeSelectorRequirement, TaskInfo, affinity_admits
from engine.session.affinity import affinity_mask
from engine.session.run import run_session
from engine.session.session import NodeTable
from tests.unit.test_session_support import Q, bound, node, pod, podgroup, policy, rl, snapshot

R = NodeSelectorRequirement
POLICY = policy("allocate, backfill", ["priority", "gang"], ["drf", "predicates", "proportion", "nodeorder"])

NODES = [
    node("n1", labels={"zone": "a", "gen": "3"}),
    node("n2", labels={"zone": "b", "gen": "5"}),
    node("n3", labels={"zone": "c", "gen": "five"}),
    node("n4", labels={}),
]


def with_affinity(task: TaskInfo, *terms: tuple[NodeSelectorRequirement, ...]) -> TaskInfo:
    return dataclasses.replace(task, node_affinity=tuple(terms))


def admitted(terms: NodeAffinity) -> list[str]:
    table = NodeTable(NODES, ("cpu", "memory"))
    mask = affinity_mask(table, terms)
    return [name for name, ok in zip(table.names, mask.tolist(), strict=True) if ok]


@pytest.mark.parametrize(
    ("requirement", "want"),
    [
        (R("zone", "In", ("a", "c")), ["n1", "n3"]),
        (R("zone", "NotIn", ("a",)), ["n2", "n3", "n4"]),  # a node without the label matches NotIn
        (R("zone", "Exists"), ["n1", "n2", "n3"]),
        (R("zone", "DoesNotExist"), ["n4"]),
        (R("gen", "Gt", ("4",)), ["n2"]),  # "five" is not an integer: it matches neither Gt nor Lt
        (R("gen", "Lt", ("4",)), ["n1"]),
        (R("gen", "Gt", ("-9223372036854775809",)), []),  # out of int64: Kubernetes cannot parse it, no node
        (R("metadata.name", "In", ("n3",), match_field=True), ["n3"]),
        (R("metadata.name", "NotIn", ("n3",), match_field=True), ["n1", "n2", "n4"]),
        (R("metadata.name", "In", ("n3",)), []),  # the label metadata.name, which no node has
    ],
)
def test_each_operator_reads_as_kubernetes(requirement: NodeSelectorRequirement, want: list[str]) -> None:
    terms = ((requirement,),)
    assert admitted(terms) == want
    assert [n.name for n in NODES if affinity_admits(terms, n.labels, n.name)] == want


def test_terms_are_ored_and_requirements_anded() -> None:
    terms = ((R("zone", "In", ("a", "b")), R("gen", "Gt", ("4",))), (R("zone", "DoesNotExist"),))
    assert admitted(terms) == ["n2", "n4"]


def test_an_empty_term_matches_no_node_and_no_affinity_every_node() -> None:
    assert admitted(((),)) == []
    assert admitted(((), (R("zone", "In", ("c",)),))) == ["n3"]
    assert admitted(()) == ["n1", "n2", "n3", "n4"]


def _random_terms(rng: random.Random) -> NodeAffinity:
    def requirement() -> NodeSelectorRequirement:
        op = rng.choice(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "field"])
        key = rng.choice(["zone", "gen", "rack"])
        if op == "field":
            return R("metadata.name", rng.choice(["In", "NotIn"]), (f"n{rng.randint(0, 9)}",), match_field=True)
        if op in ("Exists", "DoesNotExist"):
            return R(key, op)
        if op in ("Gt", "Lt"):
            return R(key, op, (str(rng.randint(-2, 6)),))
        return R(key, op, tuple(rng.sample(["a", "b", "c", "1", "4"], rng.randint(1, 3))))

    return tuple(tuple(requirement() for _ in range(rng.randint(0, 3))) for _ in range(rng.randint(1, 3)))


@pytest.mark.parametrize("seed", range(20))
def test_the_vectorised_mask_is_the_scalar_reading(seed: int) -> None:
    rng = random.Random(seed)
    values = ["a", "b", "c", "1", "4", "-3", "x7", "99999999999999999999"]
    nodes = [
        node(f"n{i}", labels={k: rng.choice(values) for k in ("zone", "gen", "rack") if rng.random() < 0.6})
        for i in range(10)
    ]
    table = NodeTable(nodes, ("cpu", "memory"))
    for _ in range(30):
        terms = _random_terms(rng)
        want = [affinity_admits(terms, n.labels, n.name) for n in table.infos]
        assert affinity_mask(table, terms).tolist() == want, terms


def _session(pods: list[TaskInfo], nodes: list[Any] | None = None) -> Any:
    snap = snapshot(
        nodes=NODES if nodes is None else nodes,
        podgroups=[podgroup("ns", "pg", min_member=len(pods))],
        pods=pods,
        policy=POLICY,
    )
    return run_session(snap, now=0.0)


def test_a_pod_goes_only_to_a_node_its_affinity_admits() -> None:
    # the best-scored empty node is n1 (first by name); the affinity allows n3 or n4 only
    task = with_affinity(pod("ns", "p-0", "pg"), (R("zone", "In", ("c",)),), (R("zone", "DoesNotExist"),))
    assert bound(_session([task])) == {"ns/p-0": "n3"}
    plain = pod("ns", "p-0", "pg")
    assert bound(_session([plain])) == {"ns/p-0": "n1"}


def test_pods_of_the_same_shape_but_another_affinity_get_their_own_nodes() -> None:
    """The predicates' mask is kept per signature: a second pod of the same request and selector but another affinity
    must not reuse the first one's mask."""
    first = with_affinity(pod("ns", "p-0", "pg", "6"), (R("zone", "In", ("b",)),))
    second = with_affinity(pod("ns", "p-1", "pg", "6"), (R("zone", "In", ("c",)),))
    third = pod("ns", "p-2", "pg", "6")
    assert bound(_session([first, second, third])) == {"ns/p-0": "n2", "ns/p-1": "n3", "ns/p-2": "n1"}


def test_a_best_effort_pod_is_backfilled_only_where_its_affinity_allows() -> None:
    task = with_affinity(pod("ns", "be-0", "pg", None, None), (R("gen", "Gt", ("4",)), R("zone", "Exists")))
    assert bound(_session([task])) == {"ns/be-0": "n2"}


def test_a_pod_no_node_matches_waits_with_the_reason() -> None:
    task = with_affinity(pod("ns", "p-0", "pg"), (R("zone", "In", ("d",)),))
    result = _session([task])
    assert bound(result) == {}
    status = result.podgroups["ns/pg"]
    assert status.reason == "NotEnoughResources"
    assert (
        "no node passes the predicates (node selector, node affinity, taints, cordon): 0 of 4 ready nodes;"
        " node affinity: 4 nodes do not match" in status.message
    )


def test_the_reason_counts_only_the_nodes_the_affinity_rules_out() -> None:
    """Two nodes fail the selector, one of them and one more fail the affinity: the affinity rules out 2."""
    task = with_affinity(pod("ns", "p-0", "pg", selector={"zone": "a"}), (R("zone", "NotIn", ("a", "b")),))
    status = _session([task]).podgroups["ns/pg"]
    assert "0 of 4 ready nodes; node affinity: 2 nodes do not match" in status.message


def test_the_enqueue_check_names_the_affinity() -> None:
    snap = snapshot(
        nodes=NODES,
        podgroups=[podgroup("ns", "pg", min_member=1, phase=Q.PENDING, min_resources=rl("1", "1Gi"))],
        pods=[with_affinity(pod("ns", "p-0", "pg"), (R("metadata.name", "In", ("n9",), match_field=True),))],
        policy=policy("enqueue, allocate", ["priority", "gang"], ["drf", "predicates", "proportion"]),
    )
    status = run_session(snap, now=0.0).podgroups["ns/pg"]
    assert "no ready node passes the predicates (node selector, node affinity, taints, cordon) of 4 nodes" in (
        status.message
    )
    assert "node affinity: 4 nodes do not match" in status.message


def test_without_the_predicates_plugin_the_affinity_is_not_read() -> None:
    """As the node selector: the filter belongs to the predicates plugin (Volcano's)."""
    task = with_affinity(pod("ns", "p-0", "pg"), (R("zone", "In", ("c",)),))
    snap = snapshot(
        nodes=NODES,
        podgroups=[podgroup("ns", "pg")],
        pods=[task],
        policy=policy("allocate", ["priority", "gang"], ["drf", "proportion", "nodeorder"]),
    )
    assert bound(run_session(snap, now=0.0)) == {"ns/p-0": "n1"}


# -- reading and writing manifests ---------------------------------------------------------------------------------


def _pod_doc(affinity: dict[str, Any]) -> str:
    doc = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}], "affinity": affinity},
    }
    return yaml.safe_dump(doc)


def _read(affinity: dict[str, Any]) -> NodeAffinity:
    snap = load_manifests([("pod.yaml", _pod_doc(affinity))]).snapshot
    return snap.tasks["ns/p"].node_affinity


def _required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def test_match_fields_are_read_and_written_back() -> None:
    terms = _read(
        _required(
            {
                "matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}],
                "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}],
            },
            {},
        )
    )
    assert terms == ((R("zone", "In", ("a",)), R("metadata.name", "NotIn", ("n1",), match_field=True)), ())
    assert _read(node_affinity_spec(terms)) == terms


@pytest.mark.parametrize(
    ("affinity", "message"),
    [
        (_required(), "nodeSelectorTerms: must have at least one node selector term"),
        (
            _required({"matchFields": [{"key": "metadata.labels", "operator": "In", "values": ["x"]}]}),
            "nodeSelectorTerms[0].matchFields[0].key: 'metadata.labels' is not a valid field selector key",
        ),
        (
            _required({"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}),
            "matchFields[0].operator: 'Exists' is not one of In, NotIn",
        ),
        (
            _required({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]}),
            "matchFields[0].values: must be only one value with operator In",
        ),
    ],
)
def test_bad_match_fields_are_refused_naming_the_field(affinity: dict[str, Any], message: str) -> None:
    with pytest.raises(ManifestError, match=re.escape(message)):
        _read(affinity)


def test_a_preferred_affinity_alone_is_no_requirement() -> None:
    preferred = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1}]}}
    assert _read(preferred) == ()


def test_a_requirement_pickled_before_match_field_loads_as_a_label_requirement() -> None:
    """A session record written by the engine before ``match_field`` holds three fields per requirement."""
    old = NodeSelectorRequirement.__new__(NodeSelectorRequirement)
    old.__setstate__(("zone", "In", ("a",)))  # what pickle hands over for such a record
    assert old == R("zone", "In", ("a",)) and old.match_field is False
    field = R("metadata.name", "In", ("n1",), match_field=True)
    assert pickle.loads(pickle.dumps(field)) == field
