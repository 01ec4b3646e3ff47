import django_filters

from scheduling.choices import PodGroupPhase, PodStatus
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

    class Meta:
        model = PodGroup
        fields = ["cluster", "namespace", "queue", "phase", "name"]


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
    since = django_filters.IsoDateTimeFilter(field_name="started", lookup_expr="gte", label="Started at or after")
    until = django_filters.IsoDateTimeFilter(field_name="started", lookup_expr="lt", label="Started before")

    class Meta:
        model = SchedulingSession
        fields = ["cluster", "kind", "status", "since", "until"]


class EvictionFilterSet(django_filters.FilterSet):
    cluster = django_filters.CharFilter(field_name="cluster__name")
    session = django_filters.NumberFilter(field_name="session_id")
    action = django_filters.ChoiceFilter(choices=EvictionAction.choices)
    namespace = django_filters.CharFilter()
    pod = django_filters.CharFilter(field_name="pod_uid", label="namespace/name")
    preemptor = django_filters.CharFilter()
    since = django_filters.IsoDateTimeFilter(field_name="created", lookup_expr="gte")
    until = django_filters.IsoDateTimeFilter(field_name="created", lookup_expr="lt")

    class Meta:
        model = Eviction
        fields = ["cluster", "session", "action", "namespace", "pod", "preemptor", "since", "until"]


class QuotaSampleFilterSet(django_filters.FilterSet):
    cluster = django_filters.CharFilter(field_name="cluster__name")
    node = django_filters.CharFilter(field_name="name", label="Tree node (queue or quota group name)")
    kind = django_filters.ChoiceFilter(choices=SampleKind.choices)
    since = django_filters.IsoDateTimeFilter(field_name="time", lookup_expr="gte")
    until = django_filters.IsoDateTimeFilter(field_name="time", lookup_expr="lt")

    class Meta:
        model = QuotaSample
        fields = ["cluster", "node", "kind", "since", "until"]
