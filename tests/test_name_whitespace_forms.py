"""Names with whitespace around them are refused, not trimmed, in the Django admin's forms and the hierarchy editor's
too, as the API refuses them (issue 25, item 7): Django's form fields stripped ``"nlp "`` into ``nlp`` silently. One
rule words the refusal (``engine.rules.name_whitespace_error``, through ``core.names``), at the field it
names; nothing is written."""

from __future__ import annotations

import copy
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.urls import reverse

from tests.conftest import ensure_migrated_rows
from tests.support.html_forms import form_data

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def _demo(module_db: Any) -> Any:
    """The demo organisation and a node agent binding, loaded once for the module (each test runs in a transaction
    of its own)."""

    def build() -> Any:
        from django.contrib.auth import get_user_model

        from scheduling.models import Cluster, NodeAgentBinding

        ensure_migrated_rows()
        call_command("load_demo", stdout=StringIO())
        cluster = Cluster.objects.get(name="default")
        NodeAgentBinding.objects.create(
            user=get_user_model().objects.get(username="nlp-lead"), cluster=cluster, node="gpu-01"
        )
        return cluster

    return module_db(build)


@pytest.fixture
def demo(_demo: Any, db: Any) -> Any:
    return copy.deepcopy(_demo)


def _instances() -> dict[str, Any]:
    from quotas.models import Namespace, Queue, QuotaGroup
    from scheduling.models import Cluster, Node, NodeAgentBinding, Pod, PodGroup

    return {
        "queue name": Queue.objects.get(name="nlp"),
        "quota group name": QuotaGroup.objects.get(name="nlp"),
        "namespace name": Namespace.objects.get(name="nlp"),
        "cluster name": Cluster.objects.get(name="default"),
        "node name": Node.objects.order_by("pk").first(),
        "node pool": Node.objects.order_by("pk").first(),
        "node agent binding node": NodeAgentBinding.objects.order_by("pk").first(),
        "pod group name": PodGroup.objects.order_by("pk").first(),
        "pod name": Pod.objects.order_by("pk").first(),
    }


@pytest.mark.parametrize(
    ("what", "field", "spaced"),
    [
        ("queue name", "name", "{} "),
        ("queue name", "name", " {}"),
        ("quota group name", "name", "{} "),
        ("namespace name", "name", "{}\t"),
        ("cluster name", "name", "{} "),
        ("node name", "name", "{} "),
        ("node pool", "pool", "{} "),
        ("node agent binding node", "node", " {}"),
        ("pod group name", "name", "{} "),
        ("pod name", "name", "{} "),
    ],
)
def test_an_admin_change_form_refuses_a_name_with_whitespace(
    admin_client: Any, demo: Any, what: str, field: str, spaced: str
) -> None:
    obj = _instances()[what]
    meta = obj._meta
    url = reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk])
    page = admin_client.get(url)
    assert page.status_code == 200
    data = form_data(page.content.decode(), f"{meta.model_name}_form")
    before = getattr(obj, field)
    typed = spaced.format(before or "pool-a")
    response = admin_client.post(url, {**data, field: typed, "_save": "Save"})
    assert response.status_code == 200  # the form again, with the error at the field
    errors = response.context["adminform"].form.errors
    assert errors[field] == [
        f"{what} {typed!r} starts or ends with whitespace; names are DNS "
        f"{'subdomains' if what in ('quota group name', 'node name', 'node agent binding node', 'pod group name', 'pod name') else 'labels'}"
        ": use only lowercase letters a-z, digits 0-9 and '-'"
    ]
    assert getattr(type(obj)._default_manager.get(pk=obj.pk), field) == before  # nothing written


def test_the_admin_add_form_refuses_nlp_with_a_space_beside_nlp(admin_client: Any, demo: Any) -> None:
    from quotas.models import Queue

    url = reverse("admin:quotas_queue_add")
    data = form_data(admin_client.get(url).content.decode(), "queue_form")
    root = str(Queue.objects.get(name="root").pk)
    response = admin_client.post(url, {**data, "name": "nlp ", "parent": root, "weight": "1", "_save": "Save"})
    assert response.status_code == 200
    assert "queue name 'nlp ' starts or ends with whitespace" in response.context["adminform"].form.errors["name"][0]
    assert Queue.objects.filter(name__startswith="nlp").count() == 1
    # the same name without the space is judged by the tree rules as before (taken)
    taken = admin_client.post(url, {**data, "name": "nlp", "parent": root, "weight": "1", "_save": "Save"})
    assert taken.status_code == 200 and "whitespace" not in str(taken.context["adminform"].form.errors)


# -- the hierarchy editor ------------------------------------------------------------------------------------


def _queue_form(name: str, version: int, parent: str = "root") -> dict[str, Any]:
    return {
        "name": name,
        "parent": parent,
        "weight": "1",
        "priority": "0",
        "reclaimable": "on",
        "version": str(version),
        "action": "save",
    }


def test_the_editor_refuses_a_new_queue_named_with_a_space(client: Any, make_user: Any, demo: Any) -> None:
    from quotas.models import Queue

    client.force_login(make_user("boss", staff=True))
    response = client.post("/edit/new/queue/", _queue_form("speech ", 0))
    assert response.status_code == 400
    assert response.context["form"].errors["name"] == [
        "queue name 'speech ' starts or ends with whitespace; names are DNS labels: use only lowercase letters a-z, "
        "digits 0-9 and '-'"
    ]
    assert not Queue.objects.filter(name__startswith="speech").exists()
    assert client.post("/edit/new/queue/", _queue_form("speech", 0)).status_code == 302  # without it: saved


def test_the_editor_refuses_renaming_a_queue_with_a_space(client: Any, make_user: Any, demo: Any) -> None:
    from quotas.models import Queue

    client.force_login(make_user("boss", staff=True))
    nlp = Queue.objects.get(name="nlp")
    response = client.post("/edit/queues/nlp/", _queue_form(" nlp", nlp.version, nlp.parent.name))
    assert response.status_code == 400
    assert "queue name ' nlp' starts or ends with whitespace" in response.context["form"].errors["name"][0]
    assert Queue.objects.get(pk=nlp.pk).version == nlp.version


def test_the_editor_refuses_a_quota_group_named_with_a_space(client: Any, make_user: Any, demo: Any) -> None:
    from quotas.models import QuotaGroup

    client.force_login(make_user("boss", staff=True))
    data = {"name": "team-b\n", "parent": "root", "version": "0", "action": "save", "max__cpu": "2", "allow_lent": "on"}
    response = client.post("/edit/new/quota/", data)
    assert response.status_code == 400
    assert response.context["form"].errors["name"] == [
        "quota group name 'team-b\\n' starts or ends with whitespace; names are DNS subdomains: use only lowercase "
        "letters a-z, digits 0-9 and '-'"
    ]
    assert not QuotaGroup.objects.filter(name__startswith="team-b").exists()
