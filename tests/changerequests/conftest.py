"""A small organisation with GPUs for the change request tests: departments research (teams nlp and vision) and
operations (team analytics), each node a queue and a quota group, a lead per team and per department, mail
addresses, and one cluster of two GPU nodes. Built through ``quotas.services`` (the rules run)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from engine.resources import ResourceList
from tests.conftest import ensure_migrated_rows, token_client

LEADS = ("nlp-lead", "vision-lead", "research-lead", "operations-lead", "analytics-lead")


def org() -> dict[str, Any]:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from quotas import services
    from quotas.models import Namespace, Queue, QuotaGroup
    from scheduling.models import Node
    from scheduling.serializers import default_cluster

    services.ensure_builtins()
    cluster = default_cluster()
    for i in (1, 2):
        Node.objects.create(
            cluster=cluster,
            name=f"gpu-{i:02d}",
            allocatable=ResourceList.parse({"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "8"}),
        )
    dept = ResourceList.parse({"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "16"})
    team = ResourceList.parse({"cpu": "32", "memory": "128Gi", "nvidia.com/gpu": "8"})
    users = get_user_model().objects
    made: dict[str, Any] = {}
    for name, teams in (("research", ("nlp", "vision")), ("operations", ("analytics",))):
        services.save_queue(
            None,
            {
                "name": name,
                "parent": "root",
                "deserved": dept,
                "guarantee": ResourceList.parse({"nvidia.com/gpu": "8"}),
                "capability": dept,
            },
        )
        services.save_quota_group(None, {"name": name, "parent": "root", "is_parent": True, "min": dept, "max": dept})
        group = Group.objects.create(name=f"{name}-dept")
        Queue.objects.get(name=name).teams.add(group)
        QuotaGroup.objects.get(name=name).teams.add(group)
        made[f"{name}-lead"] = users.create_user(f"{name}-lead", email=f"{name}-lead@example.org", password="pw")
        made[f"{name}-lead"].groups.add(group)
        for child in teams:
            services.save_queue(
                None,
                {
                    "name": child,
                    "parent": name,
                    "deserved": team,
                    "guarantee": ResourceList.parse({"nvidia.com/gpu": "2"}),
                },
            )
            services.save_quota_group(
                None,
                {"name": child, "parent": name, "min": ResourceList.parse({"nvidia.com/gpu": "2"}), "max": team},
            )
            group = Group.objects.create(name=child)
            Queue.objects.get(name=child).teams.add(group)
            QuotaGroup.objects.get(name=child).teams.add(group)
            Namespace.objects.create(
                name=child, default_queue=Queue.objects.get(name=child), quota_group=QuotaGroup.objects.get(name=child)
            )
            made[f"{child}-lead"] = users.create_user(f"{child}-lead", email=f"{child}-lead@example.org", password="pw")
            made[f"{child}-lead"].groups.add(group)
    made["admin"] = users.create_user("boss", email="boss@example.org", password="pw", is_staff=True)
    return made


@pytest.fixture(scope="module")
def _org(module_db: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """``org()`` and a token per user, built once for each module that uses them (each test runs in a transaction of
    its own)."""

    def build() -> tuple[dict[str, Any], dict[str, str]]:
        from security.tokens import create_token

        ensure_migrated_rows()
        made = org()
        return made, {name: create_token(user, "test")[1] for name, user in made.items()}

    return module_db(build)  # type: ignore[no-any-return]


@pytest.fixture
def people(_org: tuple[dict[str, Any], dict[str, str]], db: Any) -> dict[str, Any]:
    """The users of ``org()`` by role (``nlp-lead``, ``research-lead``, …, ``admin``)."""
    return copy.deepcopy(_org[0])


class Committing:
    """An API client whose writes run their after-commit work (the mails and the webhook) as a committed request
    would: the test's own transaction never commits, so ``django_capture_on_commit_callbacks`` runs them."""

    def __init__(self, client: Any, capture: Any) -> None:
        self.client, self.capture = client, capture

    def get(self, *args: Any, **kwargs: Any) -> Any:
        return self.client.get(*args, **kwargs)

    def post(self, *args: Any, **kwargs: Any) -> Any:
        with self.capture(execute=True):
            return self.client.post(*args, **kwargs)


@pytest.fixture
def clients(
    _org: tuple[dict[str, Any], dict[str, str]], db: Any, django_capture_on_commit_callbacks: Any
) -> dict[str, Any]:
    """An API client per user of ``people`` (``Committing``)."""
    return {
        name: Committing(token_client(token), django_capture_on_commit_callbacks) for name, token in _org[1].items()
    }


NLP_PLUS_4 = [
    {"op": "update", "kind": "queue", "name": "nlp", "spec": {"guarantee": {"nvidia.com/gpu": "6"}}},
    {"op": "update", "kind": "quota_group", "name": "nlp", "spec": {"min": {"nvidia.com/gpu": "6"}}},
]
