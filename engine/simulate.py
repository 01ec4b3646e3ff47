"""``fairway simulate`` as a pure function: a snapshot in, the contract's document out (``shared/SIMULATE.md``).

The same engine the control plane runs: the quota values come from ``engine.values`` and the decisions
from the session engine (``engine.session.run``), so what simulate prints is what a session would decide.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine import rules
from engine.fairshare.drs import Share
from engine.flavors import FlavorChoice, assign_flavors, flavor_of_request, with_kept_flavors
from engine.limits import ENV_VARS, Deadline, Limits, node_amount_errors
from engine.objects import Snapshot
from engine.partial import PartialAdmission
from engine.policy.policy import Policy
from engine.resources import (
    ResourceNames,
    format_amount,
    format_exact_quantity,
    format_quantity,
    is_unlimited,
    parse_quantity,
    resource_label,
)
from engine.session import run
from engine.usage import QUEUE
from engine.values import QuotaValues, compute_values, past_shares

__all__ = ["SimulationError", "SimulationResult", "render_table", "simulate"]

Origin = tuple[str, int, "int | None"]  # file, document index, List item


class SimulationError(ValueError):
    """A snapshot that cannot be simulated (a tree that fails validation); ``str()`` is one line."""


@dataclass
class SimulationResult:
    document: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # hints about the input that are not problems


NO_NODES_NOTE = "the input has no nodes; every job waits for capacity (add Node documents to place pods)"


def rl(values: Mapping[str, int] | None) -> dict[str, str | None]:
    """A resource list in the contract's form: canonical quantities, zero entries left out, and ``None`` (JSON
    null) for an unlimited amount (the built-in ``system``/``default`` groups' max and runtime), never a sentinel."""
    if not values:
        return {}
    out: dict[str, str | None] = {}
    for name, amount in sorted(values.items()):
        if amount:
            text = _QUANTITIES.get((name, amount))
            if text is None:
                text = _quantity(name, amount)
            out[name] = text
    return out


def limits_rl(values: Mapping[str, int]) -> dict[str, str | None]:
    """A borrowing or lending limit in the contract's form: every resource it names, zeros included (a lending limit
    of 0 lends nothing); a resource left out has no limit, so an empty object means unlimited."""
    return {name: _quantity(name, amount) for name, amount in sorted(values.items())}


# Formatted amounts: a document of ten thousand groups prints the same few hundred amounts again and again.
_QUANTITIES: dict[tuple[str, int], str | None] = {}


def _quantity(name: str, amount: int) -> str | None:
    text = None if is_unlimited(amount) else format_quantity(amount, name)
    if len(_QUANTITIES) > 65536:
        _QUANTITIES.clear()
    _QUANTITIES[(name, amount)] = text
    return text


def unoffered_requests(snapshot: Snapshot) -> list[str]:
    """Warnings for the resources pods or podgroups ask for that no node of the snapshot offers (and that are not
    standard Kubernetes resources): offline, the manifests' nodes are all the names simulate knows. Such a pod can
    never be placed; the simulation still runs."""
    names = ResourceNames(r for node in snapshot.nodes.values() for r in node.allocatable)
    asked: dict[str, list[str]] = {}
    seen: set[tuple[str, str]] = set()  # (podgroup, resource) already named through one of its pods
    for task in snapshot.tasks.values():
        for r in names.unknown(r for r, amount in task.request.items() if amount):
            asked.setdefault(r, []).append(f"pod {task.uid}")
            seen.add((task.podgroup, r))
    for key, pg in snapshot.podgroups.items():
        for r in names.unknown(r for r, amount in (pg.min_resources or {}).items() if amount):
            if (key, r) not in seen:
                asked.setdefault(r, []).append(f"podgroup {key}")
    out = []
    for r, who in sorted(asked.items()):
        more = f" and {len(who) - 3} more" if len(who) > 3 else ""
        out.append(f"{', '.join(sorted(who)[:3])}{more} request {r}, which no node offers (known: {names.listing()})")
    return out


def _locate(kind: str, name: str, origins: Mapping[tuple[str, str], Origin] | None) -> str:
    origin = (origins or {}).get((kind, name))
    if origin is None:
        return f"{kind} {name}"
    file, index, item = origin
    where = f"{file}: document {index}" + (f" item {item}" if item is not None else "")
    return f"{where} ({kind} {name})"


def validate_snapshot(
    snapshot: Snapshot,
    origins: Mapping[tuple[str, str], Origin] | None = None,
    limits: Limits | None = None,
    checkpoint: Callable[[], None] | None = None,
) -> None:
    """Refuse a snapshot whose trees break the rules, naming the first offending object (by name) and its document.

    Linear in the trees (``rules.queue_tree_errors``): a 20,000-level chain is refused at the first queue past the
    depth limit (``limits.max_queue_depth``; quota groups ``limits.max_quota_group_depth``) in milliseconds.
    ``checkpoint`` (a deadline's ``check``) is called as the rules go."""
    limits = limits or Limits()
    queue_errors = rules.queue_tree_errors(
        dict(snapshot.queues), max_depth=limits.max_queue_depth, checkpoint=checkpoint
    )
    for name, errors in queue_errors:
        raise SimulationError(f"{_locate('Queue', name, origins)}: {errors[0].field}: {errors[0].message}")
    group_errors = rules.quota_tree_errors(
        dict(snapshot.quota_groups), max_depth=limits.max_quota_group_depth, checkpoint=checkpoint
    )
    for name, errors in group_errors:
        raise SimulationError(f"{_locate('ElasticQuota', name, origins)}: {errors[0].field}: {errors[0].message}")


def fair_sharing_doc(share: Share) -> dict[str, Any]:
    """A share as the output gives it: Kueue's status value (``weightedShare``, rounded up; null when infinite), the
    exact value for people (``"66.667"``, ``"∞"``), the dominant resource and whether the node borrows."""
    return {
        "weightedShare": share.rounded(),
        "preciseShare": share.text(),
        "dominantResource": share.resource or None,
        "borrowing": share.borrowing,
    }


def _queues_doc(snapshot: Snapshot, values: QuotaValues) -> dict[str, Any]:
    out: dict[str, Any] = {}
    shares = values.fair_shares
    for name, spec in sorted(snapshot.queues.items()):
        q = values.queues.get(name)
        out[name] = {
            "state": spec.state,
            "parent": spec.parent,
            "weight": spec.weight,
            "request": rl(q.request if q else None),
            "allocated": rl(q.allocated if q else None),
            "deserved": rl(q.deserved if q else None),
            "guarantee": rl(spec.guarantee),
            "capability": rl(spec.capability),
            "realCapability": rl(q.real_capability if q else None),
            "share": round(q.share, 6) if q else 0.0,
            "reserved": rl(q.inqueue if q else None),
            "reservedJobs": q.reserved_jobs if q else 0,
            "borrowingLimit": limits_rl(spec.borrowing_limit),
            "lendingLimit": limits_rl(spec.lending_limit),
        }
        kueue = snapshot.kueue_names.get(name)
        if kueue is not None:
            # a Kueue object keyed by an identity of its own (its name is a built-in's or another queue's)
            out[name]["kueue"] = {"kind": kueue.kind, "name": kueue.name}
        exact = snapshot.kueue_weights.get(name)
        if exact is not None:
            # Kueue's fairSharing.weight as given, where the whole weight was scaled from it (or it is 0)
            out[name]["kueueWeight"] = format_exact_quantity(exact)
        if name in shares:
            # Kueue's Fair Sharing: the dominant resource share (when fair sharing is on)
            out[name]["fairSharing"] = fair_sharing_doc(shares[name])
    return out


def _namespaces_doc(snapshot: Snapshot, values: QuotaValues) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for (queue, ns), v in sorted(values.namespaces.items()):
        info = snapshot.namespaces.get(ns)
        out[f"{queue}/{ns}"] = {
            "weight": info.weight if info else 1,
            "request": rl(v.request),
            "allocated": rl(v.allocated),
            "deserved": rl(v.deserved),
        }
    return out


def _quotas_doc(snapshot: Snapshot, values: QuotaValues) -> dict[str, Any]:
    out: dict[str, Any] = {}
    # every group's values at once (``ElasticResult.amounts``), not one GroupQuota per group
    auto_scaled_min, request, used, runtime = (
        values.quotas.amounts(f) for f in ("auto_scaled_min", "request", "used", "runtime")
    )
    reserved, reserved_jobs = values.reservations.amounts, values.reservations.jobs
    for name, spec in sorted(snapshot.quota_groups.items()):
        out[name] = {
            "parent": spec.parent,
            "isParent": spec.is_parent,
            "min": rl(spec.min),
            "max": rl(spec.max),
            "sharedWeight": rl(spec.shared_weight if spec.shared_weight is not None else spec.max),
            "autoScaledMin": rl(auto_scaled_min.get(name)),
            "request": rl(request.get(name)),
            "used": rl(used.get(name)),
            "runtime": rl(runtime.get(name)),
            "reserved": rl(reserved.get(name)),
            "reservedJobs": reserved_jobs.get(name, 0),
            "borrowingLimit": limits_rl(spec.borrowing_limit),
            "lendingLimit": limits_rl(spec.lending_limit),
        }
    return out


def simulate(
    snapshot: Snapshot,
    *,
    policy: Policy | None = None,
    sessions: int = 1,
    recycle: bool = False,
    now: float | None = None,
    origins: Mapping[tuple[str, str], Origin] | None = None,
    limits: Limits | None = None,
    deadline: Deadline | None = None,
) -> SimulationResult:
    """Run ``sessions`` sessions (and one recycling pass with ``recycle``) and build the contract's document.

    ``limits`` (default ``Limits()``) bound the sessions, pods and podgroups (``SimulationError`` over them);
    ``deadline`` is checked before each session and between podgroups inside it, and raises ``BudgetExceeded``
    when spent: the simulation stops there."""
    limits = limits or Limits()
    _check_limits(snapshot, sessions, limits)
    _check_nodes(snapshot, limits, origins)
    snapshot = snapshot.replace(node_bound=limits.max_node_amount)
    if deadline is not None:
        deadline.progress = "checking the queue and quota trees"
        deadline.check()
    validate_snapshot(snapshot, origins, limits, deadline.check if deadline is not None else None)
    # The snapshot's own policy already reported its warnings (with their file) when it was loaded.
    warnings = list(policy.warnings) if policy is not None else []
    warnings += unoffered_requests(snapshot)
    if policy is not None and snapshot.policy.plugin("kueuefair") and not policy.plugin("kueuefair"):
        # the input asked for Kueue's preemption or fair sharing (``engine.manifests.kueuefair``)
        warnings.append(
            "Kueue preemption policies or fairSharing are not enforced: the given policy does not name the "
            "kueuefair plugin"
        )
    policy = policy or snapshot.policy
    snapshot = snapshot.with_policy(policy)
    start = time.time() if now is None else now
    document: dict[str, Any] = {"podgroups": {}, "bindings": {}, "pipelined": {}, "evictions": [], "sessions": []}
    snapshot, values = _run_sessions(run, snapshot, policy, sessions, start, deadline, document, warnings)
    if recycle:
        snapshot = _recycle(run, snapshot, start + sessions, deadline, document)
    assert values is not None  # every run has at least one session
    _value_sections(document, snapshot, values, compute_values(snapshot, policy))
    document["evictions"] = sorted(set(document["evictions"]))
    notes = [] if snapshot.nodes else [NO_NODES_NOTE]
    return SimulationResult(document=document, warnings=warnings, notes=notes)


def _run_sessions(
    engine: Any,
    snapshot: Snapshot,
    policy: Policy,
    sessions: int,
    start: float,
    deadline: Deadline | None,
    document: dict[str, Any],
    warnings: list[str],
) -> tuple[Snapshot, QuotaValues | None]:
    """Run the sessions one after another (session ``i`` at ``start + i``), each on the snapshot the one before
    left, recording in ``document`` their bindings, evictions and durations and the last one's podgroups. Returns
    the snapshot after them and the values the last session opened with."""
    checkpoint = deadline.check if deadline is not None else None
    values = None
    choices: dict[str, FlavorChoice] = {}  # Kueue's flavor assignment of each workload, the latest
    partial = PartialAdmission(snapshot)  # Kueue's Jobs that may be admitted with fewer pods
    for i in range(sessions):
        if deadline is not None:
            deadline.progress = f"in session {i + 1} of {sessions}"
            deadline.check()
        t = start + i
        started = time.perf_counter()
        snapshot = partial.before(snapshot)
        # several flavors per resource: an admitted workload's pods not on a node in the flavors of those that are,
        # then each waiting workload's
        snapshot, chosen = assign_flavors(with_kept_flavors(snapshot, {}))
        choices.update(chosen)
        result = engine.run_session(snapshot, now=t, policy=policy, checkpoint=checkpoint)
        result.duration_ms = (time.perf_counter() - started) * 1000
        # the values when this (the last) session opened: the session's own (one computation)
        values = result.values_at_open or compute_values(snapshot, policy)
        for b in result.bindings:
            (document["pipelined"] if b.pipelined else document["bindings"])[b.task] = b.node
        document["evictions"].extend(e.task for e in result.evictions)
        document["sessions"].append(
            {"duration_ms": round(result.duration_ms, 3), "bound": result.bound, "evicted": result.evicted}
        )
        warnings.extend(result.warnings)
        snapshot = engine.apply_result(snapshot, result, now=t)
        if partial:
            snapshot = partial.after_session(snapshot, result.bindings)
        document["podgroups"] = {
            key: {
                "queue": snapshot.podgroups[key].queue if key in snapshot.podgroups else "",
                "phase": status.phase,
                "reason": status.reason,
                "message": status.message,
            }
            for key, status in sorted(result.podgroups.items())
        }
    if snapshot.kueue_flavors is not None:
        _flavor_entries(snapshot, document["podgroups"], choices)
    for key, entry in partial.entries().items():
        if key in document["podgroups"]:
            document["podgroups"][key]["partialAdmission"] = entry
    return snapshot, values


def _flavor_entries(snapshot: Snapshot, podgroups: dict[str, Any], choices: Mapping[str, FlavorChoice]) -> None:
    """Each podgroup's Kueue flavors (``flavors``: resource -> flavor, from what its pods ask for; for a workload of
    several pod sets, the flavor of the first pod set asking for the resource, and ``podSetFlavors``, each pod set's,
    when they differ) and, for one the assigner looked at, ``flavorAssignment``: the sentence saying which flavors it
    tried and what it found."""
    by_podgroup = snapshot.tasks_by_podgroup
    for key, entry in podgroups.items():
        given: dict[str, str] = {}
        pg = snapshot.podgroups.get(key)
        pod_sets = pg.pod_sets if pg is not None else ()
        by_set: dict[str, dict[str, str]] = {name: {} for name in pod_sets}
        for task in by_podgroup.get(key, ()):
            if pod_sets:
                by_set.setdefault(task.task_role, {}).update(flavor_of_request(task.request))
            else:
                given.update(flavor_of_request(task.request))
        for flavors in by_set.values():
            for resource, flavor in flavors.items():
                given.setdefault(resource, flavor)
        entry["flavors"] = dict(sorted(given.items()))
        if any(given[r] != f for flavors in by_set.values() for r, f in flavors.items()):
            entry["podSetFlavors"] = {name: dict(sorted(f.items())) for name, f in by_set.items() if f}
        if key in choices:
            entry["flavorAssignment"] = choices[key].sentence()


def _recycle(
    engine: Any, snapshot: Snapshot, now: float, deadline: Deadline | None, document: dict[str, Any]
) -> Snapshot:
    """The recycling pass after the sessions, with every quota group over its quota since ever (no delay): its
    evictions go into ``document`` and the evicted pods leave the snapshot."""
    if deadline is not None:
        deadline.progress = "before the recycling pass"
        deadline.check()
    over_since = {name: float("-inf") for name in snapshot.quota_groups}
    evictions, _ = engine.run_recycle(snapshot, now=now, over_since=over_since, delay=0.0)
    document["evictions"].extend(e.task for e in evictions)
    return snapshot.without_tasks(e.task for e in evictions)


def _check_limits(snapshot: Snapshot, sessions: int, limits: Limits) -> None:
    """``SimulationError`` when the sessions, pods or podgroups asked for pass the limits."""
    if sessions < 1:
        raise SimulationError("--sessions must be at least 1")
    if sessions > limits.max_sessions:
        raise SimulationError(f"--sessions {sessions} is more than {limits.max_sessions} ({ENV_VARS['max_sessions']})")
    for what, count, most, setting in (
        ("pods", len(snapshot.tasks), limits.max_pods, "max_pods"),
        ("podgroups", len(snapshot.podgroups), limits.max_podgroups, "max_podgroups"),
    ):
        if count > most:
            raise SimulationError(f"the snapshot holds {count} {what}, more than {most} ({ENV_VARS[setting]})")


def _check_nodes(snapshot: Snapshot, limits: Limits, origins: Mapping[tuple[str, str], Origin] | None) -> None:
    """``SimulationError`` naming the first Node above what one node may have (``FAIRWAY_MAX_NODE_AMOUNT``), or a
    snapshot of more nodes than one cluster may hold: with both bounds no cluster's total reaches 2**62 base units."""
    if len(snapshot.nodes) > limits.max_nodes:
        raise SimulationError(
            f"the snapshot holds {len(snapshot.nodes):,} nodes, more than {limits.max_nodes:,} "
            f"({ENV_VARS['max_nodes']})"
        )
    for name, node in sorted(snapshot.nodes.items()):
        errors = node_amount_errors(node.allocatable, limits.max_node_amount, "status.allocatable")
        if errors:
            raise SimulationError(f"{_locate('Node', name, origins)}: {errors[0]}")


def _value_sections(document: dict[str, Any], snapshot: Snapshot, values: QuotaValues, after: QuotaValues) -> None:
    """The queues, namespaces and quotas sections: the values as the last session opened on them, except allocated
    and used, which are the values ``after`` the last session (and the recycling pass)."""
    document["queues"] = _queues_doc(snapshot, values)
    for name, entry in document["queues"].items():
        if name in after.queues:
            entry["allocated"] = rl(after.queues[name].allocated)
    document["namespaces"] = _namespaces_doc(snapshot, values)
    for (queue, ns), v in after.namespaces.items():
        entry = document["namespaces"].get(f"{queue}/{ns}")
        if entry is not None:
            entry["allocated"] = rl(v.allocated)
    document["quotas"] = _quotas_doc(snapshot, values)
    used_after = after.quotas.amounts("used")
    for name, entry in document["quotas"].items():
        if name in used_after:
            entry["used"] = rl(used_after[name])
    # fairness over time (only when a tree has it on: the contract only grows): each node's past usage and share
    for key, share in past_shares(snapshot, values).items():
        kind, name = key.split("/", 1)
        entry = document["queues" if kind == QUEUE else "quotas"].get(name)
        if entry is not None:
            entry["pastUsage"] = {
                "ratio": None if share.ratio is None else round(float(share.ratio), 6),
                "surplusShare": None if share.surplus_share is None else round(float(share.surplus_share), 6),
                "text": share.text(),
            }


def _rl_text(values: Mapping[str, str | None]) -> str:
    """A resource list of the document for people: cores, whole GPUs, Gi, ``unlimited`` (``format_amount``)."""
    return ",".join(f"{resource_label(k)}={_amount_text(k, v)}" for k, v in values.items()) or "-"


def _amount_text(resource: str, quantity: str | None) -> str:
    return format_amount(None if quantity is None else parse_quantity(quantity, resource), resource)


def _table(rows: list[list[str]], headers: list[str]) -> list[str]:
    cells = [headers, *rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]


def render_table(doc: Mapping[str, Any]) -> str:
    """The document for people: one table per section."""
    lines: list[str] = ["QUEUES", *_queues_table(doc["queues"])]
    if doc["namespaces"]:
        lines += ["", "NAMESPACES"]
        lines += _table(
            [
                [k, str(v["weight"]), _rl_text(v["request"]), _rl_text(v["allocated"]), _rl_text(v["deserved"])]
                for k, v in doc["namespaces"].items()
            ],
            ["QUEUE/NAMESPACE", "WEIGHT", "REQUEST", "ALLOCATED", "DESERVED"],
        )
    lines += ["", "QUOTAS", *_quotas_table(doc["quotas"])]
    if doc["podgroups"]:
        lines += ["", "PODGROUPS"]
        lines += _table(
            [[k, v["queue"], v["phase"], v["reason"] or "-", v["message"] or "-"] for k, v in doc["podgroups"].items()],
            ["PODGROUP", "QUEUE", "PHASE", "REASON", "MESSAGE"],
        )
        flavored = {k: v for k, v in doc["podgroups"].items() if v.get("flavorAssignment") or v.get("flavors")}
        if flavored:  # Kueue's flavors: which each workload was given, and why
            lines += ["", "FLAVORS"]
            lines += _table(
                [
                    [
                        k,
                        ", ".join(f"{r} {f}" for r, f in v.get("flavors", {}).items()) or "-",
                        v.get("flavorAssignment", "-"),
                    ]
                    for k, v in flavored.items()
                ],
                ["PODGROUP", "FLAVORS", "ASSIGNMENT"],
            )
    partial = {k: v["partialAdmission"] for k, v in doc["podgroups"].items() if "partialAdmission" in v}
    if partial:  # Kueue's partial admission: the count each Job was tried with, and why
        lines += ["", "PARTIAL ADMISSION"]
        lines += _table(
            [
                [k, str(v["count"]), str(v["minCount"]), "-" if v["admittedCount"] is None else str(v["admittedCount"]),
                 v["sizing"]]
                for k, v in partial.items()
            ],
            ["PODGROUP", "PODS", "MIN", "ADMITTED", "SIZING"],
        )  # fmt: skip
    if doc["bindings"] or doc["pipelined"]:
        lines += ["", "BINDINGS"]
        lines += _table(
            [[k, v, ""] for k, v in doc["bindings"].items()]
            + [[k, v, "pipelined"] for k, v in doc["pipelined"].items()],
            ["POD", "NODE", ""],
        )
    if doc["evictions"]:
        lines += ["", "EVICTIONS"] + [f"  {e}" for e in doc["evictions"]]
    for i, s in enumerate(doc["sessions"], 1):
        lines.append(f"session {i}: {s['bound']} bound, {s['evicted']} evicted in {s['duration_ms']:.1f} ms")
    return "\n".join(lines)


def _queues_table(queues: Mapping[str, Any]) -> list[str]:
    fair = any("fairSharing" in q for q in queues.values())  # Kueue's Fair Sharing is on: its share too
    headers = ["NAME", "STATE", "PARENT", "WEIGHT", "REQUEST", "ALLOCATED", "DESERVED", "REALCAPABILITY", "SHARE"]
    rows = []
    for n, q in queues.items():
        row = [
            f"{n} (Kueue {q['kueue']['kind']} {q['kueue']['name']})" if "kueue" in q else n,
            q["state"],
            q["parent"] or "-",
            str(q["weight"]),
            _rl_text(q["request"]),
            _rl_text(q["allocated"]),
            _rl_text(q["deserved"]),
            _rl_text(q["realCapability"]),
            f"{q['share']:.3f}",
        ]
        if fair:
            share = q.get("fairSharing")
            row.append(share["preciseShare"] if share else "-")
        rows.append(row)
    return _table(rows, [*headers, "FAIRSHARE"] if fair else headers)


def _quotas_table(quotas: Mapping[str, Any]) -> list[str]:
    return _table(
        [
            [
                n,
                g["parent"] or "-",
                _rl_text(g["min"]),
                _rl_text(g["max"]),
                _rl_text(g["autoScaledMin"]),
                _rl_text(g["request"]),
                _rl_text(g["used"]),
                _rl_text(g["runtime"]),
            ]
            for n, g in quotas.items()
        ],
        ["NAME", "PARENT", "MIN", "MAX", "AUTOSCALEDMIN", "REQUEST", "USED", "RUNTIME"],
    )
