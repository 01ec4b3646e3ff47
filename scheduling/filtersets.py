import django_filters

from scheduling.choices import PodGroupPhase, PodStatus
from scheduling.models import Node, Pod, PodGroup


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
