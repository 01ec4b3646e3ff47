from datetime import UTC
from typing import Any

import django_filters
from django import forms
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django_filters.fields import IsoDateTimeField

from quotas.access import is_admin, may_read_team, team_scope
from scheduling.choices import PodGroupPhase, PodStatus
from scheduling.evictions import team_q
from scheduling.models import (
    Eviction,
    EvictionAction,
    Node,
    Pod,
    PodGroup,
    QuotaSample,
    SampleKind,
    SchedulingSession,
    SessionKind,
    SessionStatus,
)

BIGINT = 2**63 - 1


class UTCIsoDateTimeField(IsoDateTimeField):
    """An ISO 8601 moment, handed to the database in UTC: Python accepts offsets up to ±23:59 that PostgreSQL
    refuses (``+21:45`` was a 500), and a moment that leaves the calendar once in UTC is a 400."""

    def to_python(self, value: Any) -> Any:
        moment = super().to_python(value)
        if moment is None:
            return None
        try:
            return moment.astimezone(UTC)
        except OverflowError:
            raise ValidationError("This moment is out of range once converted to UTC.", code="invalid") from None


class UTCIsoDateTimeFilter(django_filters.IsoDateTimeFilter):
    field_class = UTCIsoDateTimeField


class IdFilter(django_filters.NumberFilter):
    """A row id: a whole number within PostgreSQL's bigint (a decimal such as 1e-999999 overflowed numeric: 500)."""

    field_class = forms.IntegerField

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("min_value", -BIGINT)
        kwargs.setdefault("max_value", BIGINT)
        super().__init__(*args, **kwargs)


class NodeFilterSet(django_filters.FilterSet):
    cluster = django_filters.CharFilter(field_name="cluster__name")
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = Node
        fields = ["cluster", "name", "ready", "unschedulable"]


class PodGroupFilterSet(django_filters.FilterSet):
    cluster = django_filters.CharFilter(field_name="cluster__name")
    namespace = django_filters.CharFilter(field_name="namespace__name")
    queue = django_filters.CharFilter(field_name="queue__name")
    phase = django_filters.ChoiceFilter(choices=PodGroupPhase.choices)
    name = django_filters.CharFilter(lookup_expr="icontains")
    quota_group = django_filters.CharFilter(
        field_name="pods__quota_group__name", distinct=True, label="Quota group of one of its pods"
    )

    class Meta:
        model = PodGroup
        fields = ["cluster", "namespace", "queue", "phase", "name", "quota_group"]


class PodFilterSet(django_filters.FilterSet):
    cluster = django_filters.CharFilter(field_name="cluster__name")
    namespace = django_filters.CharFilter(field_name="namespace__name")
    podgroup = django_filters.CharFilter(field_name="podgroup__name")
    queue = django_filters.CharFilter(field_name="podgroup__queue__name")
    quota_group = django_filters.CharFilter(field_name="quota_group__name")
    node = django_filters.CharFilter(field_name="node__name")
    status = django_filters.MultipleChoiceFilter(choices=PodStatus.choices)
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = Pod
        fields = ["cluster", "namespace", "podgroup", "queue", "quota_group", "node", "status", "name"]


class SchedulingSessionFilterSet(django_filters.FilterSet):
    cluster = django_filters.CharFilter(field_name="cluster__name")
    kind = django_filters.ChoiceFilter(choices=SessionKind.choices)
    status = django_filters.ChoiceFilter(choices=SessionStatus.choices)
    since = UTCIsoDateTimeFilter(field_name="started", lookup_expr="gte", label="Started at or after")
    until = UTCIsoDateTimeFilter(field_name="started", lookup_expr="lt", label="Started before")

    class Meta:
        model = SchedulingSession
        fields = ["cluster", "kind", "status", "since", "until"]


class EvictionFilterSet(django_filters.FilterSet):
    """``team`` is the team page's definition of a team's jobs (``quotas.access.team_scope``): a team you belong
    to (admins: any team); another name is a 400 that says so, the same for a team that does not exist."""

    cluster = django_filters.CharFilter(field_name="cluster__name")
    session = IdFilter(field_name="session_id")
    action = django_filters.ChoiceFilter(choices=EvictionAction.choices)
    namespace = django_filters.CharFilter()
    pod = django_filters.CharFilter(field_name="pod_uid", label="namespace/name")
    preemptor = django_filters.CharFilter()
    since = UTCIsoDateTimeFilter(field_name="created", lookup_expr="gte")
    until = UTCIsoDateTimeFilter(field_name="created", lookup_expr="lt")
    team = django_filters.CharFilter(
        method="filter_team",
        label="A team (Django group): the evictions of its jobs (its queues' subtrees, or its quota groups' when it "
        "has no queue), as its team page lists them",
    )
    queue = django_filters.CharFilter(label="The job's queue (exactly this queue)")
    quota_group = django_filters.CharFilter(label="The quota group the pod counted against (exactly this group)")
    job = django_filters.CharFilter(label="The job (podgroup) name; with namespace, one job")
    node = django_filters.CharFilter()
    removed = django_filters.BooleanFilter(
        field_name="removed_job", lookup_expr="isnull", exclude=True, label="true: of jobs since removed; false: not"
    )

    class Meta:
        model = Eviction
        fields = [
            "cluster",
            "session",
            "action",
            "namespace",
            "pod",
            "preemptor",
            "since",
            "until",
            "team",
            "queue",
            "quota_group",
            "job",
            "node",
            "removed",
        ]

    def is_valid(self) -> bool:
        valid: bool = super().is_valid()
        name = self.form.cleaned_data.get("team") if valid else None
        if name:
            team = Group.objects.filter(name=name).first()
            user = getattr(self.request, "user", None)
            if team is None or user is None or not may_read_team(user, team):
                detail = (
                    f"no team is named {name!r}"
                    if user is not None and is_admin(user)
                    else f"{name!r} is not one of your teams: you may list the evictions of your own teams only"
                )
                self.form.add_error("team", detail)
                return False
            self._team = team
        return valid

    def filter_team(self, queryset: Any, name: str, value: str) -> Any:
        return queryset.filter(team_q(team_scope(self._team))) if value else queryset


class QuotaSampleFilterSet(django_filters.FilterSet):
    cluster = django_filters.CharFilter(field_name="cluster__name")
    node = django_filters.CharFilter(field_name="name", label="Tree node (queue or quota group name)")
    kind = django_filters.ChoiceFilter(choices=SampleKind.choices)
    since = UTCIsoDateTimeFilter(field_name="time", lookup_expr="gte")
    until = UTCIsoDateTimeFilter(field_name="time", lookup_expr="lt")

    class Meta:
        model = QuotaSample
        fields = ["cluster", "node", "kind", "since", "until"]
