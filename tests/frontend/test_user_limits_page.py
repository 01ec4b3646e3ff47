"""The queue and quota group pages show their per-user limits with each user's and group's use against them now
(issue 30 item 5), counted by the engine's book (``engine.session.userlimits``); a node without limits shows no
such table; the editor reads and writes the limits as lines with amounts in the columns' units."""

from __future__ import annotations

import json
import re
from typing import Any

from frontend.views.whatif import fingerprint
from quotas.models import Queue, QuotaGroup
from scheduling.models import PodGroup
from tests.frontend import builders as b
from tests.frontend.test_editor import errors_of, queue_form
from tests.support.html_forms import form_data

GPU = "nvidia.com/gpu"


def _org() -> None:
    b.node("n1", cpu="64", memory="256Gi", **{GPU: "8"})
    b.queue("nlp")
    b.group("team-a", max={"cpu": "64", GPU: "8"})
    limits = [
        {"kind": "user", "name": "*", "max_resources": {GPU: 4000}, "max_jobs": 2},
        {"kind": "group", "name": "ml-interns", "max_resources": {}, "max_jobs": 1},
        {"kind": "user", "name": "erin", "max_resources": {"memory": 64 * 2**30}, "max_jobs": None},
    ]
    Queue.objects.filter(name="nlp").update(user_limits=limits)
    QuotaGroup.objects.filter(name="team-a").update(user_limits=[limits[0]])
    b.job("ml", "a1", "nlp", 1, {"cpu": "1", GPU: "2"}, running=1, on="n1", group_name="team-a")
    b.job("ml", "a2", "nlp", 1, {"cpu": "1", GPU: "2"}, running=1, on="n1", group_name="team-a")
    b.job("ml", "b1", "nlp", 1, {"cpu": "1", GPU: "1"}, running=1, on="n1", group_name="team-a")
    PodGroup.objects.filter(name__in=["a1", "a2"]).update(user="alice", user_groups=["ml-interns"])
    PodGroup.objects.filter(name="b1").update(user="bob")


def _rows(page: str) -> list[str]:
    """The table's body rows as text."""
    table = page.split('data-testid="user-limits"', 1)[1].split("</table>", 1)[0]
    rows = table.split("<tbody>", 1)[1].split("</tr>")
    return [" ".join(re.sub(r"<[^>]+>", " ", r).split()) for r in rows if "<th" in r]


def test_the_queue_page_shows_each_users_use_against_the_limits(admin_client: Any, db: Any) -> None:
    _org()
    page = admin_client.get("/queues/nlp/").content.decode()
    assert "Per-user limits" in page
    text = _rows(page)
    assert any("each user (alice)" in r and "2 of 2" in r and "4 GPUs of 4 GPUs (full)" in r for r in text), text
    assert any("each user (bob)" in r and "1 of 2" in r and "1 GPU of 4 GPUs" in r for r in text), text
    assert any("group ml-interns" in r and "2 of 1" in r for r in text), text
    assert any("user erin" in r and "0 of unlimited" in r and "0 bytes of 64 GiB" in r for r in text), text


def test_the_quota_group_page_shows_its_limits_and_a_node_without_none(admin_client: Any, db: Any) -> None:
    _org()
    page = admin_client.get("/quotas/team-a/").content.decode()
    assert 'data-testid="user-limits"' in page and "each user (alice)" in page
    assert 'data-testid="user-limits"' not in admin_client.get("/queues/default/").content.decode()


def test_the_editor_reads_and_writes_the_limits_in_the_columns_units(admin_client: Any, db: Any) -> None:
    _org()
    form = admin_client.get("/edit/queues/nlp/").context["form"]
    assert form["user_limits"].value().splitlines() == [
        f"user *: jobs=2, {GPU}=4",
        "group ml-interns: jobs=1",
        "user erin: memory=64Gi",
    ]
    data = {**queue_form("nlp", 1, "root", 1), "user_limits": f"user alice: jobs=3, memory=600\ngroup ml: {GPU}=2"}
    saved = admin_client.post("/edit/queues/nlp/", data)
    assert saved.status_code == 302, errors_of(saved)
    assert Queue.objects.get(name="nlp").user_limits == [
        {"kind": "user", "name": "alice", "max_resources": {"memory": 600 * 2**30}, "max_jobs": 3},
        {"kind": "group", "name": "ml", "max_resources": {GPU: 2000}, "max_jobs": None},
    ]
    refused = admin_client.post(
        "/edit/queues/nlp/",
        {**queue_form("nlp", 2, "root", 1), "user_limits": "user alice: jobs=x\nuser alice: jobs=1"},
    )
    assert refused.status_code == 400
    messages = errors_of(refused)["user_limits"]
    assert any("jobs=x is not a whole number" in m for m in messages), messages
    assert any("has a limit already" in m for m in messages), messages
    assert len(Queue.objects.get(name="nlp").user_limits) == 2  # nothing written


def test_staged_limits_are_kept_in_the_session_and_written_when_applied(admin_client: Any, db: Any) -> None:
    _org()
    plain = {**queue_form("nlp", 1, "root", 1), "action": "stage"}
    staged = admin_client.post("/edit/queues/nlp/", {**plain, "user_limits": "user * : jobs=2, nvidia.com/gpu=4"})
    assert staged.status_code == 302
    (entry,) = admin_client.session["fairway_staged"]
    assert entry["change"]["spec"] == {"user_limits": [{"user": "*", "max_resources": {GPU: "4"}, "max_jobs": 2}]}
    assert entry["summary"] == f"edit queue nlp: user limits user *: jobs=2, {GPU}=4"
    assert len(Queue.objects.get(name="nlp").user_limits) == 3  # staged, not written
    applied = admin_client.post("/whatif/apply/", {"fingerprint": fingerprint([entry])}, follow=True)
    assert applied.status_code == 200
    assert Queue.objects.get(name="nlp").user_limits == [
        {"kind": "user", "name": "*", "max_resources": {GPU: 4000}, "max_jobs": 2}
    ]


def test_the_history_shows_the_limits_as_people_write_them(admin_client: Any, db: Any) -> None:
    _org()
    data = {**queue_form("nlp", 1, "root", 1), "user_limits": "user alice: jobs=3, memory=64"}
    assert admin_client.post("/edit/queues/nlp/", data).status_code == 302
    rows = admin_client.get("/history/queues/nlp/").context["rows"]
    change = next(c for c in rows[0]["changes"] if c["field"] == "user limits")
    assert change["new"] == "user alice: jobs=3, memory=64Gi"


def test_the_job_page_says_who_submitted_it_and_which_limit_holds_it(admin_client: Any, db: Any) -> None:
    _org()
    message = (
        "not admitted (Pending -> Inqueue): user alice runs 2 of at most 2 jobs in queue nlp, the limit of each user"
    )
    b.job("ml", "a3", "nlp", 1, {"cpu": "1", GPU: "1"}, reason="Unschedulable", message=message)
    PodGroup.objects.filter(name="a3").update(user="alice")
    html = admin_client.get("/jobs/ml/a3/").content.decode()
    assert 'submitted by <span data-testid="job-user">alice</span>' in html
    assert "user alice runs 2 of at most 2 jobs in queue nlp" in html


def test_the_admin_shows_and_checks_the_limits_in_the_apis_form(client: Any, django_user_model: Any, db: Any) -> None:
    _org()
    client.force_login(django_user_model.objects.create_superuser("walk-admin", password="pw-walk-admin"))
    queue = Queue.objects.get(name="nlp")
    url = f"/admin/quotas/queue/{queue.pk}/change/"
    rendered = form_data(client.get(url).content.decode(), "queue_form")
    assert json.loads(rendered["user_limits"])[0] == {"user": "*", "max_resources": {GPU: "4"}, "max_jobs": 2}
    assert client.post(url, {**rendered, "_save": "Save"}).status_code == 302  # unchanged, saved as it was
    assert Queue.objects.get(pk=queue.pk).user_limits[0]["max_resources"] == {GPU: 4000}
    rendered = form_data(client.get(url).content.decode(), "queue_form")
    mine = json.dumps([{"user": "alice", "max_jobs": 1}, {"user": "alice", "max_jobs": 2}])
    refused = client.post(url, {**rendered, "user_limits": mine, "_save": "Save"})
    assert refused.status_code == 200 and "user alice has a limit already (entry 0)" in refused.content.decode()
    saved = client.post(url, {**rendered, "user_limits": json.dumps([{"group": "ml", "max_jobs": 1}]), "_save": "Save"})
    assert saved.status_code == 302
    assert Queue.objects.get(pk=queue.pk).user_limits == [
        {"kind": "group", "name": "ml", "max_resources": {}, "max_jobs": 1}
    ]
