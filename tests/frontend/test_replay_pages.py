"""The replay in the dashboard (issue 29 item 5): "Replay with these changes" on the what-if page (the staged changes)
and on a change request's page, a page per run (progress and Cancel while it runs; the Plotly charts and the table
per team once done; its status as JSON for the progress bar), the list of past runs, and the run linked from the
change request's steps."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from changerequests import services as change_requests
from planning import replay
from planning.models import ReplayRun
from scheduling.models import PodGroup
from tests.frontend import builders as b
from tests.scheduling.conftest import build_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(db: Any, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    build_world(cluster_name="default-replay")
    PodGroup.objects.update(created=timezone.now() - timedelta(minutes=30))
    out: list[int] = []
    monkeypatch.setattr(replay, "send", out.append)
    return out


def _stage(client: Any) -> None:
    session = client.session
    session["fairway_staged"] = [
        {
            "change": {"op": "update", "kind": "queue", "name": "team-a", "spec": {"weight": 5}},
            "kind": "queue",
            "name": "team-a",
            "version": None,
            "summary": "queue team-a: weight 2 → 5",
        }
    ]
    session.save()


def test_the_whatif_page_starts_a_replay_of_the_staged_changes(
    admin_client: Any, sent: list[int], django_capture_on_commit_callbacks: Any
) -> None:
    _stage(admin_client)
    page = admin_client.get("/whatif/?cluster=default-replay")
    html = page.content.decode()
    assert 'id="replay-form"' in html and 'value="7d" selected' in html
    with django_capture_on_commit_callbacks(execute=True):
        resp = admin_client.post("/replays/start/", {"window": "3d"})
    run = ReplayRun.objects.get()
    assert resp.status_code == 302 and resp["Location"] == f"/replays/{run.pk}/"
    assert sent == [run.pk] and run.window == "3d" and run.cluster.name == "default-replay"
    assert run.changes == [{"op": "update", "kind": "queue", "name": "team-a", "spec": {"weight": 5}}]
    assert run.summary == "queue team-a: weight 2 → 5"
    running = admin_client.get(f"/replays/{run.pk}/").content.decode()
    assert 'id="replay-progress"' in running and 'id="replay-cancel"' in running and "js/replay.js" in running
    assert admin_client.get(f"/replays/{run.pk}/status/").json() == {
        "id": run.pk, "state": "queued", "progress": 0.0, "percent": 0, "phase": "", "error": "",
    }  # fmt: skip
    cancelled = admin_client.post(f"/replays/{run.pk}/cancel/")
    assert cancelled.status_code == 302 and ReplayRun.objects.get().state == "cancelled"


def test_a_bad_window_starts_nothing_and_says_which_field(admin_client: Any, sent: list[int]) -> None:
    _stage(admin_client)
    admin_client.get("/whatif/?cluster=default-replay")
    resp = admin_client.post("/replays/start/", {"window": "9d"}, follow=True)
    assert "No replay was started: window: at most 7 days" in resp.content.decode()
    assert not ReplayRun.objects.exists() and sent == []


def test_a_finished_run_shows_charts_and_a_table_a_team_lead_reads(
    admin_client: Any, admin: Any, sent: list[int]
) -> None:
    no_nodes = [{"op": "remove", "kind": "node", "name": n} for n in ("n1", "n2", "n3")]
    run = replay.start(admin, no_nodes, window="1h", cluster="default-replay", summary="no nodes")
    assert replay.execute(run.pk) == "done"
    page = admin_client.get(f"/replays/{run.pk}/")
    assert page.status_code == 200
    figs = page.context["figures"]
    assert set(figs) == {"replay_waits", "replay_utilisation", "replay_borrow"}
    waits = {t["name"]: t for t in figs["replay_waits"]["data"]}
    assert set(waits) == {"p50 before", "p50 after", "p95 before", "p95 after"}
    assert waits["p50 after"]["customdata"][0] == "no job started"  # team-a's job never starts without nodes
    util = figs["replay_utilisation"]["data"]
    assert {t["name"] for t in util} == {"baseline", "with the changes"}
    rows = {r["team"]: r for r in page.context["rows"]}
    assert "root" not in rows  # a tree's root counts every job: the cluster's row, not a team
    every = {r["label"]: r for r in page.context["cluster_rows"]}["Wait p50, every job that started"]
    assert every["after"] == "no job started"
    started = rows["team-a"]["cells"][2]
    assert (started["before"], started["after"], started["css"]) == ("1", "0", "bad")
    html = page.content.decode()
    assert 'id="replay-table"' in html and "js/replay.js" not in html and 'id="replay-cancel"' not in html
    assert f"{page.context['trace']['jobs_text']} job" in html and "tree edit" in html
    # the waits are those of the jobs that started: said beside the chart, since fewer starts can mean shorter waits
    assert 'id="waits-note"' in html and "the table counts the jobs never started" in html
    listing = admin_client.get("/replays/").content.decode()
    assert f'href="/replays/{run.pk}/"' in listing and "no nodes" in listing


def _lead_of_team_a() -> Any:
    """A lead whose team holds queue team-a and quota group qa: a change request of team-a is theirs to file."""
    from django.contrib.auth.models import Group

    from quotas.models import Queue, QuotaGroup

    lead = b.user("lead-a")
    team = Group.objects.create(name="team-a")
    Queue.objects.get(name="team-a").teams.add(team)
    QuotaGroup.objects.get(name="qa").teams.add(team)
    lead.groups.add(team)
    return lead


def test_a_change_request_replays_its_changes_and_links_the_run_from_its_steps(
    client: Any, make_user: Any, sent: list[int]
) -> None:
    lead = _lead_of_team_a()
    change = {"op": "update", "kind": "queue", "name": "team-a", "spec": {"weight": 4}}
    cr = change_requests.file_request(lead, [change], cluster="default-replay")
    client.force_login(lead)
    page = client.get(f"/requests/{cr.pk}/").content.decode()
    assert 'id="request-replay"' in page and 'id="request-replay-room"' not in page
    # a request filed without room says that its replay waits for the room too (the rules refuse it alike)
    type(cr).objects.filter(pk=cr.pk).update(needs_room=[{"field": "changes.0", "message": "no room"}])
    assert 'id="request-replay-room"' in client.get(f"/requests/{cr.pk}/").content.decode()
    type(cr).objects.filter(pk=cr.pk).update(needs_room=[])
    resp = client.post(f"/requests/{cr.pk}/replay/", {"window": "1d"})
    run = ReplayRun.objects.get()
    assert resp["Location"] == f"/replays/{run.pk}/"
    assert (run.change_request, run.changes, run.requester) == (cr, [change], lead)
    steps = client.get(f"/requests/{cr.pk}/").context["steps"]
    assert steps[-1]["url"] == f"/replays/{run.pk}/" and "replayed the last day" in steps[-1]["step"]
    other = make_user("mallory", groups=("elsewhere",))
    client.force_login(other)
    assert client.get(f"/replays/{run.pk}/").status_code in (403, 404)  # not theirs


def test_an_approver_replays_amended_changes_before_approving(client: Any, make_user: Any, sent: list[int]) -> None:
    """The box of amended changes on a request's page replays them too: the run takes the box's list (not the
    request's), says so in its summary and in the request's steps; a box that is no list starts nothing."""
    import yaml

    lead = _lead_of_team_a()
    asked = {"op": "update", "kind": "queue", "name": "team-a", "spec": {"weight": 4}}
    cr = change_requests.file_request(lead, [asked], cluster="default-replay")
    client.force_login(make_user("boss", staff=True))
    assert 'id="replay-amended"' in client.get(f"/requests/{cr.pk}/").content.decode()
    bad = client.post(f"/requests/{cr.pk}/replay/", {"amend": "1", "changes": "weight: 5"}, follow=True)
    assert "No replay was started: changes: write a list of changes" in bad.content.decode()
    assert not ReplayRun.objects.exists()
    amended = [{**asked, "spec": {"weight": 6}}]
    resp = client.post(f"/requests/{cr.pk}/replay/", {"amend": "1", "changes": yaml.safe_dump(amended)})
    run = ReplayRun.objects.get()
    assert resp["Location"] == f"/replays/{run.pk}/" and run.changes == amended and run.change_request == cr
    assert run.summary == f"change request #{cr.pk}, amended: queue team-a: weight 6" and run.window == "7d"
    steps = client.get(f"/requests/{cr.pk}/").context["steps"]
    assert "replayed the last 7 days with an approver's amended changes" in steps[-1]["step"]
