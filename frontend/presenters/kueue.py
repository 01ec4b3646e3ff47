"""Kueue's levers of a queue for people (its ``kueue`` field, ``engine.kueuepolicy``): the Kueue object it stands
for, by the name Kueue knows it under, and one line of its levers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.kueuepolicy import KueuePolicy

__all__ = ["kueue_lines"]


def kueue_lines(queue: str, value: Mapping[str, Any] | None) -> dict[str, str]:
    """``{"name": "ClusterQueue root", "levers": "StrictFIFO · ..."}`` for the queue ``queue``'s stored levers; a key
    is left out when there is nothing to say (no value: nothing at all)."""
    if not value:
        return {}
    policy = KueuePolicy.of(value, queue)
    out: dict[str, str] = {}
    if policy.kueue_name is not None:
        out["name"] = f"{policy.kueue_name.kind} {policy.kueue_name.name}"
    parts = []
    if policy.strict_fifo:
        parts.append("StrictFIFO: later jobs wait behind the first that cannot be admitted")
    if policy.stop_policy != "None":
        parts.append(
            f"stopPolicy {policy.stop_policy}"
            + (": admitted jobs are evicted" if "Drain" in policy.stop_policy else "")
        )
    if policy.namespace_selector is not None:
        parts.append(f"namespaces {policy.namespace_selector} only")
    if policy.preemption is not None:
        p = policy.preemption
        borrow = p.borrow_within_cohort
        if p.max_priority_threshold is not None and borrow != "Never":
            borrow += f" (priority at most {p.max_priority_threshold})"
        parts.append(
            f"preemption: reclaimWithinCohort {p.reclaim_within_cohort}, borrowWithinCohort {borrow}, "
            f"withinClusterQueue {p.within_cluster_queue}"
        )
    if policy.usage_based:
        parts.append("admission fair sharing by the LocalQueues' usage")
    if policy.weight is not None:
        parts.append(f"fair sharing weight {value['fairSharing']['weight']}")
    if parts:
        out["levers"] = " · ".join(parts)
    return out
