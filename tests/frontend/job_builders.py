"""A waiting job's story for the job page's tests: its reason and blocker, its reasons over time, a pod of it
reclaimed by another team's job, and a department with a lead and a job of its own."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from scheduling.models import Eviction, PodGroup, PodGroupReason, SchedulingSession
from tests.frontend import builders as b

EVAL_BLOCKER = {
    "kind": "quota",
    "name": "x",
    "resource": "cpu",
    "requested": 20000,
    "available": 10000,
    "limit": "runtime",
}


def job_story() -> PodGroup:
    """On top of the lending example (``builders.lending`` and its teams): x-ns/eval waiting on quota group x, a
    pod of it reclaimed earlier by y-ns/serve, its reasons over time, and a department (research -> nlp) with a
    lead (research-lead) and a job of its own (nlp-ns/bert)."""
    cluster = b.cluster()
    now = timezone.now()
    session = SchedulingSession.objects.create(cluster=cluster, started=now, finished=now)
    PodGroup.objects.filter(name="eval").update(blocker=EVAL_BLOCKER)
    pg = PodGroup.objects.get(name="eval")
    PodGroupReason.objects.create(
        podgroup=pg, session=session, time=now - timedelta(minutes=5), phase="Running", reason="", message=""
    )
    PodGroupReason.objects.create(
        podgroup=pg,
        session=session,
        time=now,
        phase="Pending",
        reason="NotEnoughResources",
        message="quota group x runtime: insufficient cpu, requested 20, available 10",
        blocker=EVAL_BLOCKER,
    )
    pod = pg.pods.get()
    Eviction.objects.create(
        cluster=cluster,
        session=session,
        pod=pod,
        pod_uid="x-ns/eval-0",
        namespace="x-ns",
        node="n1",
        action="reclaim",
        reason="Reclaimed",
        message="reclaimed for y-ns/serve-0 of queue yq: queue xq holds 100 cpu, above its deserved 50",
        preemptor="y-ns/serve-0",
        blocker={
            "kind": "queue",
            "name": "xq",
            "resource": "cpu",
            "requested": 100000,
            "available": 50000,
            "limit": "deserved",
        },
        created=now - timedelta(minutes=2),
    )
    b.queue("research")
    b.queue("nlp", parent="research")
    b.namespace("nlp-ns", queue_name="nlp")
    b.job("nlp-ns", "bert", "nlp", 2, {"cpu": "1"})
    b.team("research-team", queues=["research"])
    b.user("research-lead", teams=["research-team"])
    return pg
