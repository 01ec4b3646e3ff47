import django_filters

from quotas.choices import QueueState
from quotas.models import LocalQueue, Namespace, Queue, QuotaGroup, ResourceFlavor


class QueueFilterSet(django_filters.FilterSet):
    parent = django_filters.CharFilter(field_name="parent__name")
    state = django_filters.ChoiceFilter(choices=QueueState.choices)
    name = django_filters.CharFilter(lookup_expr="icontains")
    leaf = django_filters.BooleanFilter(field_name="children", lookup_expr="isnull", distinct=True)

    class Meta:
        model = Queue
        fields = ["parent", "state", "name", "reclaimable", "leaf"]


class QuotaGroupFilterSet(django_filters.FilterSet):
    parent = django_filters.CharFilter(field_name="parent__name")
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = QuotaGroup
        fields = ["parent", "name", "is_parent", "tree_id", "allow_lent"]


class NamespaceFilterSet(django_filters.FilterSet):
    default_queue = django_filters.CharFilter(field_name="default_queue__name")
    quota_group = django_filters.CharFilter(field_name="quota_group__name")
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = Namespace
        fields = ["default_queue", "quota_group", "name"]


class ResourceFlavorFilterSet(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = ResourceFlavor
        fields = ["name", "topology_name"]


class LocalQueueFilterSet(django_filters.FilterSet):
    namespace = django_filters.CharFilter(field_name="namespace__name")
    queue = django_filters.CharFilter(field_name="queue__name")
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = LocalQueue
        fields = ["namespace", "queue", "name"]
