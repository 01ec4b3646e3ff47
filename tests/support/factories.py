"""factory-boy factories of the Django side: one per model the tests build, with defaults that make a valid row.

Tree nodes (queues, quota groups) are created through ``quotas.services`` so that the validation rules run and the
revision counters move as they do for the API; cluster rows (nodes, podgroups, pods) are plain rows, as a node agent
or a job submitter would write them. Resource lists are given as people write them (``{"cpu": "2"}``) and parsed.

    node = NodeFactory(name="n1", allocatable={"cpu": "8", "memory": "32Gi"})
    pg = PodGroupFactory(namespace__name="ns-a", queue=QueueFactory(name="team-a"))
    PodFactory.create_batch(3, podgroup=pg, request={"cpu": "1"})
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from engine.resources import ResourceList, parse_resource_list
from quotas import services
from quotas.models import Namespace, Queue, QuotaGroup
from scheduling.models import Cluster, Node, Pod, PodGroup

PASSWORD = "pw-factory-1"


def resources(data: Mapping[str, Any] | ResourceList | None) -> ResourceList | None:
    """A resource list from people's quantities (``None`` stays ``None``; a ResourceList is kept)."""
    if data is None or isinstance(data, ResourceList):
        return data
    return parse_resource_list(dict(data))


class ClusterFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Cluster
        django_get_or_create = ("name",)

    name = "default"


class NodeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Node

    cluster = factory.SubFactory(ClusterFactory)
    name = factory.Sequence(lambda n: f"node-{n}")
    allocatable: Any = {"cpu": "8", "memory": "32Gi", "pods": "110"}

    @classmethod
    def _create(cls, model_class: type[Node], *args: Any, **kwargs: Any) -> Node:
        kwargs["allocatable"] = resources(kwargs.get("allocatable")) or ResourceList()
        return super()._create(model_class, *args, **kwargs)


class _TreeNodeFactory(factory.Factory):
    """A tree node saved through its service (the rules run; a rule's refusal raises): each kind names its service
    and its resource-list fields."""

    class Meta:
        abstract = True

    @classmethod
    def _create(cls, model_class: type, *args: Any, **kwargs: Any) -> Any:
        save, lists = cls._service()
        data = {k: resources(v) if k in lists else v for k, v in kwargs.items() if v is not None}
        return save(None, data)

    @classmethod
    def _service(cls) -> tuple[Callable[[Any, dict[str, Any]], Any], frozenset[str]]:
        return TREE_SERVICES[cls._meta.model]


TREE_SERVICES: dict[type, tuple[Callable[[Any, dict[str, Any]], Any], frozenset[str]]] = {
    Queue: (services.save_queue, frozenset({"capability", "deserved", "guarantee"})),
    QuotaGroup: (services.save_quota_group, frozenset({"min", "max", "shared_weight"})),
}


class QueueFactory(_TreeNodeFactory):
    class Meta:
        model = Queue

    name = factory.Sequence(lambda n: f"queue-{n}")
    parent = "root"
    weight = 1


class QuotaGroupFactory(_TreeNodeFactory):
    class Meta:
        model = QuotaGroup

    name = factory.Sequence(lambda n: f"group-{n}")
    parent = "root"
    is_parent = False
    allow_lent = True


class NamespaceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Namespace
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"ns-{n}")
    weight = 1


class PodGroupFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = PodGroup

    cluster = factory.SubFactory(ClusterFactory)
    namespace = factory.SubFactory(NamespaceFactory)
    name = factory.Sequence(lambda n: f"job-{n}")
    queue = factory.LazyFunction(lambda: Queue.objects.get(name="default"))
    min_member = 1

    @classmethod
    def _create(cls, model_class: type[PodGroup], *args: Any, **kwargs: Any) -> PodGroup:
        if "min_resources" in kwargs:
            kwargs["min_resources"] = resources(kwargs["min_resources"])
        return super()._create(model_class, *args, **kwargs)


class PodFactory(factory.django.DjangoModelFactory):
    """A pod; with a podgroup, its cluster and namespace are the podgroup's."""

    class Meta:
        model = Pod

    podgroup = None
    cluster = factory.LazyAttribute(lambda o: o.podgroup.cluster if o.podgroup else ClusterFactory())
    namespace = factory.LazyAttribute(lambda o: o.podgroup.namespace if o.podgroup else NamespaceFactory())
    name = factory.Sequence(lambda n: f"pod-{n}")
    request: Any = {"cpu": "1"}

    @classmethod
    def _create(cls, model_class: type[Pod], *args: Any, **kwargs: Any) -> Pod:
        kwargs["request"] = resources(kwargs.get("request")) or ResourceList()
        return super()._create(model_class, *args, **kwargs)


class TeamFactory(factory.django.DjangoModelFactory):
    """A team: a Django group, optionally linked to the queues and quota groups it owns (by name)."""

    class Meta:
        model = Group
        django_get_or_create = ("name",)
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"team-{n}")

    @factory.post_generation
    def queues(self, create: bool, names: Any, **_: Any) -> None:
        for name in names or ():
            Queue.objects.get(name=name).teams.add(self)

    @factory.post_generation
    def groups(self, create: bool, names: Any, **_: Any) -> None:
        for name in names or ():
            QuotaGroup.objects.get(name=name).teams.add(self)


class UserFactory(factory.django.DjangoModelFactory):
    """A user with the password ``PASSWORD``, member of the teams named in ``teams``."""

    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user-{n}")
    password = PASSWORD
    is_staff = False

    @classmethod
    def _create(cls, model_class: type, *args: Any, **kwargs: Any) -> Any:
        return model_class.objects.create_user(*args, **kwargs)

    @factory.post_generation
    def teams(self, create: bool, names: Any, **_: Any) -> None:
        for name in names or ():
            self.groups.add(TeamFactory(name=name))
