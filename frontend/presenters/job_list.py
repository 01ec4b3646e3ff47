"""The jobs list: every podgroup the user may read, searched, filtered, sorted and paged.

The filters are the API's (``scheduling.filtersets.PodGroupFilterSet``: namespace, queue, phase, name) plus what
a person looks for here: a search over ``namespace/name``, the quota group its pods count against, the reason it
waits and when it was submitted. A queue or quota group filter takes the node's whole subtree (a department's
jobs are its teams'). Reads are bounded whatever the number of jobs: one count, one page of rows, one query for
the pod counts of that page, one per filter's list of choices.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any
from urllib.parse import urlencode

import django_filters
from django import forms
from django.core.paginator import Page, Paginator
from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe

from engine.vocabulary import WAITING_PHASES
from frontend.presenters import jobs
from frontend.presenters.links import job_url
from quotas.models import Namespace
from scheduling.choices import PodGroupPhase
from scheduling.filtersets import PodGroupFilterSet, UTCIsoDateTimeFilter
from scheduling.models import Cluster, Pod, PodGroup

PAGE_SIZE = 50
SELECT_LIMIT = 40  # a filter with more names than this is a text box that suggests names as one types
SUGGESTIONS = 20  # names one suggestion request returns
FILTER_LABELS = {"namespace": "namespace", "queue": "queue", "quota_group": "quota group"}
SORTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "newest": ("newest first", ("-created", "-id")),
    "oldest": ("oldest first", ("created", "id")),
    "name": ("name", ("name", "namespace__name", "id")),
    "namespace": ("namespace", ("namespace__name", "name", "id")),
    "queue": ("queue", ("queue__name", "-created", "-id")),
    "phase": ("phase", ("phase", "-created", "-id")),
    "priority": ("priority, highest first", ("-priority", "-created", "-id")),
}
DEFAULT_SORT = "newest"


class JobFilterSet(PodGroupFilterSet):
    """The API's podgroup filters, with the page's own: ``q`` (``name``, ``namespace/name`` or a part of either),
    ``quota_group`` and ``queue`` (a node and its subtree, resolved by the view: ``subtrees``), ``reason``,
    ``submitted_after``."""

    q = django_filters.CharFilter(method="search", label="Search")
    quota_group = django_filters.CharFilter(method="in_quota_group", label="Quota group")
    queue = django_filters.CharFilter(method="in_queue", label="Queue")
    reason = django_filters.CharFilter(field_name="reason", label="Reason")
    submitted_after = UTCIsoDateTimeFilter(
        field_name="created", lookup_expr="gte", label="Submitted after", widget=forms.DateTimeInput
    )
    phase = django_filters.ChoiceFilter(choices=PodGroupPhase.choices, empty_label="any phase")

    class Meta(PodGroupFilterSet.Meta):
        fields = ["namespace", "queue", "phase", "name", "q", "quota_group", "reason", "submitted_after"]

    def __init__(self, *args: Any, subtrees: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.subtrees = subtrees or {}

    def _names(self, kind: str, value: str) -> list[str]:
        tree = self.subtrees.get(kind)
        if tree is not None and value in tree.nodes:
            return tree.subtree(value)
        return [value]

    def search(self, qs: QuerySet[PodGroup], name: str, value: str) -> QuerySet[PodGroup]:
        value = value.strip()
        if not value:
            return qs
        if "/" in value:
            ns, _, job = value.partition("/")
            return qs.filter(namespace__name__icontains=ns.strip(), name__icontains=job.strip())
        return qs.filter(Q(name__icontains=value) | Q(namespace__name__icontains=value))

    def in_queue(self, qs: QuerySet[PodGroup], name: str, value: str) -> QuerySet[PodGroup]:
        return qs.filter(queue__name__in=self._names("queue", value))

    def in_quota_group(self, qs: QuerySet[PodGroup], name: str, value: str) -> QuerySet[PodGroup]:
        groups = self._names("quota", value)
        counted = Pod.objects.filter(podgroup=OuterRef("pk"), quota_group__name__in=groups)
        return qs.filter(Exists(counted) | Q(namespace__quota_group__name__in=groups))


def visible_jobs(cluster: Cluster, queues: set[str] | None, groups: set[str] | None) -> QuerySet[PodGroup]:
    """The podgroups of ``cluster`` the user may read: all for admins (``queues`` None); else those of its queues
    and those whose pods count against its quota groups."""
    qs = PodGroup.objects.filter(cluster=cluster)
    if queues is None:
        return qs
    counted = Pod.objects.filter(podgroup=OuterRef("pk"), quota_group__name__in=sorted(groups or ()))
    return qs.filter(Q(queue__name__in=sorted(queues)) | Exists(counted))


def namespace_names(base: QuerySet[PodGroup]) -> list[str]:
    """The namespaces that the readable jobs ``base`` are in, by name (one query)."""
    return list(
        Namespace.objects.filter(pk__in=base.values("namespace_id")).order_by("name").values_list("name", flat=True)
    )


def choices(
    base: QuerySet[PodGroup], names: Mapping[str, Sequence[str]], selected: Mapping[str, str]
) -> dict[str, Any]:
    """The filters' controls: the reasons that the readable jobs ``base`` have (one query) and the ``names`` of
    each name filter (``FILTER_LABELS``). A long list is a text box whose suggestions come as one types
    (``suggest``), so that a cluster of a thousand queues does not send a thousand options with every page."""
    reasons = base.exclude(reason="").order_by("reason").values_list("reason", flat=True).distinct()
    return {
        "reasons": list(reasons),
        "namespace_control": control("namespace", names["namespace"], selected.get("namespace", "")),
        "queue_control": control("queue", names["queue"], selected.get("queue", "")),
        "quota_group_control": control("quota_group", names["quota_group"], selected.get("quota_group", "")),
        "phases": [p for p, _ in PodGroupPhase.choices],
        "sorts": [(key, label) for key, (label, _) in SORTS.items()],
    }


def control(field: str, names: Sequence[str], selected: str) -> SafeString:
    """The filter's form control: a ``<select>`` of ``names`` (escaped, ``selected`` marked) when they are few,
    else a text box with an empty ``<datalist>`` that the page's script fills from ``suggest``. Built as one
    string: a list of a thousand options renders ten times faster so than through the template engine."""
    label = FILTER_LABELS[field]
    ident = f"f-{field.replace('_', '-')}"
    if len(names) <= SELECT_LIMIT:
        chosen = " selected"
        options = "".join(
            f'<option value="{escape(n)}"{chosen if n == selected else ""}>{escape(n)}</option>' for n in names
        )
        return mark_safe(f'<select id="{ident}" name="{field}"><option value="">any {label}</option>{options}</select>')
    hint = f"any {label}: type to find one of {len(names):,}"
    return mark_safe(
        f'<input id="{ident}" name="{field}" type="search" value="{escape(selected)}" list="{ident}-list" '
        f'autocomplete="off" placeholder="{escape(hint)}" data-suggest="{field}">'
        f'<datalist id="{ident}-list"></datalist>'
    )


def unknown_names(params: Mapping[str, str], names: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """An error per name filter whose value names nothing the user may read (a typed name, or an old link)."""
    errors = {}
    for field, known in names.items():
        value = params.get(field, "")
        if value and value not in set(known):
            errors[field] = f"No {FILTER_LABELS[field]} you can read is named “{value}”."
    return errors


def suggest(names: Sequence[str], typed: str, limit: int = SUGGESTIONS) -> list[str]:
    """Up to ``limit`` of ``names`` that contain ``typed`` (any case): those that start with it first, each part
    in the given order."""
    needle = typed.strip().casefold()
    starts = [n for n in names if n.casefold().startswith(needle)]
    if len(starts) >= limit:
        return starts[:limit]
    inside = [n for n in names if needle in n.casefold() and not n.casefold().startswith(needle)]
    return (starts + inside)[:limit]


def rows(page: Page, sessions_ran: bool) -> list[dict[str, Any]]:
    """The page's rows with their pod counts and quota groups (one query for all of them)."""
    items = list(page.object_list)
    ids = [r["id"] for r in items]
    counts: dict[int, dict[str, int]] = {i: {} for i in ids}
    groups: dict[int, set[str]] = {i: set() for i in ids}
    for pg_id, status, group, n in (
        Pod.objects.filter(podgroup_id__in=ids)
        .values_list("podgroup_id", "status", "quota_group__name")
        .annotate(n=Count("id"))
        .order_by()
    ):
        counts[pg_id][status] = counts[pg_id].get(status, 0) + n
        if group:
            groups[pg_id].add(group)
    now = timezone.now()
    out = []
    for r in items:
        reason, message = jobs._why(r, sessions_ran)
        by_status = counts[r["id"]]
        tally = {key: sum(by_status.get(str(s), 0) for s in statuses) for key, statuses in jobs.POD_COUNTS}
        out.append(
            {
                "key": f"{r['namespace__name']}/{r['name']}",
                "url": job_url(r["namespace__name"], r["name"]),
                "name": r["name"],
                "namespace": r["namespace__name"],
                "queue": r["queue__name"],
                "quota_groups": sorted(groups[r["id"]])
                or ([r["namespace__quota_group__name"]] if r["namespace__quota_group__name"] else []),
                "phase": r["phase"],
                "waiting": r["phase"] in WAITING_PHASES,
                "reason": reason,
                "message": message,
                "priority": r["priority"],
                "min_member": r["min_member"],
                "pods": sum(by_status.values()),
                **tally,
                "created": r["created"],
                "age": jobs._age(now - r["created"]),
            }
        )
    return out


ROW_FIELDS = (
    "id",
    "name",
    "namespace__name",
    "namespace__quota_group__name",
    "queue__name",
    "phase",
    "reason",
    "message",
    "conditions",
    "priority",
    "min_member",
    "created",
)


def paginate(qs: QuerySet[PodGroup], sort: str, number: str | None) -> Page:
    ordered = qs.order_by(*SORTS[sort][1]).values(*ROW_FIELDS)
    return Paginator(ordered, PAGE_SIZE).get_page(number)


def query_string(params: Mapping[str, Any], **changes: Any) -> str:
    """The list's query string with ``changes`` (a value of None drops the key); empty values left out."""
    merged = {k: v for k, v in params.items() if v not in ("", None)}
    for k, v in changes.items():
        if v is None:
            merged.pop(k, None)
        else:
            merged[k] = v
    return "?" + urlencode(merged) if merged else "?"
