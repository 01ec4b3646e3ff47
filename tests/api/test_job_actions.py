"""Job actions (``POST /api/v1/podgroups/{id}/suspend|resume|requeue|delete/``, ``GET …/manifest/``): what each does
to the job, its pods and its records, who may (admin, the job's team — its lead or a member — not another team, not a
node agent), and the 409 sentences of a job not in a state the action applies to."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from django.contrib.auth.models import Group
from django.utils import timezone
from rest_framework.test import APIClient

from core.models import Revision
from engine.resources import parse_resource_list
from quotas import services
from quotas.models import Namespace, Queue, QuotaGroup
from scheduling.models import Cluster, Eviction, Node, Pod, PodGroup, PodGroupReason, RemovedJob
from scheduling.store import load_snapshot
from security.models import SecurityEvent
from tests.conftest import error_attrs

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(api: Any, make_user: Any) -> dict[str, Any]:
    services.ensure_builtins()
    cluster, _ = Cluster.objects.get_or_create(name="default")
    cpu = lambda n: parse_resource_list({"cpu": n})  # noqa: E731
    for team in ("ml", "cv"):
        services.save_queue(None, {"name": team, "deserved": cpu("8")})
        services.save_quota_group(None, {"name": f"g-{team}", "min": cpu("4"), "max": cpu("8")})
        group = Group.objects.create(name=f"{team}-team")
        Queue.objects.get(name=team).teams.add(group)
        QuotaGroup.objects.get(name=f"g-{team}").teams.add(group)
        Namespace.objects.create(
            name=team, default_queue=Queue.objects.get(name=team), quota_group=QuotaGroup.objects.get(name=f"g-{team}")
        )
    node = Node.objects.create(cluster=cluster, name="n1", allocatable=cpu("32"), last_heartbeat=timezone.now())
    ns = Namespace.objects.get(name="ml")
    pg = PodGroup.objects.create(
        cluster=cluster, namespace=ns, name="train", queue=ns.default_queue, min_member=2, phase="Running"
    )
    for i, status in enumerate(("Running", "Bound", "Pending")):
        Pod.objects.create(
            cluster=cluster, namespace=ns, name=f"train-{i}", podgroup=pg, request=cpu("1"),
            node=node if status != "Pending" else None, status=status,
        )  # fmt: skip
    users = {
        "admin": make_user("root-admin", staff=True),
        "lead": make_user("ml-lead", groups=("ml-team",)),
        "member": make_user("ml-dev", groups=("ml-team",)),
        "other": make_user("cv-dev", groups=("cv-team",)),
        "agent": make_user("kubelet-1", groups=("node-agents",)),
    }
    return {"pg": pg, "cluster": cluster, **{role: api(user) for role, user in users.items()}}


def _url(pg: PodGroup, action: str) -> str:
    return f"/api/v1/podgroups/{pg.pk}/{action}/"


def _detail(response: Any) -> str:
    return " ".join(e["detail"] for e in response.json()["errors"])


def test_suspend_releases_running_pods_and_the_next_session_leaves_the_job_alone(world: dict[str, Any]) -> None:
    pg = world["pg"]
    rev = Revision.objects.values_of(Revision.cluster_key(pg.cluster_id))[0]
    r = world["member"].post(_url(pg, "suspend"))
    assert r.status_code == 200, r.content
    assert r.json()["released"] == 2 and r.json()["replaced"] == 2 and r.json()["pending"] is False
    pg.refresh_from_db()
    assert pg.suspended_at is not None and pg.suspended_by == "ml-dev"
    assert (pg.phase, pg.reason) == ("Pending", "Suspended")
    assert Revision.objects.values_of(Revision.cluster_key(pg.cluster_id))[0] > rev
    statuses = dict(Pod.objects.filter(podgroup=pg).values_list("name", "status"))
    assert statuses == {"train-0": "Releasing", "train-1": "Releasing", "train-2": "Pending",
                        "train-0-r1": "Pending", "train-1-r1": "Pending"}  # fmt: skip
    evicted = Eviction.objects.filter(pod__podgroup=pg).order_by("pod_uid")
    assert [(e.action, e.reason, e.job, e.queue) for e in evicted] == [("suspend", "Suspended", "train", "ml")] * 2
    history = PodGroupReason.objects.get(podgroup=pg)
    assert history.reason == "Suspended" and "suspended by ml-dev" in history.message
    # the snapshot says so, and the session neither admits nor places it
    assert load_snapshot(world["cluster"]).podgroups["ml/train"].suspended is True
    from scheduling.tasks import run_session

    run_session(world["cluster"].pk)
    assert set(Pod.objects.filter(podgroup=pg, status="Pending").values_list("name", flat=True)) == {
        "train-2", "train-0-r1", "train-1-r1"
    }  # fmt: skip
    pg.refresh_from_db()
    assert (pg.phase, pg.reason) == ("Pending", "Suspended")
    # twice: 409 with a sentence
    r = world["lead"].post(_url(pg, "suspend"))
    assert r.status_code == 409 and "is suspended already (by ml-dev" in _detail(r)
    # requeue of a suspended job: resume it instead
    r = world["lead"].post(_url(pg, "requeue"))
    assert r.status_code == 409 and "is suspended: resume it" in _detail(r)


def test_resume_lifts_the_hold_and_the_session_places_the_job_again(world: dict[str, Any]) -> None:
    pg = world["pg"]
    r = world["admin"].post(_url(pg, "resume"))
    assert r.status_code == 409 and _detail(r) == "job ml/train is not suspended, so there is nothing to resume"
    assert world["admin"].post(_url(pg, "suspend")).status_code == 200
    r = world["lead"].post(_url(pg, "resume"))
    assert r.status_code == 200 and "resumed by ml-lead" in r.json()["message"]
    pg.refresh_from_db()
    assert pg.suspended_at is None and pg.reason == "Resumed"
    Pod.objects.filter(podgroup=pg, status="Releasing").update(status="Failed", reason="Evicted")  # the agent
    from scheduling.tasks import run_session

    run_session(world["cluster"].pk)
    assert Pod.objects.filter(podgroup=pg, status="Bound").count() == 3
    reasons = list(PodGroupReason.objects.filter(podgroup=pg).order_by("time", "id").values_list("reason", flat=True))
    assert reasons[:2] == ["Suspended", "Resumed"]
    # an admin's action is an admin change in the security log; a member's is not
    events = SecurityEvent.objects.filter(kind="admin_change", target__contains="ml/train")
    assert [e.actor for e in events] == ["root-admin"]


def test_requeue_releases_the_job_and_counts_it(world: dict[str, Any]) -> None:
    pg = world["pg"]
    r = world["lead"].post(_url(pg, "requeue"))
    assert r.status_code == 200, r.content
    pg.refresh_from_db()
    assert (pg.phase, pg.reason, pg.requeues, pg.backoff_until) == ("Pending", "Requeued", 1, None)
    assert pg.suspended_at is None
    assert sorted(Eviction.objects.filter(pod__podgroup=pg).values_list("action", "reason")) == [
        ("requeue", "Requeued"), ("requeue", "Requeued")
    ]  # fmt: skip
    # now Pending with nothing placed: it waits already
    Pod.objects.filter(podgroup=pg, status="Releasing").update(status="Failed", reason="Evicted")
    r = world["lead"].post(_url(pg, "requeue"))
    assert r.status_code == 409
    assert _detail(r) == "job ml/train is Pending with none of its pods placed: it is waiting for admission already"


def test_delete_records_the_removal_with_who_did_it(world: dict[str, Any]) -> None:
    pg = world["pg"]
    r = world["member"].post(_url(pg, "delete"))
    assert r.status_code == 200, r.content
    assert not PodGroup.objects.filter(pk=pg.pk).exists() and not Pod.objects.filter(namespace__name="ml").exists()
    record = RemovedJob.objects.get(name="train")
    assert (record.cause, record.reason) == ("deleted", "deleted by ml-dev (job action)")
    assert world["member"].post(_url(pg, "delete")).status_code == 404


def test_completed_jobs_refuse_with_a_sentence(world: dict[str, Any]) -> None:
    pg = world["pg"]
    PodGroup.objects.filter(pk=pg.pk).update(phase="Completed")
    for action in ("suspend", "resume", "requeue"):
        r = world["admin"].post(_url(pg, action))
        assert r.status_code == 409 and _detail(r) == f"job ml/train has completed: there is nothing left to {action}"


@pytest.mark.parametrize("action", ["suspend", "resume", "requeue", "delete"])
def test_who_may_act(world: dict[str, Any], action: str) -> None:
    pg = world["pg"]
    r = world["other"].post(_url(pg, action))
    assert r.status_code == 404  # another team does not see the job at all
    r = world["agent"].post(_url(pg, action))
    assert r.status_code == 403 and "not a member of any team" in _detail(r)
    assert APIClient().post(_url(pg, action)).status_code == 401
    # a team member who reads the job through its quota group, but whose team owns neither queue nor namespace
    cv_reader = world["other"]
    Pod.objects.filter(podgroup=pg, name="train-0").update(quota_group=QuotaGroup.objects.get(name="g-cv"))
    r = cv_reader.post(_url(pg, action))
    assert r.status_code == 403
    assert "you may only change jobs in your team's queues and namespaces" in _detail(r)
    pg.refresh_from_db()
    assert pg.suspended_at is None and pg.reason == ""


def test_the_manifest_is_the_job_as_simulate_reads_it(world: dict[str, Any]) -> None:
    pg = world["pg"]
    r = world["member"].get(_url(pg, "manifest"))
    assert r.status_code == 200 and r["Content-Type"].startswith("application/yaml")
    docs = list(yaml.safe_load_all(r.content))
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == [
        ("PodGroup", "train"), ("Pod", "train-0"), ("Pod", "train-1"), ("Pod", "train-2")
    ]  # fmt: skip
    assert docs[0]["spec"] == {"minMember": 2, "queue": "ml"}
    assert docs[1]["spec"]["nodeName"] == "n1" and docs[1]["status"]["phase"] == "Running"
    assert world["member"].post(_url(pg, "suspend")).status_code == 200
    docs = world["member"].get(_url(pg, "manifest") + "?output=json").json()
    assert docs[0]["metadata"]["annotations"]["fairway.io/suspended"] == "true"
    r = world["member"].get(_url(pg, "manifest") + "?output=xml")
    assert r.status_code == 400 and error_attrs(r) == {"output": "output must be yaml or json, not 'xml'"}
    assert world["other"].get(_url(pg, "manifest")).status_code == 404
