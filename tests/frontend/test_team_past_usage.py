"""The team page's past-usage line (issue 30, item 3): with fairness over time on, each of the team's queues and quota
groups says what the team used against its share and what that does to its weight now; with it off, nothing."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from django.utils import timezone

from engine.policy.policy import Policy, default_policy_with
from engine.usage import PastShare
from frontend.presenters.past_usage import sentence
from quotas.models import Queue, QuotaGroup
from scheduling.models import Cluster, UsageHistory
from tests.api.test_whatif import _admin_token, cluster  # noqa: F401  (the fixtures: q1, q2 each asking 10 of 16 cpu, built once per module)

FAIR = {"name": "proportion", "arguments": {"fairnessOverTime": True}}


def _team_page(switch_on: bool) -> str:
    """q1 and g1 used 1.8x their share over the window, q2 and g2 half of theirs; team t1 owns q1 and g1."""
    default = Cluster.objects.get(name="default")
    if switch_on:
        policy = default_policy_with(FAIR).to_dict()
        policy["tiers"][1]["plugins"].append({"name": "elasticquota", "arguments": {"fairnessOverTime": True}})
        default.scheduler_policy = Policy.from_dict(policy).to_yaml()
        default.save()
    UsageHistory.objects.create(
        cluster=default,
        updated=timezone.now(),
        nodes={"queue/q1": [18, 10], "queue/q2": [5, 10], "quota/g1": [18, 10], "quota/g2": [5, 10]},
    )
    team = Group.objects.create(name="t1")
    Queue.objects.get(name="q1").teams.add(team)
    QuotaGroup.objects.get(name="g1").teams.add(team)
    lead = get_user_model().objects.create_user("t1-lead")
    lead.groups.add(team)
    client = Client()
    client.force_login(lead)
    response = client.get("/team/t1/")
    assert response.status_code == 200
    return response.content.decode()


def test_the_team_page_says_what_past_usage_does_to_the_weight(cluster: Any) -> None:  # noqa: F811
    page = _team_page(switch_on=True)
    memory = "over the last 7 days (recent use counts most: use of 4 h ago counts half)"
    # weight 1 / 1.8 against 1 / 0.5 (the explain's numbers: surplus share 0.22)
    queue = (
        f"Fairness over time: Your team used 1.8\u00d7 its share {memory}, so its weight of 1 counts as 0.56 when the "
        "surplus above the guarantees is split: 22 % of that surplus is its part."
    )
    assert queue in page
    assert 'data-testid="past-usage-queue-q1" data-past-usage-ratio="1.8"' in page
    # a quota group's shared weight is an amount (its max, 16 cores): 16 / 1.8 = 8.89 cores
    group = (
        f"Fairness over time: Your team used 1.8\u00d7 its share {memory}, so its cpu weight of 16 cores counts as "
        "8.89 cores when the surplus above the guarantees is split: 22 % of that surplus is its part."
    )
    assert group in page


def test_without_fairness_over_time_the_team_page_has_no_such_line(cluster: Any) -> None:  # noqa: F811
    page = _team_page(switch_on=False)
    assert "past-usage-" not in page and "Fairness over time" not in page


@pytest.mark.parametrize(
    ("share", "expected"),
    [
        (
            PastShare(2, Fraction(15), 200, Fraction(1, 10), 86400.0),
            "Team a used 15\u00d7 its share over the last 1 day, counted as 10\u00d7, so its weight of 2 counts as "
            "0.2 when the surplus above the guarantees is split: 10 % of that surplus is its part.",
        ),
        (
            PastShare(1, Fraction(2), 1, None, 86400.0),
            "Team a used 2\u00d7 its share over the last 1 day, so it goes after queues of equal share that used "
            "less, and reclaim takes from it before them.",
        ),
        (
            PastShare(1, Fraction(1, 2), 1, None, 86400.0),
            "Team a used 0.5\u00d7 its share over the last 1 day, so it goes before queues of equal share that used "
            "more, and reclaim takes from it after them.",
        ),
        (
            PastShare(1, None, 1, Fraction(1, 2), 7 * 86400.0),
            "Team a has no past usage recorded over the last 7 days yet, so its weight counts as it is.",
        ),
    ],
)
def test_the_sentence_reads_each_case(share: PastShare, expected: str) -> None:
    assert sentence(share, "Team a") == expected
