"""The field table of each tree kind: every field of a queue and of a quota group beyond its name and parent, with
its type, default and meaning, in the order people read them.

The engine's specs (``engine.objects.QueueSpec``, ``QuotaGroupSpec``) hold these fields by the same names; the store reads their
columns, the services write them, the what-if (``engine.changes``) parses them, the Kubernetes adapter compares
them, the API, the admin, the editor and the CLI offer them, and the manifests carry the free-text ones in a
Fairway annotation, all by walking this table. Adding a field means a row here, the spec's attribute, the model's
column (with its migration) and, if a page shows it, the template.

A field's ``kind`` says how every layer treats it:

* ``int`` / ``bool``: a number or a flag;
* ``text``: free text for people, at most ``max_length`` characters (checked by ``engine.rules``);
* ``state``: set by actions (open, close), never by an edit;
* ``resources``: a resource list, empty when unset (null in the API means empty);
* ``limits``: a resource list where a resource left out is unlimited; stored null when it names nothing;
* ``weights``: a resource list or None (None: a default the rules fill in, e.g. max);
* ``seconds``: whole seconds in the database and the API, float seconds in the spec; None: unset;
* ``user_limits``: per-user and per-group limits (``engine.userlimits``): a tuple of ``UserLimit`` in the spec,
  a list of objects with quantities in the API, with base units in the database (null when empty);
* ``kueue``: Kueue's levers and policies of a queue (``engine.kueuepolicy``): the same normalized JSON object in
  Kueue's spelling in the spec, the API and the database (null when it sets nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from engine.resources import ResourceList
from engine.userlimits import stored_user_limits, user_limits_from_stored
from engine.vocabulary import Word

__all__ = [
    "DESCRIPTION_ANNOTATION",
    "DESCRIPTION_HELP",
    "LIST_KINDS",
    "QUEUE_FIELDS",
    "QUOTA_GROUP_FIELDS",
    "TABLES",
    "FieldKind",
    "TreeField",
    "annotations_of",
    "editable",
    "from_annotations",
    "from_stored",
    "list_fields",
    "stored",
]


class FieldKind(Word):
    INT = "int"
    BOOL = "bool"
    TEXT = "text"
    STATE = "state"
    RESOURCES = "resources"
    LIMITS = "limits"
    WEIGHTS = "weights"
    SECONDS = "seconds"
    USER_LIMITS = "user_limits"
    KUEUE = "kueue"


LIST_KINDS = frozenset({FieldKind.RESOURCES, FieldKind.LIMITS, FieldKind.WEIGHTS})


@dataclass(frozen=True)
class TreeField:
    """One field of a tree node: ``name`` (the spec's attribute, the model's column, the API's key, the CLI's
    ``--flag``), ``kind``, the spec's ``default``, its ``meaning`` for people, the ``label`` pages and the CLI show,
    whether edits may set it (``writable``), the longest text it takes (``max_length``) and the Fairway annotation
    that carries it in the exported manifests (``annotation``; None: not there, or written by hand)."""

    name: str
    kind: FieldKind
    default: Any
    meaning: str
    label: str
    writable: bool = True
    max_length: int | None = None
    annotation: str | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


DESCRIPTION_ANNOTATION = "fairway.io/description"
DESCRIPTION_MAX_LENGTH = 500

_BORROW = "the most it may take beyond its {own} from outside its subtree, e.g. cpu=2 ('' for unlimited)"
_LEND = "the most of its unused {own} others may take; the rest stays reserved for it ('' for unlimited)"
DESCRIPTION_HELP = (
    f"what the node is for, for people: free text of at most {DESCRIPTION_MAX_LENGTH} characters, shown on its "
    "page; no rule reads it"
)
USER_LIMITS_HELP = (
    "per-user and per-group limits inside its subtree: a list of {user|group: name ('*': each one), max_resources, "
    'max_jobs}, e.g. [{"user": "*", "max_jobs": 3}, {"group": "ml-interns", "max_resources": '
    '{"nvidia.com/gpu": "8"}}]'
)

KUEUE_HELP = (
    "Kueue's levers, in Kueue's spelling of a ClusterQueue's spec: queueingStrategy, stopPolicy, namespaceSelector, "
    'preemption, admissionScope, fairSharing {weight}, kind/name, e.g. {"queueingStrategy": "StrictFIFO"} '
    "('' for none)"
)

# both kinds' description (shown on its page, carried by the exports as an annotation)
_DESCRIPTION = TreeField(
    "description",
    FieldKind.TEXT,
    "",
    DESCRIPTION_HELP,
    "Description",
    max_length=DESCRIPTION_MAX_LENGTH,
    annotation=DESCRIPTION_ANNOTATION,
)

QUEUE_FIELDS: tuple[TreeField, ...] = (
    TreeField("weight", FieldKind.INT, 1, "its share among its siblings (1..65535)", "Weight"),
    TreeField(
        "capability", FieldKind.RESOURCES, ResourceList(), "the most it may use, e.g. cpu=8,memory=16Gi", "Capability"
    ),
    TreeField(
        "deserved", FieldKind.RESOURCES, ResourceList(), "what it deserves (capacity policy), e.g. cpu=4", "Deserved"
    ),
    TreeField(
        "guarantee", FieldKind.RESOURCES, ResourceList(), "what is reserved for it whatever the others do", "Guarantee"
    ),
    TreeField("borrowing_limit", FieldKind.LIMITS, ResourceList(), _BORROW.format(own="deserved"), "Borrowing limit"),
    TreeField("lending_limit", FieldKind.LIMITS, ResourceList(), _LEND.format(own="deserved"), "Lending limit"),
    TreeField("priority", FieldKind.INT, 0, "its priority among its siblings", "Priority"),
    TreeField("reclaimable", FieldKind.BOOL, True, "may others reclaim what it borrowed", "Reclaimable"),
    TreeField(
        "min_runtime",
        FieldKind.SECONDS,
        None,
        "seconds a pod of it is kept from reclaim and preempt after it starts, unless by a higher priority "
        "('' for unset: the parent's, else the policy's minRuntime)",
        "Min runtime",
    ),
    TreeField("user_limits", FieldKind.USER_LIMITS, (), USER_LIMITS_HELP, "User limits"),
    TreeField("kueue", FieldKind.KUEUE, None, KUEUE_HELP, "Kueue"),
    TreeField(
        "state",
        FieldKind.STATE,
        "Open",
        "Open, Closing or Closed (set by opening and closing)",
        "State",
        writable=False,
    ),
    _DESCRIPTION,
)

QUOTA_GROUP_FIELDS: tuple[TreeField, ...] = (
    TreeField("is_parent", FieldKind.BOOL, False, "a parent group holds groups, not pods", "Parent group"),
    TreeField("min", FieldKind.RESOURCES, ResourceList(), "guaranteed amounts, e.g. cpu=8,memory=32Gi", "Min"),
    TreeField("max", FieldKind.RESOURCES, ResourceList(), "the most it may use, borrowing included", "Max"),
    TreeField(
        "shared_weight",
        FieldKind.WEIGHTS,
        None,
        "its weight when spare capacity is shared (default: max)",
        "Shared weight",
    ),
    TreeField("borrowing_limit", FieldKind.LIMITS, ResourceList(), _BORROW.format(own="min"), "Borrowing limit"),
    TreeField("lending_limit", FieldKind.LIMITS, ResourceList(), _LEND.format(own="min"), "Lending limit"),
    TreeField("allow_lent", FieldKind.BOOL, True, "lend its unused min to its siblings (default true)", "Allow lent"),
    TreeField("min_scale_exempt", FieldKind.BOOL, False, "keep its min when mins are scaled down", "Min scale exempt"),
    TreeField("tree_id", FieldKind.TEXT, "", "the quota tree it belongs to", "Tree", max_length=63),
    TreeField("user_limits", FieldKind.USER_LIMITS, (), USER_LIMITS_HELP, "User limits"),
    _DESCRIPTION,
)

TreeKind = Literal["queue", "quota_group"]
TABLES: Mapping[TreeKind, tuple[TreeField, ...]] = {"queue": QUEUE_FIELDS, "quota_group": QUOTA_GROUP_FIELDS}


def editable(table: Iterable[TreeField]) -> tuple[str, ...]:
    """The names of the fields an edit may set (the API, the editor, the admin, the what-if, the adapter)."""
    return tuple(f.name for f in table if f.writable)


def list_fields(table: Iterable[TreeField]) -> tuple[str, ...]:
    """The names of the resource-list fields."""
    return tuple(f.name for f in table if f.kind in LIST_KINDS)


def stored(f: TreeField, value: Any) -> Any:
    """A spec's value as the row keeps it: a limit naming no resource is null (unlimited); user limits in base units
    (null when there is none)."""
    if f.kind is FieldKind.USER_LIMITS:
        return stored_user_limits(value)
    return (value or None) if f.kind in (FieldKind.LIMITS, FieldKind.KUEUE) else value


def from_stored(f: TreeField, value: Any, resource_list: Callable[[Any], ResourceList] = ResourceList) -> Any:
    """A row's value as the spec holds it; ``resource_list`` turns a stored resource list (not None) into one."""
    if f.kind is FieldKind.SECONDS:
        return None if value is None else float(value)
    if f.kind is FieldKind.USER_LIMITS:
        return user_limits_from_stored(value)
    if f.kind is FieldKind.WEIGHTS:
        return None if value is None else resource_list(value)
    if f.kind in LIST_KINDS:
        return ResourceList() if value is None else resource_list(value)
    return value


def annotations_of(table: Iterable[TreeField], spec: Any) -> dict[str, str]:
    """The Fairway annotations of ``spec``'s annotated fields that are set (an empty text is left out)."""
    return {f.annotation: getattr(spec, f.name) for f in table if f.annotation and getattr(spec, f.name)}


def from_annotations(table: Iterable[TreeField], annotations: Mapping[str, str]) -> dict[str, str]:
    """The annotated fields that ``annotations`` carry, as spec keywords."""
    return {f.name: annotations[f.annotation] for f in table if f.annotation and f.annotation in annotations}
