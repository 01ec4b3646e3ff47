"""What a person may do to a job (a podgroup and its pods), as Kueue's and Volcano's users expect: suspend, resume,
requeue, delete, and read it as manifests. The API (``POST /api/v1/podgroups/{id}/<action>/``), the job page's buttons
and ``fairway job suspend|resume|requeue|delete|yaml`` all call these functions; ``may_act`` says who may.

* **suspend**: the podgroup is held (``PodGroup.suspended_at``, read into ``PodGroupInfo.suspended``): the sessions
  neither admit nor place it, and it stays Pending with reason ``Suspended``. Its pods that hold a node (Allocated,
  Binding, Bound, Running) are evicted (action ``suspend``, reason ``Suspended``); its pipelined pods go back to
  Pending; its pending pods stay Pending.
* **resume**: the hold is lifted; the podgroup waits for admission again like any Pending one.
* **requeue**: release and wait again: its pods that hold a node are evicted (action ``requeue``, reason
  ``Requeued``), its pipelined pods go back to Pending, and the podgroup goes back to Pending, giving its reservation
  back, counted in ``requeues`` (no backoff: a person's requeue waits for admission at once).
* **delete**: the same removal as the garbage collection (``scheduling.evictions.remove_podgroups``): a
  ``RemovedJob`` with cause ``deleted`` and who did it. In a cluster mirrored from Kubernetes the request is recorded
  (``PodGroup.deletion_requested_at``) and the adapter deletes the PodGroup and its pods from the API server
  (``scheduling.kube.mirror_out.Sender.send_deletions``); the row goes when the mirror sees them gone. A PodGroup that
  a controller owns (``PodGroup.kube_owner``: a Volcano Job, ...) is refused (409): its owner would make it again.
* **manifests**: the PodGroup and its pods as ``engine.manifests.export.job_manifests`` writes them (what
  ``fairway simulate`` reads back).

Every action is one transaction that first waits for the cluster's running session to commit and keeps the next one
out until it commits (their advisory locks), then moves the cluster's revision (every writer of the cluster's rows takes it
first, so the next session sees the change whole), locks the podgroup's row, checks its state (a refusal,
``JobActionRefused``, writes nothing), then writes: the pods, the ``Eviction`` rows, the podgroup, a
``PodGroupReason`` row naming who did it (the job's reason history); an admin's action is also an ``admin_change``
in the security log.

Released pods in a cluster fed by node agents get Pending replacements at once (``scheduling.agent.replace_members``,
the simulated job controller's rule, with the same names, so the simulated agent does not make them twice): the job
keeps its members while it waits. In a cluster mirrored from Kubernetes the job's controller makes them; the
evictions are sent through the Eviction API by the adapter, as the sessions' are.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from django.db import connection, transaction

from core.models import Revision
from engine.manifests.export import job_manifests
from engine.wording import plural
from quotas.access import may_change_job
from quotas.services import lock_tree_writes, settle_closing_queues
from scheduling import agent, counters, evictions, ownership
from scheduling.choices import PodGroupPhase, PodStatus
from scheduling.locks import RECYCLE_LOCK, SCHEDULING_SESSION_LOCK, uses_advisory_locks
from scheduling.models import (
    Eviction,
    EvictionAction,
    Pod,
    PodGroup,
    PodGroupReason,
    RemovalCause,
)
from scheduling.store import job_infos

__all__ = [
    "ACTIONS",
    "Done",
    "JobActionRefused",
    "delete",
    "manifests",
    "may_act",
    "owned_refusal",
    "perform",
    "refusal",
    "requeue",
    "resume",
    "suspend",
]

logger = logging.getLogger(__name__)

Action = Literal["suspend", "resume", "requeue", "delete"]
ACTIONS: tuple[Action, ...] = ("suspend", "resume", "requeue", "delete")
SUSPENDED = "Suspended"
REQUEUED = "Requeued"
RESUMED = "Resumed"
DELETING = "Deleting"
_HOLDING = (PodStatus.ALLOCATED, PodStatus.BINDING, PodStatus.BOUND, PodStatus.RUNNING)


class JobActionRefused(Exception):
    """The job is not in a state the action applies to (409), with the sentence to show; nothing was written."""


@dataclass(frozen=True)
class Done:
    """What an action did: ``message`` in a sentence; ``released`` pods evicted, ``replaced`` pods queued again;
    ``pending`` when the adapter still has to carry it out (a deletion in a cluster mirrored from Kubernetes)."""

    action: Action
    message: str
    released: int = 0
    replaced: int = 0
    pending: bool = False


def may_act(user: Any, podgroup: PodGroup) -> bool:
    """Admins, and the members of the job's team: the team whose subtrees hold both its queue and its namespace
    (``quotas.access.may_change_job``, the rule of a job's change and delete through the API)."""
    return may_change_job(user, podgroup.queue_id, podgroup.namespace_id)


def refusal(user: Any, podgroup: PodGroup, action: str) -> str:
    """The 403 sentence for a user who may not act on the job."""
    who = user.get_username() if getattr(user, "is_authenticated", False) else "an anonymous user"
    return (
        f"{who} may not {action} job {_name(podgroup)}: only admins and the members of the team that owns its queue "
        f"{podgroup.queue.name} and its namespace {podgroup.namespace.name} may act on it"
    )


def _name(podgroup: PodGroup) -> str:
    return f"{podgroup.namespace.name}/{podgroup.name}"


def _who(user: Any) -> str:
    return str(user.get_username()) if user is not None else "a person"


def _after_sessions(cluster_id: int) -> None:
    """Wait for the cluster's running session (and recycling pass) to commit, and keep the next one out until the
    current transaction ends: a session that read the job before the action would otherwise place its pods or write
    its old phase after it. Their per-cluster advisory locks, taken blocking, in ``LOCK_NAMES`` order (as deleting a
    cluster takes them). PostgreSQL only: SQLite runs one writer at a time."""
    if not uses_advisory_locks():
        return
    with connection.cursor() as cursor:
        for key in (SCHEDULING_SESSION_LOCK, RECYCLE_LOCK):
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [key, cluster_id])


def _locked(podgroup: PodGroup) -> PodGroup:
    """The podgroup's row, locked, after the cluster's revision (the order every writer of a cluster's rows keeps)."""
    Revision.objects.bump(Revision.cluster_key(podgroup.cluster_id))
    try:
        return PodGroup.objects.select_for_update().select_related("cluster", "namespace", "queue").get(pk=podgroup.pk)
    except PodGroup.DoesNotExist:
        raise JobActionRefused(f"job {_name(podgroup)} was deleted meanwhile") from None


def _check_open(pg: PodGroup, action: str) -> None:
    if pg.deletion_requested_at is not None:
        raise JobActionRefused(
            f"job {_name(pg)} is being deleted (asked by {pg.deletion_requested_by or 'a person'} at "
            f"{pg.deletion_requested_at:%H:%M:%S} UTC): it cannot be {_past(action)}"
        )
    if pg.phase == PodGroupPhase.COMPLETED:
        raise JobActionRefused(f"job {_name(pg)} has completed: there is nothing left to {action}")


def _past(action: str) -> str:
    return {"suspend": "suspended", "resume": "resumed", "requeue": "requeued", "delete": "deleted"}[action]


def _blocker(pg: PodGroup, limit: str) -> dict[str, Any]:
    """What holds the job: a person's action (a ``policy`` blocker, as the engine's ``Blocker.to_dict``)."""
    return {"kind": "policy", "name": _name(pg), "resource": None, "requested": None, "available": None, "limit": limit}


def _history(pg: PodGroup, now: datetime, reason: str, message: str, limit: str) -> None:
    PodGroupReason.objects.create(
        podgroup=pg,
        session=None,
        time=now,
        phase=pg.phase,
        reason=reason,
        message=message,
        blocker=_blocker(pg, limit),
    )


def _release(
    pg: PodGroup, now: datetime, action: EvictionAction, reason: str, message: str, *, every: bool = False
) -> tuple[int, int]:
    """Evict the pods of ``pg`` that hold a node (compare-and-swap to Releasing, an ``Eviction`` row each), send its
    pipelined pods back to Pending; queue replacements in a cluster of node agents. ``every``: its pods that wait
    (Pending, Pipelined) are evicted too, their objects deleted through the API server. Returns (evicted,
    replaced)."""
    statuses = (*_HOLDING, PodStatus.PENDING, PodStatus.PIPELINED) if every else _HOLDING
    pods = list(Pod.objects.filter(podgroup=pg, status__in=statuses).select_related("namespace", "node"))
    rows: list[Eviction] = []
    released: list[Pod] = []
    for pod in pods:
        if not Pod.objects.filter(pk=pod.pk, status=pod.status).update(
            status=PodStatus.RELEASING, reason="Evicted", message=message[:2000], updated=now
        ):
            continue  # its agent changed it meanwhile (it finished): nothing to release
        released.append(pod)
        rows.append(
            Eviction(
                cluster_id=pg.cluster_id,
                pod=pod,
                pod_uid=f"{pod.namespace.name}/{pod.name}",
                namespace=pod.namespace.name,
                node=pod.node.name if pod.node is not None else "",
                action=action,
                reason=reason,
                message=message,
                blocker=_blocker(pg, str(action)),
                created=now,
            )
        )
    Pod.objects.filter(podgroup=pg, status=PodStatus.PIPELINED).update(status=PodStatus.PENDING, node=None, updated=now)
    Eviction.stamp_owners(rows)
    Eviction.objects.bulk_create(rows)
    if rows:
        counters.add(pg.cluster_id, evictions={str(action): len(rows)}, evicted=rows)
    replaced = 0
    if released and not ownership.is_mirrored(pg.cluster):
        replaced = agent.replace_members(released)
    return len(rows), replaced


def _released_text(released: int, replaced: int, every: bool = False) -> str:
    if every:  # (``_release``'s ``every``: its waiting pods too)
        return f"{plural(released, 'pod')} released, placed or not" if released else "no pod of it left to release"
    if not released:
        return "no pod of it held a node"
    text = f"{plural(released, 'pod')} holding {'a node' if released == 1 else 'nodes'} released"
    if replaced:
        text += f" ({replaced} queued again as Pending)"
    return text


def suspend(podgroup: PodGroup, user: Any, now: datetime, *, by: str | None = None, every: bool = False) -> Done:
    """Hold the job: see the module docstring. 409 (``JobActionRefused``) when it is suspended already, completed or
    being deleted. ``by``: who, when it is Fairway itself rather than ``user`` (``scheduling.max_exec``); ``every``:
    its waiting pods are evicted too (``_release``: a Kueue pod group or plain pod, whose pods Kueue deletes)."""
    with transaction.atomic():
        _after_sessions(podgroup.cluster_id)
        pg = _locked(podgroup)
        _check_open(pg, "suspend")
        if pg.suspended_at is not None:
            raise JobActionRefused(
                f"job {_name(pg)} is suspended already (by {pg.suspended_by or 'a person'} at "
                f"{pg.suspended_at:%H:%M:%S} UTC); resume it to let it run"
            )
        who = by or _who(user)
        message = f"suspended by {who}: not admitted and none of its pods placed until it is resumed"
        released, replaced = _release(pg, now, EvictionAction.SUSPEND, SUSPENDED, message, every=every)
        message += f"; {_released_text(released, replaced, every)}"
        PodGroup.objects.filter(pk=pg.pk).update(
            suspended_at=now, suspended_by=who, phase=PodGroupPhase.PENDING, reason=SUSPENDED, message=message,
            blocker=None, unplaced_sessions=0, updated=now,
        )  # fmt: skip
        pg.phase = PodGroupPhase.PENDING
        _history(pg, now, SUSPENDED, message, "suspended")
    _audit("suspend", pg, user, by)
    return Done("suspend", message, released, replaced)


def resume(podgroup: PodGroup, user: Any, now: datetime) -> Done:
    """Lift the hold; 409 when the job is not suspended."""
    with transaction.atomic():
        _after_sessions(podgroup.cluster_id)
        pg = _locked(podgroup)
        _check_open(pg, "resume")
        if pg.suspended_at is None:
            raise JobActionRefused(f"job {_name(pg)} is not suspended, so there is nothing to resume")
        who = _who(user)
        message = f"resumed by {who}: waiting for admission again"
        PodGroup.objects.filter(pk=pg.pk).update(
            suspended_at=None, suspended_by=None, reason=RESUMED, message=message, blocker=None, updated=now
        )
        _history(pg, now, RESUMED, message, "resumed")
    _audit("resume", pg, user)
    return Done("resume", message)


def requeue(podgroup: PodGroup, user: Any, now: datetime) -> Done:
    """Release the job and let it wait for admission again; 409 when it is suspended (resume it instead), completed,
    being deleted, or Pending with none of its pods placed (it is waiting already)."""
    with transaction.atomic():
        _after_sessions(podgroup.cluster_id)
        pg = _locked(podgroup)
        _check_open(pg, "requeue")
        if pg.suspended_at is not None:
            raise JobActionRefused(f"job {_name(pg)} is suspended: resume it, and it waits for admission again")
        holding = Pod.objects.filter(podgroup=pg, status__in=(*_HOLDING, PodStatus.PIPELINED)).exists()
        if pg.phase == PodGroupPhase.PENDING and not holding:
            raise JobActionRefused(
                f"job {_name(pg)} is Pending with none of its pods placed: it is waiting for admission already"
            )
        who = _who(user)
        message = f"requeued by {who}: released, and waiting for admission again"
        released, replaced = _release(pg, now, EvictionAction.REQUEUE, REQUEUED, message)
        message += f"; {_released_text(released, replaced)}"
        PodGroup.objects.filter(pk=pg.pk).update(
            phase=PodGroupPhase.PENDING, reason=REQUEUED, message=message, blocker=None, unplaced_sessions=0,
            requeues=pg.requeues + 1, backoff_until=None, updated=now,
        )  # fmt: skip
        pg.phase = PodGroupPhase.PENDING
        _history(pg, now, REQUEUED, message, "requeued")
    _audit("requeue", pg, user)
    return Done("requeue", message, released, replaced)


def delete(podgroup: PodGroup, user: Any, now: datetime) -> Done:
    """Delete the job (the garbage collection's removal, cause ``deleted``), or, in a cluster mirrored from Kubernetes,
    record the request for the adapter (``pending``); 409 when a deletion is asked already."""
    who = _who(user)
    with transaction.atomic():
        _after_sessions(podgroup.cluster_id)
        lock_tree_writes()  # a podgroup kept its queue Closing: settled below, under the lock (as the API's DELETE)
        pg = _locked(podgroup)
        if pg.deletion_requested_at is not None:
            raise JobActionRefused(
                f"job {_name(pg)} is being deleted already (asked by {pg.deletion_requested_by or 'a person'} at "
                f"{pg.deletion_requested_at:%H:%M:%S} UTC)"
            )
        if ownership.is_mirrored(pg.cluster):
            if pg.kube_owner:
                raise JobActionRefused(owned_refusal(pg, pg.kube_owner))
            message = (
                f"deletion asked by {who}: the adapter deletes its PodGroup and pods from the Kubernetes cluster "
                f"{pg.cluster.name}"
            )
            PodGroup.objects.filter(pk=pg.pk).update(
                deletion_requested_at=now, deletion_requested_by=who, reason=DELETING, message=message, updated=now
            )
            _history(pg, now, DELETING, message, "deleted")
            done = Done("delete", message, pending=True)
        else:
            evictions.remove_podgroups(
                PodGroup.objects.filter(pk=pg.pk), now, RemovalCause.DELETED, f"deleted by {who} (job action)"
            )
            settle_closing_queues()
            done = Done("delete", f"job {_name(pg)} deleted by {who}")
    _audit("delete", pg, user)
    return done


def perform(action: str, podgroup: PodGroup, user: Any, now: datetime) -> Done:
    """Run the job action named ``action`` (one of ``ACTIONS``): what the API and the job page call."""
    run = {"suspend": suspend, "resume": resume, "requeue": requeue, "delete": delete}[action]
    return run(podgroup, user, now)


def owned_refusal(pg: PodGroup, owner: str) -> str:
    """Why a PodGroup a controller owns (``owner``: ``Kind name (apiVersion)``) is not deleted by Fairway."""
    kind, _, rest = owner.partition(" ")
    name = rest.split(" (", 1)[0]
    return (
        f"job {_name(pg)} is not deleted: its PodGroup is owned by {owner}, which would make it again; delete that "
        f"object instead (kubectl delete -n {pg.namespace.name} {kind.lower()} {name})"
    )


def manifests(podgroup: PodGroup) -> list[dict[str, Any]]:
    """The job as manifests (module docstring)."""
    info, tasks, class_priority = job_infos(podgroup)
    return job_manifests(info, tasks, class_priority)


def _audit(action: str, pg: PodGroup, user: Any, by: str | None = None) -> None:
    """Everyone's action is in the job's reason history; an admin's is also an admin change in the security log
    (as the Django admin's changes are: ``security.events``). ``by``: Fairway's own, named."""
    logger.info("job %s of cluster %s: %s by %s", _name(pg), pg.cluster.name, _past(action), by or _who(user))
    if user is None or not getattr(user, "is_staff", False):
        return
    from security.log import security_event

    security_event(
        "admin_change",
        user=_who(user),
        action=_past(action),
        model="scheduling.podgroup",
        object_id=str(pg.pk),
        object=f"{_name(pg)} (cluster {pg.cluster.name})",
        change=f"job action: {action}",
    )
