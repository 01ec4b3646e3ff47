"""Change requests: filing (scope and rules checked, the what-if computed), who may review, and the decisions.

A request is a list of changes in the what-if change language (``engine.changes``), narrowed to what a team lead
may ask for: ``update`` an existing queue or quota group (its weight, capability, deserved, guarantee, min, max,
shared weight, parent flag, borrowing and lending limits) or ``create`` a child queue or quota group, one change per
node, every node inside the requester's subtrees (``planning.whatif_access``, the what-if's own scope check).

Approving applies the changes through ``quotas.services.apply_writes`` (the tree write lock, the version check and
the rules of every writer) in the approval's transaction. If the tree moved since the request was filed, the
request is evaluated again on the tree as it is: when a field it changes was changed by somebody else, or its
changes no longer pass the rules, it becomes ``stale`` with the reason and nothing is written; otherwise it is
applied, with its what-if recomputed. Never blind.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from changerequests import loans, notify
from changerequests.choices import RequestStatus
from changerequests.models import ChangeRequest
from core.models import Revision
from engine import rules, treefields
from engine.changes import ProposalError, compare
from engine.objects import Snapshot
from engine.resources import ResourceList, format_amount
from engine.userlimits import UserLimit, parse_user_limits, stored_user_limits, user_limits_text
from engine.values import QuotaValues, compute_values
from planning import whatif, whatif_access
from planning.values_api import cached_values
from quotas import services as tree_services
from quotas.access import is_admin, visible_group_ids, visible_queue_ids
from quotas.models import Queue, QuotaGroup
from scheduling.models import Cluster
from scheduling.store import load_snapshot

MAX_CHANGES = 50
RESOURCE_FIELDS = {
    "queue": treefields.list_fields(treefields.QUEUE_FIELDS),
    "quota_group": treefields.list_fields(treefields.QUOTA_GROUP_FIELDS),
}
# the lists whose empty value is said "unlimited" (a limit naming nothing; a shared weight left to follow max)
_UNLIMITED_WHEN_EMPTY = frozenset(
    f.name
    for f in (*treefields.QUEUE_FIELDS, *treefields.QUOTA_GROUP_FIELDS)
    if f.kind in (treefields.FieldKind.LIMITS, treefields.FieldKind.WEIGHTS)
)
# user_limits: a list of per-user and per-group limits (``engine.userlimits``), read and checked by the what-if
SCALAR_FIELDS = {"queue": ("weight", "user_limits"), "quota_group": ("is_parent", "user_limits")}
WHAT = {"queue": "queue", "quota_group": "quota group"}
# Rule codes that say "the parent has no room for this" rather than "this is malformed": a request held back only by
# them is filed (it is what the lead asks its department for), and its approver makes room by amending it.
ROOM_CODES = frozenset({"children_sum_exceeds_parent", "capability_exceeds_ancestor"})


class RequestInvalid(Exception):
    """The request cannot be filed (or an amended list approved): ``errors`` are field errors
    (``changes.<i>.<field>``)."""

    def __init__(self, errors: Sequence[rules.FieldError]) -> None:
        self.errors = list(errors)
        super().__init__("; ".join(f"{e.field}: {e.message}" for e in self.errors))


class NotAllowed(Exception):
    """The user may not take this decision."""


class NotOpen(Exception):
    """The request was already decided."""

    def __init__(self, request: ChangeRequest) -> None:
        self.request = request
        super().__init__(f"change request #{request.pk} is {request.get_status_display()}, no longer open")


# --- reading the trees --------------------------------------------------------------------------------------------
def _trees() -> dict[str, dict[str, Any]]:
    return {"queue": tree_services.queue_specs(), "quota_group": tree_services.group_specs()}


def _roots(user: Any) -> dict[str, set[str]]:
    """The tree nodes linked to the user's teams, per tree kind."""
    if user is None or not user.is_authenticated:
        return {"queue": set(), "quota_group": set()}
    return {
        "queue": set(Queue.objects.filter(teams__user=user).values_list("name", flat=True)),
        "quota_group": set(QuotaGroup.objects.filter(teams__user=user).values_list("name", flat=True)),
    }


def _path(tree: Mapping[str, Any], name: str) -> list[str]:
    """``name`` and its ancestors, nearest first."""
    out: list[str] = []
    at: str | None = name
    while at is not None and at in tree and at not in out:
        out.append(at)
        at = tree[at].parent
    return out


def _anchor(change: Mapping[str, Any]) -> tuple[str, str]:
    """The existing node a change hangs on: the node it edits, or the parent of the node it creates."""
    kind = str(change.get("kind"))
    if change.get("op") == "create":
        return kind, str((change.get("spec") or {}).get("parent") or "root")
    return kind, str(change.get("name"))


def _canon(value: Any) -> Any:
    """A field's value in a form that compares and stores as JSON (resource lists as name -> base units; user limits
    as the row keeps them)."""
    if isinstance(value, tuple) and all(isinstance(v, UserLimit) for v in value):
        return stored_user_limits(value)
    if isinstance(value, ResourceList):
        return {k: int(v) for k, v in sorted(value.items())}
    if isinstance(value, Mapping):
        return {k: int(v) for k, v in sorted(value.items())}
    return value


def people(field: str, value: Any) -> str:
    """A field's value for people: amounts in each resource's unit, "unlimited" for a limit that names nothing; user
    limits one per line as the editor writes them ("user alice: jobs=3, nvidia.com/gpu=4")."""
    if field == "user_limits":
        limits, problems = parse_user_limits(value)
        if problems:  # a malformed entry: the rules' error says what is wrong with it
            return str(value)
        return user_limits_text(limits) or "none"
    if isinstance(value, Mapping):
        if not value:
            return "unlimited" if field in _UNLIMITED_WHEN_EMPTY else "none"
        return ", ".join(f"{r} {format_amount(int(v), r)}" for r, v in sorted(value.items()))
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "—" if value is None else str(value)


# --- checking the shape and the scope -----------------------------------------------------------------------------
def _err(i: int, field: str, message: str, code: str = "invalid") -> rules.FieldError:
    return rules.FieldError(f"changes.{i}.{field}" if field else f"changes.{i}", message, code)


def shape_errors(changes: Any) -> list[rules.FieldError]:
    """What a change request may hold, before the rules: updates and creations of queues and quota groups with the
    fields a lead may ask for, one change per node."""
    if not isinstance(changes, list) or not changes:
        return [rules.FieldError("changes", "changes must be a non-empty list of changes", "required")]
    if len(changes) > MAX_CHANGES:
        return [rules.FieldError("changes", f"a change request holds at most {MAX_CHANGES} changes", "invalid")]
    errors: list[rules.FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, change in enumerate(changes):
        if not isinstance(change, Mapping):
            errors.append(_err(i, "", "each change must be an object with op, kind and spec"))
            continue
        kind, op = change.get("kind"), change.get("op")
        if kind not in RESOURCE_FIELDS:
            errors.append(_err(i, "kind", f"a change request changes a queue or a quota_group, not {kind!r}"))
            continue
        if op not in ("update", "create"):
            errors.append(
                _err(
                    i,
                    "op",
                    f"a change request may update a {WHAT[kind]} or create one, not {op!r}; moves, "
                    "renames and deletions are for admins",
                )
            )
            continue
        spec = change.get("spec")
        if not isinstance(spec, Mapping) or not spec:
            errors.append(_err(i, "spec", "spec must be an object naming the fields to change", "required"))
            continue
        allowed = {*RESOURCE_FIELDS[kind], *SCALAR_FIELDS[kind], *(("name", "parent") if op == "create" else ())}
        for key in spec:
            if key not in allowed:
                errors.append(
                    _err(
                        i,
                        f"spec.{key}",
                        f"a change request cannot set {key!r} of a {WHAT[kind]} "
                        f"(it may set: {', '.join(sorted(allowed))})",
                    )
                )
        name = spec.get("name") if op == "create" else change.get("name")
        if not isinstance(name, str) or not name:
            errors.append(
                _err(i, "spec.name" if op == "create" else "name", f"name of the {WHAT[kind]} is required", "required")
            )
            continue
        if (kind, name) in seen:
            errors.append(_err(i, "name", f"{WHAT[kind]} {name} is changed twice; put everything in one change"))
        seen.add((kind, name))
    return errors


def _scope_errors(user: Any, snapshot: Snapshot, changes: list[dict[str, Any]]) -> list[rules.FieldError]:
    scope = whatif_access.scope_of(user)
    if scope is None:
        return []
    try:
        whatif_access.check_changes(snapshot, changes, scope)
    except ProposalError as exc:
        return list(exc.errors)
    return []


# --- evaluating ---------------------------------------------------------------------------------------------------
@dataclass
class Evaluation:
    """A list of changes on one snapshot: the snapshot after them (None when the rules refuse them), the rule
    errors, and the what-if summary."""

    after: Snapshot | None
    errors: list[rules.FieldError]
    whatif: dict[str, Any]

    @property
    def needs_room_only(self) -> bool:
        return bool(self.errors) and all(e.code in ROOM_CODES for e in self.errors)


def requested_fields(changes: Sequence[Mapping[str, Any]], trees: Mapping[str, Mapping[str, Any]]) -> list[dict]:
    """Per change, the fields it sets: before (the tree now; nothing for a creation) and after, for people."""
    out = []
    for change in changes:
        kind, op = str(change["kind"]), change["op"]
        spec = change.get("spec") or {}
        name = spec.get("name") if op == "create" else change.get("name")
        current = None if op == "create" else trees[kind].get(str(name))
        fields = []
        for key, value in spec.items():
            if key in ("name",):
                continue
            old = _canon(getattr(current, key, None)) if current is not None else None
            new = value
            shown = str(new)
            if key in RESOURCE_FIELDS[kind]:
                try:
                    shown = people(key, _canon(ResourceList.parse(value)) if value is not None else {})
                except (TypeError, ValueError):  # a malformed amount: the rules' error says what is wrong with it
                    shown = str(value)
            elif key != "parent":
                shown = people(key, new)
            fields.append({"field": key, "before": "" if current is None else people(key, old), "after": shown})
        out.append({"kind": kind, "op": op, "name": name, "fields": fields})
    return out


def _values_summary(before: QuotaValues, after: QuotaValues) -> dict[str, Any]:
    """The computed values that change, per node (queues and quota groups), before and after (quantities)."""
    result = compare(before, after)
    out: dict[str, Any] = {}
    for section in ("queues", "quota_groups"):
        nodes: dict[str, Any] = {}
        for name, fields in (result["diff"].get(section) or {}).items():
            if fields.get("added") or fields.get("removed"):
                nodes[name] = {"added": True} if fields.get("added") else {"removed": True}
                continue
            b = result["before"][section].get(name, {})
            a = result["after"][section].get(name, {})
            nodes[name] = {field: {"before": b.get(field), "after": a.get(field)} for field in fields}
        out[section] = nodes
    return out


def evaluate(snapshot: Snapshot, values: QuotaValues, changes: list[dict[str, Any]]) -> Evaluation:
    """Apply ``changes`` to ``snapshot`` with the rules of every writer and summarise what they would do."""
    trees = _trees()
    summary: dict[str, Any] = {"requested": requested_fields(changes, trees), "values": {}}
    try:
        outcome = whatif.evaluate(snapshot, values, changes)
    except ProposalError as exc:
        return Evaluation(None, list(exc.errors), summary)
    summary["values"] = _values_summary(values, outcome.values_after)
    return Evaluation(outcome.after, [], summary)


def _base(changes: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per change that edits an existing node: the node's version and the values of the fields the change sets."""
    out = []
    models = {"queue": Queue, "quota_group": QuotaGroup}
    trees = _trees()
    for change in changes:
        if change["op"] != "update":
            continue
        kind, name = str(change["kind"]), str(change["name"])
        spec = trees[kind].get(name)
        version = models[kind].objects.filter(name=name).values_list("version", flat=True).first()
        if spec is None or version is None:
            continue
        fields = {key: _canon(getattr(spec, key)) for key in (change.get("spec") or {})}
        out.append({"kind": kind, "name": name, "version": version, "fields": fields})
    return out


def summary_of(changes: Sequence[Mapping[str, Any]]) -> str:
    parts = []
    for change in changes:
        kind = WHAT.get(str(change.get("kind")), str(change.get("kind")))
        spec = change.get("spec") or {}
        if change.get("op") == "create":
            parts.append(f"new {kind} {spec.get('name')} under {spec.get('parent') or 'root'}")
        else:
            parts.append(f"{kind} {change.get('name')}: {', '.join(k.replace('_', ' ') for k in spec)}")
    return "; ".join(parts)[:500]


def _cluster(name: str | None) -> str:
    return str(name or settings.FAIRWAY["DEFAULT_CLUSTER"])


def _values_of(cluster: str | None) -> tuple[Snapshot, QuotaValues]:
    """The cluster's snapshot and values (cached), or ``RequestInvalid`` naming ``cluster``."""
    try:
        return cached_values(_cluster(cluster))
    except Cluster.DoesNotExist:
        missing = rules.FieldError("cluster", f"cluster {_cluster(cluster)} does not exist", "not_found")
        raise RequestInvalid([missing]) from None


def preview(user: Any, changes: Any, cluster: str | None = None) -> Evaluation:
    """What filing ``changes`` would say, without filing: raises ``RequestInvalid`` for a malformed or out-of-scope
    list or one the rules refuse for another reason than room; else the evaluation (``errors`` then holds the
    "no room" messages, if any)."""
    errors = shape_errors(changes)
    if errors:
        raise RequestInvalid(errors)
    snapshot, values = _values_of(cluster)
    changes = [dict(c) for c in changes]
    errors = _scope_errors(user, snapshot, changes)
    if errors:
        raise RequestInvalid(errors)
    evaluation = evaluate(snapshot, values, changes)
    if evaluation.errors and not evaluation.needs_room_only:
        raise RequestInvalid(evaluation.errors)
    return evaluation


def file_request(user: Any, changes: Any, *, reason: str = "", cluster: str | None = None) -> ChangeRequest:
    """File a change request (the approvers are told by mail and the webhook once it is stored)."""
    evaluation = preview(user, changes, cluster)
    changes = [dict(c) for c in changes]
    with transaction.atomic():
        (revision,) = Revision.objects.values_of(Revision.TREES)
        request = ChangeRequest(
            requester=user,
            cluster=_cluster(cluster),
            summary=summary_of(changes),
            reason=reason,
            changes=changes,
            base=_base(changes),
            trees_revision=revision,
            whatif=evaluation.whatif,
            needs_room=[{"field": e.field, "message": e.message} for e in evaluation.errors],
        )
        request._history_user = user  # type: ignore[attr-defined]  # django-simple-history: who took the step
        request._change_reason = "filed"  # type: ignore[attr-defined]
        request.save()
        transaction.on_commit(lambda: notify.filed(request, reviewers(request)))
    return request


def _loan_evaluation(user: Any, data: Any, cluster: str | None) -> tuple[loans.Loan, list[dict[str, Any]], Evaluation]:
    """A loan read, checked against the tree and the requester's scope, with its derived changes evaluated; raises
    ``RequestInvalid`` naming the field."""
    loan, errors = loans.read(data)
    if loan is None:
        raise RequestInvalid(errors)
    tree = _trees()[loan.kind]
    errors = loans.check_tree(loan, tree)
    if not errors and not is_admin(user):
        mine = _roots(user)[loan.kind]
        if not set(_path(tree, loan.borrower)) & mine:
            errors = [
                rules.FieldError(
                    "loan.to",
                    f"{loans.WHAT[loan.kind]} {loan.borrower} is not in your team's subtree; you may borrow only for it",
                    "forbidden",
                )
            ]
    if errors:
        raise RequestInvalid(errors)
    changes, errors = loans.changes(loan, tree)
    if errors:
        raise RequestInvalid(errors)
    snapshot, values = _values_of(cluster)
    evaluation = evaluate(snapshot, values, changes)
    if evaluation.errors:  # a loan between siblings never needs the parent's room: any refusal is final
        raise RequestInvalid(evaluation.errors)
    return loan, changes, evaluation


def file_loan(user: Any, data: Any, *, reason: str = "", cluster: str | None = None) -> ChangeRequest:
    """File a loan (``changerequests.loans``): its approvers (the lender's lead and above, admins) are told."""
    loan, changes, evaluation = _loan_evaluation(user, data, cluster)
    with transaction.atomic():
        (revision,) = Revision.objects.values_of(Revision.TREES)
        request = ChangeRequest(
            requester=user,
            cluster=_cluster(cluster),
            summary=loan.summary()[:500],
            reason=reason,
            changes=changes,
            base=[],
            trees_revision=revision,
            whatif=evaluation.whatif,
            loan=loan.as_json(),
        )
        request._history_user = user  # type: ignore[attr-defined]
        request._change_reason = "filed"  # type: ignore[attr-defined]
        request.save()
        transaction.on_commit(lambda: notify.filed(request, reviewers(request)))
    return request


# --- who reviews ------------------------------------------------------------------------------------------------
class _Reach:
    """The trees and the users' team roots, read once for many checks (a list of requests)."""

    def __init__(self) -> None:
        self.trees = _trees()
        self._roots: dict[int | None, dict[str, set[str]]] = {}

    def roots(self, user: Any) -> dict[str, set[str]]:
        key = getattr(user, "pk", None)
        if key not in self._roots:
            self._roots[key] = _roots(user)
        return self._roots[key]


def _approver_by_role(user: Any, requester: Any) -> bool | None:
    """What the roles alone decide of ``user`` approving ``requester``'s request: never an anonymous user nor the
    requester, always an admin; None: the tree decides."""
    if user is None or not user.is_authenticated:
        return False
    if requester is not None and user.pk == requester.pk:
        return False
    if is_admin(user):
        return True
    return None


def may_approve_changes(
    user: Any, requester: Any, changes: Sequence[Mapping[str, Any]], reach: _Reach | None = None
) -> bool:
    """Whether ``user`` may approve ``changes`` filed by ``requester``: never the requester; an admin always;
    otherwise a lead above the requester for every node the changes touch — a member of a team linked to a strict
    ancestor of the requester's own subtree root that holds the node (the department lead of a team's request),
    or of the node itself when the requester holds no subtree there."""
    decided = _approver_by_role(user, requester)
    if decided is not None:
        return decided
    reach = reach or _Reach()
    mine, theirs = reach.roots(user), reach.roots(requester)
    for change in changes:
        kind, node = _anchor(change)
        tree = reach.trees.get(kind)
        if tree is None or node not in tree:
            return False
        path = _path(tree, node)
        covering = [n for n in path if n in theirs[kind]]
        top = covering[-1] if covering else node
        above = set(_path(tree, top)[1:])
        if not above & mine[kind]:
            return False
    return True


def may_approve_loan(user: Any, requester: Any, loan: loans.Loan, reach: _Reach | None = None) -> bool:
    """Whether ``user`` may approve ``loan``: never the requester; an admin; a member of a team linked to the lender
    or to one of its ancestors (the common parent's lead and above)."""
    decided = _approver_by_role(user, requester)
    if decided is not None:
        return decided
    reach = reach or _Reach()
    return bool(set(_path(reach.trees.get(loan.kind, {}), loan.lender)) & reach.roots(user)[loan.kind])


def may_review(user: Any, request: ChangeRequest, reach: _Reach | None = None) -> bool:
    if request.loan is not None:
        return may_approve_loan(user, request.requester, loans.Loan.from_json(request.loan), reach)
    return may_approve_changes(user, request.requester, request.changes, reach)


def reviewers(request: ChangeRequest) -> list[Any]:
    """The users who may approve ``request`` (admins and the leads above the requester), by username."""
    User = get_user_model()
    trees = _trees()
    groups: set[int] = set()
    for change in request.changes:
        kind, node = _anchor(change)
        names = _path(trees.get(kind, {}), node)
        model = Queue if kind == "queue" else QuotaGroup
        groups |= set(model.objects.filter(name__in=names).values_list("teams", flat=True))
    candidates = User.objects.filter(Q(is_staff=True) | Q(groups__in=groups - {None}), is_active=True).distinct()
    reach = _Reach()
    return [u for u in candidates.order_by("username") if may_review(u, request, reach)]


def readable_by(user: Any) -> QuerySet[ChangeRequest]:
    """The requests ``user`` may read: all for admins; else the ones it filed and the ones it may review."""
    qs = ChangeRequest.objects.select_related("requester", "reviewer")
    if is_admin(user):
        return qs
    reach = _Reach()
    ids = [r.pk for r in qs.exclude(requester=user) if may_review(user, r, reach)]
    return qs.filter(Q(requester=user) | Q(pk__in=ids))


def to_review(user: Any, qs: QuerySet[ChangeRequest]) -> QuerySet[ChangeRequest]:
    """The open requests of ``qs`` that ``user`` may decide."""
    reach = _Reach()
    ids = [r.pk for r in qs.filter(status=RequestStatus.OPEN) if may_review(user, r, reach)]
    return qs.filter(pk__in=ids)


def visible_whatif(user: Any, whatif: Mapping[str, Any]) -> dict[str, Any]:
    """The stored what-if with only the computed values of the nodes ``user`` may read."""
    queues, groups = visible_queue_ids(user), visible_group_ids(user)
    if queues is None:
        return dict(whatif)
    names = {
        "queues": set(Queue.objects.filter(pk__in=queues).values_list("name", flat=True)),
        "quota_groups": set(QuotaGroup.objects.filter(pk__in=groups or set()).values_list("name", flat=True)),
    }
    values = whatif.get("values") or {}
    return {
        **whatif,
        "values": {
            section: {n: v for n, v in nodes.items() if n in names.get(section, set()) or v.get("added")}
            for section, nodes in values.items()
        },
    }


# --- decisions ----------------------------------------------------------------------------------------------------
def _locked(pk: int) -> ChangeRequest:
    request = ChangeRequest.objects.select_for_update().get(pk=pk)
    if request.status != RequestStatus.OPEN:
        raise NotOpen(request)
    return request


def _moved_fields(request: ChangeRequest, trees: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The fields the request changes that somebody else changed since it was filed, as sentences."""
    out = []
    for entry in request.base:
        kind, name = entry["kind"], entry["name"]
        current = trees[kind].get(name)
        if current is None:
            out.append(f"{WHAT[kind]} {name} was deleted since the request was filed")
            continue
        for key, then in entry["fields"].items():
            now = _canon(getattr(current, key, None))
            if now != then:
                out.append(
                    f"{key.replace('_', ' ')} of {WHAT[kind]} {name} was {people(key, then)} when the request was "
                    f"filed and is {people(key, now)} now"
                )
    return out


def _writes(snapshot: Snapshot, changes: list[dict[str, Any]]) -> list[tree_services.Write]:
    """The services' writes of ``changes``, each with the values the engine gives it (applied one by one, as the
    what-if page applies staged edits) and the target's version as read under the tree write lock."""
    models = {"queue": Queue, "quota_group": QuotaGroup}
    out = []
    try:
        afters = list(whatif.apply_each(snapshot, changes))
    except ProposalError as exc:
        raise RequestInvalid(list(exc.errors)) from exc
    for change, snap in zip(changes, afters, strict=True):
        kind = str(change["kind"])
        spec = change.get("spec") or {}
        target = None if change["op"] == "create" else str(change["name"])
        name = spec.get("name", target)
        node = snap.queues[name] if kind == "queue" else snap.quota_groups[name]
        fields = tree_services.QUEUE_FIELDS if kind == "queue" else tree_services.GROUP_FIELDS
        data = {key: getattr(node, key) for key in spec if key in (*fields, "name", "parent")}
        version = None
        if target is not None:
            version = models[kind].objects.filter(name=target).values_list("version", flat=True).first()
        out.append(tree_services.Write(kind, target, version, data))  # type: ignore[arg-type]
    return out


def _close(request: ChangeRequest, status: str, user: Any, comment: str, outcome: str = "") -> ChangeRequest:
    request.status = status
    request.reviewer = user
    request.comment = comment
    request.outcome = outcome
    request.decided = timezone.now()
    request._history_user = user  # type: ignore[attr-defined]
    request._change_reason = status  # type: ignore[attr-defined]
    request.save()
    transaction.on_commit(lambda: notify.decided(request))
    return request


def approve(pk: int, user: Any, *, comment: str = "", changes: Any = None) -> ChangeRequest:
    """Approve request ``pk`` and apply it, in one transaction under the tree write lock; or mark it stale (and
    write nothing) when the tree moved so that it no longer applies as asked. ``changes``: the approver's amended
    list (e.g. the request plus the room made for it elsewhere in the approver's subtree), checked like the
    request's own. Raises ``NotOpen``, ``NotAllowed``, ``RequestInvalid`` (the changes do not apply and never did:
    the request stays open)."""
    amended = changes is not None
    if amended:
        errors = shape_errors(changes)
        if errors:
            raise RequestInvalid(errors)
        changes = [dict(c) for c in changes]
    with transaction.atomic():
        tree_services.lock_tree_writes()
        request = _locked(pk)
        if not may_review(user, request) or (amended and not may_approve_changes(user, request.requester, changes)):
            raise NotAllowed(
                "You may not approve this request: the requester's department lead or an admin approves it, never "
                "the requester."
            )
        if request.loan is not None:
            if amended:
                raise RequestInvalid(
                    [rules.FieldError("changes", "a loan is approved as asked, never amended", "invalid")]
                )
            return _approve_loan(request, user, comment)
        chosen = changes if amended else list(request.changes)
        trees = _trees()
        moved = _moved_fields(request, trees)
        if moved:
            return _close(request, RequestStatus.STALE, user, comment, "Not applied: " + "; ".join(moved) + ".")
        cluster = Cluster.objects.filter(name=request.cluster).first() or Cluster.objects.get(
            name=settings.FAIRWAY["DEFAULT_CLUSTER"]
        )
        snapshot = load_snapshot(cluster)
        before = compute_values(snapshot)
        evaluation = evaluate(snapshot, before, chosen)
        if evaluation.errors:
            (revision,) = Revision.objects.values_of(Revision.TREES)
            applied_when_filed = not request.needs_room
            if not amended and applied_when_filed and revision != request.trees_revision:
                reasons = "; ".join(e.message for e in evaluation.errors)
                return _close(
                    request,
                    RequestStatus.STALE,
                    user,
                    comment,
                    f"Not applied: the tree changed since the request was filed and it no longer passes the rules: "
                    f"{reasons}.",
                )
            raise RequestInvalid(evaluation.errors)
        try:
            writes = _writes(snapshot, chosen)
            tree_services.apply_writes(writes)
        except tree_services.WriteRefused as exc:
            raise RequestInvalid(exc.errors) from exc
        requester = request.requester.get_username() if request.requester else "a deleted user"
        _name_in_history(
            chosen, f"change request #{request.pk}: requested by {requester}, approved by {user.get_username()}"
        )
        request.changes = chosen
        request.whatif = evaluation.whatif
        request.needs_room = []
        outcome = "Applied: " + summary_of(chosen) + (" (amended by the approver)" if amended else "") + "."
        return _close(request, RequestStatus.APPLIED, user, comment, outcome)


def _snapshot_of(request: ChangeRequest) -> Snapshot:
    cluster = Cluster.objects.filter(name=request.cluster).first() or Cluster.objects.get(
        name=settings.FAIRWAY["DEFAULT_CLUSTER"]
    )
    return load_snapshot(cluster)


def _apply(request: ChangeRequest, changes: list[dict[str, Any]], reason: str) -> Evaluation | str:
    """Apply ``changes`` through the services (the caller holds the tree write lock), naming ``request`` in each
    node's history; the evaluation, or why it does not apply (nothing written)."""
    snapshot = _snapshot_of(request)
    evaluation = evaluate(snapshot, compute_values(snapshot), changes)
    if evaluation.errors:
        return "; ".join(e.message for e in evaluation.errors)
    try:
        tree_services.apply_writes(_writes(snapshot, changes))
    except (tree_services.WriteRefused, RequestInvalid) as exc:
        return "; ".join(e.message for e in exc.errors)
    _name_in_history(changes, reason)
    return evaluation


def _name_in_history(changes: Sequence[Mapping[str, Any]], reason: str) -> None:
    """Name the request in the history record each change just wrote (the node's History page shows who asked and
    who approved)."""
    for change in changes:
        model = Queue if change["kind"] == "queue" else QuotaGroup
        name = (change.get("spec") or {}).get("name") if change["op"] == "create" else change["name"]
        record = model.history.filter(name=name).order_by("-history_date", "-history_id").first()
        if record is not None:
            record.history_change_reason = reason[:100]
            record.save(update_fields=["history_change_reason"])


def _approve_loan(request: ChangeRequest, user: Any, comment: str) -> ChangeRequest:
    """Lend: the loan's changes derived from the tree as it is now, applied; stale when they no longer apply."""
    loan = loans.Loan.from_json(request.loan or {})
    tree = _trees()[loan.kind]
    errors = loans.check_tree(loan, tree)
    changes: list[dict[str, Any]] = []
    if not errors:
        changes, errors = loans.changes(loan, tree)
    if errors:
        problem = "; ".join(e.message for e in errors)
        return _close(request, RequestStatus.STALE, user, comment, f"Not lent: {problem}.")
    requester = request.requester.get_username() if request.requester else "a deleted user"
    done = _apply(request, changes, f"loan #{request.pk}: asked by {requester}, approved by {user.get_username()}")
    if isinstance(done, str):
        return _close(request, RequestStatus.STALE, user, comment, f"Not lent: the tree changed and {done}.")
    now = timezone.now()
    request.changes = changes
    request.whatif = done.whatif
    request.loan_until = loans.ends_at(now, loan)
    outcome = f"Lent until {request.loan_until:%Y-%m-%d %H:%M} UTC: {loan.amounts_text()} of {loan.field} from {loan.lender} to {loan.borrower}."
    return _close(request, RequestStatus.APPLIED, user, comment, outcome)


def return_due(now: Any = None) -> list[ChangeRequest]:
    """Return every applied loan whose end has passed, each in its own transaction under the tree write lock: the
    loan's changes reversed on the tree as it is. A return that does not pass the rules writes nothing; the request
    keeps the reason (``return_problem``; the lender, the borrower's requester and the admins are told when it
    changes) and the next check tries again."""
    now = now or timezone.now()
    done = []
    due = ChangeRequest.objects.filter(
        loan__isnull=False, status=RequestStatus.APPLIED, loan_until__lte=now, returned__isnull=True
    ).values_list("pk", flat=True)
    for pk in list(due):
        with transaction.atomic():
            tree_services.lock_tree_writes()
            request = ChangeRequest.objects.select_for_update(skip_locked=True).filter(pk=pk).first()
            if request is None or request.status != RequestStatus.APPLIED or request.returned is not None:
                continue
            loan = loans.Loan.from_json(request.loan or {})
            tree = _trees()[loan.kind]
            errors = loans.check_tree(loan, tree)
            changes: list[dict[str, Any]] = []
            if not errors:
                changes, errors = loans.changes(loan, tree, returning=True)
            result: Evaluation | str = "; ".join(e.message for e in errors)
            if not errors:
                result = _apply(request, changes, f"loan #{request.pk} returned at its end")
            if isinstance(result, str):
                problem = f"Due back since {request.loan_until:%Y-%m-%d %H:%M} UTC, not returned yet: {result}."
                if problem != request.return_problem:
                    request.return_problem = problem
                    request._change_reason = "return refused"  # type: ignore[attr-defined]
                    request.save()
                    transaction.on_commit(lambda r=request: notify.loan_stuck(r, reviewers(r)))
                continue
            request.status = RequestStatus.RETURNED
            request.returned = now
            request.return_problem = ""
            request.outcome = f"{request.outcome} Returned on {now:%Y-%m-%d %H:%M} UTC."
            request._history_user = None  # type: ignore[attr-defined]
            request._change_reason = "returned"  # type: ignore[attr-defined]
            request.save()
            transaction.on_commit(lambda r=request: notify.returned(r))
            done.append(request)
    return done


def reject(pk: int, user: Any, *, comment: str) -> ChangeRequest:
    """Reject request ``pk`` with a comment (required): its approvers only."""
    with transaction.atomic():
        request = _locked(pk)
        if not may_review(user, request):
            raise NotAllowed("You may not reject this request: its approvers (the department lead, admins) may.")
        return _close(request, RequestStatus.REJECTED, user, comment)


def withdraw(pk: int, user: Any, *, comment: str = "") -> ChangeRequest:
    """Withdraw request ``pk``: its requester only."""
    with transaction.atomic():
        request = _locked(pk)
        if request.requester_id is None or request.requester_id != user.pk:
            raise NotAllowed("Only the requester may withdraw a request; approvers reject it.")
        return _close(request, RequestStatus.WITHDRAWN, user, comment)


def steps(request: ChangeRequest) -> Iterable[dict[str, Any]]:
    """Every step of a request, oldest first: when, who, what (its history records)."""
    for record in request.history.select_related("history_user").order_by("history_date", "history_id"):
        yield {
            "when": record.history_date,
            "who": record.history_user.get_username() if record.history_user else "system",
            "step": record.history_change_reason or record.status,
            "comment": record.comment if record.history_change_reason not in (None, "filed") else "",
        }
