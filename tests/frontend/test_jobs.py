"""The job page and the jobs list: who may open which job, what the page says about a waiting job (its reason,
the blocking node, the evictions of its pods, its place in its queue), the list's filters, sorting and pages, and
a fixed number of queries whatever the number of jobs."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from frontend.presenters import job_list
from scheduling.models import PodGroup
from tests.frontend import builders as b
from tests.frontend.conftest import login
from tests.frontend.job_builders import job_story


@pytest.fixture
def story(lending: None) -> PodGroup:
    return job_story()


# -- the job page ------------------------------------------------------------------------------------------------


def test_a_waiting_job_says_why_who_blocks_it_and_who_took_its_pods(admin_client: Any, story: PodGroup) -> None:
    response = admin_client.get("/jobs/x-ns/eval/")
    assert response.status_code == 200
    html = response.content.decode()
    ctx = response.context
    assert ctx["job"]["reason"] == "NotEnoughResources"
    assert "quota group x runtime: insufficient cpu, requested 20, available 10" in html
    assert ctx["job"]["blocker_text"] == "quota group x (cpu, runtime)"
    # the governing path: queue root -> xq, quota group root -> x (blocking), the namespace
    path = {s["title"]: s["nodes"] for s in ctx["path"]}
    assert [n.name for n in path["Queue"]] == ["root", "xq"]
    assert [(n.name, n.blocking) for n in path["Quota group"]] == [("root", False), ("x", True)]
    assert [n.name for n in path["Namespace"]] == ["x-ns"]
    x = path["Quota group"][1]
    assert x.values[0]["resource"] == "cpu" and x.values[0]["used"] == "used 80 cores"
    assert html.count('data-testid="blocking-node"') == 1
    # the eviction: when, who took the room (job and queue), the rule
    (ev,) = ctx["evictions"]
    assert (ev["pod"], ev["by_job"], ev["by_queue"], ev["action_label"]) == ("eval-0", "y-ns/serve", "yq", "reclaim")
    assert "more than it deserves" in ev["rule"]
    assert 'href="/jobs/y-ns/serve/"' in html
    # its reasons over time, newest first
    assert [r["phase"] for r in ctx["reasons"]] == ["Pending", "Running"]
    assert ctx["reasons"][0]["blocker_text"] == "quota group x (cpu, runtime)"
    # its pods
    assert [(p["name"], p["status"], p["request"]) for p in ctx["pods"]] == [("eval-0", "Pending", "20 cores")]
    assert "1 eviction<" in html and "· 1 pod ·" in html and "1 pods" not in html


def test_the_place_in_the_queue_follows_the_engines_order(admin_client: Any, lending: None) -> None:
    """Three jobs wait in xq: the higher priority is served first (the priority plugin), then by submission."""
    b.job("x-ns", "first", "xq", 1, {"cpu": "5"}, priority=9)
    b.job("x-ns", "second", "xq", 2, {"cpu": "5"})
    place = admin_client.get("/jobs/x-ns/second/").context["place"]
    assert [r["key"] for r in place["rows"]] == ["x-ns/first", "x-ns/eval"]
    assert place["ahead_text"] == "2 jobs ahead of it"
    assert place["total"] == "25 cores"
    first = admin_client.get("/jobs/x-ns/first/")
    assert first.context["place"]["ahead_text"] == "0 jobs ahead of it: it is served first"
    assert admin_client.get("/jobs/x-ns/train/").context["place"] is None  # running: not in the order


def test_a_job_of_a_local_queue_sees_its_place_there_too(admin_client: Any, lending: None) -> None:
    """Among its LocalQueue's waiting jobs, in the same order (Kueue's positionInLocalQueue)."""
    for name in ("first", "second"):
        b.job("x-ns", name, "xq", 1, {"cpu": "5"})
        PodGroup.objects.filter(name=name).update(local_queue="lq")
    response = admin_client.get("/jobs/x-ns/second/")
    place = response.context["place"]
    assert place["ahead_text"] == "2 jobs ahead of it"
    assert (place["local_queue"], place["local_queue_position"]) == ("x-ns/lq", 2)
    assert "In its LocalQueue x-ns/lq: position 2." in response.content.decode()
    assert admin_client.get("/jobs/x-ns/eval/").context["place"]["local_queue"] is None


def test_a_gang_running_in_part_has_a_place_in_its_queue(admin_client: Any, lending: None) -> None:
    """A gang with one pod running and one to place (Unknown) is walked again by allocate: the page gives its place
    instead of "not known yet"."""
    b.job("x-ns", "half", "xq", 2, {"cpu": "5"}, running=1, on="n1", phase="Unknown")
    response = admin_client.get("/jobs/x-ns/half/")
    place = response.context["place"]
    assert place is not None and [r["key"] for r in place["rows"]] == ["x-ns/eval"]
    assert "not known yet" not in response.content.decode()


def test_a_waiting_job_sees_the_reservations_held_in_its_queue(admin_client: Any, lending: None) -> None:
    held = b.job("x-ns", "admitted", "xq", 2, {"cpu": "4"}, phase="Inqueue")
    PodGroup.objects.filter(pk=held.pk).update(min_resources={"cpu": 8000})
    response = admin_client.get("/jobs/x-ns/eval/")
    place = response.context["place"]
    assert (place["reserving_text"], place["reserved"]) == ("1 admitted job", "8 cores")
    assert "1 admitted job holds a reservation until its pods are placed: 8 cores" in response.content.decode()


@pytest.mark.parametrize(
    ("user", "path", "status"),
    [
        ("lead-x", "/jobs/x-ns/eval/", 200),  # a team lead, its own job
        ("lead-y", "/jobs/x-ns/eval/", 403),  # another team's job
        ("research-lead", "/jobs/nlp-ns/bert/", 200),  # a department lead, a job of a team below
        ("research-lead", "/jobs/x-ns/eval/", 403),
        ("lead-x", "/jobs/nlp-ns/bert/", 403),
        ("boss", "/jobs/nlp-ns/bert/", 200),  # an admin, any job
        ("boss", "/jobs/x-ns/nothing/", 404),
    ],
)
def test_who_may_open_a_job(client: Any, admin: Any, story: PodGroup, user: str, path: str, status: int) -> None:
    response = login(client, user).get(path)
    assert response.status_code == status
    if status == 403:
        assert b"belongs to another team" in response.content


def test_users_without_a_team_get_the_forbidden_page(client: Any, story: PodGroup) -> None:
    b.user("drifter")
    for path in ("/jobs/", "/jobs/x-ns/eval/"):
        response = login(client, "drifter").get(path)
        assert response.status_code == 403 and b"not linked to any team" in response.content
    assert client.logout() is None
    assert client.get("/jobs/").status_code == 302


def test_a_team_member_sees_ancestors_outside_its_subtrees_by_name_only(client: Any, story: PodGroup) -> None:
    b.queue("science")
    b.queue("vision", parent="science")
    b.namespace("v-ns", queue_name="vision")
    b.job("v-ns", "resnet", "vision", 1, {"cpu": "1"})
    b.team("vision-team", queues=["vision"])
    b.user("lead-v", teams=["vision-team"])
    response = login(client, "lead-v").get("/jobs/v-ns/resnet/")
    assert response.status_code == 200
    chain = next(s["nodes"] for s in response.context["path"] if s["title"] == "Queue")
    assert [(n.name, n.hidden, bool(n.url)) for n in chain] == [
        ("root", True, False),
        ("science", True, False),
        ("vision", False, True),
    ]


def test_every_job_row_links_to_its_page(client: Any, admin_client: Any, story: PodGroup) -> None:
    for path in ("/overview/", "/queues/xq/", "/quotas/x/"):
        assert 'href="/jobs/x-ns/eval/"' in admin_client.get(path).content.decode(), path
    assert 'href="/jobs/x-ns/eval/"' in login(client, "lead-x").get("/team/x-team/").content.decode()
    assert 'href="/jobs/"' in admin_client.get("/overview/").content.decode()  # the navigation
    # the what-if impact lists jobs by key: the filter its template uses
    from frontend.templatetags.job_links import job_url

    assert job_url("x-ns/eval") == "/jobs/x-ns/eval/" and job_url("no-slash") == ""


# -- the jobs list ----------------------------------------------------------------------------------------------


def listed(response: Any) -> list[str]:
    assert response.status_code == 200, response.content[:400]
    return [r["key"] for r in response.context["rows"]]


def test_the_list_filters_by_each_field(admin_client: Any, story: PodGroup) -> None:
    everything = listed(admin_client.get("/jobs/"))
    assert sorted(everything) == ["nlp-ns/bert", "x-ns/eval", "x-ns/train", "y-ns/serve"]
    assert listed(admin_client.get("/jobs/", {"q": "ev"})) == ["x-ns/eval"]
    assert listed(admin_client.get("/jobs/", {"q": "y-ns/ser"})) == ["y-ns/serve"]
    assert sorted(listed(admin_client.get("/jobs/", {"namespace": "x-ns"}))) == ["x-ns/eval", "x-ns/train"]
    assert listed(admin_client.get("/jobs/", {"queue": "research"})) == ["nlp-ns/bert"]  # the subtree
    assert sorted(listed(admin_client.get("/jobs/", {"quota_group": "x"}))) == ["x-ns/eval", "x-ns/train"]
    assert listed(admin_client.get("/jobs/", {"reason": "NotEnoughResources"})) == ["x-ns/eval"]
    assert sorted(listed(admin_client.get("/jobs/", {"phase": "Running"}))) == ["x-ns/train", "y-ns/serve"]
    PodGroup.objects.filter(name="bert").update(created=timezone.now() + timedelta(days=1))
    after = (timezone.now() + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    assert listed(admin_client.get("/jobs/", {"submitted_after": after})) == ["nlp-ns/bert"]
    bad = admin_client.get("/jobs/", {"submitted_after": "yesterday"})
    assert bad.status_code == 200 and bad.context["rows"] == [] and "submitted_after" in bad.context["errors"]
    choices = admin_client.get("/jobs/").context["choices"]
    assert choices["reasons"] == ["NotEnoughResources"]
    assert re.findall(r'<option value="([^"]+)"', choices["namespace_control"]) == ["nlp-ns", "x-ns", "y-ns"]


def test_the_list_shows_a_team_only_its_jobs(client: Any, story: PodGroup) -> None:
    assert sorted(listed(login(client, "lead-x").get("/jobs/"))) == ["x-ns/eval", "x-ns/train"]
    assert listed(login(client, "research-lead").get("/jobs/")) == ["nlp-ns/bert"]
    assert listed(login(client, "lead-x").get("/jobs/", {"q": "bert"})) == []
    assert 'value="yq"' not in login(client, "lead-x").get("/jobs/").context["choices"]["queue_control"]


def test_a_long_name_list_is_a_text_box_that_suggests(
    admin_client: Any, client: Any, story: PodGroup, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Up to ``SELECT_LIMIT`` names a filter is a select; above, a text box with an empty datalist that the
    page's script fills from ``/jobs/filter-names/`` with the names the user may read."""
    assert '<select id="f-queue" name="queue">' in admin_client.get("/jobs/").content.decode()
    monkeypatch.setattr(job_list, "SELECT_LIMIT", 2)
    html = admin_client.get("/jobs/").content.decode()
    assert '<input id="f-queue" name="queue" type="search" value="" list="f-queue-list"' in html
    assert '<datalist id="f-queue-list"></datalist>' in html and '<option value="xq">' not in html
    assert "type to find one of" in html and "frontend/js/suggest.js" in html
    names = admin_client.get("/jobs/filter-names/", {"field": "queue", "q": "Q"}).json()["names"]
    assert "xq" in names and "yq" in names and "research" not in names
    assert admin_client.get("/jobs/filter-names/", {"field": "quota_group", "q": "x"}).json()["names"][0] == "x"
    assert admin_client.get("/jobs/filter-names/", {"field": "namespace", "q": "ns"}).json()["names"] == [
        "nlp-ns",
        "x-ns",
        "y-ns",
    ]
    lead = login(client, "lead-x")
    assert "yq" not in lead.get("/jobs/filter-names/", {"field": "queue", "q": "q"}).json()["names"]
    assert lead.get("/jobs/filter-names/", {"field": "namespace", "q": ""}).json()["names"] == ["x-ns"]
    bad = admin_client.get("/jobs/filter-names/", {"field": "password"})
    assert bad.status_code == 400 and "field" in bad.json()


def test_a_typed_name_that_names_nothing_says_so(admin_client: Any, client: Any, story: PodGroup) -> None:
    response = admin_client.get("/jobs/", {"queue": "nosuch"})
    assert response.context["rows"] == []
    assert response.context["errors"]["queue"] == "No queue you can read is named “nosuch”."
    assert "No queue you can read is named" in response.content.decode()
    # another team's queue is as unknown to a team lead as a missing one: no job of it, and no hint it exists
    other = login(client, "lead-x").get("/jobs/", {"queue": "yq"})
    assert other.context["rows"] == [] and "queue" in other.context["errors"]
    assert admin_client.get("/jobs/", {"quota_group": "nope"}).context["errors"]["quota_group"]
    assert admin_client.get("/jobs/", {"namespace": "nope"}).context["errors"]["namespace"]


def test_suggestions_put_names_that_start_with_the_text_first() -> None:
    names = ["team-a", "a-team", "beta", "alpha", "gamma"]
    assert job_list.suggest(names, "a") == ["a-team", "alpha", "team-a", "beta", "gamma"]
    assert job_list.suggest(names, "AL") == ["alpha"]
    assert job_list.suggest(names, "a", limit=2) == ["a-team", "alpha"]
    assert job_list.suggest(names, "") == names


def test_the_list_sorts_and_pages(admin_client: Any, lending: None) -> None:
    base = timezone.now()
    for i in range(120):
        pg = b.job("x-ns", f"bulk-{i:03d}", "xq", 0, {"cpu": "1"}, priority=i % 7)
        PodGroup.objects.filter(pk=pg.pk).update(created=base + timedelta(seconds=i))
    first = admin_client.get("/jobs/", {"q": "bulk"})
    assert first.context["total"] == 120 and len(first.context["rows"]) == 50
    assert listed(first)[0] == "x-ns/bulk-119"  # newest first
    html = first.content.decode()
    assert "120 jobs found" in html and "page 1 of 3" in html
    third = admin_client.get("/jobs/", {"q": "bulk", "page": 3})
    assert len(third.context["rows"]) == 20 and listed(third)[-1] == "x-ns/bulk-000"
    assert listed(admin_client.get("/jobs/", {"q": "bulk", "sort": "oldest"}))[0] == "x-ns/bulk-000"
    assert listed(admin_client.get("/jobs/", {"q": "bulk", "sort": "name"}))[:2] == ["x-ns/bulk-000", "x-ns/bulk-001"]
    by_priority = admin_client.get("/jobs/", {"q": "bulk", "sort": "priority"}).context["rows"]
    assert by_priority[0]["priority"] == 6
    assert "q=bulk" in first.context["next_link"] and "page=2" in first.context["next_link"]


def test_one_job_reads_as_one_job(admin_client: Any, lending: None) -> None:
    html = admin_client.get("/jobs/", {"q": "eval"}).content.decode()
    assert "1 job found" in html
    assert "1 jobs" not in html


def _bulk(count: int) -> None:
    """``count`` podgroups of one pod each, in bulk (rows, not the services)."""
    from quotas.models import Namespace, Queue, QuotaGroup
    from scheduling.models import Pod

    cluster = b.cluster()
    ns = Namespace.objects.get(name="x-ns")
    queue = Queue.objects.get(name="xq")
    group = QuotaGroup.objects.get(name="x")
    PodGroup.objects.bulk_create(
        PodGroup(cluster=cluster, namespace=ns, name=f"many-{i}", queue=queue, phase="Pending", reason="Waiting")
        for i in range(count)
    )
    pgs = PodGroup.objects.filter(name__startswith="many-")
    Pod.objects.bulk_create(
        Pod(cluster=cluster, namespace=ns, name=f"{pg.name}-0", podgroup=pg, quota_group=group, request={"cpu": 1000})
        for pg in pgs
    )


def test_the_list_and_the_job_page_read_a_fixed_number_of_queries(admin_client: Any, lending: None) -> None:
    """No query per row: the same count for 10 jobs as for 1,010 (the values are cached before counting)."""

    def count(path: str, params: dict[str, str] | None = None) -> int:
        admin_client.get(path, params)  # the engine's values for this state, computed once
        with CaptureQueriesContext(connection) as ctx:
            assert admin_client.get(path, params).status_code == 200
        return len(ctx.captured_queries)

    _bulk(10)
    small = [count("/jobs/"), count("/jobs/", {"quota_group": "x", "q": "many"}), count("/jobs/x-ns/eval/")]
    _bulk_more = 1000
    from scheduling.models import Pod

    Pod.objects.filter(podgroup__name__startswith="many-").delete()
    PodGroup.objects.filter(name__startswith="many-").delete()
    _bulk(_bulk_more)
    large = [count("/jobs/"), count("/jobs/", {"quota_group": "x", "q": "many"}), count("/jobs/x-ns/eval/")]
    assert small == large
    # and the numbers themselves stay small
    assert large[0] <= 16, large


def test_after_a_real_session_the_blocking_node_is_the_one_the_engine_named(admin_client: Any, db: Any) -> None:
    """A session runs (``scheduling.tasks.run_session``): the job that asks more than its queue's capability
    waits, and its page marks that queue (not its parent) as the blocking node, with the engine's message."""
    from scheduling import tasks

    b.node("n1", cpu="16", memory="64Gi")
    b.queue("dept")
    b.queue("team", parent="dept", capability={"cpu": "4"})
    b.namespace("t-ns", queue_name="team")
    big = b.job("t-ns", "big", "team", 2, {"cpu": "3"})
    PodGroup.objects.filter(pk=big.pk).update(min_member=2)
    assert tasks.run_session(b.cluster().pk) == "ran"
    response = admin_client.get("/jobs/t-ns/big/")
    job, path = response.context["job"], {s["title"]: s["nodes"] for s in response.context["path"]}
    assert job["waiting"] and job["reason"], (job["phase"], job["reason"], job["message"], response.context["pods"])
    blocking = [n.name for nodes in path.values() for n in nodes if n.blocking]
    assert blocking == ["team"], (job["reason"], job["message"], job["blocker_text"])
    assert "team" in job["message"] and "cpu" in job["message"]
    assert [r["phase"] for r in response.context["reasons"]][:1] == [job["phase"]]


def test_a_gang_released_whole_shows_why_and_the_gpu_seconds_it_held_idle(admin_client: Any, story: PodGroup) -> None:
    # issue 26 item 2: on the job page and in the API
    released = timezone.now()
    PodGroup.objects.filter(pk=story.pk).update(
        gang_releases=1, idle_gpu_seconds=168, released_at=released, release_reason="released whole: 168 GPU-seconds"
    )
    response = admin_client.get("/jobs/x-ns/eval/")
    html = response.content.decode()
    assert 'data-testid="job-gang-releases"' in html
    assert "Released whole 1 time after staying below its minimum, holding 168 GPU-seconds idle" in html
    api = admin_client.get(f"/api/v1/podgroups/{story.pk}/").json()
    assert (api["gang_releases"], api["idle_gpu_seconds"], api["release_reason"]) == (
        1,
        168,
        "released whole: 168 GPU-seconds",
    )
    PodGroup.objects.filter(pk=story.pk).update(gang_releases=0)
    assert 'data-testid="job-gang-releases"' not in admin_client.get("/jobs/x-ns/eval/").content.decode()


def test_a_completed_job_says_it_finished(admin_client: Any, lending: None) -> None:
    from scheduling.models import Pod

    done = b.job("y-ns", "report", "yq", 2, {"cpu": "1"}, phase="Completed")
    Pod.objects.filter(podgroup=done).update(status="Succeeded")
    page = admin_client.get("/jobs/y-ns/report/").content.decode()
    assert '<h2 id="why-title">Completed</h2>' in page and 'data-testid="job-completed"' in page
    assert "Nothing holds it back" not in page
