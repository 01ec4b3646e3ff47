"""Loans (``changerequests.loans``): nlp's lead borrows 2 GPUs of guarantee from its sibling vision for 3 days; vision's
lead (or research's, or an admin) approves; the guarantee moves; at the loan's end the periodic task gives it back,
or says why it cannot and tries again. Every refusal names its field."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core import mail
from django.utils import timezone

from changerequests import services
from changerequests.models import ChangeRequest
from changerequests.tasks import SCHEDULE_NAME, TASK, ensure_schedule, return_loans
from engine.resources import ResourceList
from quotas import services as tree_services
from quotas.models import Queue, QuotaGroup
from tests.changerequests.conftest import NLP_PLUS_4
from tests.conftest import error_attrs

pytestmark = pytest.mark.django_db
GPU = "nvidia.com/gpu"
BASE = "/api/v1/change-requests/"
GPUS_4 = ResourceList.parse({GPU: "4"})
LOAN = {"kind": "queue", "from": "vision", "to": "nlp", "field": "guarantee", "amounts": {GPU: "2"}, "duration": "3d"}


def gpus(model: Any, name: str, field: str) -> int:
    return int(getattr(model.objects.get(name=name), field).get(GPU, 0)) // 1000


def lend(client: Any, loan: dict[str, Any] | None = None, **extra: Any) -> Any:
    return client.post(BASE, {"loan": loan or LOAN, "reason": "a deadline", **extra}, format="json")


def test_a_loan_is_lent_by_the_lenders_lead_and_returned_at_its_end(clients: dict[str, Any], people: Any) -> None:
    r = lend(clients["nlp-lead"])
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["status"] == "open" and body["loan"]["from"] == "vision" and body["loan"]["amounts"] == {GPU: "2"}
    assert body["loan"]["text"] == "loan: queue nlp borrows 2 GPUs of guarantee from vision for 3 days"
    assert body["loan"]["duration_seconds"] == 3 * 86400
    # the what-if shows both sides, before and after; nothing written yet
    requested = {c["name"]: c["fields"][0] for c in body["whatif"]["requested"]}
    assert requested["nlp"]["before"] == f"{GPU} 2" and requested["nlp"]["after"] == f"{GPU} 4"
    assert requested["vision"]["before"] == f"{GPU} 2" and requested["vision"]["after"] == f"{GPU} 0"
    assert gpus(Queue, "nlp", "guarantee") == 2
    # the lender's lead and the admin are told; the requester may not approve its own loan
    assert sorted(mail.outbox[0].to) == ["boss@example.org", "research-lead@example.org", "vision-lead@example.org"]
    assert clients["nlp-lead"].post(f"{BASE}{body['id']}/approve/", {}, format="json").status_code == 403
    # the lender's lead sees it to review, and approves: the guarantee moves
    listed = clients["vision-lead"].get(BASE, {"to_review": "true"}).json()["results"]
    assert [x["id"] for x in listed] == [body["id"]]
    before = timezone.now()
    r = clients["vision-lead"].post(f"{BASE}{body['id']}/approve/", {"comment": "until Friday"}, format="json")
    assert r.status_code == 200, r.content
    done = r.json()
    assert done["status"] == "applied" and done["outcome"].startswith("Lent until ")
    assert gpus(Queue, "nlp", "guarantee") == 4 and gpus(Queue, "vision", "guarantee") == 0
    req = ChangeRequest.objects.get(pk=body["id"])
    assert before + timedelta(days=3) <= req.loan_until <= timezone.now() + timedelta(days=3)
    # the nodes' history names the loan
    record = Queue.history.filter(name="vision").order_by("-history_date", "-history_id").first()
    assert record.history_change_reason.startswith(f"loan #{req.pk}: asked by nlp-lead, approved by vision-lead")

    # not due yet: nothing happens
    assert services.return_due(timezone.now()) == []
    # at its end the task returns it (run as the worker runs it)
    ChangeRequest.objects.filter(pk=req.pk).update(loan_until=timezone.now() - timedelta(seconds=1))
    mail.outbox.clear()
    assert return_loans() == "returned 1"
    req.refresh_from_db()
    assert req.status == "returned" and req.returned is not None and "Returned on" in req.outcome
    assert gpus(Queue, "nlp", "guarantee") == 2 and gpus(Queue, "vision", "guarantee") == 2
    assert [s["step"] for s in services.steps(req)] == ["filed", "applied", "returned"]
    assert return_loans() == "returned 0"  # once only


def test_a_return_that_no_longer_fits_writes_nothing_says_why_and_is_tried_again(people: Any) -> None:
    req = services.file_loan(people["nlp-lead"], LOAN)
    services.approve(req.pk, people["research-lead"])  # the common parent's lead may approve too
    # nlp hands the borrowed guarantee to a new child: giving it back would leave nlp below its children's sum
    tree_services.save_queue(None, {"name": "nlp-interns", "parent": "nlp", "deserved": GPUS_4, "guarantee": GPUS_4})
    ChangeRequest.objects.filter(pk=req.pk).update(loan_until=timezone.now() - timedelta(minutes=1))
    mail.outbox.clear()
    assert services.return_due() == []
    req.refresh_from_db()
    assert req.status == "applied" and req.returned is None
    assert req.return_problem.startswith("Due back since") and "not returned yet" in req.return_problem
    assert gpus(Queue, "nlp", "guarantee") == 4 and gpus(Queue, "vision", "guarantee") == 0  # nothing written
    # told once per reason, not at every check
    services.return_due()
    assert ChangeRequest.history.filter(id=req.pk, history_change_reason="return refused").count() == 1
    # once the child gives it up, the next check returns it
    tree_services.save_queue(Queue.objects.get(name="nlp-interns"), {"guarantee": ResourceList.parse({GPU: "2"})})
    assert [r.pk for r in services.return_due()] == [req.pk]
    assert gpus(Queue, "nlp", "guarantee") == 2 and gpus(Queue, "vision", "guarantee") == 2


def test_a_quota_group_lends_its_min(people: Any) -> None:
    loan = {"kind": "quota_group", "from": "nlp", "to": "vision", "amounts": {GPU: "1"}, "duration": "12h"}
    req = services.file_loan(people["vision-lead"], loan)
    assert req.loan["field"] == "min"  # the default field of a quota group
    services.approve(req.pk, people["nlp-lead"])
    assert gpus(QuotaGroup, "vision", "min") == 3 and gpus(QuotaGroup, "nlp", "min") == 1


@pytest.mark.parametrize(
    ("user", "change", "field", "words"),
    [
        ("nlp-lead", {"from": "nlp", "to": "vision"}, "loan.to", "not in your team's subtree"),
        ("nlp-lead", {"from": "analytics"}, "loan.from", "not a sibling of nlp"),
        ("nlp-lead", {"from": "nope"}, "loan.from", "queue nope does not exist"),
        ("nlp-lead", {"from": "nlp"}, "loan.to", "cannot borrow from itself"),
        (
            "nlp-lead",
            {"amounts": {GPU: "3"}},
            f"loan.amounts.{GPU}",
            "vision has 2 GPUs of guarantee; it cannot lend 3 GPUs",
        ),
        ("nlp-lead", {"amounts": {GPU: "0"}}, f"loan.amounts.{GPU}", "more than 0"),
        ("nlp-lead", {"amounts": {GPU: "two"}}, "loan.amounts", ""),
        ("nlp-lead", {"duration": "soon"}, "loan.duration", "such as 3d"),
        ("nlp-lead", {"duration": "91d"}, "loan.duration", "at most 90 days"),
        ("nlp-lead", {"field": "capability"}, "loan.field", "lends its guarantee or deserved"),
        ("nlp-lead", {"kind": "namespace"}, "loan.kind", "a queue or a quota_group"),
        ("nlp-lead", {"until": "friday"}, "loan.until", "has no field"),
    ],
)
def test_a_bad_loan_is_refused_naming_its_field(
    clients: dict[str, Any], user: str, change: dict[str, Any], field: str, words: str
) -> None:
    r = lend(clients[user], {**LOAN, **change})
    assert r.status_code == 400, r.content
    attrs = error_attrs(r)
    assert field in attrs, attrs
    assert words in attrs[field]
    assert not ChangeRequest.objects.exists()


def test_changes_and_a_loan_are_one_or_the_other(clients: dict[str, Any]) -> None:
    r = clients["nlp-lead"].post(BASE, {"reason": "x"}, format="json")
    assert r.status_code == 400 and "changes" in error_attrs(r)
    r = clients["nlp-lead"].post(BASE, {"loan": LOAN, "changes": [{"op": "update"}]}, format="json")
    assert r.status_code == 400 and "changes" in error_attrs(r)


def test_a_loan_is_approved_as_asked_only_by_the_lenders_side(people: Any) -> None:
    req = services.file_loan(people["nlp-lead"], LOAN)
    # another team of another department may not approve it; nor amend it
    with pytest.raises(services.NotAllowed):
        services.approve(req.pk, people["analytics-lead"])
    with pytest.raises(services.RequestInvalid, match="never amended"):
        services.approve(req.pk, people["admin"], changes=NLP_PLUS_4)
    # the lender gave the guarantee away meanwhile: approving finds it stale and writes nothing
    tree_services.save_queue(Queue.objects.get(name="vision"), {"guarantee": ResourceList.parse({GPU: "1"})})
    done = services.approve(req.pk, people["vision-lead"])
    assert done.status == "stale" and "vision has 1 GPU of guarantee; it cannot lend 2 GPUs" in done.outcome
    assert gpus(Queue, "nlp", "guarantee") == 2


def test_the_return_schedule_exists_after_migrate_and_keeps_an_admins_edit(db: Any) -> None:
    from django_celery_beat.models import PeriodicTask

    task = PeriodicTask.objects.get(task=TASK)
    assert task.name == SCHEDULE_NAME and task.interval.every == 60 and task.enabled
    task.enabled = False
    task.save()
    ensure_schedule()
    assert PeriodicTask.objects.filter(task=TASK).count() == 1 and not PeriodicTask.objects.get(task=TASK).enabled


def test_a_loan_from_the_team_page_to_its_lenders_decision(
    people: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from django.test import Client

    lead = Client()
    assert lead.login(username="nlp-lead", password="pw")
    assert 'href="/requests/loan/?node=queue:nlp"' in lead.get("/team/nlp/").content.decode()
    page = lead.get("/requests/loan/?node=queue:nlp").content.decode()
    assert '<option value="vision"' in page and "analytics" not in page  # siblings only
    post = {"node": "queue:nlp", "lender": "vision", "field": "guarantee", "duration": "3d", "reason": "deadline"}
    # a bare number is in the row's unit; a fraction of a GPU is refused, naming the row
    r = lead.post("/requests/loan/", {**post, f"amount__{GPU}": "0.5"})
    assert r.status_code == 400 and "amount of nvidia.com/gpu" in r.content.decode()
    r = lead.post("/requests/loan/", {**post, f"amount__{GPU}": "3"})
    assert r.status_code == 400 and "vision has 2 GPUs of guarantee; it cannot lend 3 GPUs" in r.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        r = lead.post("/requests/loan/", {**post, f"amount__{GPU}": "2"})
    assert r.status_code == 302
    req = ChangeRequest.objects.get()
    assert req.loan["amounts"] == {GPU: 2000} and req.loan["seconds"] == 3 * 86400
    lender = Client()
    assert lender.login(username="vision-lead", password="pw")
    shown = lender.get(r["Location"]).content.decode()
    assert "A loan: lent when approved" in shown and 'id="approve"' in shown
    lender.post(f"/requests/{req.pk}/approve/", {"comment": "ok"})
    shown = lender.get(r["Location"]).content.decode()
    assert "On loan until" in shown and gpus(Queue, "nlp", "guarantee") == 4
