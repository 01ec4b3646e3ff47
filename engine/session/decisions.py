"""What a scheduling session (or a recycling pass) decides: the engine's only output.

Callers apply decisions (``scheduling/store/`` in one database transaction; ``fairway simulate`` to its
snapshot; the what-if endpoint to nothing at all). Every decision carries its reason, with numbers, so the API
and the pages can tell a team why its job waits or why its pod was evicted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.resources import format_quantity, is_unlimited, null_unbounded


@dataclass(frozen=True, slots=True)
class Blocker:
    """The tree node (or cluster part) that stops a job, the resource it lacks, and the numbers.

    ``kind`` is one of ``queue``, ``ancestor`` (a parent queue), ``quota`` (an elastic quota group),
    ``namespace`` (its resource quota), ``cluster`` (idle resources / node predicates), ``gang``, ``policy``.
    ``requested`` and ``available`` are base-unit integers of ``resource`` (``None`` when not about amounts).
    """

    kind: str
    name: str
    resource: str | None = None
    requested: int | None = None
    available: int | None = None
    limit: str = ""  # which limit bound it: "realCapability", "deserved", "runtime", "min", "hard", "idle", ...

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "resource": self.resource,
            "requested": self.requested,
            "available": self.available,
            "limit": self.limit,
        }


def _quantity(resource: object, amount: object) -> dict[str, str | None] | None:
    if not isinstance(resource, str) or not isinstance(amount, int) or isinstance(amount, bool):
        return None
    return {resource: None if is_unlimited(amount) else format_quantity(amount, resource)}


def blocker_json(blocker: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A recorded blocker (``Blocker.to_dict``, as stored) for the API: as it was, plus ``requested_quantity`` and
    ``available_quantity``, ``{resource: Kubernetes quantity}`` (``{"nvidia.com/gpu": "4"}``; ``null`` for an
    unbounded amount; the whole field ``null`` when the blocker is not about an amount). ``requested`` and
    ``available`` stay for the clients that read them: base units (4000 for 4 GPUs), deprecated."""
    if not blocker:
        return None
    out: dict[str, Any] = dict(null_unbounded(dict(blocker)))  # type: ignore[call-overload]  # a mapping stays one
    out["requested_quantity"] = _quantity(blocker.get("resource"), blocker.get("requested"))
    out["available_quantity"] = _quantity(blocker.get("resource"), blocker.get("available"))
    return out


@dataclass(frozen=True, slots=True)
class Binding:
    """Place ``task`` (its uid, ``"namespace/name"``) on ``node``; ``pipelined`` when it waits there for
    resources that are being released (Volcano's Pipelined)."""

    task: str
    node: str
    pipelined: bool = False


# Called by a session with the bindings of each statement as it commits, in the session's order. A committed binding
# is final (nothing later in the session takes it back, as Volcano dispatches a job's binds when its statement
# commits), so a caller may start writing them while the session still runs; the result holds them all again.
BindingSink = Callable[[Sequence[Binding]], None]


@dataclass(frozen=True, slots=True)
class Eviction:
    """Evict ``task``: ``action`` is ``reclaim``, ``preempt`` or ``recycle``; ``preemptor`` the task that needed
    the room (None for recycling); ``message`` says why with numbers."""

    task: str
    action: str
    reason: str
    message: str
    preemptor: str | None = None
    blocker: Blocker | None = None


@dataclass(frozen=True, slots=True)
class PodGroupStatus:
    """A podgroup's phase after the session, and why it is not Running (Volcano's Unschedulable condition)."""

    key: str
    phase: str
    reason: str = ""  # e.g. "Unschedulable", "NotEnoughResources", "QueueClosed", "" when Running
    message: str = ""  # e.g. "queue q1 realCapability: insufficient memory, requested 3Gi, available 2Gi"
    blocker: Blocker | None = None
    # the requeue state to keep for the next session (see ``PodGroupInfo``)
    unplaced_sessions: int = 0
    requeues: int = 0
    backoff_until: float | None = None
    # a gang released whole this session (``engine.session.gangrepair``): the GPU-seconds it held idle, else None
    released_idle_gpu_seconds: int | None = None


@dataclass(frozen=True, slots=True)
class StatusChanges:
    """How a session's podgroup statuses differ from those of the session before it on the same kept state
    (``engine.session.carry``): ``base`` is that session's ``SessionResult.podgroups``, and every podgroup of this
    result not in ``computed`` is in ``base`` with the very same status object (settled, nothing of it changed).
    ``computed``: the keys whose status this session's close computed, in key order (the mapping's order). A
    writer or a recorder that kept what it made of ``base`` redoes only these."""

    base: Mapping[str, PodGroupStatus]
    computed: list[str]


@dataclass(slots=True)
class SessionResult:
    """Everything one session decided, plus the quota values it computed when it opened."""

    bindings: list[Binding] = field(default_factory=list)
    evictions: list[Eviction] = field(default_factory=list)
    podgroups: dict[str, PodGroupStatus] = field(default_factory=dict)
    queue_values: Any = None  # engine.fairshare QueueBook (proportion or capacity result) or None
    namespace_values: Any = None  # dict[(queue, namespace), NamespaceQuota] or None
    quota_values: Any = None  # engine.fairshare.elastic.ElasticResult or None
    # engine.values.QuotaValues the session opened on: ``compute_values(snapshot, policy)`` exactly (None when the
    # quota tree could not be computed and the session opened without it)
    values_at_open: Any = None
    duration_ms: float = 0.0
    warnings: list[str] = field(default_factory=list)
    # fairness over time: the past usage brought forward to this session (engine.usage.UsageHistory), for the
    # caller to keep; None when the policy has it off
    usage_history: Any = None
    # which statuses the close computed, the others being the last session's (None: not known, every one is new)
    status_changes: StatusChanges | None = None

    @property
    def bound(self) -> int:
        return sum(1 for b in self.bindings if not b.pipelined)

    @property
    def pipelined(self) -> int:
        return sum(1 for b in self.bindings if b.pipelined)

    @property
    def evicted(self) -> int:
        return len(self.evictions)
