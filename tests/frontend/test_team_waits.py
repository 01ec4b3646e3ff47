"""The team page says how long the team's jobs waited to start over the last 7 days (the audit's waits, for the
team's own nodes only): its lead reads them on its start page, with a link to the audit for other windows."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from scheduling.models import JobRecord, Pod, PodGroup
from tests.frontend import builders as b
from tests.frontend.conftest import login
from tests.frontend.job_builders import job_story

pytestmark = pytest.mark.django_db


def _record(name: str, namespace: str, queue: str, group: str, submitted: float, wait: float) -> None:
    now = timezone.now()
    JobRecord.objects.create(
        cluster=b.cluster(),
        namespace=namespace,
        name=name,
        queue=queue,
        quota_group=group,
        roles=[["", 1, {"cpu": 1000}]],
        submitted=now - timedelta(seconds=submitted),
        started=now - timedelta(seconds=submitted - wait),
        finished=now - timedelta(seconds=submitted - wait - 60),
    )


def test_the_team_page_says_how_long_its_jobs_waited(client: Any, lending: None) -> None:
    """x-team (queue xq, quota group x): x-ns/train waited a minute, a removed job ten, another removed one (three
    hours) was submitted eight days ago and is not counted, x-ns/eval has waited five minutes so far and lost a pod
    to a reclaim; y's job is y-team's, not x-team's."""
    job_story()
    now = timezone.now()
    PodGroup.objects.filter(name="train").update(created=now - timedelta(minutes=20))
    Pod.objects.filter(podgroup__name="train").update(started=now - timedelta(minutes=19))
    PodGroup.objects.filter(name="eval").update(created=now - timedelta(minutes=5))
    _record("old", "x-ns", "xq", "x", 3600, 600)
    _record("older", "x-ns", "xq", "x", 8 * 86400, 3 * 3600)
    _record("other", "y-ns", "yq", "y", 3600, 3 * 3600)
    response = login(client, "lead-x").get("/team/x-team/")
    rows = {(w["tree"], w["name"]): w for w in response.context["waits"]}
    assert set(rows) == {("queue", "xq"), ("quota group", "x")}
    for row in rows.values():
        assert (row["started"], row["waiting"], row["p50"], row["p95"]) == (2, 1, "1 min", "10 min")
        assert row["longest"] == "10 min" and row["preempted"] == 1  # eval's reclaimed pod, two minutes ago
    html = response.content.decode()
    assert 'data-testid="team-waits"' in html and "How long your jobs waited" in html
    assert 'href="/audit/?team=x-team#waits-title"' in html
    live = login(client, "lead-x").get("/team/x-team/?live=1")
    assert live.status_code == 200 and "waits" not in live.context  # not computed again by each live refresh
