"""Every model registered in the Django admin: its add and change forms, posted back as rendered (unchanged) and with
a change, as a superuser through the test client. No answer is a server error, and a change lands in the database.

A model registered without an entry in ``CHANGES`` (and whose admin lets a superuser change it) fails the walk:
say there how the walk changes it and how to see that the change was saved.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.contrib import admin
from django.core.management import call_command
from django.db import models
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from tests.support.html_forms import form_data

pytestmark = pytest.mark.django_db


@dataclass(frozen=True)
class Change:
    """How the walk edits one instance: ``fields`` (from the instance) over the rendered change form, and ``saved``,
    true once the database has the change. ``fields=None``: every field of the admin is read-only (only the unchanged
    save is posted)."""

    fields: Callable[[Any], dict[str, Any]] | None
    saved: Callable[[Any], bool] = lambda obj: True
    instance: Callable[[], Any] | None = None  # which one (default: the first by primary key)


@dataclass(frozen=True)
class Add:
    """How the walk fills the add form (``fields`` over the form as rendered, from the world's objects)."""

    fields: Callable[[dict[str, Any]], dict[str, Any]]


def _pk(model: type[models.Model], **lookup: Any) -> str:
    return str(model._default_manager.get(**lookup).pk)


def _world() -> dict[str, Any]:
    """The demo, one session, and one row of each record the admin lists that the demo does not make."""
    from django.contrib.auth import get_user_model
    from django_celery_beat.models import ClockedSchedule, IntervalSchedule, SolarSchedule

    from quotas.models import LocalQueue, Namespace, Queue, ResourceFlavor
    from scheduling import tasks
    from scheduling.models import (
        Cluster,
        ClusterLease,
        Eviction,
        EvictionAction,
        KubeObjectProblem,
        LocalQueueUsage,
        NodeAgentBinding,
        Pod,
        QuotaOverState,
        UsageHistory,
    )

    call_command("load_demo", stdout=StringIO())
    cluster = Cluster.objects.get(name="default")
    tasks.ensure_schedules(cluster)
    assert tasks.run_session(cluster.pk) == "ran"
    now = timezone.now()
    user = get_user_model().objects.get(username="nlp-lead")
    NodeAgentBinding.objects.create(user=user, cluster=cluster, node="gpu-01")
    IntervalSchedule.objects.get_or_create(every=7, period=IntervalSchedule.SECONDS)
    ClockedSchedule.objects.create(clocked_time=now + timedelta(days=1))
    SolarSchedule.objects.create(event="sunrise", latitude=10, longitude=10)
    pod = Pod.objects.filter(cluster=cluster).first()
    Eviction.objects.create(
        cluster=cluster, pod=pod, pod_uid=str(pod), namespace=pod.namespace.name, action=EvictionAction.RECLAIM,
        created=now,
    )  # fmt: skip
    QuotaOverState.objects.create(cluster=cluster, name="nlp", over_since=now)
    UsageHistory.objects.get_or_create(cluster=cluster, defaults={"updated": now})
    ClusterLease.objects.create(cluster=cluster, key=1)
    KubeObjectProblem.objects.create(
        cluster=cluster, kind="Pod", namespace="nlp", name="bad", message="bad", first_seen=now, last_seen=now
    )
    ResourceFlavor.objects.create(name="spot", node_labels={"pool": "spot"})  # Kueue's, which the demo has none of
    local_queue = LocalQueue.objects.create(
        namespace=Namespace.objects.get(name="nlp"), name="lq-walk", queue=Queue.objects.get(name="nlp")
    )  # Kueue's too, with the usage a live session keeps
    LocalQueueUsage.objects.create(cluster=cluster, local_queue=local_queue, consumed={"cpu": 1500}, sampled=now)
    return {"cluster": cluster, "user": user}


def _adds() -> dict[str, Add]:
    from django_celery_beat.models import IntervalSchedule

    from quotas.models import Namespace, Queue, QuotaGroup

    return {
        "auth.Group": Add(lambda w: {"name": "walkers"}),
        "auth.User": Add(
            lambda w: {"username": "walker", "password1": "a-long-walk-9731", "password2": "a-long-walk-9731"}
        ),
        "django_celery_beat.PeriodicTask": Add(
            lambda w: {
                "name": "walk task",
                "regtask": "scheduling.tasks.compact_records",
                "task": "",
                "interval": _pk(IntervalSchedule, every=7, period="seconds"),
                "args": "[1]",
            }
        ),
        "django_celery_beat.ClockedSchedule": Add(
            lambda w: {"clocked_time_0": "2031-01-02", "clocked_time_1": "03:04:05"}
        ),
        "django_celery_beat.CrontabSchedule": Add(lambda w: {"minute": "17", "hour": "3"}),
        "django_celery_beat.SolarSchedule": Add(lambda w: {"event": "sunset", "latitude": "45", "longitude": "7"}),
        "django_celery_beat.IntervalSchedule": Add(lambda w: {"every": "11", "period": "minutes"}),
        "quotas.Queue": Add(
            lambda w: {"name": "walk-q", "parent": _pk(Queue, name="root"), "weight": "2", "deserved": '{"cpu": "1"}'}
        ),
        "quotas.QuotaGroup": Add(
            lambda w: {"name": "walk-g", "parent": _pk(QuotaGroup, name="root"), "max": '{"cpu": "2"}', "min": "{}"}
        ),
        "quotas.Namespace": Add(lambda w: {"name": "walk-ns", "weight": "3", "hard": '{"cpu": "5"}'}),
        "quotas.ResourceFlavor": Add(lambda w: {"name": "walk-flavor", "node_labels": '{"pool": "walk"}'}),
        "quotas.LocalQueue": Add(
            lambda w: {
                "namespace": _pk(Namespace, name="nlp"),
                "name": "walk-lq",
                "queue": _pk(Queue, name="vision"),
                "weight": "500m",
            }
        ),
        "scheduling.Cluster": Add(lambda w: {"name": "walk-c"}),
        "scheduling.Node": Add(
            lambda w: {
                "cluster": str(w["cluster"].pk),
                "name": "walk-n",
                "allocatable": '{"cpu": "4", "memory": "8Gi"}',
            }
        ),
        "scheduling.NodeAgentBinding": Add(
            lambda w: {"user": str(w["user"].pk), "cluster": str(w["cluster"].pk), "node": "walk-n", "pool": ""}
        ),
        "scheduling.PodGroup": Add(
            lambda w: {
                "cluster": str(w["cluster"].pk),
                "namespace": _pk(Namespace, name="nlp"),
                "name": "walk-pg",
                "queue": _pk(Queue, name="nlp"),
                "min_resources": '{"cpu": "1"}',
            }
        ),
        "scheduling.Pod": Add(
            lambda w: {
                "cluster": str(w["cluster"].pk),
                "namespace": _pk(Namespace, name="nlp"),
                "name": "walk-pod",
                "request": '{"cpu": "1"}',
                "podgroup": "",
                "node": "",
            }
        ),
    }


def _changes() -> dict[str, Change]:
    from engine.resources import parse_resource_list
    from quotas.models import LocalQueue, Namespace, Queue, QuotaGroup, ResourceFlavor

    def reread(obj: Any) -> Any:
        return type(obj)._default_manager.get(pk=obj.pk)

    return {
        "auth.Group": Change(lambda o: {"name": "renamed-group"}, lambda o: reread(o).name == "renamed-group"),
        "auth.User": Change(lambda o: {"first_name": "Ada"}, lambda o: reread(o).first_name == "Ada"),
        # django-axes' records: every field is read-only
        "axes.AccessLog": Change(None),
        "axes.AccessAttempt": Change(None),
        "axes.AccessFailureLog": Change(None),
        "django_celery_beat.PeriodicTask": Change(
            lambda o: {"description": "walked"}, lambda o: reread(o).description == "walked"
        ),
        "django_celery_beat.ClockedSchedule": Change(
            lambda o: {"clocked_time_0": "2032-05-06", "clocked_time_1": "07:08:09"},
            lambda o: reread(o).clocked_time.year == 2032,
        ),
        "django_celery_beat.CrontabSchedule": Change(lambda o: {"minute": "42"}, lambda o: reread(o).minute == "42"),
        "django_celery_beat.SolarSchedule": Change(
            lambda o: {"latitude": "12.5"}, lambda o: float(reread(o).latitude) == 12.5
        ),
        "django_celery_beat.IntervalSchedule": Change(lambda o: {"every": "13"}, lambda o: reread(o).every == 13),
        "quotas.Queue": Change(
            lambda o: {"weight": "7", "guarantee": '{"cpu": "1"}'},
            lambda o: reread(o).weight == 7 and reread(o).guarantee == parse_resource_list({"cpu": "1"}),
            lambda: Queue.objects.get(name="nlp"),
        ),
        "quotas.QuotaGroup": Change(
            lambda o: {"allow_lent": ""},
            lambda o: reread(o).allow_lent is False,
            lambda: QuotaGroup.objects.get(name="nlp"),
        ),
        "quotas.Namespace": Change(
            lambda o: {"weight": "4", "hard": '{"cpu": "123"}'},
            lambda o: reread(o).weight == 4 and reread(o).hard == parse_resource_list({"cpu": "123"}),
            lambda: Namespace.objects.get(name="nlp"),
        ),
        "quotas.ResourceFlavor": Change(
            lambda o: {"node_labels": '{"pool": "changed"}'},
            lambda o: reread(o).node_labels == {"pool": "changed"},
            lambda: ResourceFlavor.objects.get(name="spot"),
        ),
        "quotas.LocalQueue": Change(
            lambda o: {"weight": "250m"},
            lambda o: reread(o).weight == "0.25",  # kept as every writer keeps it
            lambda: LocalQueue.objects.get(name="lq-walk"),
        ),
        "scheduling.Cluster": Change(lambda o: {"description": "walked"}, lambda o: reread(o).description == "walked"),
        "scheduling.Node": Change(
            lambda o: {"allocatable": '{"cpu": "3", "memory": "5Gi"}', "pool": "walk"},
            lambda o: reread(o).allocatable == parse_resource_list({"cpu": "3", "memory": "5Gi"}),
        ),
        "scheduling.NodeAgentBinding": Change(lambda o: {"node": "gpu-02"}, lambda o: reread(o).node == "gpu-02"),
        "scheduling.PodGroup": Change(
            lambda o: {"min_resources": '{"cpu": "1"}', "priority_class_name": "walked"},
            lambda o: reread(o).priority_class_name == "walked",
        ),
        "scheduling.Pod": Change(lambda o: {"task_name": "walked"}, lambda o: reread(o).task_name == "walked"),
    }


def _instance(model: type[models.Model]) -> Any:
    return model._default_manager.order_by("pk").first()


def _change_url(model: type[models.Model], obj: Any) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_change", args=[obj.pk])


def _errors(response: Any) -> str:
    """The form's error lists, for the assertion messages."""
    html = response.content.decode()
    found = re.findall(r'<ul class="errorlist[^"]*"[^>]*>(.*?)</ul>', html, re.S)
    return " | ".join(re.sub(r"<[^>]+>", "", f).strip() for f in found) or html[:1500]


def test_every_admin_form_saves_unchanged_and_changed(client: Any, api: Any) -> None:
    from django.contrib.auth import get_user_model

    world = _world()
    api(world["user"])  # an API token
    # logins' records (django-axes, off in the tests)
    with override_settings(AXES_ENABLED=True, AXES_ENABLE_ACCESS_FAILURE_LOG=True):
        client.post("/accounts/login/", {"username": "nlp-lead", "password": "demo-nlp"})
        client.post("/accounts/login/", {"username": "vision-lead", "password": "wrong"})
    client.force_login(get_user_model().objects.create_superuser("walk-admin", password="pw-walk-admin"))
    adds, changes = _adds(), _changes()
    missing: list[str] = []
    walked: list[str] = []
    for model in list(admin.site._registry):
        label = model._meta.label
        form_id = f"{model._meta.model_name}_form"
        add_url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_add")

        page = client.get(add_url)
        assert page.status_code in (200, 403), (label, "add page", page.status_code)
        if page.status_code == 200:
            rendered = form_data(page.content.decode(), form_id)
            as_rendered = client.post(add_url, {**rendered, "_save": "Save"})
            assert as_rendered.status_code in (200, 302), (label, "add as rendered", as_rendered.status_code)
            if label not in adds:
                missing.append(f"{label}: no Add entry")
            else:
                before = model._default_manager.count()
                filled = client.post(add_url, {**rendered, **adds[label].fields(world), "_save": "Save"})
                assert filled.status_code == 302, (label, "add with a change", _errors(filled))
                assert model._default_manager.count() == before + 1, label
        else:
            assert client.post(add_url, {"_save": "Save"}).status_code == 403, label

        change = changes.get(label)
        obj = change.instance() if change is not None and change.instance is not None else _instance(model)
        assert obj is not None, f"{label}: the walk's world has no instance of it; make one in _world()"
        url = _change_url(model, obj)
        page = client.get(url)
        assert page.status_code == 200, (label, "change page", page.status_code)
        if 'name="_save"' not in page.content.decode():  # a view-only page: the admin refuses a post
            assert client.post(url, {"_save": "Save"}).status_code == 403, label
            walked.append(label)
            continue
        rendered = form_data(page.content.decode(), form_id)
        unchanged = client.post(url, {**rendered, "_save": "Save"})
        assert unchanged.status_code == 302, (label, "change as rendered", _errors(unchanged))
        if change is None:
            missing.append(f"{label}: no Change entry")
            continue
        if change.fields is not None:
            page = client.get(url)  # the form again, at the version the unchanged save left
            rendered = form_data(page.content.decode(), form_id)
            changed = client.post(url, {**rendered, **change.fields(obj), "_save": "Save"})
            assert changed.status_code == 302, (label, "change", _errors(changed))
            assert change.saved(obj), f"{label}: the change is not in the database"
        walked.append(label)
    assert not missing, "models the walk does not know how to change: " + "; ".join(missing)
    assert {"quotas.Queue", "quotas.QuotaGroup", "quotas.Namespace", "scheduling.Node"} <= set(walked)


@pytest.mark.parametrize(
    ("path", "name", "field", "theirs", "mine"),
    [
        ("quotas/queue", "nlp", "weight", "5", "9"),
        ("quotas/quotagroup", "nlp", "allow_lent", "", "on"),
        ("quotas/namespace", "nlp", "weight", "5", "9"),
    ],
)
def test_a_stale_admin_form_is_refused_and_writes_nothing(
    client: Any, path: str, name: str, field: str, theirs: str, mine: str
) -> None:
    """Opened by one admin, saved meanwhile by another: the first one's save is a form error, and the row keeps the
    other admin's change (the editor's version rule, ``quotas.services.check_versions``)."""
    from django.apps import apps
    from django.contrib.auth import get_user_model
    from django.test import Client

    call_command("load_demo", stdout=StringIO())
    model = apps.get_model(*path.split("/"))
    obj = model.objects.get(name=name)
    url = f"/admin/{path}/{obj.pk}/change/"
    users = get_user_model().objects
    client.force_login(users.create_superuser("first-admin", password="pw-first"))
    other = Client()
    other.force_login(users.create_superuser("other-admin", password="pw-other"))

    opened = form_data(client.get(url).content.decode(), f"{model._meta.model_name}_form")
    assert opened["read_version"] == str(obj.version)
    meanwhile = form_data(other.get(url).content.decode(), f"{model._meta.model_name}_form")
    assert other.post(url, {**meanwhile, field: theirs, "_save": "Save"}).status_code == 302
    after_theirs = model.objects.get(pk=obj.pk)
    assert after_theirs.version == obj.version + 1

    stale = client.post(url, {**opened, field: mine, "_save": "Save"})
    assert stale.status_code == 200
    assert "it changed since this form was opened, so nothing was saved" in _errors(stale)
    now = model.objects.get(pk=obj.pk)
    assert now.version == after_theirs.version and getattr(now, field) == getattr(after_theirs, field)

    # read again, the same change saves
    fresh = form_data(client.get(url).content.decode(), f"{model._meta.model_name}_form")
    assert client.post(url, {**fresh, field: mine, "_save": "Save"}).status_code == 302
    assert model.objects.get(pk=obj.pk).version == after_theirs.version + 1


def test_the_admin_reverts_a_tree_node_to_an_earlier_version(client: Any) -> None:
    """The history's revert form carries the version the page was read at, as the change form does."""
    from django.contrib.auth import get_user_model

    from quotas.models import Queue

    call_command("load_demo", stdout=StringIO())
    client.force_login(get_user_model().objects.create_superuser("walk-admin", password="pw-walk-admin"))
    queue = Queue.objects.get(name="nlp")
    url = f"/admin/quotas/queue/{queue.pk}/change/"
    old_weight = queue.weight
    page = form_data(client.get(url).content.decode(), "queue_form")
    assert client.post(url, {**page, "weight": str(old_weight + 3), "_save": "Save"}).status_code == 302
    first = queue.history.order_by("history_date", "history_id").first()
    revert_url = f"/admin/quotas/queue/{queue.pk}/history/{first.history_id}/"
    html = client.get(revert_url).content.decode()
    page = form_data(html, re.search(r'<form [^>]*id="(\w+_form)"', html).group(1))
    reverted = client.post(revert_url, {**page, "_save": "Save"})
    assert reverted.status_code == 302, _errors(reverted)
    assert Queue.objects.get(pk=queue.pk).weight == old_weight


def test_the_resource_form_field_compares_amounts_not_texts() -> None:
    from engine.resources import parse_resource_list
    from quotas.forms import ResourceListFormField

    field = ResourceListFormField(any_name=True, required=False)
    shown = parse_resource_list({"cpu": "1", "memory": "1Gi"})
    assert not field.has_changed(shown, '{"cpu": "1000m", "memory": "1024Mi"}')
    assert field.has_changed(shown, '{"cpu": "2", "memory": "1Gi"}')
    assert field.has_changed(shown, '{"cpu": "1", "memory": "1Gi", "pods": "0"}')  # an explicit 0 is a change
    assert field.has_changed(shown, '{"cpu": "-1"}')  # an entry that does not parse
    assert not field.has_changed(None, "")
    assert field.has_changed(None, '{"cpu": "1"}')
    assert not field.has_changed('{"cpu": "1"}', '{"cpu": "1000m"}')  # a hidden initial's JSON text
