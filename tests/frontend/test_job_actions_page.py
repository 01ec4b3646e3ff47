"""The job page's actions: the Suspend / Resume / Requeue / Delete buttons (POST forms with their CSRF token, delete
behind a confirmation) appear only for admins and the job's team, and work; the YAML button gives the manifests."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from django.test import Client

from scheduling.models import PodGroup, RemovedJob
from tests.frontend import builders as b
from tests.frontend.conftest import login
from tests.frontend.job_builders import job_story

URL = "/jobs/x-ns/eval/"


@pytest.fixture
def story(lending: None) -> PodGroup:
    """x-ns/eval (queue xq, x-team's, lead-x) waits; y-team (lead-y) is another team."""
    b.user("x-dev", teams=["x-team"])
    return job_story()


def _buttons(html: str) -> set[str]:
    names = ("job-suspend", "job-resume", "job-requeue", "job-delete-confirm")
    return {n for n in names if f'data-testid="{n}"' in html}


def test_the_buttons_appear_only_for_those_who_may_act(client: Any, story: PodGroup) -> None:
    for user in ("boss", "lead-x", "x-dev"):
        if user == "boss":
            b.user("boss", staff=True)
        html = login(Client(), user).get(URL).content.decode()
        assert _buttons(html) == {"job-suspend", "job-requeue", "job-delete-confirm"}, user
        assert "csrfmiddlewaretoken" in html and 'data-testid="job-yaml"' in html
    # another team: not even the page; a posted action is refused with a sentence, nothing changes
    other = login(Client(), "lead-y")
    assert other.get(URL).status_code == 403
    r = other.post(URL + "suspend/")
    assert r.status_code == 403
    assert "lead-y may not act on job x-ns/eval" in r.content.decode()
    story.refresh_from_db()
    assert story.suspended_at is None


def test_the_buttons_work_and_say_what_they_did(story: PodGroup) -> None:
    lead = login(Client(enforce_csrf_checks=True), "lead-x")
    page = lead.get(URL)
    token = page.cookies["csrftoken"].value
    assert lead.post(URL + "suspend/").status_code == 403  # no CSRF token: refused
    r = lead.post(URL + "suspend/", {"csrfmiddlewaretoken": token}, follow=True)
    assert r.status_code == 200
    html = r.content.decode()
    assert "Job x-ns/eval: suspended by lead-x" in html
    assert _buttons(html) == {"job-resume", "job-delete-confirm"}
    assert 'data-testid="job-suspended"' in html and "Suspended by lead-x" in html
    r = lead.post(URL + "suspend/", {"csrfmiddlewaretoken": token}, follow=True)
    assert "is suspended already (by lead-x" in r.content.decode()
    r = lead.post(URL + "resume/", {"csrfmiddlewaretoken": token}, follow=True)
    assert _buttons(r.content.decode()) == {"job-suspend", "job-requeue", "job-delete-confirm"}
    assert lead.get(URL + "resume/").status_code == 405
    assert lead.post(URL + "explode/", {"csrfmiddlewaretoken": token}).status_code == 404
    r = lead.post(URL + "delete/", {"csrfmiddlewaretoken": token}, follow=True)
    assert r.redirect_chain[-1][0] == "/jobs/" and "Job x-ns/eval: job x-ns/eval deleted by lead-x" in (
        r.content.decode()
    )
    assert not PodGroup.objects.filter(pk=story.pk).exists()
    assert RemovedJob.objects.get(name="eval").reason == "deleted by lead-x (job action)"


def test_the_yaml_button_gives_the_manifests(story: PodGroup) -> None:
    r = login(Client(), "x-dev").get(URL + "yaml/")
    assert r.status_code == 200 and r["Content-Type"].startswith("text/plain")
    docs = list(yaml.safe_load_all(r.content))
    assert docs[0]["kind"] == "PodGroup" and docs[0]["metadata"] == {
        **docs[0]["metadata"], "name": "eval", "namespace": "x-ns"
    }  # fmt: skip
    assert {d["kind"] for d in docs[1:]} == {"Pod"}
    assert login(Client(), "lead-y").get(URL + "yaml/").status_code == 403
