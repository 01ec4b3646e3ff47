"""Fairness over time: each tree node's decayed past usage, against what it deserved, and what that does to the
split of the surplus (issue 13; KAI's time-aware fairness and Slurm's decayed fair share are the models).

Off unless a policy turns it on (``fairnessOverTime: true`` on ``proportion``, ``capacity`` or ``elasticquota``:
``engine.policy.fairness``); with it off nothing here runs and every number is the point-in-time one.

The record (``UsageHistory``, one per cluster; the store keeps it in one row)
-------------------------------------------------------------------------------
Usage is counted as a **dominant share**: what a node holds (a queue's ``allocated``, a quota group's ``used``; an
inner node its subtree's), as the largest fraction of the cluster it holds of any resource, in millionths (DRF's
measure: one number per node whatever the resources, and a resource nobody uses any more cannot freeze a ratio).
Per tree node (``queue/<name>``, ``quota/<name>``), two decayed integrals of such shares over time:

* ``used``: the node's dominant share;
* ``deserved``: its weighted part of what it and its siblings hold together: ``siblings' shares x weight /
  siblings' weight``. A node that held nothing still accrues what it deserved, so a team idle for days has a low
  ratio when it comes back (Slurm's normalised shares against usage; a point-in-time ``deserved`` would be 0 for
  an idle proportion queue). The weight: a proportion queue's ``weight``; a capacity queue's deserved, as a
  dominant share (capacity has no weight: its admin-given deserved is its entitlement); a quota group's shared
  weight (Koordinator: its max when none is given), as a dominant share of the cluster, capped at all of it.

A session ``advance``-s the record from its last update to ``now`` (``dt``): ``x <- x * 2^(-dt/h) + amount *
h/ln2 * (1 - 2^(-dt/h))``, the exact integral of the current amount under the decay (``amount * dt`` for a short
``dt``), for ``used`` and ``deserved`` alike, rounded to whole numbers. ``h`` is ``usageHalfLife``; ``usageWindow``
bounds the memory: a gap longer than the window (the scheduler was down) forgets everything before it and counts
the window only. Nodes gone from the tree are dropped; so are nodes whose integrals decayed to nothing.

The ratio and the weights
-------------------------
``ratio = used / deserved``: 1 means the node used exactly its share over the memory, 1.8 almost twice, 0.2 a
fifth. A node without a record reads 1. The ratio is clamped to ``[0.1, 10]`` (a node that used nothing is not
given unbounded weight, one that used everything is not starved for ever) and divides the node's weight wherever
the *surplus* above guarantees is split: ``effective weight = weight x 1000 / ratio``, rounded to an integer, fed to
the same water-filling as always (``engine.fairshare.proportion``; the elastic quota runtime, where the factor is
scaled so that no shared weight grows). Guarantees and mins are floors of that water-filling and are never
touched. When every sibling's clamped ratio is the same the weights are left as they are, so a record of equal
ratios gives exactly the point-in-time numbers. Capacity splits no surplus by weight (deserved is given): there,
as everywhere, the ratio is the queue order's last tie-break (less past usage first), which reclaim reverses
(more past usage is taken first).

Pure module: no I/O, no clock (``now`` comes in), exact fractions for the ratios.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

from engine.policy.fairness import FairnessArgs, format_days
from engine.resources import format_amount

__all__ = [
    "QUEUE",
    "QUOTA",
    "RATIO_CEILING",
    "RATIO_FLOOR",
    "SCALE",
    "NodeUsage",
    "PastShare",
    "TreeUsage",
    "UsageHistory",
    "UsageNow",
    "adjusted_weights",
    "advance",
    "clamp",
    "describe",
    "dominant_share",
    "node_key",
    "parse_ratio",
    "past_text",
]

QUEUE = "queue"
QUOTA = "quota"
SCALE = 1000  # effective weights are weight x SCALE / ratio, as integers
PPM = 1_000_000  # usage is counted as a dominant share of the cluster in millionths
RATIO_FLOOR = Fraction(1, 10)
RATIO_CEILING = Fraction(10)
# the largest ratio an annotation may record (far above the ceiling the weights clamp to): "1e999" is a typo
MAX_RECORDED_RATIO = 1000
ONE = Fraction(1)


def node_key(kind: str, name: str) -> str:
    """The record's key of a tree node: ``queue/<name>`` or ``quota/<name>``."""
    return f"{kind}/{name}"


def clamp(ratio: Fraction | None) -> Fraction:
    """The ratio the weights use: 1 without a record, else within ``[RATIO_FLOOR, RATIO_CEILING]``."""
    if ratio is None:
        return ONE
    return min(RATIO_CEILING, max(RATIO_FLOOR, ratio))


def parse_ratio(text: object, where: str) -> Fraction:
    """A recorded past-usage ratio as written by a person (``"1.8"``, ``"0.5"``, ``2``); ``ValueError`` names
    ``where`` when it is not a number >= 0."""
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise ValueError(f"{where}: expected a number such as 1.8, got {text!r}")
    shown = repr(text) if len(repr(text)) <= 40 else repr(text)[:39] + "…"
    raw = str(text).strip()
    try:  # a decimal first: its exponent is checked before any exact fraction of 10**999999999 is built
        if "/" in raw and len(raw) <= 80:  # the stored form of an exact ratio, "9/5"
            top, bottom = raw.split("/", 1)
            number = Decimal(int(top)) / Decimal(int(bottom))
            exact = Fraction(int(top), int(bottom))
        else:
            number = Decimal(raw)
            exact = None
    except (InvalidOperation, ValueError, ZeroDivisionError):
        raise ValueError(f"{where}: expected a number such as 1.8, got {shown}") from None
    if not number.is_finite():
        raise ValueError(f"{where}: expected a number such as 1.8, got {shown}")
    if number < 0:
        raise ValueError(f"{where}: a past-usage ratio must be >= 0, got {shown}")
    if number > MAX_RECORDED_RATIO:
        raise ValueError(
            f"{where}: a past-usage ratio must be at most {MAX_RECORDED_RATIO} (the weights use it within "
            f"{float(RATIO_FLOOR):g}..{float(RATIO_CEILING):g}), got {shown}"
        )
    if number and number.adjusted() < -9:
        raise ValueError(f"{where}: a past-usage ratio must be 0 or at least 0.000000001, got {shown}")
    return exact if exact is not None else Fraction(number)


@dataclass(frozen=True)
class NodeUsage:
    """One node's decayed integrals, in millionths of the cluster x seconds (``PPM``)."""

    used: int = 0
    deserved: int = 0

    def ratio(self) -> Fraction | None:
        """``used / deserved``; None when it deserved nothing."""
        return Fraction(self.used, self.deserved) if self.deserved > 0 else None

    def to_json(self) -> list[int]:
        return [self.used, self.deserved]


@dataclass(frozen=True)
class UsageHistory:
    """The past usage a session starts from: the decayed integrals per node as of ``updated`` (epoch seconds), and
    ratios recorded as such (``fairway simulate``'s ``fairway.io/past-usage-ratio`` annotation), which win."""

    updated: float | None = None
    nodes: Mapping[str, NodeUsage] = field(default_factory=dict)
    recorded: Mapping[str, Fraction] = field(default_factory=dict)

    def ratio(self, kind: str, name: str) -> Fraction | None:
        """The node's past-usage ratio (unclamped), None when there is no record of it."""
        key = node_key(kind, name)
        given = self.recorded.get(key)
        if given is not None:
            return given
        node = self.nodes.get(key)
        return None if node is None else node.ratio()

    def to_json(self) -> dict[str, Any]:
        """The stored form: ``{"updated": seconds | null, "nodes": {key: [used, deserved]}}``."""
        out: dict[str, Any] = {
            "updated": self.updated,
            "nodes": {key: self.nodes[key].to_json() for key in sorted(self.nodes)},
        }
        if self.recorded:
            out["recorded"] = {key: str(self.recorded[key]) for key in sorted(self.recorded)}
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> UsageHistory:
        """Read ``to_json``'s form back; a malformed entry is a ``ValueError`` naming it."""
        if not data:
            return cls()
        updated = data.get("updated")
        if updated is not None and not isinstance(updated, int | float):
            raise ValueError(f"usage history: updated must be seconds, got {updated!r}")
        nodes: dict[str, NodeUsage] = {}
        for key, entry in (data.get("nodes") or {}).items():
            if (
                not isinstance(entry, list | tuple)
                or len(entry) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in entry)
            ):
                raise ValueError(f"usage history: node {key!r} must be [used, deserved], two whole numbers >= 0")
            nodes[str(key)] = NodeUsage(int(entry[0]), int(entry[1]))
        recorded = {str(k): parse_ratio(v, f"usage history: {k}") for k, v in (data.get("recorded") or {}).items()}
        return cls(updated=None if updated is None else float(updated), nodes=nodes, recorded=recorded)


_EMPTY_NODE = NodeUsage()


# -- the weights -------------------------------------------------------------------------------------------------


def adjusted_weights(
    weights: Mapping[str, int], ratios: Mapping[str, Fraction | None], scale: Fraction | int = SCALE
) -> dict[str, int]:
    """Each claimant's effective weight: ``weight x scale / clamp(ratio)``, rounded half up, at least 1 for a
    positive weight. Unchanged when every claimant's clamped ratio is the same (the split would be the same).
    ``scale``: 1000 for small weights (a queue's); the smallest clamped ratio for large ones (a quota group's
    shared weight, in base units), so that no weight grows."""
    clamped = {name: clamp(ratios.get(name)) for name in weights}
    if len(set(clamped.values())) <= 1:
        return dict(weights)
    factor = Fraction(scale)
    out: dict[str, int] = {}
    for name, w in weights.items():
        if w <= 0:
            out[name] = w
            continue
        exact = w * factor / clamped[name]
        out[name] = max(1, (2 * exact.numerator + exact.denominator) // (2 * exact.denominator))
    return out


@dataclass(frozen=True)
class PastShare:
    """What fairness over time did to one node, for the explain: its weight, its past-usage ratio (None: no record),
    the effective weight and its share of the surplus among its siblings that take part (1 when alone)."""

    weight: int
    ratio: Fraction | None
    effective: int
    surplus_share: Fraction | None  # None: the tree splits no surplus by weight (capacity: deserved is given)
    window: float
    resource: str | None = None  # the resource whose weight is meant (quota groups weigh each resource)

    def text(self) -> str:
        """``weight 2, past usage 1.8x its share over 7 days -> surplus share 0.41``."""
        past = past_text(self.ratio, self.window)
        if self.surplus_share is None:
            return f"{past} \u2192 among queues of equal share, less past usage goes first and more is reclaimed first"
        if self.resource is None:
            weight = f"weight {self.weight}"
        else:  # a quota group's shared weight is an amount of the resource: as a person reads it
            weight = f"{self.resource} weight {format_amount(self.weight, self.resource)}"
        return f"{weight}, {past} \u2192 surplus share {_number(self.surplus_share)}"

    def to_dict(self) -> dict[str, Any]:
        """For the API: numbers as numbers (the ratio as a float, None without a record)."""
        return {
            "weight": self.weight,
            "resource": self.resource,
            "past_usage_ratio": None if self.ratio is None else round(float(self.ratio), 4),
            "counted_ratio": round(float(clamp(self.ratio)), 4),
            "surplus_share": None if self.surplus_share is None else round(float(self.surplus_share), 4),
            "window_seconds": self.window,
            "text": self.text(),
        }


def past_text(ratio: Fraction | None, window: float) -> str:
    """``past usage 1.8x its share over 7 days`` (a clamped ratio says what it counts as; None: no record)."""
    if ratio is None:
        return f"no past usage recorded over {format_days(window)}"
    text = f"past usage {_number(ratio)}\u00d7 its share over {format_days(window)}"
    if clamp(ratio) != ratio:
        text += f" (counted as {_number(clamp(ratio))}\u00d7)"
    return text


def _number(value: Fraction) -> str:
    """Two decimals at most, no trailing zeros: ``1.8``, ``0.41``, ``10``."""
    return f"{round(float(value), 2):g}"


def describe(
    kind: str,
    weights: Mapping[str, int],
    sets: Iterable[Sequence[str]],
    history: UsageHistory,
    args: FairnessArgs,
    resource: str | None = None,
    scale: Fraction | int = SCALE,
) -> dict[str, PastShare]:
    """``PastShare`` of every node of ``weights`` (name -> its weight), by the disjoint ``sets`` of claimants that
    share a surplus (each node of ``weights`` in one of them); ``scale`` as ``adjusted_weights``'. One pass per set."""
    out: dict[str, PastShare] = {}
    for members in sets:
        group = {n: weights[n] for n in members if n in weights}
        ratios = {n: history.ratio(kind, n) for n in group}
        effective = adjusted_weights(group, ratios, scale)
        total = sum(max(0, v) for v in effective.values())
        for name, w in group.items():
            mine = effective[name]
            share = Fraction(max(0, mine), total) if total > 0 else Fraction(0)
            out[name] = PastShare(w, ratios[name], mine, share, args.window, resource)
    return out


# -- the record, brought forward ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UsageNow:
    """One node as a session sees it now: its parent (the siblings it is measured against), its weight (any scale,
    compared with its siblings' only) and what it holds, as its dominant share of the cluster in ``PPM``."""

    name: str
    parent: str | None
    weight: int
    used: int


@dataclass(frozen=True)
class TreeUsage:
    """One tree whose fairness over time is on: ``kind`` (``queue`` | ``quota``), its arguments and its nodes."""

    kind: str
    args: FairnessArgs
    nodes: Sequence[UsageNow]


def dominant_share(amounts: Mapping[str, int], total: Mapping[str, int]) -> int:
    """``max over resources of amount / total`` in millionths, rounded down (a resource the cluster lacks is left
    out; more than the cluster counts as all of it)."""
    best = 0
    for r, v in amounts.items():
        t = total.get(r, 0)
        if t > 0 and v > 0:
            best = max(best, min(PPM, v * PPM // t))
    return best


def _entitlements(nodes: Sequence[UsageNow]) -> dict[str, Fraction]:
    """Per node: its weighted share of what it and its siblings hold now."""
    by_parent: dict[str | None, list[UsageNow]] = {}
    for node in nodes:
        by_parent.setdefault(node.parent, []).append(node)
    out: dict[str, Fraction] = {}
    for members in by_parent.values():
        held = sum(m.used for m in members)
        weight = sum(max(0, m.weight) for m in members)
        for m in members:
            out[m.name] = Fraction(held * max(0, m.weight), weight) if weight > 0 else Fraction(0)
    return out


def advance(history: UsageHistory | None, trees: Iterable[TreeUsage], now: float) -> UsageHistory:
    """The record at ``now``: each tree's nodes decayed from ``history.updated`` and what they hold now added (see
    the module docstring). The first record (no ``updated``) starts empty at ``now``. Recorded ratios are kept."""
    history = history or UsageHistory()
    nodes: dict[str, NodeUsage] = {}
    for tree in trees:
        if history.updated is None:
            continue
        dt = max(0.0, now - history.updated)
        h = tree.args.half_life
        span = min(dt, tree.args.window)  # a gap longer than the window forgets everything before it
        decay = 0.0 if dt >= tree.args.window else 2.0 ** (-dt / h)
        gain = h / math.log(2) * -math.expm1(-span / h * math.log(2))  # the integral of 2^(-age/h) over the span
        fair = _entitlements(tree.nodes)
        for node in tree.nodes:
            key = node_key(tree.kind, node.name)
            old = history.nodes.get(key, _EMPTY_NODE)
            entry = NodeUsage(
                round(old.used * decay + node.used * gain), round(old.deserved * decay + float(fair[node.name]) * gain)
            )
            if entry.used or entry.deserved:
                nodes[key] = entry
    return UsageHistory(updated=now, nodes=nodes, recorded=history.recorded)
