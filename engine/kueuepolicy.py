"""Kueue's levers and policies of one queue as the dashboard's tree stores them (issue 28 item 9): the queue's
``kueue`` field, a JSON object in Kueue's own spelling of a ClusterQueue's (or Cohort's) spec sections:

* ``queueingStrategy``: ``BestEffortFIFO`` (Kueue's default) or ``StrictFIFO``;
* ``stopPolicy``: ``None``, ``Hold`` (the queue is closed: nothing new is admitted) or ``HoldAndDrain`` (closed and
  its admitted jobs evicted);
* ``namespaceSelector``: a ``metav1.LabelSelector`` (``matchLabels``, ``matchExpressions``); left out: every
  namespace (Fairway's reading, ``engine.manifests.kueuelevers``);
* ``preemption``: ``reclaimWithinCohort`` (Never, LowerPriority, Any), ``borrowWithinCohort`` (``policy`` Never or
  LowerPriority, ``maxPriorityThreshold``), ``withinClusterQueue`` (Never, LowerPriority, LowerOrNewerEqualPriority);
* ``admissionScope``: ``{"admissionMode": "UsageBasedAdmissionFairSharing"}`` (or ``NoAdmissionFairSharing``);
* ``fairSharing``: ``{"weight": "0.75"}``, Kueue's weight as an exact quantity (0, or above 10^-9, no upper bound, as Kueue);
* ``resourceGroups``: a ClusterQueue's resource groups whose resources have quota in several ResourceFlavors, each
  ``{"coveredResources": [...], "flavors": [...]}`` with its flavors in the order Kueue tries them (their quotas are
  the queue's ``deserved``, ``borrowing_limit`` and ``lending_limit`` under the flavored keys, ``cpu@spot``:
  ``engine.flavors``); ``flavorFungibility``: ``whenCanBorrow`` (MayStopSearch, TryNextFlavor), ``whenCanPreempt``
  (TryNextFlavor, MayStopSearch), ``preference`` (BorrowingOverPreemption, PreemptionOverBorrowing);
* ``kind`` and ``name``: the Kueue object the queue stands for (``Cohort`` or ``ClusterQueue``) and its Kueue name
  where that differs from the queue's (a ClusterQueue named ``root`` is the queue ``root-clusterqueue``).

``parse_kueue_policy`` checks a value and gives it back normalized (keys in this order, Kueue's defaults left out,
the weight as a quantity string) with every problem at its place (``kueue.preemption.reclaimWithinCohort``);
``KueuePolicy.of`` reads a normalized value into what the session's levers need. The readers of Kueue's manifests
(``engine.manifests.kueue``) check the same fields in the same words, and keep what they read on the queue's spec
through ``kueue_policy_value``, so that an import stores it; ``engine.manifests.kueuestored`` turns the stored
values of a tree back into the snapshot's levers for the live sessions.

Pure module: plain data, no Django.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from engine.admission import SELECTOR_OPERATORS, LabelSelector, SelectorTerm
from engine.objects import FlavorFungibility, FlavorGroup, KueueName, KueuePreemption
from engine.resources import (
    FLAVOR_MARK,
    FLAVOR_NAME_RE,
    QuantityError,
    check_resource_name,
    format_exact_quantity,
    parse_exact_quantity,
)

__all__ = [
    "BORROW_POLICIES",
    "KUEUE_KINDS",
    "KUEUE_POLICY_HELP",
    "QUEUEING_STRATEGIES",
    "RECLAIM_POLICIES",
    "STOP_POLICIES",
    "WITHIN_POLICIES",
    "KueuePolicy",
    "kueue_policy_value",
    "parse_kueue_policy",
]

QUEUEING_STRATEGIES = ("BestEffortFIFO", "StrictFIFO")
STOP_POLICIES = ("None", "Hold", "HoldAndDrain")
RECLAIM_POLICIES = ("Never", "LowerPriority", "Any")
BORROW_POLICIES = ("Never", "LowerPriority")
WITHIN_POLICIES = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
ADMISSION_MODES = ("UsageBasedAdmissionFairSharing", "NoAdmissionFairSharing")
WHEN_CAN_BORROW = ("MayStopSearch", "TryNextFlavor")
WHEN_CAN_PREEMPT = ("TryNextFlavor", "MayStopSearch")
FLAVOR_PREFERENCES = ("BorrowingOverPreemption", "PreemptionOverBorrowing")
KUEUE_KINDS = ("ClusterQueue", "Cohort")
_KEYS = (
    "kind", "name", "queueingStrategy", "stopPolicy", "namespaceSelector", "preemption", "admissionScope",
    "fairSharing", "resourceGroups", "flavorFungibility",
)  # fmt: skip
_LEAST_WEIGHT = Fraction(1, 10**9)  # Kueue: a weight other than 0 must be greater than 10^-9
_INT32 = 2**31

KUEUE_POLICY_HELP = (
    "Kueue's levers of this queue, in Kueue's spelling of a ClusterQueue's spec: queueingStrategy (BestEffortFIFO, "
    "StrictFIFO), stopPolicy (None, Hold, HoldAndDrain), namespaceSelector (a label selector), preemption "
    "(reclaimWithinCohort, borrowWithinCohort {policy, maxPriorityThreshold}, withinClusterQueue), admissionScope "
    '{admissionMode}, fairSharing {weight: a quantity, e.g. "0.75"}, resourceGroups [{coveredResources, flavors}] (the '
    "ResourceFlavors a resource's quota is in, in the order tried; their quotas are deserved's cpu@spot, ...), "
    "flavorFungibility {whenCanBorrow, whenCanPreempt, preference}, and kind/name (the Kueue object it was read "
    'from), e.g. {"queueingStrategy": "StrictFIFO", "preemption": {"reclaimWithinCohort": "Any"}}; null: none'
)


class _Problems:
    def __init__(self) -> None:
        self.found: list[QuantityError] = []

    def add(self, where: str, message: str) -> None:
        self.found.append(QuantityError(where, message))


def _choice(raw: Mapping[str, Any], key: str, where: str, allowed: tuple[str, ...], bad: _Problems) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or value not in allowed:
        bad.add(f"{where}.{key}", f"{value!r} is not one of {', '.join(allowed)}")
        return None
    return value


def _object(value: object, where: str, bad: _Problems) -> Mapping[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        bad.add(where, f"expected an object, got {value!r}")
        return None
    return value


def _unknown(raw: Mapping[str, Any], known: tuple[str, ...], where: str, bad: _Problems) -> None:
    for key in raw:
        if key not in known:
            bad.add(f"{where}.{key}", f"unknown field (known: {', '.join(known)})")


def _selector(value: object, where: str, bad: _Problems) -> dict[str, Any] | None:
    raw = _object(value, where, bad)
    if raw is None:
        return None
    _unknown(raw, ("matchLabels", "matchExpressions"), where, bad)
    out: dict[str, Any] = {}
    labels = _object(raw.get("matchLabels"), f"{where}.matchLabels", bad) or {}
    for key, v in labels.items():
        if not isinstance(key, str) or not key or not isinstance(v, str):
            bad.add(f"{where}.matchLabels.{key}", f"expected a label and a string value, got {v!r}")
    if labels:
        out["matchLabels"] = {str(k): v for k, v in sorted(labels.items())}
    exprs = raw.get("matchExpressions")
    if exprs is not None and not isinstance(exprs, list):
        bad.add(f"{where}.matchExpressions", f"expected a list, got {exprs!r}")
        exprs = None
    terms = []
    for i, item in enumerate(exprs or []):
        at = f"{where}.matchExpressions.{i}"
        expr = _object(item, at, bad)
        if expr is None:
            continue
        _unknown(expr, ("key", "operator", "values"), at, bad)
        label, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if not isinstance(label, str) or not label:
            bad.add(f"{at}.key", "missing (a label key)")
        if op not in SELECTOR_OPERATORS:
            bad.add(f"{at}.operator", f"{op!r} is not one of {', '.join(SELECTOR_OPERATORS)}")
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            bad.add(f"{at}.values", f"expected a list of strings, got {values!r}")
            values = []
        if op in ("In", "NotIn") and not values:
            bad.add(f"{at}.values", f"operator {op} needs at least one value")
        if op in ("Exists", "DoesNotExist") and values:
            bad.add(f"{at}.values", f"operator {op} takes no values")
        terms.append({"key": label, "operator": op, **({"values": list(values)} if values else {})})
    if terms:
        out["matchExpressions"] = terms
    return out or None


def _preemption(value: object, where: str, bad: _Problems) -> dict[str, Any] | None:
    raw = _object(value, where, bad)
    if raw is None:
        return None
    _unknown(raw, ("reclaimWithinCohort", "borrowWithinCohort", "withinClusterQueue"), where, bad)
    out: dict[str, Any] = {}
    reclaim = _choice(raw, "reclaimWithinCohort", where, RECLAIM_POLICIES, bad)
    borrow = _object(raw.get("borrowWithinCohort"), f"{where}.borrowWithinCohort", bad) or {}
    _unknown(borrow, ("policy", "maxPriorityThreshold"), f"{where}.borrowWithinCohort", bad)
    policy = _choice(borrow, "policy", f"{where}.borrowWithinCohort", BORROW_POLICIES, bad)
    threshold = borrow.get("maxPriorityThreshold")
    if threshold is not None and (
        isinstance(threshold, bool) or not isinstance(threshold, int) or not -_INT32 <= threshold < _INT32
    ):
        bad.add(f"{where}.borrowWithinCohort.maxPriorityThreshold", f"{threshold!r} is not a 32-bit integer")
        threshold = None
    within = _choice(raw, "withinClusterQueue", where, WITHIN_POLICIES, bad)
    if (policy or "Never") != "Never" and (reclaim or "Never") == "Never":
        bad.add(
            f"{where}.borrowWithinCohort.policy",
            f"{policy} needs reclaimWithinCohort other than Never (Kueue refuses the ClusterQueue)",
        )
    if reclaim is not None:
        out["reclaimWithinCohort"] = reclaim
    if policy is not None or threshold is not None:
        out["borrowWithinCohort"] = {
            "policy": policy or "Never",
            **({"maxPriorityThreshold": threshold} if threshold is not None else {}),
        }
    if within is not None:
        out["withinClusterQueue"] = within
    return out or None


def _weight(value: object, where: str, bad: _Problems) -> str | None:
    raw = _object(value, where, bad)
    if raw is None:
        return None
    _unknown(raw, ("weight",), where, bad)
    given = raw.get("weight")
    if given is None:
        return None
    if isinstance(given, bool) or not isinstance(given, (str, int, float)):
        bad.add(f"{where}.weight", f"{given!r} is not a quantity")
        return None
    try:
        weight = parse_exact_quantity(str(given), f"{where}.weight")
    except QuantityError as exc:
        bad.add(f"{where}.weight", exc.message)
        return None
    if weight < 0 or 0 < weight <= _LEAST_WEIGHT:
        bad.add(f"{where}.weight", f"{given!r} must be 0 or greater than 10^-9 (Kueue's bounds)")
        return None
    return format_exact_quantity(weight)


def _names(value: object, where: str, bad: _Problems, *, flavors: bool) -> list[str]:
    if not isinstance(value, list) or not value:
        bad.add(where, f"expected a list of {'ResourceFlavor' if flavors else 'resource'} names, got {value!r}")
        return []
    out: list[str] = []
    for i, name in enumerate(value):
        if flavors and (not isinstance(name, str) or len(name) > 253 or not FLAVOR_NAME_RE.match(name)):
            bad.add(f"{where}.{i}", f"{name!r} is not a ResourceFlavor name (a DNS-1123 subdomain, e.g. spot)")
            continue
        if not flavors:
            try:
                check_resource_name(name, f"{where}.{i}")
            except QuantityError as exc:
                bad.add(exc.field, exc.message)
                continue
            if FLAVOR_MARK in name:
                bad.add(f"{where}.{i}", f"{name!r}: name the resource (cpu), not one of its flavors")
                continue
        if name in out:
            bad.add(f"{where}.{i}", f"{name!r} is named twice")
            continue
        out.append(name)
    return out


def _resource_groups(value: object, where: str, bad: _Problems) -> list[dict[str, list[str]]] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        bad.add(where, f"expected a list of resource groups, got {value!r}")
        return None
    out = []
    seen: set[str] = set()
    for i, item in enumerate(value):
        at = f"{where}.{i}"
        raw = _object(item, at, bad)
        if raw is None:
            continue
        _unknown(raw, ("coveredResources", "flavors"), at, bad)
        covered = _names(raw.get("coveredResources"), f"{at}.coveredResources", bad, flavors=False)
        for r in covered:
            if r in seen:
                bad.add(f"{at}.coveredResources", f"{r} is covered by an earlier resource group too")
            seen.add(r)
        flavors = _names(raw.get("flavors"), f"{at}.flavors", bad, flavors=True)
        out.append({"coveredResources": covered, "flavors": flavors})
    return out or None


def _flavor_fungibility(value: object, where: str, bad: _Problems) -> dict[str, str] | None:
    raw = _object(value, where, bad)
    if raw is None:
        return None
    _unknown(raw, ("whenCanBorrow", "whenCanPreempt", "preference"), where, bad)
    out = {}
    for key, allowed in (
        ("whenCanBorrow", WHEN_CAN_BORROW), ("whenCanPreempt", WHEN_CAN_PREEMPT), ("preference", FLAVOR_PREFERENCES)
    ):  # fmt: skip
        chosen = _choice(raw, key, where, allowed, bad)
        if chosen is not None and chosen != allowed[0]:  # Kueue's default left out
            out[key] = chosen
    return out or None


def parse_kueue_policy(value: object, field: str = "kueue") -> tuple[dict[str, Any] | None, list[QuantityError]]:
    """``value`` (the API's, the database's, a what-if's) checked and normalized (the module docstring), with every
    problem naming its place under ``field``; None (no lever) for null or an object that sets nothing."""
    bad = _Problems()
    raw = _object(value, field, bad)
    if raw is None:
        return None, bad.found
    _unknown(raw, _KEYS, field, bad)
    out: dict[str, Any] = {}
    kind = _choice(raw, "kind", field, KUEUE_KINDS, bad)
    if kind is not None:
        out["kind"] = kind
    name = raw.get("name")
    if name is not None:
        if not isinstance(name, str) or not name or len(name) > 253:
            bad.add(f"{field}.name", f"{name!r} is not a Kubernetes object name")
        else:
            out["name"] = name
    strategy = _choice(raw, "queueingStrategy", field, QUEUEING_STRATEGIES, bad)
    if strategy not in (None, "BestEffortFIFO"):
        out["queueingStrategy"] = strategy
    stop = _choice(raw, "stopPolicy", field, STOP_POLICIES, bad)
    if stop not in (None, "None"):
        out["stopPolicy"] = stop
    selector = _selector(raw.get("namespaceSelector"), f"{field}.namespaceSelector", bad)
    if selector:
        out["namespaceSelector"] = selector
    preemption = _preemption(raw.get("preemption"), f"{field}.preemption", bad)
    if preemption:
        out["preemption"] = preemption
    scope = _object(raw.get("admissionScope"), f"{field}.admissionScope", bad) or {}
    _unknown(scope, ("admissionMode",), f"{field}.admissionScope", bad)
    if _choice(scope, "admissionMode", f"{field}.admissionScope", ADMISSION_MODES, bad) == ADMISSION_MODES[0]:
        out["admissionScope"] = {"admissionMode": ADMISSION_MODES[0]}
    weight = _weight(raw.get("fairSharing"), f"{field}.fairSharing", bad)
    if weight is not None:
        out["fairSharing"] = {"weight": weight}
    groups = _resource_groups(raw.get("resourceGroups"), f"{field}.resourceGroups", bad)
    if groups:
        out["resourceGroups"] = groups
    fungibility = _flavor_fungibility(raw.get("flavorFungibility"), f"{field}.flavorFungibility", bad)
    if fungibility:
        out["flavorFungibility"] = fungibility
    if bad.found:
        return None, bad.found
    return out or None, []


def kueue_policy_value(
    *,
    kueue_name: KueueName | None = None,
    kind: str | None = None,
    strict_fifo: bool = False,
    stop_policy: str = "None",
    namespace_selector: LabelSelector | None = None,
    preemption: KueuePreemption | None = None,
    usage_based: bool = False,
    weight: Fraction | None = None,
    groups: tuple[FlavorGroup, ...] = (),
    fungibility: FlavorFungibility | None = None,
) -> dict[str, Any] | None:
    """The stored value of the levers a reader of Kueue's manifests found for one queue (None: none)."""
    out: dict[str, Any] = {}
    if kueue_name is not None:
        out.update(kind=kueue_name.kind, name=kueue_name.name)
    elif kind is not None:
        out["kind"] = kind
    if strict_fifo:
        out["queueingStrategy"] = "StrictFIFO"
    if stop_policy != "None":
        out["stopPolicy"] = stop_policy
    if namespace_selector is not None and (namespace_selector.match_labels or namespace_selector.expressions):
        out["namespaceSelector"] = namespace_selector.to_manifest()
    if preemption is not None:
        borrow: dict[str, Any] = {"policy": preemption.borrow_within_cohort}
        if preemption.max_priority_threshold is not None:
            borrow["maxPriorityThreshold"] = preemption.max_priority_threshold
        out["preemption"] = {
            "reclaimWithinCohort": preemption.reclaim_within_cohort,
            "borrowWithinCohort": borrow,
            "withinClusterQueue": preemption.within_cluster_queue,
        }
    if usage_based:
        out["admissionScope"] = {"admissionMode": ADMISSION_MODES[0]}
    if weight is not None:
        out["fairSharing"] = {"weight": format_exact_quantity(weight)}
    if groups:
        out["resourceGroups"] = [{"coveredResources": list(g.resources), "flavors": list(g.flavors)} for g in groups]
    if fungibility is not None:
        defaults = FlavorFungibility()
        fung = {
            key: value
            for key, value, default in (
                ("whenCanBorrow", fungibility.when_can_borrow, defaults.when_can_borrow),
                ("whenCanPreempt", fungibility.when_can_preempt, defaults.when_can_preempt),
                ("preference", fungibility.preference, defaults.preference),
            )
            if value != default
        }
        if fung:
            out["flavorFungibility"] = fung
    return out or None


@dataclass(frozen=True)
class KueuePolicy:
    """A normalized stored value read for the session's levers (``engine.manifests.kueuestored``)."""

    kueue_name: KueueName | None = None
    strict_fifo: bool = False
    stop_policy: str = "None"
    namespace_selector: LabelSelector | None = None
    preemption: KueuePreemption | None = None
    usage_based: bool = False
    weight: Fraction | None = None
    groups: tuple[FlavorGroup, ...] = ()
    fungibility: FlavorFungibility = field(default_factory=FlavorFungibility)

    @classmethod
    def of(cls, value: Mapping[str, Any], queue: str) -> KueuePolicy:
        """The levers of a value ``parse_kueue_policy`` gave (or the database holds) for the queue ``queue``."""
        name = value.get("name")
        kind = value.get("kind") or "ClusterQueue"
        selector = value.get("namespaceSelector")
        preemption = value.get("preemption")
        borrow = (preemption or {}).get("borrowWithinCohort") or {}
        weight = (value.get("fairSharing") or {}).get("weight")
        fung = value.get("flavorFungibility") or {}
        return cls(
            kueue_name=KueueName(kind, name) if name and name != queue else None,
            strict_fifo=value.get("queueingStrategy") == "StrictFIFO",
            stop_policy=value.get("stopPolicy") or "None",
            namespace_selector=None
            if not selector
            else LabelSelector(
                dict(selector.get("matchLabels") or {}),
                tuple(
                    SelectorTerm(t["key"], t["operator"], tuple(t.get("values") or ()))
                    for t in selector.get("matchExpressions") or ()
                ),
            ),
            preemption=None
            if preemption is None
            else KueuePreemption(
                reclaim_within_cohort=preemption.get("reclaimWithinCohort") or "Never",
                borrow_within_cohort=borrow.get("policy") or "Never",
                max_priority_threshold=borrow.get("maxPriorityThreshold"),
                within_cluster_queue=preemption.get("withinClusterQueue") or "Never",
            ),
            usage_based=(value.get("admissionScope") or {}).get("admissionMode") == ADMISSION_MODES[0],
            weight=None if weight is None else parse_exact_quantity(str(weight), "kueue.fairSharing.weight"),
            groups=tuple(
                FlavorGroup(resources=tuple(g["coveredResources"]), flavors=tuple(g["flavors"]))
                for g in value.get("resourceGroups") or ()
            ),
            fungibility=FlavorFungibility(
                when_can_borrow=fung.get("whenCanBorrow", "MayStopSearch"),
                when_can_preempt=fung.get("whenCanPreempt", "TryNextFlavor"),
                preference=fung.get("preference", "BorrowingOverPreemption"),
            ),
        )
