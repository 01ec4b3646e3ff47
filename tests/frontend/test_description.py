"""A queue's and a quota group's description (issue 27 item 2): shown on its page, edited in the editor (saved now or
staged for the what-if) and in the admin, refused over 500 characters with the rules' sentence at the field."""

from __future__ import annotations

from typing import Any

import pytest

from frontend.views.whatif import fingerprint
from quotas.models import Queue, QuotaGroup
from tests.frontend.test_editor import errors_of, org, queue_form
from tests.support.html_forms import form_data

__all__ = ["org"]  # the fixture, shared with the editor's tests

GROUP_FORM = {"name": "team-a", "parent": "dept", "allow_lent": "on", "min__cpu": "8", "max__cpu": "16"}


@pytest.mark.parametrize(("path", "model"), [("queues/nlp", Queue), ("quotas/team-a", QuotaGroup)])
def test_the_page_shows_the_description_escaped_with_its_lines(
    admin_client: Any, org: None, path: str, model: Any
) -> None:
    assert 'id="node-description"' not in admin_client.get(f"/{path}/").content.decode()  # blank: no paragraph
    model.objects.filter(name=path.split("/")[1]).update(description="Speech <b>models</b>\nsince 2024")
    page = admin_client.get(f"/{path}/").content.decode()
    assert (
        '<p class="node-description" id="node-description">Speech &lt;b&gt;models&lt;/b&gt;<br>since 2024</p>' in page
    )


def test_the_editor_saves_a_queue_description_and_shows_it_again(admin_client: Any, org: None) -> None:
    form = queue_form("nlp", 1, "research", 1, deserved_cpu="8", guarantee_cpu="2")
    saved = admin_client.post("/edit/queues/nlp/", {**form, "description": "Speech models"})
    assert saved.status_code == 302
    assert Queue.objects.get(name="nlp").description == "Speech models"
    page = admin_client.get("/edit/queues/nlp/")
    assert page.context["form"]["description"].value() == "Speech models"
    assert 'name="description"' in page.content.decode()
    kept = admin_client.post("/edit/queues/nlp/", queue_form("nlp", 2, "research", 1, deserved_cpu="8"))
    assert kept.status_code == 302 and Queue.objects.get(name="nlp").description == ""  # the form sent it blank


def test_the_editor_saves_a_quota_group_description(admin_client: Any, org: None) -> None:
    saved = admin_client.post(
        "/edit/quotas/team-a/", {**GROUP_FORM, "version": "1", "action": "save", "description": "Pool"}
    )
    assert saved.status_code == 302, errors_of(saved)
    assert QuotaGroup.objects.get(name="team-a").description == "Pool"


def test_the_editor_shows_the_rules_message_for_a_long_description(admin_client: Any, org: None) -> None:
    form = queue_form("nlp", 1, "research", 1, deserved_cpu="8", guarantee_cpu="2")
    refused = admin_client.post("/edit/queues/nlp/", {**form, "description": "x" * 501})
    assert refused.status_code == 400
    assert errors_of(refused) == {
        "description": ["queue nlp: description is 501 characters long; it may be at most 500"]
    }
    assert Queue.objects.get(name="nlp").description == ""


def test_a_staged_description_is_written_when_the_staged_changes_are_applied(admin_client: Any, org: None) -> None:
    form = {**queue_form("nlp", 1, "research", 1, deserved_cpu="8", guarantee_cpu="2"), "action": "stage"}
    staged = admin_client.post("/edit/queues/nlp/", {**form, "description": "Speech models"})
    assert staged.status_code == 302
    (entry,) = admin_client.session["fairway_staged"]
    assert entry["change"]["spec"] == {"description": "Speech models"}
    assert entry["summary"] == "edit queue nlp: description Speech models"
    assert Queue.objects.get(name="nlp").description == ""  # staged, not written
    applied = admin_client.post("/whatif/apply/", {"fingerprint": fingerprint([entry])}, follow=True)
    assert applied.status_code == 200
    assert Queue.objects.get(name="nlp").description == "Speech models"


@pytest.mark.parametrize(
    ("path", "model", "name"), [("quotas/queue", Queue, "nlp"), ("quotas/quotagroup", QuotaGroup, "team-a")]
)
def test_the_admin_saves_the_description_and_refuses_a_long_one(
    client: Any, django_user_model: Any, org: None, path: str, model: Any, name: str
) -> None:
    client.force_login(django_user_model.objects.create_superuser("walk-admin", password="pw-walk-admin"))
    obj = model.objects.get(name=name)
    url = f"/admin/{path}/{obj.pk}/change/"
    rendered = form_data(client.get(url).content.decode(), f"{model._meta.model_name}_form")
    assert "description" in rendered
    saved = client.post(url, {**rendered, "description": "Edited in the admin", "_save": "Save"})
    assert saved.status_code == 302
    assert model.objects.get(pk=obj.pk).description == "Edited in the admin"
    rendered = form_data(client.get(url).content.decode(), f"{model._meta.model_name}_form")
    refused = client.post(url, {**rendered, "description": "x" * 501, "_save": "Save"})
    assert refused.status_code == 200
    kind = "queue" if model is Queue else "quota group"
    assert f"{kind} {name}: description is 501 characters long; it may be at most 500" in refused.content.decode()
    assert model.objects.get(pk=obj.pk).description == "Edited in the admin"
