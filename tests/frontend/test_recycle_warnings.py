"""Issue 26 item 4 on the pages: the warning before recycling on the team page and on the page of a job whose pods
it would take (the numbers of ``scheduling.recycle_outlook``), and the runtime heading when runtime is below min."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine

from scheduling.models import Cluster, QuotaOverState
from tests.frontend import builders as b
from tests.frontend.conftest import login

T0 = datetime(2026, 11, 23, 12, 0, 0, tzinfo=UTC)
RECYCLING = """\
actions: "enqueue, allocate, backfill, reclaim"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: elasticquota
    arguments: {monitorAllQuotas: true, delayEvictTime: 120s}
"""


@pytest.fixture
def over(lending: None) -> None:
    """The lending example, then y asks for its min back (4 more pods of 10 cpu): y's runtime is 50, x's falls to
    50 while it uses 80, and a recycling pass recorded x over at T0."""
    b.job("y-ns", "burst", "yq", 4, {"cpu": "10"}, group_name="y")
    cluster = Cluster.objects.get(name="default")
    cluster.scheduler_policy = RECYCLING
    cluster.save()
    QuotaOverState.objects.create(cluster=cluster, name="x", over_since=T0)


def test_the_team_page_warns_before_recycling(client: Any, over: None) -> None:
    with time_machine.travel(T0 + timedelta(seconds=20), tick=False):
        page = login(client, "lead-x").get("/team/x-team/")
    [w] = page.context["recycling"]
    assert (w["group"], w["pods"], w["mine"], w["url"]) == ("x", 3, None, "/quotas/x/")
    assert w["sentence"] == "3 pods will be recycled in about 1 min 40 s unless usage falls to 50 cores"
    html = page.content.decode()
    assert 'data-testid="recycle-warning-x"' in html
    assert "3 pods will be recycled in about 1 min 40 s unless usage falls to 50 cores" in html
    assert "uses 80 cores, above its runtime 50 cores, for 20 s (delayEvictTime 2 min)" in html
    # the lender's team is not warned: none of its pods would go
    with time_machine.travel(T0 + timedelta(seconds=20), tick=False):
        other = login(client, "lead-y").get("/team/y-team/")
    assert other.context["recycling"] == []
    assert 'data-testid="recycle-warning' not in other.content.decode()


def test_a_team_with_queues_only_is_warned_of_its_jobs_pods(client: Any, over: None) -> None:
    """A team that owns queue xq but not quota group x: the warning of x is its too, since the pods recycling
    would take are its jobs'; counted as its own."""
    b.team("xq-team", queues=["xq"])
    b.user("lead-xq", teams=["xq-team"])
    with time_machine.travel(T0 + timedelta(seconds=20), tick=False):
        page = login(client, "lead-xq").get("/team/xq-team/")
    [w] = page.context["recycling"]
    assert (w["group"], w["pods"], w["mine"], w["whose"]) == ("x", 3, 3, "your team's")
    html = page.content.decode()
    assert "(3 of them your team&#x27;s)" in html
    assert w["url"] == "" and 'href="/quotas/x/"' not in html  # named, not linked: not the team's to open


def test_past_the_delay_it_says_any_moment_now(client: Any, over: None) -> None:
    with time_machine.travel(T0 + timedelta(seconds=150), tick=False):
        page = login(client, "lead-x").get("/team/x-team/")
    assert page.context["recycling"][0]["sentence"] == (
        "3 pods will be recycled any moment now unless usage falls to 50 cores"
    )


def test_the_page_of_a_job_whose_pods_would_go_warns_too(client: Any, over: None) -> None:
    with time_machine.travel(T0 + timedelta(seconds=20), tick=False):
        train = login(client, "lead-x").get("/jobs/x-ns/train/")
        waiting = client.get("/jobs/x-ns/eval/")
    [w] = train.context["recycling"]
    assert (w["mine"], w["whose"]) == (3, "this job's")
    html = train.content.decode()
    assert "3 pods will be recycled in about 1 min 40 s unless usage falls to 50 cores" in html
    assert "(3 of them this job&#x27;s)" in html
    assert waiting.context["recycling"] == []  # its pods hold nothing
    assert 'data-testid="recycle-warning' not in waiting.content.decode()


def test_no_warning_when_usage_is_within_the_runtime(client: Any, lending: None) -> None:
    """Without y's new demand x's runtime is 90 and it uses 80: a stale record alone warns of nothing."""
    cluster = Cluster.objects.get(name="default")
    cluster.scheduler_policy = RECYCLING
    cluster.save()
    QuotaOverState.objects.create(cluster=cluster, name="x", over_since=T0)
    with time_machine.travel(T0 + timedelta(seconds=20), tick=False):
        page = login(client, "lead-x").get("/team/x-team/")
    assert page.context["recycling"] == []
    assert 'data-testid="recycle-warning' not in page.content.decode()


def test_the_runtime_heading_says_why_runtime_is_below_min(client: Any, lending: None) -> None:
    """y asks for 10 cpu of its min 50: its runtime is 10, and the page says why rather than calling it all it may
    use; x's runtime (90) is above its min (50) and its heading is the plain one."""
    y = login(client, "lead-y").get("/team/y-team/")
    section = next(s for s in y.context["sections"] if s["kind"] == "quota")
    assert section["runtime_note"] == [
        "Runtime 10 cores is below your guaranteed min of 50 cores: your pods ask for only 10 cores, so the rest of "
        "your min is lent to the groups that need it; your runtime rises with what your pods ask, up to your min, as "
        "soon as they ask."
    ]
    html = y.content.decode()
    assert "your runtime quota is what you may use now, and it is below your min" in html
    assert 'data-testid="runtime-note-y"' in html
    x = login(client, "lead-x").get("/team/x-team/")
    section = next(s for s in x.context["sections"] if s["kind"] == "quota")
    assert section["runtime_note"] == []
    html = x.content.decode()
    assert "your runtime quota is what you may use now<" in html
    assert 'data-testid="runtime-note-x"' not in html


def test_a_scaled_down_min_is_said_so(client: Any, lending: None) -> None:
    """The node shrinks to 40 cpu: the mins (50 + 50) are scaled to 20 each; y asks 10 and lends the rest of its
    scaled min, so x's runtime is 30, below its min 50 for that reason (it asks for 100)."""
    from scheduling.models import Node

    Node.objects.filter(name="n1").update(allocatable={"cpu": 40000, "memory": 400 * 2**30})
    page = login(client, "lead-x").get("/team/x-team/")
    section = next(s for s in page.context["sections"] if s["kind"] == "quota")
    [line] = section["runtime_note"]
    assert line.startswith("Runtime 30 cores is ")
    assert (
        "below your guaranteed min of 50 cores: the mins under the cluster add up to more than the cluster has" in line
    )
    assert "yours to 20 cores; it grows back as capacity returns." in line
