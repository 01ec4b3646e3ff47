"""Leads see their scope (issue 30, item 3) on the pages of the demo organisation: a department lead's team page puts
its teams side by side and opens each team's page, not another department's (a 404 with a sentence); the demo's
``lab`` cluster has fairness over time on, so its team pages say what past usage does to each team's weight, and the
default cluster's do not."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from frontend.presenters.units import human
from planning.values_api import cached_values

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo() -> None:
    call_command("load_demo", stdout=StringIO())


def _as(username: str) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.get(username=username))
    return client


def _section(html: str, testid: str) -> str:
    start = html.index(f'data-testid="{testid}"')
    return html[start : html.index("</tbody>", start)]


def test_a_department_lead_sees_its_teams_side_by_side(demo: None) -> None:
    html = _as("research-lead").get("/team/research-dept/").content.decode()
    assert 'data-testid="department"' in html and "Teams of the department" in html
    shown = re.findall(r'data-testid="department-team-([\w-]+)"', html)
    assert shown == ["ml-research", "nlp", "vision"]  # its teams, by name; no other department's
    _, values = cached_values("default")
    nlp = _section(html, "department-team-nlp")
    for resource in ("cpu", "memory", "nvidia.com/gpu"):  # amounts as people read them: cores, GiB, GPUs
        amount = values.queues.get("nlp").deserved.get(resource, 0)
        if amount:
            cell = f'data-testid="department-nlp-deserved-{resource}"><strong>{human(amount, resource)}</strong>'
            assert cell in nlp, resource
    assert ">1 waiting job<" in nlp and ">0 evictions<" in nlp
    assert ">2 waiting jobs<" in _section(html, "department-team-ml-research")
    assert "/audit/?team=research-dept" in html  # the audit of its subtree is one click away
    assert not re.search(r"\d{7,}", _section(html, "department-team-ml-research"))  # no base units


def test_a_department_lead_opens_its_teams_pages_and_no_other_departments(demo: None) -> None:
    lead = _as("research-lead")
    assert lead.get("/team/nlp/").status_code == 200
    refused = lead.get("/team/platform/")
    assert refused.status_code == 404
    assert "There is no team named platform whose page you may read." in refused.content.decode()
    assert _as("engineering-lead").get("/team/research-dept/").status_code == 404
    assert _as("nlp-lead").get("/team/research-dept/").status_code == 404
    # a team with no team below it has no department section
    assert 'data-testid="department"' not in _as("nlp-lead").get("/team/nlp/").content.decode()


def test_the_demo_lab_cluster_has_fairness_over_time_on_and_the_team_page_says_so(demo: None) -> None:
    from engine.policy.policy import Policy
    from scheduling.models import Cluster, Node, PodGroup

    lab = Cluster.objects.get(name="lab")
    policy = Policy.from_yaml(lab.scheduler_policy)
    assert lab.simulated and policy.queue_fairness().enabled and policy.quota_fairness().enabled
    assert Node.objects.filter(cluster=lab).count() == 12 and not PodGroup.objects.filter(cluster=lab).exists()
    default = Cluster.objects.get(name="default")
    assert not Policy.from_yaml(default.scheduler_policy).queue_fairness().enabled  # the default is as it was
    lead = _as("nlp-lead")
    on = lead.get("/team/nlp/?cluster=lab").content.decode()
    line = re.search(r'data-testid="past-usage-quota-nlp"[^>]*>([^<]*)<', on)
    assert line is not None
    assert line.group(1) == (
        "Fairness over time: Your team has no past usage recorded over the last 1 day (recent use counts most: use "
        "of 1 h ago counts half) yet, so its weight counts as it is."
    )
    assert 'data-testid="past-usage-queue-nlp"' in on
    off = lead.get("/team/nlp/?cluster=default").content.decode()
    assert "past-usage-" not in off and "Fairness over time" not in off
