"""A gate's answer (``Verdict``: allowed, or the ``Refusal`` naming the tree node, the check and the numbers) and the
victims a reclaim gate accepts (``VictimSelection``), as every policy's book returns them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from engine.resources import ResourceList, format_amount, resource_label

__all__ = [
    "ALLOWED",
    "Refusal",
    "TaskLike",
    "TaskRef",
    "Verdict",
    "VictimSelection",
    "equals",
    "refuse",
]


class TaskLike(Protocol):
    """Anything with a queue and a request: a task, a podgroup, a ``TaskRef``."""

    @property
    def queue(self) -> str: ...

    @property
    def request(self) -> Mapping[str, int]: ...


@dataclass(frozen=True)
class TaskRef:
    """A minimal task for the victim-selection gates (the session may pass its own objects instead)."""

    name: str
    queue: str
    request: ResourceList
    namespace: str = ""
    job: str = ""


T = TypeVar("T", bound=TaskLike)


@dataclass(frozen=True)
class Refusal:
    """Why a gate said no: the tree node, the check, and (for quota checks) the resource and the numbers."""

    node: str
    check: str  # "realCapability", "deserved", "state", "leaf", "hierarchy", "unknown", ...
    resource: str | None = None
    requested: int | None = None
    available: int | None = None
    message: str = ""
    breakdown: str = ""  # how ``available`` was reached, e.g. "32 capability - 12 allocated - 18 reserved by 3 …"

    def __str__(self) -> str:
        if self.resource is not None and self.requested is not None and self.available is not None:
            return (
                f"queue {self.node} {self.check}: insufficient {resource_label(self.resource)}, "
                f"requested {format_amount(self.requested, self.resource)}, "
                f"available {format_amount(self.available, self.resource)}{equals(self.breakdown)}"
            )
        return f"queue {self.node} {self.check}: {self.message}"


def equals(breakdown: str) -> str:
    """`` = <breakdown>`` after an available amount, or nothing."""
    return f" = {breakdown}" if breakdown else ""


@dataclass(frozen=True)
class Verdict:
    """A gate's answer: truthy when allowed; otherwise ``reasons`` say why (``reason`` is the first)."""

    allowed: bool
    reasons: tuple[Refusal, ...] = ()

    def __bool__(self) -> bool:
        return self.allowed

    @property
    def reason(self) -> Refusal | None:
        return self.reasons[0] if self.reasons else None

    def __str__(self) -> str:
        if self.allowed:
            return "allowed"
        return "; ".join(str(r) for r in self.reasons)


ALLOWED = Verdict(True)


def refuse(*reasons: Refusal) -> Verdict:
    return Verdict(False, tuple(reasons))


@dataclass(frozen=True)
class VictimSelection(Generic[T]):
    """The victims a reclaim gate accepts, in the order considered, and why the others were skipped."""

    victims: tuple[T, ...]
    skipped: tuple[tuple[T, str], ...] = ()
    refusal: Refusal | None = None  # set when the gate refused the whole call
