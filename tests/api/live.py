"""HTTP clients for a live server with the demo loaded (the ``live`` fixture of ``tests/api/conftest.py``): real HTTP
through ``requests``, real PostgreSQL."""

from __future__ import annotations

from dataclasses import dataclass

import requests


@dataclass
class Live:
    url: str
    admin_token: str
    member_token: str  # nlp-lead: a team member (the nlp team's subtree)

    def session(self, token: str | None) -> requests.Session:
        s = requests.Session()
        if token:
            s.headers["Authorization"] = f"Token {token}"
        return s

    @property
    def admin(self) -> requests.Session:
        return self.session(self.admin_token)

    @property
    def member(self) -> requests.Session:
        return self.session(self.member_token)


def errors(response: requests.Response) -> dict[str | None, str]:
    """The error envelope as {attr: detail}, after checking its shape."""
    body = response.json()
    assert body["type"] in ("validation_error", "client_error", "server_error"), body
    return {e["attr"]: e["detail"] for e in body["errors"]}


def small_world() -> None:
    """A small organisation shaped like the demo, through the same services (and rules): departments research and
    operations with teams nlp, vision and analytics as queues and quota groups, the team's Django groups and a lead
    for nlp, namespaces <team> and <team>-dev, four 32-cpu nodes. A few hundred milliseconds, where ``load_demo``
    takes seconds."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from engine.resources import ResourceList
    from quotas import services
    from quotas.models import Namespace, Queue, QuotaGroup
    from scheduling.models import Node
    from scheduling.serializers import default_cluster

    services.ensure_builtins()  # a transactional test's flush took the migrations' built-ins with it
    cluster = default_cluster()
    cpu = ResourceList.parse({"cpu": "64", "memory": "256Gi"})
    org = {"research": ("nlp", "vision"), "operations": ("analytics",)}
    for dept, teams in org.items():
        services.save_queue(None, {"name": dept, "parent": "root", "deserved": cpu})
        services.save_quota_group(None, {"name": dept, "parent": "root", "is_parent": True, "min": cpu, "max": cpu})
        for team in teams:
            half = ResourceList.parse({"cpu": "16", "memory": "64Gi"})
            services.save_queue(None, {"name": team, "parent": dept, "deserved": half})
            services.save_quota_group(None, {"name": team, "parent": dept, "min": half, "max": cpu})
            group = Group.objects.create(name=team)
            Queue.objects.get(name=team).teams.add(group)
            QuotaGroup.objects.get(name=team).teams.add(group)
            for suffix in ("", "-dev"):
                Namespace.objects.create(
                    name=f"{team}{suffix}",
                    default_queue=Queue.objects.get(name=team),
                    quota_group=QuotaGroup.objects.get(name=team),
                )
    get_user_model().objects.create_user("nlp-lead", password="pw-nlp").groups.add(Group.objects.get(name="nlp"))
    for i in range(1, 5):
        Node.objects.create(
            cluster=cluster, name=f"cpu-{i:02d}", allocatable=ResourceList.parse({"cpu": "32", "memory": "128Gi"})
        )
