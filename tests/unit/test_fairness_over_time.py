"""Fairness over time (issue 13 item 3; ``engine.usage``): past usage decayed over virtual time changes only the split
of the surplus above guarantees, orders queues, shows in the explain and in ``fairway simulate``; off, nothing moves."""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.fairshare.proportion import ProportionResult
from engine.manifests import ManifestError, load_manifests
from engine.objects import Snapshot
from engine.policy.policy import Policy, PolicyError
from engine.session.run import apply_result, run_session
from engine.simulate import simulate
from engine.usage import (
    PPM,
    QUEUE,
    QUOTA,
    NodeUsage,
    TreeUsage,
    UsageHistory,
    UsageNow,
    adjusted_weights,
    advance,
    clamp,
    dominant_share,
    node_key,
)
from engine.values import compute_values, past_shares, usage_now
from tests.support.examples import examples
from tests.unit.test_session_support import evicted, group, node, pod, podgroup, policy, queue, rl, running, snapshot

CPU = "cpu"
HOUR = 3600.0
FAIR = {"name": "proportion", "arguments": {"fairnessOverTime": True}}


def _policy(fair: bool = True, **arguments: Any) -> Policy:
    entry = {"name": "proportion", "arguments": {"fairnessOverTime": fair, **arguments}}
    return policy("enqueue, allocate, reclaim", ["priority", "gang"], [entry, "predicates"])


def _team_b_alone(pol: Policy) -> Snapshot:
    """Team b holds the whole 10-cpu cluster; team a has nothing."""
    return snapshot(
        nodes=[node("n1", "10", "64Gi")],
        queues=[queue("a"), queue("b")],
        podgroups=[podgroup("b", "jb", "b", 1, phase="Running")],
        pods=[running("b", f"jb-{i}", "jb", "n1", "1") for i in range(10)],
        policy=pol,
    )


def _both_busy(pol: Policy) -> Snapshot:
    """Both teams ask for the whole cluster (the surplus above their guarantees of 0 is contested)."""
    return snapshot(
        nodes=[node("n1", "10", "64Gi")],
        queues=[queue("a"), queue("b")],
        podgroups=[podgroup("a", "ja", "a", 1, phase="Inqueue"), podgroup("b", "jb", "b", 1, phase="Inqueue")],
        pods=[pod("a", f"ja-{i}", "ja", "1") for i in range(20)] + [pod("b", f"jb-{i}", "jb", "1") for i in range(20)],
        policy=pol,
    )


def _six_idle_days(pol: Policy) -> tuple[UsageHistory, float]:
    """Hourly sessions for six virtual days while b holds everything: the record the store would keep."""
    history, t = UsageHistory(), 0.0
    snap = _team_b_alone(pol)
    for _ in range(6 * 24 + 1):
        current = snap.replace(past_usage=history)
        history = advance(history, usage_now(current, compute_values(current)), t)
        t += HOUR
    return history, t


def test_an_idle_team_gets_the_larger_share_of_the_surplus_until_usage_evens_out() -> None:
    pol = _policy()
    history, t = _six_idle_days(pol)
    # b used the whole cluster where it deserved half of it (equal weights): 2x; a used nothing of its half
    assert history.ratio(QUEUE, "b") == pytest.approx(Fraction(2), rel=1e-6)
    assert history.ratio(QUEUE, "a") == 0
    busy = _both_busy(pol)
    split: list[tuple[int, int]] = []
    for _ in range(48):
        values = compute_values(busy.replace(past_usage=history))
        a, b = values.queues["a"].deserved[CPU], values.queues["b"].deserved[CPU]
        assert a + b == 10_000
        split.append((a, b))
        # the cluster follows the split: each team holds what it deserves for the next hour
        nodes = [UsageNow(n, None, 1, dominant_share({CPU: v}, {CPU: 10_000})) for n, v in (("a", a), ("b", b))]
        history = advance(history, [TreeUsage(QUEUE, pol.queue_fairness(), nodes)], t)
        t += HOUR
    # a's ratio starts clamped at 0.1 (weight x10) and b's at 2 (weight /2): a gets 10/10.5 of the cluster
    assert split[0] == (9524, 476)
    # then a gets the larger share every hour while its usage catches up, less and less so ...
    assert all(a > b for a, b in split[:20])
    assert [a for a, _ in split[:20]] == sorted((a for a, _ in split[:20]), reverse=True)
    # ... until usage has evened out: half each, and both ratios back at 1
    assert split[-1] == (5000, 5000)
    assert history.ratio(QUEUE, "a") == pytest.approx(1, abs=1e-3)
    assert history.ratio(QUEUE, "b") == pytest.approx(1, abs=1e-3)
    # with the switch off, the same record changes nothing: the point-in-time numbers, half each
    off = compute_values(_both_busy(_policy(fair=False)).replace(past_usage=_six_idle_days(pol)[0]))
    assert (off.queues["a"].deserved[CPU], off.queues["b"].deserved[CPU]) == (5000, 5000)


def test_with_the_switch_off_or_no_record_the_numbers_are_the_point_in_time_ones() -> None:
    history, _ = _six_idle_days(_policy())
    plain = compute_values(_both_busy(policy("allocate", ["gang"], ["proportion"])))
    for snap in (
        _both_busy(_policy(fair=False)).replace(past_usage=history),  # off: the record is ignored
        _both_busy(_policy()),  # on, no record yet: every ratio reads 1
        _both_busy(_policy()).replace(past_usage=UsageHistory(recorded={"queue/a": Fraction(3), "queue/b": 3})),
    ):
        values = compute_values(snap)
        for name in ("a", "b"):
            assert values.queues[name].deserved == plain.queues[name].deserved
            assert values.queues[name].real_capability == plain.queues[name].real_capability


def test_a_session_brings_the_record_forward_only_with_the_switch_on() -> None:
    snap = _team_b_alone(_policy())
    first = run_session(snap, now=100.0)
    assert first.usage_history == UsageHistory(updated=100.0)  # the first record starts empty
    second = run_session(apply_result(snap, first, now=100.0), now=100.0 + HOUR)
    kept = second.usage_history
    assert kept is not None and kept.updated == 100.0 + HOUR
    gain = 4 * HOUR / math.log(2) * (1 - 2 ** (-1 / 4))  # one hour under a 4h half-life: ~3305 s
    assert kept.nodes[node_key(QUEUE, "b")] == NodeUsage(round(PPM * gain), round(PPM * gain / 2))
    assert kept.nodes[node_key(QUEUE, "a")] == NodeUsage(0, round(PPM * gain / 2))
    assert run_session(_team_b_alone(_policy(fair=False)), now=100.0).usage_history is None


def test_decay_half_life_and_window() -> None:
    args = _policy(usageHalfLife="2h", usageWindow="1d").queue_fairness()
    assert (args.half_life, args.window) == (7200.0, 86400.0)
    start = UsageHistory(updated=0.0, nodes={"queue/a": NodeUsage(1_000_000, 500_000)})
    idle = [TreeUsage(QUEUE, args, [UsageNow("a", None, 1, 0), UsageNow("b", None, 1, 0)])]
    # nothing held for one half-life: both integrals halve, the ratio stays
    assert advance(start, idle, 7200.0).nodes["queue/a"] == NodeUsage(500_000, 250_000)
    # a gap longer than the window forgets everything before it
    busy = [TreeUsage(QUEUE, args, [UsageNow("a", None, 1, 0), UsageNow("b", None, 1, PPM)])]
    later = advance(start, busy, 10 * 86400.0)
    assert later.nodes["queue/a"].used == 0
    assert later.ratio(QUEUE, "b") == pytest.approx(2)


def test_the_record_round_trips_and_refuses_bad_rows() -> None:
    record = UsageHistory(updated=5.0, nodes={"queue/a": NodeUsage(3, 4)}, recorded={"quota/g": Fraction(9, 5)})
    assert UsageHistory.from_json(record.to_json()) == record
    with pytest.raises(ValueError, match="node 'queue/a' must be \\[used, deserved\\]"):
        UsageHistory.from_json({"updated": 1.0, "nodes": {"queue/a": [1, -2]}})


def test_weights_and_clamp() -> None:
    assert clamp(None) == 1 and clamp(Fraction(0)) == Fraction(1, 10) and clamp(Fraction(50)) == 10
    assert adjusted_weights({"a": 2, "b": 1}, {"a": Fraction(9, 5), "b": Fraction(1, 2)}) == {"a": 1111, "b": 2000}
    assert adjusted_weights({"a": 2, "b": 1}, {"a": Fraction(2), "b": Fraction(2)}) == {"a": 2, "b": 1}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"fairnessOverTime": "yes"}, "proportion argument fairnessOverTime: expected true or false"),
        ({"fairnessOverTime": True, "usageHalfLife": "soon"}, "proportion argument usageHalfLife: 'soon' is not"),
        ({"fairnessOverTime": True, "usageHalfLife": 0}, "usageHalfLife: must be longer than 0"),
        ({"fairnessOverTime": True, "usageWindow": "1h"}, "usageWindow: 1 hour is shorter than usageHalfLife"),
    ],
)
def test_bad_arguments_are_refused_with_the_key(arguments: dict[str, Any], message: str) -> None:
    data = {"actions": "allocate", "tiers": [{"plugins": [{"name": "proportion", "arguments": arguments}]}]}
    with pytest.raises(PolicyError, match=message):
        Policy.from_dict(data)


def test_every_tree_plugin_takes_the_switch() -> None:
    assert (
        not Policy.from_dict({"actions": "allocate", "tiers": [{"plugins": [{"name": "proportion"}]}]})
        .queue_fairness()
        .enabled
    )
    cap = Policy.from_dict(
        {
            "actions": "allocate",
            "tiers": [
                {"plugins": [{"name": "capacity", "arguments": {"fairnessOverTime": True, "usageWindow": "3d"}}]}
            ],
        }
    )
    assert cap.queue_fairness().enabled and cap.queue_fairness().window == 3 * 86400
    eq = Policy.from_dict(
        {
            "actions": "allocate",
            "tiers": [{"plugins": [{"name": "elasticquota", "arguments": {"fairnessOverTime": True}}]}],
        }
    )
    assert eq.quota_fairness().enabled and not eq.queue_fairness().enabled
    assert eq.elastic_quota_args().to_arguments()["fairnessOverTime"] is True


# -- guarantees are never touched ----------------------------------------------------------------------------------


# The strategies the composite draws from, made once (by their arguments): one built inside the composite is looked
# up again in Hypothesis's cache, or built and checked again, at every draw. The same strategies, so the same values.
_integers = cache(st.integers)
_RATIO = st.fractions(min_value=0, max_value=20, max_denominator=100)


@st.composite
def _trees(draw: Any) -> tuple[Snapshot, UsageHistory]:
    count = draw(_integers(2, 4))
    total = draw(_integers(4, 40))
    names = [f"q{i}" for i in range(count)]
    guarantees = [draw(_integers(0, total // count)) for _ in names]
    queues = [
        queue(n, draw(_integers(1, 5)), guarantee=rl(str(g)) if g else None)
        for n, g in zip(names, guarantees, strict=True)
    ]
    pgs, pods = [], []
    for n in names:
        asked = draw(_integers(0, total))
        if asked:
            pgs.append(podgroup(n, f"j{n}", n, 1, phase="Inqueue"))
            pods += [pod(n, f"j{n}-{i}", f"j{n}", "1") for i in range(asked)]
    groups = [group(f"g{i}", min=rl(str(draw(_integers(0, 3)))), max=rl(str(total))) for i in range(count)]
    gpods = [
        pod(f"g{i}", f"p{i}-{k}", f"jg{i}", "1", quota=f"g{i}")
        for i in range(count)
        for k in range(draw(_integers(0, 6)))
    ]
    pol = policy("allocate", ["gang"], [FAIR, {"name": "elasticquota", "arguments": {"fairnessOverTime": True}}])
    snap = snapshot(
        nodes=[node("n1", str(total), "512Gi")],
        queues=queues,
        podgroups=pgs,
        pods=pods + gpods,
        groups=groups,
        policy=pol,
    )
    recorded = {node_key(QUEUE, n): draw(_RATIO) for n in names}
    recorded |= {node_key(QUOTA, f"g{i}"): draw(_RATIO) for i in range(count)}
    return snap, UsageHistory(recorded=recorded)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_trees())
def test_guarantees_and_mins_are_untouched_under_any_past_usage(tree: tuple[Snapshot, UsageHistory]) -> None:
    snap, history = tree
    before = compute_values(snap)
    after = compute_values(snap.replace(past_usage=history))
    split_before = split_after = 0
    for name in snap.queues:
        q0, q1 = before.queues.get(name), after.queues.get(name)
        if q0 is None or q1 is None or not q1.participating:
            continue
        assert q1.real_capability == q0.real_capability
        for r, g in q1.guarantee.items():  # the guarantee is the floor with and without past usage
            assert q1.deserved.get(r, 0) >= g and q0.deserved.get(r, 0) >= g
        split_before += q0.deserved.get(CPU, 0)
        split_after += q1.deserved.get(CPU, 0)
    assert split_after == split_before  # only who gets the surplus changes, not how much is shared
    for name in (g for g in snap.quota_groups if g.startswith("g")):  # the teams' groups, not the built-ins
        g0, g1 = before.quotas[name], after.quotas[name]
        floor = g0.auto_scaled_min.get(CPU, 0)
        assert min(g1.runtime.get(CPU, 0), floor) == min(g0.runtime.get(CPU, 0), floor)


# -- order, explain and simulate -------------------------------------------------------------------------------------


def test_among_equal_shares_less_past_usage_comes_first() -> None:
    snap = _both_busy(_policy()).replace(
        past_usage=UsageHistory(recorded={"queue/a": Fraction(3), "queue/b": Fraction(3)})
    )
    book = compute_values(snap).queues
    assert isinstance(book, ProportionResult)
    assert book.compare_queues("a", "b") == 0  # equal ratios: a tie, as without the switch
    book.past_ratios = {"a": Fraction(3), "b": Fraction(1, 2)}
    assert book.compare_queues("b", "a") < 0 < book.compare_queues("a", "b")


def test_the_explain_says_weight_past_usage_and_surplus_share() -> None:
    snap = snapshot(
        nodes=[node("n1", "10", "64Gi")],
        queues=[queue("a", 2), queue("b", 1)],
        podgroups=[podgroup("a", "ja", "a", 1, phase="Inqueue"), podgroup("b", "jb", "b", 1, phase="Inqueue")],
        pods=[pod("a", f"ja-{i}", "ja", "1") for i in range(20)] + [pod("b", f"jb-{i}", "jb", "1") for i in range(20)],
        policy=_policy(),
    ).replace(past_usage=UsageHistory(recorded={"queue/a": Fraction(9, 5), "queue/b": Fraction(1, 2)}))
    values = compute_values(snap)
    shares = past_shares(snap, values)
    # effective weights 2000/1.8 = 1111 and 1000/0.5 = 2000: a's share of the surplus is 1111/3111
    assert shares["queue/a"].text() == "weight 2, past usage 1.8\u00d7 its share over 7 days \u2192 surplus share 0.36"
    assert shares["queue/b"].text() == "weight 1, past usage 0.5\u00d7 its share over 7 days \u2192 surplus share 0.64"
    assert values.queues["a"].deserved[CPU] == 3571  # 10 cpu x 1111 / 3111, largest remainder
    assert values.queues["b"].deserved[CPU] == 6429


def _manifests(ratio: str | None, fair: bool) -> str:
    conf = yaml.safe_dump(
        {
            "actions": "enqueue, allocate",
            "tiers": [
                {"plugins": [{"name": "priority"}, {"name": "gang"}]},
                {"plugins": [{"name": "proportion", "arguments": {"fairnessOverTime": fair}}, {"name": "predicates"}]},
            ],
        }
    )
    docs: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
            "data": {"volcano-scheduler.conf": conf},
        },
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "10", "memory": "64Gi"}},
        },
    ]
    for name in ("a", "b"):
        meta: dict[str, Any] = {"name": name}
        if name == "a" and ratio is not None:
            meta["annotations"] = {"fairway.io/past-usage-ratio": ratio}
        docs.append(
            {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": meta, "spec": {"weight": 1}}
        )
        docs.append(
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": f"j{name}", "namespace": name},
                "spec": {"queue": name, "minMember": 1},
            }
        )
        for i in range(10):
            docs.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"j{name}-{i}",
                        "namespace": name,
                        "annotations": {"scheduling.k8s.io/group-name": f"j{name}"},
                    },
                    "spec": {
                        "schedulerName": "volcano",
                        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                    },
                }
            )
    return yaml.safe_dump_all(docs)


def test_simulate_reads_the_recorded_past_usage_annotation() -> None:
    loaded = load_manifests([("t.yaml", _manifests("1.8", fair=True))])
    assert loaded.snapshot.past_usage == UsageHistory(recorded={"queue/a": Fraction(9, 5)})
    doc = simulate(loaded.snapshot, now=0.0).document
    a, b = doc["queues"]["a"], doc["queues"]["b"]
    # a used 1.8x its share: effective weights 1000/1.8 = 556 and 1000 -> a deserves 10 x 556/1556
    assert (a["deserved"]["cpu"], b["deserved"]["cpu"]) == ("3573m", "6427m")
    assert a["pastUsage"]["ratio"] == 1.8 and a["pastUsage"]["text"].startswith("weight 1, past usage 1.8\u00d7")
    assert b["pastUsage"]["ratio"] is None
    # the switch off: the annotation is read but changes nothing, and the document has no new key
    off = simulate(load_manifests([("t.yaml", _manifests("1.8", fair=False))]).snapshot, now=0.0).document
    assert off["queues"]["a"]["deserved"]["cpu"] == off["queues"]["b"]["deserved"]["cpu"] == "5"
    assert "pastUsage" not in off["queues"]["a"]
    with pytest.raises(ManifestError, match=r"fairway\.io/past-usage-ratio.*expected a number"):
        load_manifests([("t.yaml", _manifests("lots", fair=True))])


@pytest.mark.parametrize(("more_past_usage", "victims"), [("b1", ["b1/x-3", "b1/x-2"]), ("b2", ["b2/y-3", "b2/y-2"])])
def test_reclaim_takes_from_the_queue_with_more_past_usage_first(more_past_usage: str, victims: list[str]) -> None:
    """Flat capacity (no weighted split): b1 and b2 hold 4 each of 10 cpu against a deserved of 2 (equal shares);
    l (deserved 6) needs 4 and reclaims 2: from the queue that used more over the window."""
    pol = policy(
        "enqueue, allocate, reclaim",
        ["priority", "gang", "conformance"],
        [{"name": "capacity", "arguments": {"fairnessOverTime": True}}, "predicates"],
    )
    snap = snapshot(
        nodes=[node("n1", "10", "64Gi")],
        queues=[queue("l", deserved=rl("6")), queue("b1", deserved=rl("2")), queue("b2", deserved=rl("2"))],
        podgroups=[
            podgroup("b1", "x", "b1", 1, phase="Running"),
            podgroup("b2", "y", "b2", 1, phase="Running"),
            podgroup("l", "z", "l", 1, phase="Inqueue"),
        ],
        pods=[running("b1", f"x-{i}", "x", "n1", "1") for i in range(4)]
        + [running("b2", f"y-{i}", "y", "n1", "1") for i in range(4)]
        + [pod("l", "z-0", "z", "4")],
        policy=pol,
    )
    recorded = {"queue/b1": Fraction(1, 2), "queue/b2": Fraction(1, 2), f"queue/{more_past_usage}": Fraction(3)}
    result = run_session(snap.replace(past_usage=UsageHistory(recorded=recorded)), now=0.0)
    assert evicted(result) == victims
    shares = past_shares(snap.replace(past_usage=UsageHistory(recorded=recorded)), compute_values(snap))
    assert shares[f"queue/{more_past_usage}"].text() == (
        "past usage 3\u00d7 its share over 7 days \u2192 among queues of equal share, less past usage goes first "
        "and more is reclaimed first"
    )


def test_hierarchies_are_measured_by_parent_in_both_trees() -> None:
    """Capacity with enableHierarchy and elastic quota both on: an inner node is measured against its siblings with
    its subtree's usage, a leaf against its own siblings; the built-in quota groups are not teams."""
    pol = policy(
        "enqueue, allocate",
        ["priority", "gang"],
        [
            {"name": "capacity", "enableHierarchy": True, "arguments": {"fairnessOverTime": True}},
            {"name": "elasticquota", "arguments": {"fairnessOverTime": True}},
            "predicates",
        ],
    )
    snap = snapshot(
        nodes=[node("n1", "8", "64Gi")],
        queues=[
            queue("dept", deserved=rl("8")),
            queue("x", parent="dept", deserved=rl("4")),
            queue("y", parent="dept", deserved=rl("4")),
        ],
        groups=[group("gx", min=rl("4"), max=rl("8")), group("gy", min=rl("4"), max=rl("8"))],
        podgroups=[podgroup("x", "jx", "x", 1, phase="Running")],
        pods=[running("x", f"jx-{i}", "jx", "n1", "1", quota="gx") for i in range(4)],
        policy=pol,
    )
    first = run_session(snap, now=0.0)
    second = run_session(apply_result(snap, first, now=0.0), now=HOUR).usage_history
    assert second is not None
    assert set(second.nodes) == {"queue/dept", "queue/x", "queue/y", "quota/gx", "quota/gy"}
    # x held 4 of 8 cpu (a dominant share of 1/2) where it deserved half of what dept's children held: 2x
    assert second.ratio(QUEUE, "x") == pytest.approx(2, rel=1e-6)
    assert second.ratio(QUEUE, "y") == 0
    assert second.ratio(QUEUE, "dept") == pytest.approx(1, rel=1e-6)  # alone under root
    assert second.ratio(QUOTA, "gx") == pytest.approx(2, rel=1e-6)
    values = compute_values(snap.replace(past_usage=second))
    assert values.queues.past_ratio("y") == Fraction(1, 10)
    assert values.queues.past_ratio("x") == pytest.approx(2, rel=1e-6)


@pytest.mark.parametrize("more_past_usage", ["b1", "b2"])
def test_proportion_reclaims_from_the_queue_with_more_past_usage(more_past_usage: str) -> None:
    """Proportion, 12 cpu, three equal weights: b1 and b2 hold 6 each, l waits with 4 pods. The queue that used 3x its
    share deserves 2 (effective weight 1000/3 against 2000 and 1000), the other 6: reclaim takes from the former."""
    pol = policy(
        "enqueue, allocate, reclaim",
        ["priority", "gang", "conformance"],
        [{"name": "proportion", "arguments": {"fairnessOverTime": True}}, "predicates"],
    )
    snap = snapshot(
        nodes=[node("n1", "12", "64Gi")],
        queues=[queue("l"), queue("b1"), queue("b2")],
        podgroups=[
            podgroup("b1", "x", "b1", 1, phase="Running"),
            podgroup("b2", "y", "b2", 1, phase="Running"),
            podgroup("l", "z", "l", 1, phase="Inqueue"),
        ],
        pods=[running("b1", f"x-{i}", "x", "n1", "1") for i in range(6)]
        + [running("b2", f"y-{i}", "y", "n1", "1") for i in range(6)]
        + [pod("l", f"z-{i}", "z", "1") for i in range(4)],
        policy=pol,
    )
    other = "b2" if more_past_usage == "b1" else "b1"
    recorded = {f"queue/{more_past_usage}": Fraction(3), f"queue/{other}": Fraction(1, 2), "queue/l": Fraction(1)}
    result = run_session(snap.replace(past_usage=UsageHistory(recorded=recorded)), now=0.0)
    deserved = {q: result.queue_values[q].deserved[CPU] for q in ("l", more_past_usage, other)}
    assert deserved == {"l": 4000, more_past_usage: 2000, other: 6000}
    assert evicted(result) and all(v.startswith(f"{more_past_usage}/") for v in evicted(result))
