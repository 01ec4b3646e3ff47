"""The range of ``priority`` and ``preemptible`` a queue allows its jobs (Fairway's, like the PriorityClasses a
Kubernetes ResourceQuota lets a namespace use).

An admin sets on a queue ``max_priority`` (None: no maximum) and ``allow_non_preemptible``; a job's range is the
strictest along its queue's path from the root (a limit on a team's top queue holds for every queue below it). Pods
and podgroups are created within it (``validate_priority_range``: a 400 naming the field and the limit); a pod the
Kubernetes adapter mirrors is held to it instead (``hold_to_range``: the priority lowered to the maximum, a
non-preemptible pod where none is allowed treated as preemptible), with a notice for a Kubernetes Event.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.rules.common import FieldError

__all__ = ["PriorityRange", "hold_to_range", "priority_range", "validate_priority_range"]


@dataclass(frozen=True, slots=True)
class PriorityRange:
    """What a job of ``queue`` may ask: at most ``max_priority`` (set by queue ``max_from``; None: no maximum), and
    non-preemptible pods only when ``non_preemptible`` (refused by queue ``refused_by`` otherwise)."""

    queue: str
    max_priority: int | None = None
    max_from: str = ""
    non_preemptible: bool = True
    refused_by: str = ""


def priority_range(queue: str, path: Sequence[tuple[str, int | None, bool]]) -> PriorityRange:
    """The range of a job of ``queue`` from ``path``: ``(name, max_priority, allow_non_preemptible)`` of the queue
    and each of its ancestors (any order): the lowest maximum and a refusal of non-preemptible pods anywhere."""
    best: tuple[int, str] | None = None
    refused_by = ""
    for name, max_priority, allow in path:
        if max_priority is not None and (best is None or max_priority < best[0]):
            best = (max_priority, name)
        if not allow and not refused_by:
            refused_by = name
    return PriorityRange(
        queue=queue,
        max_priority=best[0] if best else None,
        max_from=best[1] if best else "",
        non_preemptible=not refused_by,
        refused_by=refused_by,
    )


def _of(rng: PriorityRange, queue: str) -> str:
    return f"queue {queue}" if queue == rng.queue else f"queue {queue} (above queue {rng.queue})"


def validate_priority_range(
    obj: str, rng: PriorityRange, *, priority: int, preemptible: bool | None = None
) -> list[FieldError]:
    """Whether a job's ``priority`` (and a pod's ``preemptible``) lie within ``rng``; ``obj`` names the job for the
    messages (``pod nlp/p1``)."""
    errors: list[FieldError] = []
    if rng.max_priority is not None and priority > rng.max_priority:
        errors.append(
            FieldError(
                "priority",
                f"{obj}: priority {priority} is above the maximum {rng.max_priority} that "
                f"{_of(rng, rng.max_from)} allows (its max_priority, set by admins)",
                "out_of_range",
            )
        )
    if preemptible is False and not rng.non_preemptible:
        errors.append(
            FieldError(
                "preemptible",
                f"{obj}: {_of(rng, rng.refused_by)} allows no non-preemptible pods (its allow_non_preemptible is "
                "false, set by admins)",
                "non_preemptible_not_allowed",
            )
        )
    return errors


def hold_to_range(
    obj: str, rng: PriorityRange, *, priority: int, preemptible: bool = True
) -> tuple[int, bool, list[str]]:
    """``priority`` and ``preemptible`` held to ``rng`` (the priority lowered to the maximum; non-preemptible
    where none is allowed: preemptible), and one sentence per change (empty when nothing changed)."""
    notes: list[str] = []
    if rng.max_priority is not None and priority > rng.max_priority:
        notes.append(
            f"{obj}: priority {priority} is above the maximum {rng.max_priority} of {_of(rng, rng.max_from)}; "
            f"Fairway schedules it at priority {rng.max_priority}"
        )
        priority = rng.max_priority
    if not preemptible and not rng.non_preemptible:
        notes.append(
            f"{obj}: {_of(rng, rng.refused_by)} allows no non-preemptible pods; Fairway treats it as preemptible"
        )
        preemptible = True
    return priority, preemptible, notes
