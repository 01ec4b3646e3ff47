"""Tree validation rules for queues, elastic quota groups and podgroups, with their messages.

Every writer (the REST API, the Django admin, the YAML importer, ``fairway simulate`` and the what-if
endpoint) calls these functions *before* it writes anything, so one change gets one answer everywhere.
The module is pure: it reads the current tree (a mapping of name -> spec, *without* the change), the
proposed spec and, for updates, the old spec, plus a few counted facts (podgroups, pods, namespaces)
passed in by the caller. It never mutates its inputs.

Every validator returns ``list[FieldError]``; an empty list means "accept". ``check(errors)`` raises
``RuleViolation`` for callers that prefer an exception. A ``FieldError`` carries

* ``field``: the API field path (``"parent"``, ``"deserved.cpu"``, ``"min.memory"``, ``"state"``, ...;
  ``"non_field_errors"`` for whole-object problems),
* ``message``: one sentence naming the object, the field and the numbers, quantities printed as
  Kubernetes quantities (``"queue team-a: deserved cpu 2 must be <= capability cpu 1"``),
* ``code``: a stable machine code (see ``CODES``).

Queues (Volcano semantics, ``pkg/webhooks/admission/queues/validate`` and ``pkg/controllers/queue``)
-----------------------------------------------------------------------------------------------------
* Depth counts edges from ``root``: a child of root has depth 1 and a queue is accepted while its depth is
  ``<= max_depth`` (Volcano's ``validateQueueDepth``: with ``--max-queue-depth=5`` root plus five levels).
  Unlike Volcano, a re-parented queue's whole subtree must fit, not only the queue itself.
* ``root`` is unlimited where it sets nothing: Volcano skips every sum check below root because the
  scheduler rewrites root's limits from the cluster total. Here a dimension that root's field defines is
  checked like any parent's; a dimension it leaves unset is unlimited. Below any other parent a missing
  dimension counts as 0 (Volcano's ``LessPartly`` on ``api.Resource``), so a child cannot deserve or
  guarantee a resource its parent leaves unset.
* A capability key that is *present* limits, even at 0 (``ResourceList`` keeps explicit zeros). Volcano
  treats a 0 capability as "not set" because its ``api.Resource`` cannot tell them apart.
* Structural checks (self-parent, cycle, missing parent, depth, parent with podgroups) run on create, on
  rename and when the parent changes; the resource-hierarchy checks run on create, rename, parent change or
  a change of capability/deserved/guarantee (Volcano's ``needsValidateHierarchicalQueue``). A moved
  queue's descendants are checked against their new ancestors' capabilities too (Volcano only checks the
  moved queue). ``validate_queue_tree`` re-checks everything for a whole snapshot.
* A queue can become a parent only while it has no podgroups and no allocated pods, and this is checked
  only when it has no children yet (a parent's counts are its children's aggregate, as in Volcano).

Queue state (volcano.md §7.1): ``plan_queue_action`` closes a queue (Closed, or Closing while podgroups
remain) and every descendant not already Closed/Closing, marking those closed-by-parent; opening a queue
reopens the descendants it closed. A child cannot open under a Closed/Closing parent and ``root`` cannot
close. Deliberate difference: an explicit close clears the queue's own closed-by-parent mark (Volcano
keeps the annotation), so reopening the parent does not reopen a queue an admin closed on purpose.

Quota groups (Koordinator ``pkg/webhook/elasticquota``, seed 001 "Configuration Limit")
-----------------------------------------------------------------------------------
* ``root`` and ``system`` cannot be modified and no built-in can be deleted or renamed (Koordinator's
  ``IsForbiddenModify``). ``default`` may change its min, max, shared weight, lending and min-scale flags,
  but not its parent, ``is_parent`` or ``tree_id``. Creating a built-in is allowed (bootstrap) in its fixed
  shape: ``root`` without a parent, ``system`` and ``default`` as leaves directly under ``root``.
* A group with ``parent=None`` other than ``root`` is the root of a separate tree and must carry a
  ``tree_id``; the min-sum checks skip tree roots (Koordinator rule 8).
* Max keys must be a subset of the parent's max keys: Koordinator's relaxed key rule (feature gate
  ``ElasticQuotaEnableUpdateResourceKey``), chosen so a resource can be added to a tree top-down.
* Re-parenting gets an explicit ancestry (cycle) check, which Koordinator lacks.
* Not reproduced: ``max-strict-check-resource-keys`` (max >= used), ``allow-force-update`` and the
  ``ElasticQuotaGuaranteeUsage`` guaranteed-min walk.

PodGroups (Volcano ``podgroups/validate`` and ``jobs/validate``, seed 003 admission webhook): the queue
must exist, be Open, not be root and be a leaf; the namespace's podgroups' ``minResources`` together must
stay within the namespace's ResourceQuota on every resource that quota defines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Final, Generic, Self, TypeVar

from engine.fairshare.elastic import DEFAULT_GROUP, ROOT_GROUP, SYSTEM_GROUP, QuotaGroupSpec
from engine.fairshare.queues import DEFAULT_QUEUE, ROOT_QUEUE, QueueSpec
from engine.resources import ResourceList, format_quantity, is_unbounded, milli_scale

__all__ = [
    "CODES",
    "MAX_PRIORITY",
    "MAX_WEIGHT",
    "QUEUE_STATES",
    "FieldError",
    "GroupFacts",
    "QueueFacts",
    "RuleViolation",
    "check",
    "fill_quota_group_defaults",
    "plan_queue_action",
    "plan_queue_delete",
    "settle_queue_state",
    "validate_dns_label",
    "validate_dns_subdomain",
    "validate_pod_quota_group",
    "validate_podgroup",
    "validate_queue",
    "validate_queue_action",
    "validate_queue_delete",
    "validate_queue_tree",
    "validate_quota_group",
    "validate_quota_group_delete",
    "validate_quota_tree",
]

# --------------------------------------------------------------------------------------------------------
# Output types
# --------------------------------------------------------------------------------------------------------

#: Every ``FieldError.code`` this module emits, with its meaning.
CODES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "required": "a required value is missing",
        "invalid": "a malformed value (type or format)",
        "too_long": "a name longer than its limit",
        "non_ascii": "a name with characters outside ASCII",
        "uppercase": "a name with upper-case letters",
        "exists": "an object with that name already exists",
        "not_found": "the named object does not exist",
        "negative": "a quantity or count below 0",
        "out_of_range": "a number outside its allowed range",
        "invalid_choice": "a value outside its fixed set of choices",
        "guarantee_exceeds_deserved": "guarantee > deserved, or guarantee set where deserved is not",
        "deserved_exceeds_capability": "deserved > capability",
        "min_exceeds_max": "min > max",
        "min_key_not_in_max": "min names a resource that max does not",
        "resource_keys": "max names a resource that the parent's max does not",
        "self_parent": "an object names itself as its parent",
        "cycle": "the parent chain loops",
        "depth": "the tree would be deeper than allowed",
        "parent_not_found": "the parent does not exist",
        "parent_not_parent": "the parent quota group is not a parent group (is_parent false)",
        "has_podgroups": "the queue still has podgroups or allocated pods",
        "has_pods": "the quota group still has pods",
        "has_children": "the object still has children",
        "is_parent": "is_parent cannot change that way",
        "capability_exceeds_ancestor": "a capability above the nearest ancestor's capability",
        "capability_below_descendants": "a capability below a descendant's capability",
        "children_sum_exceeds_parent": "the children's guarantee/deserved/min add up to more than the parent's",
        "protected": "a built-in object, or a field of one, that cannot be changed",
        "immutable": "a field that cannot change after creation",
        "tree_id": "tree_id differs from the parent's or a child's, or a tree root lacks one",
        "namespace_taken": "a namespace already bound to another quota group",
        "parent_closed": "a queue cannot open while its parent is Closed or Closing",
        "queue_not_open": "the queue does not accept new podgroups (state is not Open)",
        "not_leaf": "podgroups go to leaf queues only",
        "root_queue": "podgroups cannot go to the root queue",
        "parent_group": "pods cannot point at a parent quota group",
        "exceeds_namespace_quota": "the namespace's podgroups' minResources exceed its ResourceQuota",
    }
)


@dataclass(frozen=True)
class FieldError:
    """One rule violation: the API field path, a sentence for people and a stable machine code."""

    field: str
    message: str
    code: str = "invalid"


class RuleViolation(Exception):
    """Raised by ``check`` (and the ``plan_*`` helpers) when a change breaks one or more rules."""

    def __init__(self, errors: Sequence[FieldError]) -> None:
        self.errors: list[FieldError] = list(errors)
        super().__init__("; ".join(e.message for e in self.errors))

    def by_field(self) -> dict[str, list[str]]:
        """Messages grouped by field, in first-seen order (the shape a DRF ``ValidationError`` takes)."""
        out: dict[str, list[str]] = {}
        for error in self.errors:
            out.setdefault(error.field, []).append(error.message)
        return out


def check(errors: Sequence[FieldError]) -> None:
    """Raise ``RuleViolation`` when ``errors`` is not empty."""
    if errors:
        raise RuleViolation(errors)


@dataclass(frozen=True)
class QueueFacts:
    """What the rules need to know about a queue beyond its spec (counted by the caller)."""

    podgroups: int = 0  # podgroups of any phase that still point at the queue
    allocated_pods: int = 0  # pods bound through the queue (Volcano's status.allocated["pods"])
    closed_by_parent: bool = False  # Volcano's volcano.sh/closed-by-parent annotation


@dataclass(frozen=True)
class GroupFacts:
    """What the rules need to know about a quota group beyond its spec."""

    pods: int = 0  # pods bound to the group (label, namespace or annotated namespaces)
    namespaces: tuple[str, ...] = field(default=())  # namespaces mapped to the group (proposed for `new`)


_NO_QUEUE_FACTS: Final[Mapping[str, QueueFacts]] = MappingProxyType({})
_NO_GROUP_FACTS: Final[Mapping[str, GroupFacts]] = MappingProxyType({})
_NO_QUEUE_FACT: Final = QueueFacts()
_NO_GROUP_FACT: Final = GroupFacts()

NON_FIELD: Final = "non_field_errors"
MAX_WEIGHT: Final = 65535  # Volcano's CRD bounds weight to 1..65535
MAX_PRIORITY: Final = 2**31 - 1  # int32, as Volcano's spec.priority
QUEUE_STATES: Final = ("Open", "Closing", "Closed", "Unknown")
_CLOSED_STATES: Final = frozenset({"Closed", "Closing"})


def _q(amount: int, resource: str) -> str:
    """Amounts in rule messages as the quantities people wrote (``2500m``, ``4Gi``); a sentinel reads ``unlimited``."""
    return "unlimited" if is_unbounded(amount) else format_quantity(amount, resource)


def _names(names: Iterable[str], limit: int = 5) -> str:
    items = sorted(names)
    shown = ", ".join(items[:limit])
    return shown + (f", ... ({len(items) - limit} more)" if len(items) > limit else "")


# --------------------------------------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------------------------------------

_LABEL_RE: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_SUBDOMAIN_RE: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def _dns_errors(value: object, what: str, field_name: str, max_length: int, subdomain: bool) -> list[FieldError]:
    if value is None or value == "":
        return [FieldError(field_name, f"{what} is required", "required")]
    if not isinstance(value, str):
        return [FieldError(field_name, f"{what} must be a string, got {type(value).__name__}", "invalid")]
    errors: list[FieldError] = []
    shown = value if len(value) <= 80 else value[:77] + "..."
    if len(value) > max_length:
        errors.append(
            FieldError(
                field_name,
                f"{what} {shown!r} is {len(value)} characters long; at most {max_length} are allowed",
                "too_long",
            )
        )
    pattern = _SUBDOMAIN_RE if subdomain else _LABEL_RE
    allowed = (
        "lowercase letters a-z, digits 0-9, '-' and '.'" if subdomain else "lowercase letters a-z, digits 0-9 and '-'"
    )
    if pattern.fullmatch(value):
        return errors
    odd = next((ch for ch in value if ord(ch) > 127), None)
    if odd is not None:
        errors.append(
            FieldError(
                field_name,
                f"{what} {shown!r} contains the non-ASCII character {odd!r}; use only {allowed}",
                "non_ascii",
            )
        )
    elif value != value.lower():
        hint = f" (for example {value.lower()!r})" if pattern.fullmatch(value.lower()) else ""
        errors.append(FieldError(field_name, f"{what} {shown!r} must be lower case{hint}", "uppercase"))
    else:
        parts = "each dot-separated part must" if subdomain else "it must"
        errors.append(
            FieldError(
                field_name,
                f"{what} {shown!r} is not valid: use only {allowed}, and {parts} start and end with a letter or digit",
                "invalid",
            )
        )
    return errors


def validate_dns_label(
    value: object, *, what: str = "name", field: str = "name", max_length: int = 63
) -> list[FieldError]:
    """Check a DNS-1123 label (lowercase alphanumerics and '-', at most 63): queue and namespace names."""
    return _dns_errors(value, what, field, max_length, subdomain=False)


def validate_dns_subdomain(
    value: object, *, what: str = "name", field: str = "name", max_length: int = 253
) -> list[FieldError]:
    """Check a DNS-1123 subdomain (dot-separated labels, at most 253): quota group names."""
    return _dns_errors(value, what, field, max_length, subdomain=True)


# --------------------------------------------------------------------------------------------------------
# Shared resource checks
# --------------------------------------------------------------------------------------------------------


def _negative_errors(obj: str, field_prefix: str, resources: Mapping[str, int]) -> list[FieldError]:
    return [
        FieldError(
            f"{field_prefix}.{name}",
            f"{obj}: {field_prefix} {name} {_q(amount, name)} must be greater than or equal to 0",
            "negative",
        )
        for name, amount in sorted(resources.items())
        if amount < 0
    ]


def _sum_errors(
    owner: str,
    owner_limits: Mapping[str, int],
    kind: str,
    total: Mapping[str, int],
    *,
    unset_is_unlimited: bool,
) -> list[FieldError]:
    """Children's ``kind`` adding up to more than the owner's, per resource (a missing amount reads as 0)."""
    errors: list[FieldError] = []
    for name in sorted(total):
        amount = total[name]
        if amount <= 0:
            continue
        if name not in owner_limits:
            if unset_is_unlimited:
                continue
            limit, note = 0, f" (it does not set {kind} {name})"
        else:
            limit, note = owner_limits[name], ""
        if amount > limit:
            errors.append(
                FieldError(
                    f"{kind}.{name}",
                    f"{owner}: the sum of its children's {kind} {name} {_q(amount, name)} exceeds "
                    f"its {kind} {name} {_q(limit, name)}{note}",
                    "children_sum_exceeds_parent",
                )
            )
    return errors


def _dedupe(errors: Iterable[FieldError]) -> list[FieldError]:
    seen: set[FieldError] = set()
    out: list[FieldError] = []
    for error in errors:
        if error not in seen:
            seen.add(error)
            out.append(error)
    return out


# --------------------------------------------------------------------------------------------------------
# Queues
# --------------------------------------------------------------------------------------------------------


_Spec = TypeVar("_Spec", QueueSpec, QuotaGroupSpec)


class _TreeView(Generic[_Spec]):
    """A tree (queues or quota groups) as it would be after the change: specs by name, children by parent."""

    def __init__(self, specs: dict[str, _Spec], alias: Mapping[str, str] | None = None) -> None:
        self.specs: dict[str, _Spec] = specs
        self.alias: dict[str, str] = dict(alias or {})  # old name -> new name while a node is being renamed
        self.children: dict[str, list[str]] = {}
        for name in sorted(specs):
            parent = self.parent_of(name)
            if parent is not None:
                self.children.setdefault(parent, []).append(name)

    @classmethod
    def after(cls, tree: Mapping[str, _Spec], new: _Spec, old: _Spec | None) -> Self:
        specs: dict[str, _Spec] = dict(tree)
        alias: dict[str, str] = {}
        if old is not None and old.name != new.name:
            specs.pop(old.name, None)
            alias[old.name] = new.name
        specs[new.name] = new
        return cls(specs, alias)

    def parent_of(self, name: str) -> str | None:
        spec = self.specs.get(name)
        if spec is None or spec.parent is None:
            return None
        return self.alias.get(spec.parent, spec.parent)


class _QueueView(_TreeView[QueueSpec]):
    """The queue tree as it would be after the change."""

    def __init__(self, specs: dict[str, QueueSpec], alias: Mapping[str, str] | None = None) -> None:
        super().__init__(specs, alias)
        self._totals: dict[tuple[str, str], ResourceList] = {}

    def chain(self, name: str) -> tuple[list[str], str | None]:
        """Ancestors of ``name`` (parent first, root excluded) and why the walk stopped early, if it did.

        The reason is ``"cycle"`` or ``"missing:<name>"``; ``None`` means the chain reached root.
        """
        out: list[str] = []
        seen = {name}
        current = self.parent_of(name)
        while current is not None and current != ROOT_QUEUE:
            if current in seen:
                return out, "cycle"
            if current not in self.specs:
                return out, f"missing:{current}"
            seen.add(current)
            out.append(current)
            current = self.parent_of(current)
        return out, None

    def descendants(self, name: str) -> list[tuple[str, int]]:
        """Every descendant with its distance below ``name`` (cycle-safe), breadth first."""
        out: list[tuple[str, int]] = []
        seen = {name}
        frontier = [(name, 0)]
        while frontier:
            nxt: list[tuple[str, int]] = []
            for node, dist in frontier:
                for child in self.children.get(node, ()):
                    if child not in seen:
                        seen.add(child)
                        out.append((child, dist + 1))
                        nxt.append((child, dist + 1))
            frontier = nxt
        return out

    def subtree_capability(self, name: str, resource: str) -> tuple[int, str] | None:
        """Volcano's ``findSubtreeMaxCapability``: the queue's own capability if it sets ``resource``,
        else the largest among its children's subtrees; ``(amount, queue that sets it)`` or ``None``."""
        best: tuple[int, str] | None = None
        stack = [name]
        seen: set[str] = set()
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            capability = self.specs[node].capability
            if resource in capability:
                found = (capability[resource], node)
                if best is None or found[0] > best[0] or (found[0] == best[0] and found[1] < best[1]):
                    best = found
                continue
            stack.extend(self.children.get(node, ()))
        return best

    def state(self, name: str) -> str:
        spec = self.specs.get(name)
        return spec.state if spec is not None else "Open"

    def children_total(self, parent: str, kind: str) -> ResourceList:
        """Sum of the children's ``guarantee`` or ``deserved`` (memoised: whole-tree checks ask once per child)."""
        key = (parent, kind)
        if key not in self._totals:
            kids = (self.specs[c] for c in self.children.get(parent, ()))
            self._totals[key] = ResourceList.total(k.guarantee if kind == "guarantee" else k.deserved for k in kids)
        return self._totals[key]


def _queue_scalar_errors(new: QueueSpec) -> list[FieldError]:
    obj = f"queue {new.name}"
    errors: list[FieldError] = []
    if isinstance(new.weight, bool) or not isinstance(new.weight, int):
        errors.append(FieldError("weight", f"{obj}: weight must be an integer, got {new.weight!r}", "invalid"))
    elif not 1 <= new.weight <= MAX_WEIGHT:
        errors.append(
            FieldError("weight", f"{obj}: weight {new.weight} must be between 1 and {MAX_WEIGHT}", "out_of_range")
        )
    if isinstance(new.priority, bool) or not isinstance(new.priority, int):
        errors.append(FieldError("priority", f"{obj}: priority must be an integer, got {new.priority!r}", "invalid"))
    elif new.priority < 0:
        errors.append(
            FieldError("priority", f"{obj}: priority {new.priority} must be greater than or equal to 0", "negative")
        )
    elif new.priority > MAX_PRIORITY:
        errors.append(
            FieldError("priority", f"{obj}: priority {new.priority} must be at most {MAX_PRIORITY}", "out_of_range")
        )
    if new.state not in QUEUE_STATES:
        errors.append(
            FieldError(
                "state",
                f"{obj}: state {new.state!r} must be one of {', '.join(QUEUE_STATES)}",
                "invalid_choice",
            )
        )
    return errors


def _queue_limit_errors(new: QueueSpec) -> list[FieldError]:
    """Volcano rules 1-3: quantities >= 0, guarantee <= deserved <= capability per resource."""
    obj = f"queue {new.name}"
    errors = (
        _negative_errors(obj, "capability", new.capability)
        + _negative_errors(obj, "deserved", new.deserved)
        + _negative_errors(obj, "guarantee", new.guarantee)
    )
    for name in sorted(new.guarantee):
        guarantee = new.guarantee[name]
        if name not in new.deserved:
            errors.append(
                FieldError(
                    f"deserved.{name}",
                    f"{obj}: deserved {name} must be set and >= guarantee {name} {_q(guarantee, name)}",
                    "guarantee_exceeds_deserved",
                )
            )
        elif new.deserved[name] < guarantee:
            errors.append(
                FieldError(
                    f"deserved.{name}",
                    f"{obj}: deserved {name} {_q(new.deserved[name], name)} must be >= "
                    f"guarantee {name} {_q(guarantee, name)}",
                    "guarantee_exceeds_deserved",
                )
            )
    for name in sorted(new.deserved):
        # A capability that leaves the resource unset does not restrict it (Volcano rule 3).
        if name in new.capability and new.deserved[name] > new.capability[name]:
            errors.append(
                FieldError(
                    f"deserved.{name}",
                    f"{obj}: deserved {name} {_q(new.deserved[name], name)} must be <= "
                    f"capability {name} {_q(new.capability[name], name)}",
                    "deserved_exceeds_capability",
                )
            )
    return errors


def _limits(spec: QueueSpec) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    # Plain dicts: ResourceList equality reads a missing name as 0, but "unset" and "0" differ for a limit.
    return spec.capability.to_dict(), spec.deserved.to_dict(), spec.guarantee.to_dict()


def _check_queue(
    view: _QueueView,
    new: QueueSpec,
    old: QueueSpec | None,
    *,
    facts: Mapping[str, QueueFacts],
    max_depth: int,
    protect_root: bool,
    whole_tree: bool = False,
) -> list[FieldError]:
    """All queue rules for ``new`` inside ``view`` (the tree after the change).

    With ``whole_tree`` every queue is checked in turn, so a queue's subtree is left to its own members.
    """
    obj = f"queue {new.name}"
    errors = _queue_scalar_errors(new) + _queue_limit_errors(new)

    if new.name == ROOT_QUEUE:
        if new.parent is not None:
            errors.append(FieldError("parent", f"{obj}: the root queue cannot have a parent", "protected"))
        if protect_root and old is not None and old.name == ROOT_QUEUE and _limits(old) != _limits(new):
            errors.append(
                FieldError(
                    NON_FIELD,
                    f"{obj}: the root queue's capability, deserved and guarantee cannot be modified",
                    "protected",
                )
            )
        # Volcano's needsValidateHierarchicalQueue skips root: its limits describe the cluster.
        return errors
    if new.parent is None:
        errors.append(
            FieldError("parent", f"{obj}: parent is required (use {ROOT_QUEUE!r} for a top-level queue)", "required")
        )
        return errors

    renamed = old is not None and old.name != new.name
    moved = old is None or renamed or old.parent != new.parent
    limits_changed = moved or old is None or _limits(old) != _limits(new)
    parent_name = new.parent
    structure_ok = True

    if moved:
        if parent_name == new.name:
            errors.append(FieldError("parent", f"{obj}: a queue cannot use itself as its parent", "self_parent"))
            return errors
        ancestors, stop = view.chain(new.name)
        if stop == "cycle":
            loop = " -> ".join([new.name, *ancestors, str(view.parent_of(ancestors[-1]) if ancestors else parent_name)])
            errors.append(
                FieldError(
                    "parent",
                    f"{obj}: parent {parent_name} makes the parent chain loop ({loop}): "
                    "a queue cannot be placed under its own descendant",
                    "cycle",
                )
            )
            structure_ok = False
        elif stop is not None and ancestors == []:
            errors.append(FieldError("parent", f"{obj}: parent queue {parent_name} does not exist", "parent_not_found"))
            structure_ok = False
        elif stop is not None:
            missing = stop.split(":", 1)[1]
            errors.append(
                FieldError(
                    "parent",
                    f"{obj}: ancestor queue {missing} (parent of {ancestors[-1]}) does not exist",
                    "parent_not_found",
                )
            )
            structure_ok = False
        else:
            depth = len(ancestors) + 1
            below = 0 if whole_tree else max((dist for _, dist in view.descendants(new.name)), default=0)
            if depth > max_depth:
                errors.append(
                    FieldError(
                        "parent",
                        f"{obj}: depth {depth} under parent {parent_name} exceeds the maximum allowed depth of "
                        f"{max_depth}",
                        "depth",
                    )
                )
            elif depth + below > max_depth:
                deepest = min(n for n, d in view.descendants(new.name) if d == below)
                errors.append(
                    FieldError(
                        "parent",
                        f"{obj}: under parent {parent_name} its descendant queue {deepest} would be at depth "
                        f"{depth + below}, beyond the maximum allowed depth of {max_depth}",
                        "depth",
                    )
                )
        if structure_ok and parent_name != ROOT_QUEUE:
            siblings = [c for c in view.children.get(parent_name, ()) if c != new.name]
            parent_facts = facts.get(parent_name, _NO_QUEUE_FACT)
            if not siblings and (parent_facts.podgroups > 0 or parent_facts.allocated_pods > 0):
                errors.append(
                    FieldError(
                        "parent",
                        f"{obj}: queue {parent_name} cannot become its parent because it has "
                        f"{parent_facts.podgroups} podgroups and {parent_facts.allocated_pods} allocated pods; "
                        "only a queue without podgroups can have child queues",
                        "has_podgroups",
                    )
                )

    if new.state == "Open" and (moved or old is None or old.state != "Open"):
        parent_state = view.state(parent_name)
        if parent_name != ROOT_QUEUE and parent_state in _CLOSED_STATES:
            errors.append(
                FieldError(
                    "state",
                    f"{obj}: cannot be Open while its parent queue {parent_name} is {parent_state}; "
                    "open the parent queue first",
                    "parent_closed",
                )
            )

    if limits_changed and structure_ok:
        errors += _queue_hierarchy_errors(view, new, subtree=moved and not whole_tree)
    return errors


def _queue_hierarchy_errors(view: _QueueView, new: QueueSpec, *, subtree: bool) -> list[FieldError]:
    """Volcano's validateHierarchicalQueueResources, per resource and collecting every violation.

    With ``subtree`` (a moved queue) its descendants' capabilities are held against the new ancestors too.
    """
    obj = f"queue {new.name}"
    errors: list[FieldError] = []
    ancestors, _ = view.chain(new.name)
    root = view.specs.get(ROOT_QUEUE)
    if root is not None:
        ancestors = [*ancestors, ROOT_QUEUE]

    # 1. capability <= the nearest ancestor that sets it, for the queue and for its whole subtree.
    resources = set(new.capability)
    if subtree:
        for descendant, _dist in view.descendants(new.name):
            resources.update(view.specs[descendant].capability)
    for name in sorted(resources):
        found = view.subtree_capability(new.name, name) if subtree else (new.capability[name], new.name)
        if found is None:
            continue
        amount, holder = found
        for ancestor in ancestors:
            limit_caps = view.specs[ancestor].capability
            if name in limit_caps:
                if amount > limit_caps[name]:
                    whose = "" if holder == new.name else f" of its descendant queue {holder}"
                    errors.append(
                        FieldError(
                            f"capability.{name}",
                            f"{obj}: capability {name} {_q(amount, name)}{whose} exceeds the capability {name} "
                            f"{_q(limit_caps[name], name)} of its ancestor queue {ancestor}",
                            "capability_exceeds_ancestor",
                        )
                    )
                break

    # 2. siblings' guarantee/deserved (including this queue) <= the parent's.
    parent_name = new.parent or ROOT_QUEUE
    parent = view.specs.get(parent_name)
    if parent is not None:
        unlimited = parent_name == ROOT_QUEUE  # root is unlimited where it sets nothing
        owner = f"queue {parent_name}"
        for kind in ("guarantee", "deserved"):
            limits = parent.guarantee if kind == "guarantee" else parent.deserved
            total = view.children_total(parent_name, kind)
            errors += _sum_errors(owner, limits, kind, total, unset_is_unlimited=unlimited)

    # 3. with children: capability >= every child subtree's capability, children's sums <= own.
    children = [view.specs[c] for c in view.children.get(new.name, ())]
    if children:
        for name in sorted(new.capability):
            best: tuple[int, str] | None = None
            for child in children:
                found = view.subtree_capability(child.name, name)
                if found is not None and (best is None or found[0] > best[0]):
                    best = found
            if best is not None and new.capability[name] < best[0]:
                errors.append(
                    FieldError(
                        f"capability.{name}",
                        f"{obj}: capability {name} {_q(new.capability[name], name)} is smaller than its descendants' "
                        f"largest capability {name} {_q(best[0], name)} (queue {best[1]})",
                        "capability_below_descendants",
                    )
                )
        errors += _sum_errors(
            obj, new.guarantee, "guarantee", view.children_total(new.name, "guarantee"), unset_is_unlimited=False
        )
        errors += _sum_errors(
            obj, new.deserved, "deserved", view.children_total(new.name, "deserved"), unset_is_unlimited=False
        )
    return errors


def validate_queue(
    tree: Mapping[str, QueueSpec],
    new: QueueSpec,
    old: QueueSpec | None,
    *,
    facts: Mapping[str, QueueFacts] = _NO_QUEUE_FACTS,
    max_depth: int = 5,
    protect_root: bool = True,
) -> list[FieldError]:
    """Check creating (``old=None``), updating or renaming a queue against ``tree`` (the queues before it).

    ``facts`` holds podgroup and allocated-pod counts by queue name; ``max_depth`` is Volcano's
    ``--max-queue-depth`` (a child of root is at depth 1); ``protect_root`` forbids changing root's limits.
    """
    errors = validate_dns_label(new.name, what="queue name")
    if old is None:
        if new.name in tree:
            errors.append(FieldError("name", f"queue {new.name} already exists", "exists"))
    elif old.name != new.name:
        if old.name in (ROOT_QUEUE, DEFAULT_QUEUE):
            errors.append(FieldError("name", f"the {old.name} queue cannot be renamed", "protected"))
        if new.name in tree:
            errors.append(
                FieldError(
                    "name", f"queue {old.name} cannot be renamed to {new.name}: that queue already exists", "exists"
                )
            )
    if errors and any(e.code in ("exists", "protected") for e in errors):
        return errors
    view = _QueueView.after(tree, new, old)
    return errors + _check_queue(view, new, old, facts=facts, max_depth=max_depth, protect_root=protect_root)


def validate_queue_tree(
    queues: Mapping[str, QueueSpec],
    *,
    facts: Mapping[str, QueueFacts] = _NO_QUEUE_FACTS,
    max_depth: int = 5,
) -> list[FieldError]:
    """Check a whole snapshot at once (importer, simulate): every queue as if created, cycles, missing parents.

    A violation seen from several queues (a parent and each child) is reported once.
    """
    errors: list[FieldError] = []
    for key, spec in sorted(queues.items()):
        if key != spec.name:
            errors.append(FieldError("name", f"queue {spec.name} is listed under the name {key!r}", "invalid"))
    view = _QueueView(dict(queues))
    for name in sorted(queues):
        spec = queues[name]
        errors += validate_dns_label(spec.name, what="queue name")
        errors += _check_queue(view, spec, None, facts=facts, max_depth=max_depth, protect_root=False, whole_tree=True)
    return _dedupe(errors)


def validate_queue_delete(
    tree: Mapping[str, QueueSpec],
    name: str,
    *,
    facts: Mapping[str, QueueFacts] = _NO_QUEUE_FACTS,
    cascade: bool = False,
    force: bool = False,
) -> list[FieldError]:
    """Check deleting a queue: never root or default; children only with ``cascade`` (deleted first,
    seed 004); podgroups (its own or, with ``cascade``, any descendant's) only with ``force``, in which
    case the caller deletes those podgroups and their pods (seed 002)."""
    if name in (ROOT_QUEUE, DEFAULT_QUEUE):
        return [FieldError(NON_FIELD, f"the {name} queue cannot be deleted", "protected")]
    if name not in tree:
        return [FieldError("name", f"queue {name} does not exist", "not_found")]
    view = _QueueView(dict(tree))
    errors: list[FieldError] = []
    children = view.children.get(name, [])
    doomed = [name]
    if children:
        if not cascade:
            errors.append(
                FieldError(
                    NON_FIELD,
                    f"queue {name} cannot be deleted because it has {len(children)} child queues: "
                    f"{_names(children)}; delete them first or delete with cascade",
                    "has_children",
                )
            )
        else:
            doomed += [n for n, _ in view.descendants(name)]
            protected = sorted({DEFAULT_QUEUE} & set(doomed))
            if protected:
                errors.append(
                    FieldError(
                        NON_FIELD,
                        f"queue {name} cannot be deleted with cascade because its subtree holds the "
                        f"{protected[0]} queue",
                        "protected",
                    )
                )
    if not force:
        busy = {n: facts[n] for n in doomed if n in facts and (facts[n].podgroups > 0 or facts[n].allocated_pods > 0)}
        for queue_name in sorted(busy):
            counts = busy[queue_name]
            whose = f"queue {name}" if queue_name == name else f"queue {name}'s descendant queue {queue_name}"
            errors.append(
                FieldError(
                    NON_FIELD,
                    f"{whose} still has {counts.podgroups} podgroups and {counts.allocated_pods} allocated pods; "
                    "delete them first or delete with force (which deletes those podgroups and their pods)",
                    "has_podgroups",
                )
            )
    return errors


def plan_queue_delete(tree: Mapping[str, QueueSpec], name: str, *, cascade: bool = False) -> list[str]:
    """The queues to delete, in order: deepest descendants first (then by name), ``name`` last.

    Without ``cascade`` only ``name``. Call ``validate_queue_delete`` first; this only orders.
    """
    if name not in tree:
        raise RuleViolation([FieldError("name", f"queue {name} does not exist", "not_found")])
    if not cascade:
        return [name]
    view = _QueueView(dict(tree))
    below = sorted(view.descendants(name), key=lambda item: (-item[1], item[0]))
    return [n for n, _ in below] + [name]


# -- queue state --------------------------------------------------------------------------------------


def settle_queue_state(state: str, podgroups: int) -> str:
    """The state a queue settles in after a sync (volcano.md §7.1): Closing becomes Closed once no
    podgroup points at it; an empty state reads as Open; every other state stays."""
    if state == "":
        return "Open"
    if state == "Closing" and podgroups <= 0:
        return "Closed"
    return state


def _closed_state(current: str, podgroups: int) -> str:
    # Volcano's state machine for CloseQueue: Closed stays Closed; Open/Closing/Unknown become Closed
    # when no podgroups remain, else Closing.
    if current == "Closed":
        return "Closed"
    return "Closed" if podgroups <= 0 else "Closing"


def validate_queue_action(
    tree: Mapping[str, QueueSpec],
    states: Mapping[str, str],
    name: str,
    action: str,
) -> list[FieldError]:
    """Check an open/close action: the queue exists, root never closes, a child opens only under an open parent."""
    if action not in ("open", "close"):
        return [FieldError("action", f"action {action!r} must be 'open' or 'close'", "invalid_choice")]
    if name not in tree:
        return [FieldError("name", f"queue {name} does not exist", "not_found")]
    if action == "close":
        if name == ROOT_QUEUE:
            return [FieldError("state", "the root queue cannot be closed", "protected")]
        return []
    parent = tree[name].parent
    if parent is not None and parent != ROOT_QUEUE and parent in tree:
        parent_state = states.get(parent, tree[parent].state)
        if parent_state in _CLOSED_STATES:
            return [
                FieldError(
                    "state",
                    f"queue {name} cannot be opened because its parent queue {parent} is {parent_state}; "
                    "open the parent queue first",
                    "parent_closed",
                )
            ]
    return []


def plan_queue_action(
    tree: Mapping[str, QueueSpec],
    states: Mapping[str, str],
    closed_by_parent: Mapping[str, bool],
    name: str,
    action: str,
    facts: Mapping[str, QueueFacts] = _NO_QUEUE_FACTS,
) -> dict[str, tuple[str, bool]]:
    """The new ``(state, closed_by_parent)`` of every queue an open/close action changes.

    ``states`` and ``closed_by_parent`` give the current values (falling back to the spec's state and to
    ``facts``); ``facts`` gives podgroup counts. Raises ``RuleViolation`` when ``validate_queue_action``
    refuses.
    """
    check(validate_queue_action(tree, states, name, action))
    view = _QueueView(dict(tree))

    def state_of(queue: str) -> str:
        return states.get(queue, tree[queue].state) or "Open"

    def flag_of(queue: str) -> bool:
        if queue in closed_by_parent:
            return closed_by_parent[queue]
        return facts.get(queue, _NO_QUEUE_FACT).closed_by_parent

    def podgroups_of(queue: str) -> int:
        return facts.get(queue, _NO_QUEUE_FACT).podgroups

    planned: dict[str, tuple[str, bool]] = {}
    if action == "close":
        # Deliberate: the explicit close clears the queue's own closed-by-parent mark (see module docstring).
        planned[name] = (_closed_state(state_of(name), podgroups_of(name)), False)
        frontier = [name]
        while frontier:
            nxt: list[str] = []
            for parent in frontier:
                for child in view.children.get(parent, ()):
                    if child in planned:
                        continue
                    # Volcano closes every child not already Closed/Closing and marks it closed-by-parent;
                    # a child already closed keeps its state and mark, and its own children are visited too.
                    if state_of(child) not in _CLOSED_STATES:
                        planned[child] = (_closed_state(state_of(child), podgroups_of(child)), True)
                    else:
                        planned[child] = (state_of(child), flag_of(child))
                    nxt.append(child)
            frontier = nxt
    else:
        planned[name] = ("Open", False)
        frontier = [name]
        while frontier:
            nxt = []
            for parent in frontier:
                for child in view.children.get(parent, ()):
                    # Only the children this queue's close marked come back (Volcano's openHierarchicalQueue).
                    if child not in planned and flag_of(child) and state_of(child) in _CLOSED_STATES:
                        planned[child] = ("Open", False)
                        nxt.append(child)
            frontier = nxt
    return {q: value for q, value in planned.items() if value != (state_of(q), flag_of(q))}


# --------------------------------------------------------------------------------------------------------
# Quota groups
# --------------------------------------------------------------------------------------------------------

_BUILTIN_GROUPS: Final = (ROOT_GROUP, SYSTEM_GROUP, DEFAULT_GROUP)
_DEFAULT_GROUP_EDITABLE: Final = ("min", "max", "shared_weight", "allow_lent", "min_scale_exempt")


class _GroupView(_TreeView[QuotaGroupSpec]):
    """The quota-group tree as it would be after the change."""

    def __init__(self, specs: dict[str, QuotaGroupSpec], alias: Mapping[str, str] | None = None) -> None:
        super().__init__(specs, alias)
        self._min_totals: dict[str, ResourceList] = {}

    def children_min(self, parent: str) -> ResourceList:
        """Sum of the children's min (memoised for whole-tree checks)."""
        if parent not in self._min_totals:
            self._min_totals[parent] = ResourceList.total(self.specs[c].min for c in self.children.get(parent, ()))
        return self._min_totals[parent]

    def chain(self, name: str) -> tuple[list[str], str | None]:
        out: list[str] = []
        seen = {name}
        current = self.parent_of(name)
        while current is not None and current != ROOT_GROUP:
            if current in seen:
                return out, "cycle"
            if current not in self.specs:
                return out, f"missing:{current}"
            seen.add(current)
            out.append(current)
            current = self.parent_of(current)
        return out, None


def fill_quota_group_defaults(tree: Mapping[str, QuotaGroupSpec], spec: QuotaGroupSpec) -> QuotaGroupSpec:
    """Koordinator's mutating defaults (``fillQuotaDefaultInformation``) as a new spec.

    An empty parent becomes ``root``; an empty ``tree_id`` is inherited from an existing non-root parent;
    ``shared_weight`` defaults to ``max``, and a given one is normalised to exactly max's keys (missing
    keys copied from max, extra keys dropped). ``root`` itself is returned unchanged.
    """
    if spec.name == ROOT_GROUP:
        return spec
    parent = ROOT_GROUP if spec.parent == "" else spec.parent
    tree_id = spec.tree_id
    if not tree_id and parent is not None and parent != ROOT_GROUP and parent in tree:
        tree_id = tree[parent].tree_id
    if not spec.shared_weight:
        shared_weight = spec.max
    else:
        given = spec.shared_weight
        # ResourceList reads a missing name as 0, so Mapping.get(n, default) would never use the default.
        shared_weight = ResourceList({n: (given[n] if n in given else a) for n, a in spec.max.items()})  # noqa: SIM401
    return replace(spec, parent=parent, tree_id=tree_id, shared_weight=shared_weight)


def _group_fields(spec: QuotaGroupSpec) -> tuple[object, ...]:
    # Plain dicts, so that "unset" and an explicit 0 differ (ResourceList equality reads missing as 0).
    weight = None if spec.shared_weight is None else spec.shared_weight.to_dict()
    return (
        spec.name,
        spec.parent,
        spec.is_parent,
        spec.min.to_dict(),
        spec.max.to_dict(),
        weight,
        spec.allow_lent,
        spec.tree_id,
        spec.min_scale_exempt,
    )


def _group_builtin_errors(new: QuotaGroupSpec, old: QuotaGroupSpec | None) -> list[FieldError]:
    obj = f"quota group {new.name}"
    errors: list[FieldError] = []
    if old is not None and old.name in (ROOT_GROUP, SYSTEM_GROUP) and _group_fields(old) != _group_fields(new):
        # Koordinator's IsForbiddenModify: the system and root quotas are managed, never edited.
        errors.append(FieldError(NON_FIELD, f"the {old.name} quota group cannot be modified", "protected"))
        return errors
    if old is not None and old.name == DEFAULT_GROUP:
        for name in ("parent", "is_parent", "tree_id"):
            if getattr(old, name) != getattr(new, name):
                errors.append(
                    FieldError(
                        name,
                        f"{obj}: the default quota group's {name} cannot be changed "
                        f"(only {', '.join(_DEFAULT_GROUP_EDITABLE)} can)",
                        "protected",
                    )
                )
    if new.name == ROOT_GROUP and new.parent is not None:
        errors.append(FieldError("parent", f"{obj}: the root quota group cannot have a parent", "protected"))
    if new.name in (SYSTEM_GROUP, DEFAULT_GROUP):
        if new.parent != ROOT_GROUP:
            errors.append(
                FieldError("parent", f"{obj}: the {new.name} quota group must stay directly under root", "protected")
            )
        if new.is_parent:
            errors.append(
                FieldError("is_parent", f"{obj}: the {new.name} quota group cannot be a parent group", "protected")
            )
    return errors


def _group_self_errors(new: QuotaGroupSpec) -> list[FieldError]:
    """Koordinator's validateQuotaSelfItem: values >= 0, min keys within max keys, min <= max."""
    obj = f"quota group {new.name}"
    errors = _negative_errors(obj, "min", new.min) + _negative_errors(obj, "max", new.max)
    if new.shared_weight is not None:
        errors += _negative_errors(obj, "shared_weight", new.shared_weight)
    for name in sorted(new.min):
        if name not in new.max:
            errors.append(
                FieldError(
                    f"min.{name}",
                    f"{obj}: min sets {name} {_q(new.min[name], name)} but max does not set {name}; "
                    "every resource in min must also be in max",
                    "min_key_not_in_max",
                )
            )
        elif new.min[name] > new.max[name]:
            errors.append(
                FieldError(
                    f"min.{name}",
                    f"{obj}: min {name} {_q(new.min[name], name)} must be <= max {name} {_q(new.max[name], name)}",
                    "min_exceeds_max",
                )
            )
    return errors


def _check_group(
    view: _GroupView,
    new: QuotaGroupSpec,
    old: QuotaGroupSpec | None,
    facts: Mapping[str, GroupFacts],
) -> list[FieldError]:
    obj = f"quota group {new.name}"
    errors = _group_builtin_errors(new, old)
    if errors and errors[0].code == "protected" and errors[0].field == NON_FIELD:
        return errors
    errors += _group_self_errors(new)
    own_facts = facts.get(new.name, _NO_GROUP_FACT)
    children = [view.specs[c] for c in view.children.get(new.name, ())]

    # is_parent (Koordinator checkIsParentChange, extended to creation and whole-tree checks).
    if not new.is_parent and children and new.name != ROOT_GROUP:
        turned = old is not None and old.is_parent
        errors.append(
            FieldError(
                "is_parent",
                f"{obj}: "
                + ("is_parent cannot be set to false" if turned else "must be a parent group (is_parent true)")
                + f" while it has {len(children)} child groups: {_names(c.name for c in children)}",
                "is_parent",
            )
        )
    if new.is_parent and own_facts.pods > 0:
        turned = old is not None and not old.is_parent
        errors.append(
            FieldError(
                "is_parent",
                f"{obj}: "
                + ("is_parent cannot be set to true" if turned else "cannot be a parent group")
                + f" while {own_facts.pods} pods are bound to it",
                "is_parent",
            )
        )

    # tree_id: immutable, and equal to the parent's and the children's.
    if old is not None and old.tree_id != new.tree_id:
        errors.append(
            FieldError(
                "tree_id",
                f"{obj}: tree_id cannot change (from {old.tree_id!r} to {new.tree_id!r})",
                "immutable",
            )
        )
    # namespaces: DNS labels, each bound to one group only.
    seen_ns: set[str] = set()
    for namespace in own_facts.namespaces:
        ns_errors = validate_dns_label(namespace, what="namespace", field="namespaces")
        if ns_errors:
            errors += ns_errors
            continue
        if namespace in seen_ns:
            errors.append(FieldError("namespaces", f"{obj}: namespace {namespace} is listed twice", "invalid"))
            continue
        seen_ns.add(namespace)
        owners = sorted(g for g, f in facts.items() if g != new.name and g in view.specs and namespace in f.namespaces)
        if owners:
            errors.append(
                FieldError(
                    "namespaces",
                    f"{obj}: namespace {namespace} is already bound to quota group {owners[0]}",
                    "namespace_taken",
                )
            )

    if new.name == ROOT_GROUP:
        # Koordinator never validates the root's topology: first-level groups may carry any tree_id.
        return errors
    for child in children:
        if child.tree_id != new.tree_id:
            errors.append(
                FieldError(
                    "tree_id",
                    f"{obj}: tree_id {new.tree_id!r} differs from its child group {child.name}'s {child.tree_id!r}",
                    "tree_id",
                )
            )

    parent_name = new.parent
    if parent_name is None:
        # The root of another quota tree (Koordinator's is-root groups): no parent, min sums not checked.
        if not new.tree_id:
            errors.append(FieldError("tree_id", f"{obj}: a quota tree root (no parent) must have a tree_id", "tree_id"))
        return errors
    if parent_name == new.name:
        errors.append(FieldError("parent", f"{obj}: a quota group cannot use itself as its parent", "self_parent"))
        return errors
    ancestors, stop = view.chain(new.name)
    if stop == "cycle":
        loop = " -> ".join([new.name, *ancestors, str(view.parent_of(ancestors[-1]) if ancestors else parent_name)])
        errors.append(
            FieldError(
                "parent",
                f"{obj}: parent {parent_name} makes the parent chain loop ({loop}): "
                "a quota group cannot be placed under its own descendant",
                "cycle",
            )
        )
        return errors
    if stop is not None and not ancestors:
        errors.append(
            FieldError("parent", f"{obj}: parent quota group {parent_name} does not exist", "parent_not_found")
        )
        return errors
    if stop is not None:
        errors.append(
            FieldError(
                "parent",
                f"{obj}: ancestor quota group {stop.split(':', 1)[1]} (parent of {ancestors[-1]}) does not exist",
                "parent_not_found",
            )
        )
        return errors

    if parent_name != ROOT_GROUP:
        parent = view.specs[parent_name]
        if not parent.is_parent:
            errors.append(
                FieldError(
                    "parent",
                    f"{obj}: quota group {parent_name} is not a parent group (is_parent false) and cannot have "
                    "child groups",
                    "parent_not_parent",
                )
            )
        if new.tree_id != parent.tree_id:
            errors.append(
                FieldError(
                    "tree_id",
                    f"{obj}: tree_id {new.tree_id!r} differs from its parent {parent_name}'s {parent.tree_id!r}",
                    "tree_id",
                )
            )
        extra = sorted(set(new.max) - set(parent.max))
        if extra:
            errors.append(
                FieldError(
                    f"max.{extra[0]}",
                    f"{obj}: max sets {', '.join(extra)} but its parent quota group {parent_name}'s max does not; "
                    "add the resource to the parent first",
                    "resource_keys",
                )
            )
        # Seed 001: the children's min add up to at most the parent's min, except directly under root.
        errors += _sum_errors(
            f"quota group {parent_name}", parent.min, "min", view.children_min(parent_name), unset_is_unlimited=False
        )
    for child in children:
        extra = sorted(set(child.max) - set(new.max))
        if extra:
            errors.append(
                FieldError(
                    f"max.{extra[0]}",
                    f"{obj}: its child quota group {child.name} sets max {', '.join(extra)}, "
                    "which its own max does not",
                    "resource_keys",
                )
            )
    if children:
        # Koordinator applies this one to first-level groups too.
        errors += _sum_errors(obj, new.min, "min", view.children_min(new.name), unset_is_unlimited=False)
    return errors


def validate_quota_group(
    tree: Mapping[str, QuotaGroupSpec],
    new: QuotaGroupSpec,
    old: QuotaGroupSpec | None,
    *,
    facts: Mapping[str, GroupFacts] = _NO_GROUP_FACTS,
) -> list[FieldError]:
    """Check creating (``old=None``), updating or renaming a quota group against ``tree`` (before the change).

    Pass ``new`` through ``fill_quota_group_defaults`` first, as Koordinator's mutating webhook does.
    ``facts[new.name].namespaces`` are the namespaces proposed for ``new``; other entries are the
    current bindings and pod counts.
    """
    errors = validate_dns_subdomain(new.name, what="quota group name")
    if old is None:
        if new.name in tree:
            errors.append(FieldError("name", f"quota group {new.name} already exists", "exists"))
    elif old.name != new.name:
        if old.name in _BUILTIN_GROUPS:
            errors.append(FieldError("name", f"the {old.name} quota group cannot be renamed", "protected"))
        if new.name in tree:
            errors.append(
                FieldError(
                    "name",
                    f"quota group {old.name} cannot be renamed to {new.name}: that group already exists",
                    "exists",
                )
            )
    if any(e.code in ("exists", "protected") for e in errors):
        return errors
    view = _GroupView.after(tree, new, old)
    return errors + _check_group(view, new, old, facts)


def validate_quota_tree(
    groups: Mapping[str, QuotaGroupSpec],
    *,
    facts: Mapping[str, GroupFacts] = _NO_GROUP_FACTS,
) -> list[FieldError]:
    """Check a whole snapshot of quota groups at once: every group as if created, cycles, missing parents."""
    errors: list[FieldError] = []
    for key, spec in sorted(groups.items()):
        if key != spec.name:
            errors.append(FieldError("name", f"quota group {spec.name} is listed under the name {key!r}", "invalid"))
    view = _GroupView(dict(groups))
    for name in sorted(groups):
        spec = groups[name]
        errors += validate_dns_subdomain(spec.name, what="quota group name")
        errors += _check_group(view, spec, None, facts)
    return _dedupe(errors)


def validate_quota_group_delete(
    tree: Mapping[str, QuotaGroupSpec],
    name: str,
    *,
    facts: Mapping[str, GroupFacts] = _NO_GROUP_FACTS,
) -> list[FieldError]:
    """Check deleting a quota group: never a built-in, and only without child groups and without pods."""
    if name in _BUILTIN_GROUPS:
        return [FieldError(NON_FIELD, f"the {name} quota group cannot be deleted", "protected")]
    if name not in tree:
        return [FieldError("name", f"quota group {name} does not exist", "not_found")]
    errors: list[FieldError] = []
    children = sorted(g for g, spec in tree.items() if spec.parent == name and g != name)
    if children:
        errors.append(
            FieldError(
                NON_FIELD,
                f"quota group {name} cannot be deleted because it has {len(children)} child groups: {_names(children)}",
                "has_children",
            )
        )
    pods = facts.get(name, _NO_GROUP_FACT).pods
    if pods > 0:
        errors.append(
            FieldError(
                NON_FIELD,
                f"quota group {name} cannot be deleted because {pods} pods are still bound to it",
                "has_pods",
            )
        )
    return errors


def validate_pod_quota_group(tree: Mapping[str, QuotaGroupSpec], group_name: str) -> list[FieldError]:
    """Check a pod's quota group: it must exist and be a leaf (Koordinator: pods never link to a parent group).

    An empty name means the default group and is accepted.
    """
    if group_name in ("", DEFAULT_GROUP):
        return []
    spec = tree.get(group_name)
    if spec is None and group_name != ROOT_GROUP:
        return [FieldError("quota_group", f"quota group {group_name} does not exist", "not_found")]
    if group_name == ROOT_GROUP or (spec is not None and spec.is_parent):
        return [
            FieldError(
                "quota_group",
                f"pods cannot be bound to quota group {group_name} because it is a parent group; "
                "use one of its leaf groups",
                "parent_group",
            )
        ]
    return []


# --------------------------------------------------------------------------------------------------------
# PodGroups
# --------------------------------------------------------------------------------------------------------


def _quota_key(key: str) -> tuple[str, int] | None:
    """A ResourceQuota ``hard`` key -> (resource name, divisor to reach that resource's base units).

    ``requests.memory`` parsed as a non-byte name is in milli-bytes, hence the divisor; ``limits.*`` do not
    constrain requests and are skipped.
    """
    if key.startswith("limits."):
        return None
    if key.startswith("requests."):
        resource = key[len("requests.") :]
        return resource, milli_scale(key) // milli_scale(resource)
    return key, 1


def validate_podgroup(
    queues: Mapping[str, QueueSpec],
    queue_name: str,
    *,
    min_member: int,
    min_resources: ResourceList,
    namespace: str,
    namespace_hard: ResourceList | None,
    other_min_resources: ResourceList,
    name: str = "",
) -> list[FieldError]:
    """Check creating a podgroup: its queue exists, is Open, is not root and is a leaf; ``min_member >= 0``;
    and the namespace's podgroups' ``minResources`` (``other_min_resources`` plus this one) stay within the
    namespace's ResourceQuota ``namespace_hard`` on every resource it defines (seed 003).

    An empty ``queue_name`` means the default queue. ``namespace_hard`` keys may be plain (``cpu``) or
    ``requests.*``; ``None`` means the namespace has no ResourceQuota.
    """
    obj = f"podgroup {name} in namespace {namespace}" if name else f"podgroup in namespace {namespace}"
    errors = validate_dns_label(namespace, what="namespace", field="namespace")
    if name:
        errors += validate_dns_subdomain(name, what="podgroup name")
    queue_name = queue_name or DEFAULT_QUEUE
    queue = queues.get(queue_name)
    if queue is None:
        errors.append(FieldError("queue", f"{obj}: queue {queue_name} does not exist", "not_found"))
    else:
        if queue.state != "Open":
            errors.append(
                FieldError(
                    "queue",
                    "can only submit podgroup to queue with state Open, "
                    f"queue {queue_name} is {queue.state or 'unset'}",
                    "queue_not_open",
                )
            )
        if queue_name == ROOT_QUEUE:
            errors.append(FieldError("queue", f"{obj}: podgroups cannot be submitted to the root queue", "root_queue"))
        else:
            children = sorted(q for q, spec in queues.items() if spec.parent == queue_name and q != queue_name)
            if children:
                errors.append(
                    FieldError(
                        "queue",
                        f"can only submit podgroup to a leaf queue, queue {queue_name} has {len(children)} "
                        f"child queues: {_names(children)}",
                        "not_leaf",
                    )
                )
    if isinstance(min_member, bool) or not isinstance(min_member, int):
        errors.append(FieldError("min_member", f"{obj}: min_member must be an integer, got {min_member!r}", "invalid"))
    elif min_member < 0:
        errors.append(
            FieldError("min_member", f"{obj}: min_member {min_member} must be greater than or equal to 0", "negative")
        )
    errors += _negative_errors(obj, "min_resources", min_resources)
    if namespace_hard is not None:
        hard: dict[str, int] = {}
        for key, amount in namespace_hard.items():
            mapped = _quota_key(key)
            if mapped is None:
                continue
            resource, divisor = mapped
            value = -(-amount // divisor)  # ceiling, as parsing rounds fractional base units up
            hard[resource] = min(hard.get(resource, value), value)  # the tighter of cpu / requests.cpu
        for resource in sorted(hard):
            request = min_resources[resource]
            if request <= 0:
                continue
            used = other_min_resources[resource]
            if used + request > hard[resource]:
                errors.append(
                    FieldError(
                        f"min_resources.{resource}",
                        f"{obj}: min_resources {resource} {_q(request, resource)} plus {_q(used, resource)} already "
                        f"reserved by the namespace's other podgroups is {_q(used + request, resource)}, more than "
                        f"the namespace's resource quota {resource} {_q(hard[resource], resource)}",
                        "exceeds_namespace_quota",
                    )
                )
    return errors
