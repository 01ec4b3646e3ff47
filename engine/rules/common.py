"""What every rule shares: the error type, the codes, the facts callers count, message helpers and DNS names."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from engine.kueuepolicy import parse_kueue_policy
from engine.resources import format_amount
from engine.treefields import FieldKind, TreeField
from engine.userlimits import user_limit_errors

# --------------------------------------------------------------------------------------------------------
# Output types
# --------------------------------------------------------------------------------------------------------

#: Every ``FieldError.code`` this module emits, with its meaning.
CODES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "required": "a required value is missing",
        "invalid": "a malformed value (type or format)",
        "too_long": "a name or a text longer than its limit",
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
        "non_preemptible_not_allowed": "the job's queue allows no non-preemptible pods (allow_non_preemptible)",
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


def _q(amount: int, resource: str) -> str:
    """Amounts in rule messages in the units people read, the same on both sides of a comparison: cores and GPUs as
    whole numbers with a decimal fraction only when there is one (``2.5``), memory in ``Gi`` (``1.5Gi``), and
    ``unlimited`` for a sentinel (``engine.resources.format_amount``)."""
    return format_amount(amount, resource)


def _names(names: Iterable[str], limit: int = 5) -> str:
    items = sorted(names)
    shown = ", ".join(items[:limit])
    return shown + (f", ... ({len(items) - limit} more)" if len(items) > limit else "")


# --------------------------------------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------------------------------------

_LABEL_RE: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_SUBDOMAIN_RE: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def name_whitespace_error(
    value: object, *, what: str = "name", field: str = "name", subdomain: bool = False
) -> FieldError | None:
    """The one rule for a name with whitespace around it (``"nlp "``): refused, never trimmed into another name, by
    the API, the admin's forms and the editor's (``core.names``) and every rule that checks a name."""
    if not isinstance(value, str) or value == value.strip():
        return None
    shown = value if len(value) <= 80 else value[:77] + "..."
    return FieldError(
        field,
        f"{what} {shown!r} starts or ends with whitespace; names are DNS "
        f"{'subdomains' if subdomain else 'labels'}: use only lowercase letters a-z, digits 0-9 and '-'",
        "whitespace",
    )


def _dns_errors(value: object, what: str, field_name: str, max_length: int, subdomain: bool) -> list[FieldError]:
    if value is None or value == "":
        return [FieldError(field_name, f"{what} is required", "required")]
    if not isinstance(value, str):
        return [FieldError(field_name, f"{what} must be a string, got {type(value).__name__}", "invalid")]
    errors: list[FieldError] = []
    shown = value if len(value) <= 80 else value[:77] + "..."
    spaced = name_whitespace_error(value, what=what, field=field_name, subdomain=subdomain)
    if spaced is not None:
        # names are DNS labels or subdomains, as in Kubernetes: refused, never trimmed into another name
        return [spaced]
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


_QUALIFIED_NAME_RE: Final = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
MAX_LABELS: Final = 64  # labels a namespace may carry here (Kubernetes bounds only their total size, 256 KiB)


def validate_labels(value: object, *, field: str = "labels") -> list[FieldError]:
    """Check Kubernetes labels (``metadata.labels``): an object of at most ``MAX_LABELS`` keys, each an optional
    DNS-1123 subdomain prefix of at most 253 characters and ``/``, then a name of 1 to 63 characters (alphanumerics,
    ``-``, ``_``, ``.``, beginning and ending with an alphanumeric); each value a string of at most 63 such characters
    or empty. Each problem names its key (``labels.team``)."""
    if not isinstance(value, Mapping):
        return [FieldError(field, f"{field} must be an object of label keys to values, got {_kind(value)}", "invalid")]
    if len(value) > MAX_LABELS:
        return [FieldError(field, f"{field}: {len(value)} labels; at most {MAX_LABELS} are allowed", "too_long")]
    errors: list[FieldError] = []
    for key, label in value.items():
        path = f"{field}.{key}"
        problem = _label_key_problem(key) if isinstance(key, str) else f"{key!r} is not a string"
        if problem is None and not isinstance(label, str):
            problem = f"the value must be a string, got {_kind(label)}"
        elif problem is None and label and (len(label) > 63 or not _QUALIFIED_NAME_RE.fullmatch(label)):
            problem = (
                f"{label[:70]!r} is not a label value (at most 63 letters, digits, '-', '_' or '.', beginning and "
                "ending with a letter or digit, or empty)"
            )
        if problem is not None:
            errors.append(FieldError(path, f"{path}: {problem}", "invalid"))
    return errors


def _label_key_problem(key: str) -> str | None:
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or len(prefix) > 253 or not _SUBDOMAIN_RE.fullmatch(prefix)):
        return f"{key[:80]!r}: the prefix before '/' must be a DNS-1123 subdomain of at most 253 characters"
    if not name or len(name) > 63 or not _QUALIFIED_NAME_RE.fullmatch(name):
        return (
            f"{key[:80]!r} is not a label key (a name of 1 to 63 letters, digits, '-', '_' or '.', beginning and "
            "ending with a letter or digit, after an optional DNS subdomain and '/')"
        )
    return None


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def text_errors(obj: str, spec: object, table: Iterable[TreeField]) -> list[FieldError]:
    """The free-text fields of ``table`` (``engine.treefields``) that ``spec`` holds wrongly: not text, or longer
    than the field's ``max_length``; and its user limits (``engine.userlimits``: names, amounts, duplicates)."""
    errors: list[FieldError] = []
    for f in table:
        if f.kind is FieldKind.USER_LIMITS:
            value = getattr(spec, f.name)
            found = user_limit_errors(value, f.name) if isinstance(value, tuple) else []
            errors.extend(FieldError(e.field, f"{obj}: {e.message}", "invalid") for e in found)
            continue
        if f.kind is FieldKind.KUEUE:  # Kueue's levers (``engine.kueuepolicy``), every problem at its place
            _, problems = parse_kueue_policy(getattr(spec, f.name), f.name)
            errors.extend(FieldError(e.field, f"{obj}: {e.field}: {e.message}", "invalid") for e in problems)
            continue
        if f.kind is not FieldKind.TEXT:
            continue
        value = getattr(spec, f.name)
        if not isinstance(value, str):
            errors.append(FieldError(f.name, f"{obj}: {f.name} must be text, got {value!r}", "invalid"))
        elif f.max_length is not None and len(value) > f.max_length:
            errors.append(
                FieldError(
                    f.name,
                    f"{obj}: {f.name} is {len(value)} characters long; it may be at most {f.max_length}",
                    "too_long",
                )
            )
    return errors
