"""Kueue's LocalQueues as the dashboard keeps them, and the usage Admission Fair Sharing orders them by across live
sessions (issue 28 items 5 and 9).

A LocalQueue (``LocalQueueSpec``) is a namespace's name for a ClusterQueue (a leaf queue), with its own
``fairSharing.weight`` (an exact quantity; 0: admitted last). ``fairway simulate`` reads Kueue's record of a
LocalQueue's past use from its status; a live session keeps its own (``UsageRecord``, one per cluster), as Kueue's
LocalQueue controller keeps the status (each LocalQueue's state with its own sampling clock):

* **sampling** (``sample``): once at least ``usageSamplingInterval`` has passed since the last sample, each
  LocalQueue's consumed resources decay towards what its admitted jobs hold now, ``consumed x (1 - a) + admitted x
  a`` with ``a = 1 - 0.5^(elapsed / usageHalfLifeTime)`` (Kueue's ``CalculateDecayedConsumed``), and the entry
  penalties of the jobs admitted since the last sample are dropped (the sample counts those jobs now); a half-life
  of 0 forgets everything at each sample. A LocalQueue's first sample only starts its clock (a usage seeded from
  Kueue's status is kept as it is, as Kueue seeds its cache from the status);
* **entry penalty** (``with_penalties``): each job a session admits adds ``alpha x`` its minimum resources to its
  LocalQueue's pending penalty at once (``alpha`` of the sampling interval, ``AdmissionFairSharing.alpha``), as the
  session's own order does within the session (``engine.session.admission.UsageOrder``);
* **the session's input** (``usage_table``): each LocalQueue's consumed resources plus its pending penalty, with its
  weight, as ``engine.admission.LocalQueueUsage`` (Kueue's ``CalculateUsage`` sums the two).

Amounts are integers in the engine's units (millicores, bytes, milli-units), rounded at each sample; the ordering
itself is computed in floats, as Kueue computes it. Pure module: no Django, no clock (``now`` is passed in).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from engine.admission import AdmissionFairSharing, LocalQueueKey, LocalQueueSpec, LocalQueueUsage

__all__ = [
    "LocalQueueKey",
    "LocalQueueSpec",
    "LocalQueueState",
    "UsageRecord",
    "admitted_usage",
    "newly_admitted",
    "sample",
    "usage_table",
    "with_penalties",
]

ADMITTED_PHASES = frozenset({"Inqueue", "Running"})


@dataclass(frozen=True, slots=True)
class LocalQueueState:
    """One LocalQueue's kept usage in a cluster: its decayed consumed resources, the entry penalties since its last
    sample, and when it was last sampled (epoch seconds; None: never, a usage seeded from Kueue's status)."""

    consumed: Mapping[str, int] = field(default_factory=dict)
    penalty: Mapping[str, int] = field(default_factory=dict)
    updated: float | None = None


UsageRecord = Mapping[LocalQueueKey, LocalQueueState]  # a cluster's LocalQueues' kept usage


def _merge(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    out = dict(a)
    for r, v in b.items():
        out[r] = out.get(r, 0) + v
    return {r: v for r, v in sorted(out.items()) if v}


def _alpha(elapsed: float, half_life: float) -> float:
    """Kueue's ``calculateAlphaRate``: the share of ``elapsed`` seconds in a usage with that half-life."""
    if half_life <= 0:
        return 0.0
    return 1.0 - math.pow(0.5, elapsed / half_life)


def sample(
    record: UsageRecord,
    admitted: Mapping[LocalQueueKey, Mapping[str, int]],
    keys: Iterable[LocalQueueKey],
    now: float,
    fair: AdmissionFairSharing,
) -> dict[LocalQueueKey, LocalQueueState]:
    """``record`` sampled at ``now`` (the module docstring) for the LocalQueues ``keys`` (those that exist; the
    others are forgotten), ``admitted`` each one's resources held by its admitted jobs now. A LocalQueue is sampled
    once ``usageSamplingInterval`` has passed since its last sample, as Kueue reconciles each LocalQueue; one never
    sampled starts its clock at ``now`` and keeps its (seeded) usage."""
    out: dict[LocalQueueKey, LocalQueueState] = {}
    for key in sorted(set(keys)):
        state = record.get(key)
        if state is None or state.updated is None:
            out[key] = LocalQueueState(state.consumed if state else {}, state.penalty if state else {}, now)
            continue
        elapsed = max(0.0, now - state.updated)
        if elapsed < fair.sampling_interval:
            out[key] = state
            continue
        if fair.half_life <= 0:
            out[key] = LocalQueueState(updated=now)
            continue
        a = _alpha(elapsed, fair.half_life)
        held = admitted.get(key, {})
        old = state.consumed
        decayed = {r: round(old.get(r, 0) * (1.0 - a) + held.get(r, 0) * a) for r in sorted({*old, *held})}
        out[key] = LocalQueueState({r: v for r, v in decayed.items() if v}, {}, now)
    return out


def with_penalties(
    record: UsageRecord, admissions: Iterable[tuple[LocalQueueKey, Mapping[str, int]]], fair: AdmissionFairSharing
) -> dict[LocalQueueKey, LocalQueueState]:
    """``record`` with the entry penalty (``alpha x`` the minimum resources, pods left out) of each admission
    ``(LocalQueue, minimum)`` added to its LocalQueue's pending penalty."""
    out = dict(record)
    alpha = fair.alpha
    for key, minimum in admissions:
        add = {r: round(alpha * v) for r, v in minimum.items() if v > 0 and r != "pods"}
        state = out.get(key, LocalQueueState())
        out[key] = LocalQueueState(state.consumed, _merge(state.penalty, add), state.updated)
    return out


def usage_table(record: UsageRecord, specs: Iterable[LocalQueueSpec]) -> dict[LocalQueueKey, LocalQueueUsage]:
    """Each LocalQueue of ``specs`` as the session's Admission Fair Sharing reads it: its weight, and its consumed
    resources plus its pending penalty."""
    out: dict[LocalQueueKey, LocalQueueUsage] = {}
    for spec in specs:
        state = record.get(spec.key, LocalQueueState())
        out[spec.key] = LocalQueueUsage(spec.weight, _merge(state.consumed, state.penalty))
    return out


def admitted_usage(
    jobs: Iterable[tuple[LocalQueueKey, str, Mapping[str, int] | None]],
) -> dict[LocalQueueKey, dict[str, int]]:
    """Per LocalQueue, the minimum resources of its admitted jobs (``(LocalQueue, phase, minimum)``; Inqueue and
    Running are admitted; pods left out): what Kueue's sample reads as the LocalQueue's admitted usage."""
    out: dict[LocalQueueKey, dict[str, int]] = {}
    for key, phase, minimum in jobs:
        if phase in ADMITTED_PHASES and minimum:
            into = out.setdefault(key, {})
            for r, v in minimum.items():
                if r != "pods" and v > 0:
                    into[r] = into.get(r, 0) + v
    return out


def newly_admitted(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """The podgroup keys Pending in ``before`` (key -> phase) and admitted (Inqueue, Running) in ``after``."""
    return sorted(k for k, phase in after.items() if phase in ADMITTED_PHASES and before.get(k) == "Pending")
