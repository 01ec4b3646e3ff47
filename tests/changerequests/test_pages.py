"""The change request pages: the form from the team page (pre-filled, the what-if before submitting), the list, the
review page with approve and reject, and the node's history naming the requester and the approver."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core import mail
from django.test import Client

from changerequests.models import ChangeRequest
from quotas.models import Queue

pytestmark = pytest.mark.django_db
GPU = "nvidia.com/gpu"


def login(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password="pw")
    return client


def form_values(html: str) -> dict[str, str]:
    return dict(re.findall(r'name="([^"]+)" value="([^"]*)"', html))


def test_request_from_the_team_page_preview_submit_review_approve(
    people: dict[str, Any], django_capture_on_commit_callbacks: Any
) -> None:
    lead = login("nlp-lead")
    team = lead.get("/team/nlp/").content.decode()
    assert 'href="/requests/new/?node=queue:nlp"' in team
    page = lead.get("/requests/new/?node=queue:nlp")
    assert page.status_code == 200
    values = form_values(page.content.decode())
    assert (
        values[f"guarantee__{GPU}"] == "2" and values["deserved__cpu"] == "32" and values["deserved__memory"] == "128Gi"
    )
    assert "Submit request" not in page.content.decode()  # the what-if comes first
    # each row names its resource once, then its unit (it read "cpu cpu (cores)")
    assert '<th scope="row">cpu <span class="muted small">cores</span></th>' in page.content.decode()

    values.update({f"guarantee__{GPU}": "6", "reason": "two interns", "action": "preview"})
    values.pop("csrfmiddlewaretoken", None)
    preview = lead.post("/requests/new/", values)
    html = preview.content.decode()
    assert preview.status_code == 200, html
    assert 'id="request-whatif"' in html and "Submit request" in html
    assert re.search(r"queue nlp</td><td>guarantee</td><td>[^<]*2[^<]*</td><td>[^<]*6", html), html
    assert ChangeRequest.objects.count() == 0

    values.update({"action": "submit", "previewed": form_values(html)["previewed"]})
    with django_capture_on_commit_callbacks(execute=True):
        done = lead.post("/requests/new/", values)
    req = ChangeRequest.objects.get()
    assert done.status_code == 302 and done["Location"] == f"/requests/{req.pk}/"
    assert req.changes == [{"op": "update", "kind": "queue", "name": "nlp", "spec": {"guarantee": {GPU: "6"}}}]
    assert req.reason == "two interns" and len(mail.outbox) == 1
    own = lead.get(f"/requests/{req.pk}/").content.decode()
    assert 'id="withdraw"' in own and 'id="approve"' not in own

    boss = login("research-lead")
    listing = boss.get("/requests/").content.decode()
    assert f'href="/requests/{req.pk}/"' in listing.split('id="open-requests"')[0]  # under "To review"
    review = boss.get(f"/requests/{req.pk}/").content.decode()
    assert 'id="approve"' in review and 'id="reject"' in review and "guarantee" in review
    with django_capture_on_commit_callbacks(execute=True):
        r = boss.post(f"/requests/{req.pk}/approve/", {"comment": "fine"})
    assert r.status_code == 302
    req.refresh_from_db()
    assert req.status == "applied" and int(Queue.objects.get(name="nlp").guarantee[GPU]) == 6000
    history = boss.get("/history/queues/nlp/").content.decode()
    assert f"change request #{req.pk}: requested by nlp-lead, approved by research-lead" in history
    steps = boss.get(f"/requests/{req.pk}/").content.decode().split('id="request-steps"')[1]
    assert "filed by nlp-lead" in steps and "applied by research-lead" in steps


def test_a_new_child_from_the_form(people: dict[str, Any]) -> None:
    lead = login("nlp-lead")
    values = {"node": "queue:nlp", "child": "nlp-interns", "deserved__cpu": "4", "weight": "1", "action": "preview"}
    html = lead.post("/requests/new/", values).content.decode()
    assert "queue nlp-interns" in html and "added" in html
    values.update({"action": "submit", "previewed": form_values(html)["previewed"]})
    lead.post("/requests/new/", values)
    req = ChangeRequest.objects.get()
    assert req.changes[0]["op"] == "create" and req.changes[0]["spec"]["parent"] == "nlp"


def test_the_form_says_what_is_wrong(people: dict[str, Any]) -> None:
    lead = login("nlp-lead")
    r = lead.post("/requests/new/", {"node": "queue:nlp", f"guarantee__{GPU}": "0.5", "action": "preview"})
    assert r.status_code == 400 and "whole" in r.content.decode().lower()
    r = lead.post(
        "/requests/new/",
        {
            "node": "queue:nlp",
            "action": "preview",
            f"guarantee__{GPU}": "2",
            "deserved__cpu": "32",
            "deserved__memory": "128Gi",
            f"deserved__{GPU}": "8",
            "weight": "1",
        },
    )
    assert r.status_code == 400 and "Nothing differs" in r.content.decode()
    # a submit without the preview of the same content only previews
    values = form_values(lead.get("/requests/new/?node=queue:nlp").content.decode())
    values.pop("csrfmiddlewaretoken", None)
    values.update({f"guarantee__{GPU}": "6", "action": "submit", "previewed": "x"})
    r = lead.post("/requests/new/", values)
    assert r.status_code == 200 and 'id="request-whatif"' in r.content.decode() and ChangeRequest.objects.count() == 0
    # a node outside the lead's subtree is not offered, and asking for it is a 404
    assert "queue:vision" not in lead.get("/requests/new/").content.decode()
    assert lead.get("/requests/new/?node=queue:vision").status_code == 404


def test_others_cannot_open_or_decide(people: dict[str, Any], clients: dict[str, Any]) -> None:
    from tests.changerequests.conftest import NLP_PLUS_4

    filed = clients["nlp-lead"].post("/api/v1/change-requests/", {"changes": NLP_PLUS_4}, format="json").json()
    other = login("operations-lead")
    assert other.get(f"/requests/{filed['id']}/").status_code == 404
    assert other.post(f"/requests/{filed['id']}/approve/", {}).status_code == 404
    lead = login("nlp-lead")
    lead.post(f"/requests/{filed['id']}/approve/", {})  # the requester's own: refused with a message
    assert ChangeRequest.objects.get().status == "open"
    r = login("research-lead").post(f"/requests/{filed['id']}/reject/", {"comment": ""})
    assert r.status_code == 302 and ChangeRequest.objects.get().status == "open"  # a reason is required
    login("research-lead").post(f"/requests/{filed['id']}/reject/", {"comment": "no"})
    assert ChangeRequest.objects.get().status == "rejected"


def test_the_approver_makes_room_on_the_page_with_amended_changes(
    people: dict[str, Any], django_capture_on_commit_callbacks: Any
) -> None:
    """A request its parent has no room for: the department lead's page opens "Approve with amended changes" with
    the request's changes as YAML; a list that is no YAML, or no list, or reaches above the approver applies nothing
    and says why; the request plus the room taken from a sibling applies at once (in the browser, not only the API)."""
    import yaml

    from changerequests import services

    changes = [{"op": "update", "kind": "queue", "name": "nlp", "spec": {"guarantee": {GPU: "8"}}}]
    req = services.file_request(people["nlp-lead"], changes)
    assert req.needs_room
    boss = login("research-lead")
    page = boss.get(f"/requests/{req.pk}/").content.decode()
    assert '<details id="request-amend" open>' in page
    shown = re.search(r'<textarea id="changes" name="changes"[^>]*>(.*?)</textarea>', page, re.S)
    assert shown is not None and yaml.safe_load(shown.group(1).replace("&quot;", '"').replace("&#x27;", "'")) == changes
    url = f"/requests/{req.pk}/approve/"
    for text, said in (
        ("- {op: update", "Not applied: changes: not YAML: while parsing a flow mapping"),  # and where it broke
        ("op: update", "Not applied: changes: write a list of changes"),
        ("- &a {op: update}\n- *a", "anchors and aliases (&amp; and *) are not read here"),  # no alias bombs
        ("[" * 200 + "]" * 200, "nested more than"),  # the depth limit of every YAML input
    ):
        answer = boss.post(url, {"amend": "1", "changes": text}, follow=True).content.decode()
        assert said in answer, answer
    above = yaml.safe_dump([{"op": "update", "kind": "queue", "name": "research", "spec": {"weight": 9}}])
    answer = boss.post(url, {"amend": "1", "changes": above}, follow=True).content.decode()
    assert "You may not approve this request" in answer and Queue.objects.get(name="research").weight == 1
    # a plain approve ignores the box: the request as filed, which still does not fit
    answer = boss.post(url, {"changes": above}, follow=True).content.decode()
    assert "Not applied:" in answer and ChangeRequest.objects.get(pk=req.pk).status == "open"
    room = [{"op": "update", "kind": "queue", "name": "vision", "spec": {"guarantee": {}}}, *changes]
    with django_capture_on_commit_callbacks(execute=True):
        done = boss.post(url, {"amend": "1", "changes": yaml.safe_dump(room), "comment": "from vision"})
    assert done.status_code == 302
    req.refresh_from_db()
    assert req.status == "applied" and "amended by the approver" in req.outcome
    assert int(Queue.objects.get(name="nlp").guarantee[GPU]) == 8000 and not Queue.objects.get(name="vision").guarantee
    assert 'id="request-amend"' not in boss.get(f"/requests/{req.pk}/").content.decode()  # decided: no form
