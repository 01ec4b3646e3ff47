"""The editor's forms. They only parse what people type (quantities per resource, names, flags); every rule
runs in ``quotas.services`` (``check_*``/``save_*``), and its ``FieldError`` messages are attached back to the
input they name, so the browser shows the API's own messages in place.

Resource lists are edited as a matrix: one row per resource, one column per list (capability / deserved /
guarantee, or min / max / shared weight), plus an empty row to add a resource. A blank cell leaves the resource
out of that list. Every form carries the ``version`` of the row it was read at (the page's ETag).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django import forms

from core.facts import check_known
from core.names import untrimmed
from engine import rules, treefields
from engine.resources import QuantityError, ResourceList, check_resource_name, format_in_unit, parse_in_unit
from engine.userlimits import parse_user_limits_text, user_limits_from_stored, user_limits_text
from frontend.presenters import units
from quotas.models import Namespace, Queue, QuotaGroup

# The resource lists of each tree kind, their labels and which a blank column leaves None (``engine.treefields``)
QUEUE_LISTS = treefields.list_fields(treefields.QUEUE_FIELDS)
GROUP_LISTS = treefields.list_fields(treefields.QUOTA_GROUP_FIELDS)
LIST_LABELS = {f.name: f.label for f in (*treefields.QUEUE_FIELDS, *treefields.QUOTA_GROUP_FIELDS)}
OPTIONAL_LISTS = frozenset(
    f.name
    for f in (*treefields.QUEUE_FIELDS, *treefields.QUOTA_GROUP_FIELDS)
    if f.kind in (treefields.FieldKind.LIMITS, treefields.FieldKind.WEIGHTS)
)
EXTRA = "__new__"


def known_resources(*extra: Mapping[str, int] | None) -> list[str]:
    """Resource names used anywhere in the trees (plus cpu and memory), for the editor's matrix rows."""
    names: set[str] = {"cpu", "memory"}
    for row in Queue.objects.values_list("capability", "deserved", "guarantee"):
        for rl in row:
            names.update(rl or {})
    for row in QuotaGroup.objects.exclude(name__in=QuotaGroup.BUILTIN).values_list("min", "max"):
        for rl in row:
            names.update(rl or {})
    for rl in extra:
        names.update(rl or {})
    shown = units.resource_order(names)
    hidden = sorted(n for n in names if n in units.HIDDEN_RESOURCES and any(n in (rl or {}) for rl in extra))
    return shown + hidden


def _cell(lst: str, resource: str) -> str:
    return f"{lst}__{resource}"


def _form_field(f: treefields.TreeField) -> forms.Field:
    """The editor's input of a table field no form declares: its label and meaning from the table; every rule (a
    text's length included) is checked by the services, whose message lands at the input."""
    options: dict[str, Any] = {"required": False, "label": f.label, "help_text": f.meaning[:1].upper() + f.meaning[1:]}
    if f.kind is treefields.FieldKind.BOOL:
        return forms.BooleanField(initial=f.default, **options)
    if f.kind in (treefields.FieldKind.INT, treefields.FieldKind.SECONDS):
        return forms.IntegerField(initial=f.default, **options)
    if f.kind is treefields.FieldKind.USER_LIMITS:
        options["help_text"] = (
            "One limit a line: 'user alice: jobs=3, nvidia.com/gpu=4, memory=64' or 'group ml-interns: "
            "nvidia.com/gpu=8' ('*' for each user or each group); amounts in the units of the columns above "
            "(memory in GiB, cpu in cores); a resource left out is unlimited."
        )
        return UserLimitsFormField(**options)
    if f.kind is treefields.FieldKind.KUEUE:  # Kueue's levers: a JSON object in Kueue's spelling (the rules check it)
        return KueueLeversFormField(widget=forms.Textarea(attrs={"rows": 3}), **options)
    return forms.CharField(initial=f.default, widget=forms.Textarea(attrs={"rows": 2}), **options)


class KueueLeversFormField(forms.JSONField):
    """Kueue's levers as JSON; a node without any shows an empty box (Django's JSON field wrote ``null`` in it), and an
    empty box still means none."""

    def prepare_value(self, value: Any) -> Any:
        if value is None:
            return ""
        return super().prepare_value(value)


class UserLimitsFormField(forms.CharField):
    """The editor's per-user limits: lines people write (``engine.userlimits.parse_user_limits_text``), read into
    the spec's limits; every problem at once, each naming its line."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(widget=forms.Textarea(attrs={"rows": 3}), initial="", **kwargs)

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, tuple):
            return user_limits_text(value)
        if isinstance(value, list):  # the stored form, as the instance holds it
            return user_limits_text(user_limits_from_stored(value))
        return super().prepare_value(value)

    def clean(self, value: Any) -> Any:
        text = super().clean(value) or ""
        limits, problems = parse_user_limits_text(text)
        if problems:
            raise forms.ValidationError([p.message for p in problems])
        return limits


class TreeNodeForm(forms.Form):
    """Common part of the queue and quota group forms: name, parent, version, and the resource matrix."""

    LISTS: tuple[str, ...] = ()
    TABLE: tuple[treefields.TreeField, ...] = ()  # the tree kind's fields (``engine.treefields``)
    # kept as typed: a name with whitespace around it is refused at the field, never trimmed (core.names)
    name = forms.CharField(max_length=253, strip=False, help_text="Lowercase letters, digits and '-' (a DNS label).")
    NAME: tuple[str, bool] = ("name", False)  # how the name is called in a refusal, and whether it is a subdomain
    parent = forms.ChoiceField(help_text="Moving a node moves its whole subtree.")
    version = forms.IntegerField(widget=forms.HiddenInput, required=False)
    extra_resource = forms.CharField(
        required=False,
        max_length=253,
        label="Add a resource",
        help_text="e.g. nvidia.com/gpu",
        widget=forms.TextInput(attrs={"placeholder": "add a resource…"}),
    )

    def __init__(self, *args: Any, instance: Any = None, parents: Iterable[str] = (), **kwargs: Any) -> None:
        self.instance = instance
        lists = {
            lst: (getattr(instance, lst, None) or ResourceList()) if instance else ResourceList() for lst in self.LISTS
        }
        self.resources = known_resources(*lists.values())
        initial = kwargs.pop("initial", None) or {}
        if instance is not None:
            initial.setdefault("name", instance.name)
            initial.setdefault("parent", instance.parent.name if instance.parent_id else "")
            initial.setdefault("version", instance.version)
            for f in self._scalars():
                initial.setdefault(f.name, getattr(instance, f.name))
            for lst, rl in lists.items():
                for r, amount in rl.items():
                    initial.setdefault(_cell(lst, r), format_in_unit(amount, r))  # read back as it shows
        super().__init__(*args, initial=initial, **kwargs)
        untrimmed(self.fields["name"], self.NAME[0], subdomain=self.NAME[1])
        self.generated = [f for f in self._scalars() if f.name not in self.fields]
        for f in self.generated:
            self.fields[f.name] = _form_field(f)
        self.fields["parent"].choices = [(p, p) for p in parents]
        for lst in self.LISTS:
            for r in [*self.resources, EXTRA]:
                self.fields[_cell(lst, r)] = forms.CharField(
                    required=False,
                    max_length=64,
                    label=f"{LIST_LABELS[lst]} of {r} ({units.unit_of(r)[1]})"
                    if r != EXTRA
                    else f"{LIST_LABELS[lst]} of the new resource",
                )
        self.column_errors: dict[str, list[str]] = {}

    # -- the matrix -------------------------------------------------------------------------------------------
    def matrix(self) -> list[dict[str, Any]]:
        """Rows for the template: resource, unit hint and the bound field of each list."""
        rows = []
        for r in [*self.resources, EXTRA]:
            rows.append(
                {
                    "resource": r,
                    "is_new": r == EXTRA,
                    "unit": "" if r == EXTRA else units.unit_of(r)[1],
                    "cells": [self[_cell(lst, r)] for lst in self.LISTS],
                }
            )
        return rows

    MAIN_FIELDS = ("name", "parent", "weight", "priority", "min_runtime", "tree_id", "namespaces")
    FLAG_FIELDS = ("reclaimable", "is_parent", "allow_lent", "min_scale_exempt")

    def problem_count(self) -> int:
        """Every message the form shows (a field may show several), as the page counts its problems."""
        return sum(len(messages) for messages in self.errors.values())

    def _scalars(self) -> list[treefields.TreeField]:
        """The table's fields an edit sets that are not resource lists (those are the matrix's columns)."""
        return [f for f in self.TABLE if f.writable and f.kind not in treefields.LIST_KINDS]

    def main_fields(self) -> list[Any]:
        """The bound fields shown in the form's grid (name, parent, scalars; then the table's fields this form does
        not declare)."""
        named = [f for f in self.MAIN_FIELDS if f in self.fields]
        return [self[f] for f in named] + [
            self[f.name] for f in self.generated if f.kind is not treefields.FieldKind.BOOL
        ]

    def flag_fields(self) -> list[Any]:
        """The bound checkboxes."""
        named = [f for f in self.FLAG_FIELDS if f in self.fields]
        return [self[f] for f in named] + [self[f.name] for f in self.generated if f.kind is treefields.FieldKind.BOOL]

    def list_labels(self) -> list[str]:
        return [LIST_LABELS[lst] for lst in self.LISTS]

    def resource_lists(self) -> dict[str, ResourceList | None]:
        """Each list parsed from its column (``None`` when every cell of an optional column is blank)."""
        data = self.cleaned_data
        extra = (data.get("extra_resource") or "").strip()
        out: dict[str, ResourceList | None] = {}
        for lst in self.LISTS:
            raw: dict[str, str] = {}
            for r in self.resources:
                value = (data.get(_cell(lst, r)) or "").strip()
                if value:
                    raw[r] = value
            new_value = (data.get(_cell(lst, EXTRA)) or "").strip()
            if new_value and not extra:
                self.add_error("extra_resource", "name the resource you are adding")
            elif extra and new_value:
                raw[extra] = new_value
            # every cell on its own, so that every bad amount and unknown name is reported at once
            parsed, problems = self._parse_cells(lst, raw, extra)
            for name in list(parsed):
                try:
                    check_known([name], lst)  # only resources some node offers (or the standard ones)
                except QuantityError as exc:
                    problems.append(exc)
            for exc in problems:
                self._attach(exc.field, exc.message, extra)
            bad = {exc.field.partition(".")[2] for exc in problems}
            kept = ResourceList({r: v for r, v in parsed.items() if r not in bad})
            out[lst] = kept if raw or lst not in OPTIONAL_LISTS else None
        return out

    def _parse_cells(self, lst: str, raw: Mapping[str, str], extra: str) -> tuple[dict[str, int], list[QuantityError]]:
        """The column's cells in base units (``engine.resources.parse_in_unit``: a bare number is in the row's unit,
        600 of memory is 600 GiB), and one error per cell that does not read, naming the node and the cell."""
        kind = self.NAME[0].removesuffix(" name")
        node = (self.cleaned_data.get("name") or (self.instance.name if self.instance is not None else "")).strip()
        where = f"{kind} {node}" if node else f"the new {kind}"
        parsed: dict[str, int] = {}
        problems: list[QuantityError] = []
        for r, text in raw.items():
            field = f"{lst}.{r}"
            shown = self[_cell(lst, r if r in self.resources else EXTRA)].initial
            try:
                check_resource_name(r, field)
                # a fractional GPU stays allowed in a cell left as it was read (the API may have set it)
                parsed[r] = parse_in_unit(text, r, field, whole_gpus=text != (shown or "").strip())
            except QuantityError as exc:
                column = LIST_LABELS[lst].lower()
                problems.append(QuantityError(exc.field, f"{where}, {column} {r}: {exc.message}"))
        return parsed, problems

    def _attach(self, field: str, message: str, extra: str = "") -> None:
        head, _, rest = field.partition(".")
        if head in self.LISTS and rest:
            key = _cell(head, EXTRA if rest == extra and rest not in self.resources else rest)
            if key in self.fields:
                self.add_error(key, message)
                return
        if head in self.LISTS:
            self.column_errors.setdefault(head, []).append(message)
            self.add_error(None, message)
            return
        if head in self.fields and head != "version":
            self.add_error(head, message)
            return
        self.add_error(None, message)

    def attach_rule_errors(self, errors: Iterable[rules.FieldError], *, besides_input_errors: bool = False) -> None:
        """Show each rule violation at the input its field path names (else at the top of the form). With
        ``besides_input_errors`` (the rules ran on a form with inputs that did not parse) a violation at an input
        that already shows an error is left out: it came from the stand-in value, not from what was typed."""
        flagged = set(self.errors) if besides_input_errors else set()
        extra = (self.cleaned_data.get("extra_resource") or "").strip() if hasattr(self, "cleaned_data") else ""
        for err in errors:
            if flagged and self._target(err.field, extra) in flagged:
                continue
            self._attach(err.field, err.message)

    def _target(self, field: str, extra: str = "") -> str:
        """The form field a rule's field path lands on (``None``'s key for the top of the form)."""
        head, _, rest = field.partition(".")
        if head in self.LISTS and rest:
            key = _cell(head, EXTRA if rest == extra and rest not in self.resources else rest)
            if key in self.fields:
                return key
        if head in self.fields and head != "version":
            return head
        return "__all__"

    def cleaned(self, key: str, fallback: Any) -> Any:
        """A cleaned value, or ``fallback`` when that input did not parse (so that the rules can still check
        the rest of the form, and every problem is reported at once)."""
        data = getattr(self, "cleaned_data", {})
        return data.get(key, fallback)

    def service_data(self) -> dict[str, Any]:
        """The cleaned form as the ``data`` of ``quotas.services`` (after ``is_valid``; inputs that did not
        parse stand at the instance's value or the default, and already carry their error)."""
        current = self.instance
        name = (
            self.cleaned("name", None)
            or (self.data.get("name") or "").strip()[:63]
            or (current.name if current is not None else "unnamed")
        )
        parent_now = current.parent.name if current is not None and current.parent_id else "root"
        data: dict[str, Any] = {"name": name, "parent": self.cleaned("parent", parent_now) or None}
        data.update(self.resource_lists())
        for f in self._scalars():
            now = getattr(current, f.name) if current is not None else f.default
            if f.kind is treefields.FieldKind.USER_LIMITS:
                now = treefields.from_stored(f, now)  # the row keeps base units (``engine.userlimits``)
            data[f.name] = self.cleaned(f.name, now)
        return data


class QueueForm(TreeNodeForm):
    """Create or edit a queue (Volcano): weight, priority, reclaimable, capability / deserved / guarantee."""

    LISTS = QUEUE_LISTS
    TABLE = treefields.QUEUE_FIELDS
    NAME = ("queue name", False)
    weight = forms.IntegerField(initial=1, help_text="1..65535: the queue's share among its siblings.")
    priority = forms.IntegerField(initial=0, min_value=0, help_text="Higher queues are served first.")
    reclaimable = forms.BooleanField(
        required=False, initial=True, help_text="Others may reclaim what it borrowed beyond its deserved."
    )
    min_runtime = forms.IntegerField(
        required=False,
        label="Minimum runtime (seconds)",
        help_text="A pod is not reclaimed or preempted this long after it starts (unless by a higher priority); "
        "empty: the parent's, else the policy's.",
    )

    def __init__(self, *args: Any, instance: Queue | None = None, **kwargs: Any) -> None:
        parents = list(Queue.objects.exclude(pk=instance.pk if instance else None).values_list("name", flat=True))
        if instance is None:
            kwargs.setdefault("initial", {}).setdefault("parent", "root")
        super().__init__(*args, instance=instance, parents=parents, **kwargs)
        if instance is not None and instance.parent_id is None:
            self.fields["parent"].choices = [("", "(none: the root)")]
            self.fields["parent"].required = False


class QuotaGroupForm(TreeNodeForm):
    """Create or edit an elastic quota group (Koordinator): min / max / shared weight, parent flag, lending."""

    LISTS = GROUP_LISTS
    TABLE = treefields.QUOTA_GROUP_FIELDS
    NAME = ("quota group name", True)
    is_parent = forms.BooleanField(required=False, label="Parent group", help_text="Has child groups, no pods.")
    allow_lent = forms.BooleanField(
        required=False,
        initial=True,
        label="Lends its unused min",
        help_text="Siblings may borrow what it leaves unused.",
    )
    min_scale_exempt = forms.BooleanField(
        required=False, label="Keep min when scaling", help_text="Its min is not scaled down when the parent shrinks."
    )
    tree_id = forms.CharField(required=False, max_length=63, label="Tree id")
    namespaces = forms.CharField(
        required=False,
        label="Namespaces",
        help_text="Comma-separated; their pods count against this group.",
    )

    def __init__(self, *args: Any, instance: QuotaGroup | None = None, **kwargs: Any) -> None:
        parents = list(
            QuotaGroup.objects.filter(is_parent=True)
            .exclude(pk=instance.pk if instance else None)
            .values_list("name", flat=True)
        )
        initial = kwargs.setdefault("initial", {})
        if instance is not None:
            initial.setdefault("namespaces", ", ".join(sorted(instance.namespaces.values_list("name", flat=True))))
        else:
            initial.setdefault("parent", "root")
        super().__init__(*args, instance=instance, parents=parents, **kwargs)
        if instance is not None and instance.parent_id is None:
            self.fields["parent"].choices = [("", "(none: a tree root)")]
            self.fields["parent"].required = False

    def clean_namespaces(self) -> list[str]:
        raw = self.cleaned_data.get("namespaces") or ""
        names = [n.strip() for n in raw.split(",") if n.strip()]
        for name in names:
            for err in rules.validate_dns_label(name, what="namespace name"):
                raise forms.ValidationError(err.message)
        if len(set(names)) != len(names):
            raise forms.ValidationError("each namespace may be listed once")
        return names

    def service_data(self) -> dict[str, Any]:
        data = super().service_data()
        instance = self.instance
        current = sorted(instance.namespaces.values_list("name", flat=True)) if instance else []
        names = self.cleaned("namespaces", current)
        if names != current:
            data["namespaces"] = names
        return data


class NamespaceWeightForm(forms.Form):
    """A namespace's weight inside its queues (seed 000), with the version it was read at."""

    weight = forms.IntegerField(min_value=1, max_value=2**31 - 1, help_text="≥ 1; higher gets more inside a queue.")
    version = forms.IntegerField(widget=forms.HiddenInput)

    def __init__(self, *args: Any, instance: Namespace | None = None, **kwargs: Any) -> None:
        self.instance = instance
        if instance is not None:
            kwargs.setdefault("initial", {"weight": instance.weight, "version": instance.version})
        super().__init__(*args, **kwargs)


class DeleteForm(forms.Form):
    """Delete a node; ``cascade``/``force`` as the API's query parameters (queues only)."""

    version = forms.IntegerField(widget=forms.HiddenInput)
    cascade = forms.BooleanField(required=False, label="Also delete its child queues")
    force = forms.BooleanField(required=False, label="Also delete the jobs and pods inside")


class VersionForm(forms.Form):
    """Just the version a button was rendered at (open / close)."""

    version = forms.IntegerField(widget=forms.HiddenInput)
