"""Fairness over time in a sentence for the team pages (``engine.usage``: the past-usage ratio and the effective
weight): what the team used against its share over the memory, and what that does to its weight now."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from engine.policy.fairness import format_days
from engine.usage import PastShare, clamp
from engine.wording import duration
from frontend.presenters.units import human


def _number(value: Fraction | float) -> str:
    """Two decimals at most, no trailing zeros: ``1.8``, ``0.56``, ``10``."""
    return f"{round(float(value), 2):g}"


def half_life_of(snapshot: Any, kind: str) -> float | None:
    """The half-life of the past usage of ``kind``'s tree in the cluster's policy (None when its fairness over time
    is off or there is no snapshot)."""
    if snapshot is None:
        return None
    policy = snapshot.policy
    args = policy.queue_fairness() if kind == "queue" else policy.quota_fairness(snapshot.elastic_quota_args)
    return args.half_life if args.enabled else None


def sentence(share: PastShare, subject: str = "Your team", half_life: float | None = None) -> str:
    """What fairness over time does to a team's node, for people: ``Your team used 1.8 times its share over the last 7
    days (recent use counts most: use of 4 h ago counts half), so its weight of 2 counts as 1.11 when the surplus
    above the guarantees is split: 22 % of that surplus is its part.``"""
    memory = f"over the last {format_days(share.window)}"
    if half_life is not None:
        memory += f" (recent use counts most: use of {duration(half_life)} ago counts half)"
    if share.ratio is None:
        return f"{subject} has no past usage recorded {memory} yet, so its weight counts as it is."
    counted = clamp(share.ratio)
    used = f"{subject} used {_number(share.ratio)}\u00d7 its share {memory}"
    if counted != share.ratio:
        used += f", counted as {_number(counted)}\u00d7"
    if share.surplus_share is None:  # capacity: deserved is given, the ratio orders the queues
        if counted > 1:
            effect = "goes after queues of equal share that used less, and reclaim takes from it before them"
        elif counted < 1:
            effect = "goes before queues of equal share that used more, and reclaim takes from it after them"
        else:
            effect = "is neither ahead of nor behind queues of equal share"
        return f"{used}, so it {effect}."
    if share.resource is None:
        weight = f"its weight of {share.weight} counts as {_number(Fraction(share.weight) / counted)}"
    else:  # a quota group's shared weight is an amount of a resource
        effective = round(Fraction(share.weight) / counted)
        weight = (
            f"its {share.resource} weight of {human(share.weight, share.resource)} counts as "
            f"{human(effective, share.resource)}"
        )
    part = f"{round(float(share.surplus_share) * 100)} %"
    return f"{used}, so {weight} when the surplus above the guarantees is split: {part} of that surplus is its part."
