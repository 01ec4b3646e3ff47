"""``planning.estimates``: when a waiting job will start, from the cluster's rows (its running and waiting jobs, the
recorded runtimes of its queue), kept per cluster for a TTL, refreshed by the ``estimates`` task; the why endpoint's
``start_estimate`` and the job page's line."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from planning import estimates, tasks, valuecache
from planning.models import StartEstimates
from scheduling.models import Cluster, JobRecord, Pod, PodGroup
from tests.frontend import builders

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def knobs(settings: Any) -> None:
    settings.FAIRWAY = {
        **settings.FAIRWAY,
        "START_ESTIMATE_DRAWS": 5,
        "START_ESTIMATE_TTL_SECONDS": 60.0,
        "START_ESTIMATE_JOBS_PER_QUEUE": 2,
        "START_ESTIMATE_PAGE_BUDGET_SECONDS": 30.0,
        "START_ESTIMATE_HORIZON_HOURS": 2.0,
        "START_ESTIMATE_WORKER_WAIT_SECONDS": 0.0,  # a reader computes at once (the worker's wait: its own test)
    }
    valuecache.clear()


@pytest.fixture
def ask(django_capture_on_commit_callbacks: Any) -> Any:
    """``estimate_of`` as one reading request: its advisory writes (the round a reader computed, the claim that asks
    the worker) run once its transaction commits (``core.advisory``), here at the end of the call."""

    def read(pg: PodGroup, now: Any = None) -> dict[str, Any] | None:
        with django_capture_on_commit_callbacks(execute=True):
            return estimates.estimate_of(pg, now)

    return read


def record(cluster: Cluster, name: str, runtime: float, ago: timedelta = timedelta(hours=1)) -> None:
    JobRecord.objects.create(
        cluster=cluster,
        namespace="ns-a",
        name=name,
        queue="team-a",
        roles=[["", 1, {"cpu": 8000}]],
        submitted=timezone.now() - ago,
        started=timezone.now() - ago,
        finished=timezone.now() - ago + timedelta(seconds=runtime),
        runtime=runtime,
    )


@pytest.fixture
def world() -> dict[str, Any]:
    """One 8-core node; team-a's job ``run`` (8 cores) started 10 min ago, ``wait`` and ``later`` (8 cores each)
    wait behind it; every recorded team-a job ran 30 min."""
    builders.node("n1", cpu="8", memory="32Gi")
    builders.queue("team-a")
    builders.namespace("ns-a", queue_name="team-a")
    cluster = builders.cluster()
    now = timezone.now()
    builders.job("ns-a", "run", "team-a", 1, {"cpu": "8"}, running=1, on="n1")
    Pod.objects.filter(name="run-0").update(started=now - timedelta(minutes=10))
    wait = builders.job("ns-a", "wait", "team-a", 1, {"cpu": "8"})
    later = builders.job("ns-a", "later", "team-a", 1, {"cpu": "8"})
    PodGroup.objects.filter(pk=wait.pk).update(created=now - timedelta(minutes=5))
    PodGroup.objects.filter(pk=later.pk).update(created=now - timedelta(minutes=4))
    for i in range(3):
        record(cluster, f"old-{i}", 1800.0)
    return {
        "cluster": cluster,
        "now": now,
        "wait": PodGroup.objects.get(pk=wait.pk),
        "later": PodGroup.objects.get(pk=later.pk),
    }


def test_a_waiting_job_gets_the_start_worked_out_by_hand(world: dict[str, Any]) -> None:
    # run (10 min in) runs 30 min like every recorded job: it ends 20 min from now; wait starts at the next session
    # (the forecast's 60 s grid); later starts a period after wait has run its 30 min
    got = estimates.estimate_of(world["wait"], world["now"])
    assert got is not None and got["state"] == "estimated"
    assert got["p50_seconds"] == got["p90_seconds"] == 1260.0
    assert got["sentence"] == "likely to start in about 21 min (9 times in 10)"  # every draw the same: one time
    assert got["draws"] == 5
    later = estimates.estimate_of(world["later"], world["now"])
    assert later is not None and later["p50_seconds"] == 1260.0 + 1860.0


def test_the_bounds_bracket_the_true_start_when_runtimes_vary(world: dict[str, Any], settings: Any) -> None:
    settings.FAIRWAY = {**settings.FAIRWAY, "START_ESTIMATE_DRAWS": 20}
    JobRecord.objects.all().delete()
    cluster = world["cluster"]
    for i, minutes in enumerate((15, 20, 30, 40, 60)):
        record(cluster, f"old-{i}", minutes * 60.0)
    got = estimates.estimate_of(world["wait"], world["now"])
    assert got is not None and got["state"] == "estimated"
    # run truly takes 30 min: wait starts 20 min from now, within the draws' range and under the 90 % bound
    assert got["p50_seconds"] <= got["p90_seconds"]
    assert 1260.0 <= got["p90_seconds"] <= 51 * 60


def test_a_job_that_can_never_start_says_why(world: dict[str, Any], settings: Any) -> None:
    """The replays run to the horizon, as the job never starts: an hour of them rather than two, as the reason comes
    from the engine's sessions on the empty cluster whatever the horizon."""
    settings.FAIRWAY = {**settings.FAIRWAY, "START_ESTIMATE_HORIZON_HOURS": 1.0}
    huge = builders.job("ns-a", "huge", "team-a", 1, {"cpu": "16"}, priority=10)  # first in its queue
    got = estimates.estimate_of(huge, world["now"])
    assert got is not None and got["state"] == "never"
    assert got["sentence"].startswith("it cannot start as the cluster and its quotas are: ")
    assert "cpu" in got["sentence"] and "16" in got["sentence"]


def test_without_any_recorded_runtime_it_says_so_but_still_finds_a_job_that_never_fits(world: dict[str, Any]) -> None:
    JobRecord.objects.all().delete()
    huge = builders.job("ns-a", "huge", "team-a", 1, {"cpu": "16"}, priority=10)
    got = estimates.estimate_of(world["wait"], world["now"])
    assert got is not None and got["state"] == "no_history" and "no finished job" in got["sentence"]
    never = estimates.estimate_of(huge, world["now"])
    assert never is not None and never["state"] == "never"


def test_a_running_job_has_no_estimate(world: dict[str, Any]) -> None:
    assert estimates.estimate_of(PodGroup.objects.get(name="run"), world["now"]) is None


def test_only_the_first_jobs_of_each_queue_are_estimated(world: dict[str, Any], settings: Any) -> None:
    settings.FAIRWAY = {**settings.FAIRWAY, "START_ESTIMATE_JOBS_PER_QUEUE": 1}
    assert estimates.estimate_of(world["wait"], world["now"])["state"] == "estimated"  # type: ignore[index]
    got = estimates.estimate_of(world["later"], world["now"])
    assert got is not None and got["state"] == "not_estimated" and "first 1 waiting jobs" in got["sentence"]


def test_the_estimates_are_kept_for_the_ttl_then_the_task_is_asked_once(
    world: dict[str, Any], ask: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[int] = []
    monkeypatch.setattr(tasks.estimate_starts, "delay", lambda cluster_id: sent.append(cluster_id))
    now = world["now"]
    first = ask(world["wait"], now)
    row = StartEstimates.objects.get()
    # within the TTL: the same row, the time left counted from its computation; nothing asked of the worker
    again = ask(world["wait"], now + timedelta(seconds=30))
    assert StartEstimates.objects.get().computed == row.computed and sent == []
    assert first is not None and again is not None
    assert again["p50_seconds"] == pytest.approx(first["p50_seconds"] - 30)
    # past the TTL: the row still answers, and the estimates worker is asked for a new round, once
    ask(world["wait"], now + timedelta(seconds=90))
    ask(world["later"], now + timedelta(seconds=95))
    assert sent == [world["cluster"].pk]
    assert StartEstimates.objects.get().computed == row.computed
    # past three TTLs (no worker kept up): the reader computes a new round itself
    ask(world["wait"], now + timedelta(seconds=200))
    assert StartEstimates.objects.get().computed == now + timedelta(seconds=200)


def test_a_reader_without_a_round_asks_the_worker_and_computes_only_when_it_does_not_answer(
    world: dict[str, Any], ask: Any, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """No round yet: the page and the API do not compute one in the request; they ask the estimates worker (once for
    every reader) and say "estimating"; only past the wait, with still no round, does a reader compute it."""
    settings.FAIRWAY = {**settings.FAIRWAY, "START_ESTIMATE_WORKER_WAIT_SECONDS": 30.0}
    sent: list[int] = []
    monkeypatch.setattr(tasks.estimate_starts, "delay", lambda cluster_id: sent.append(cluster_id))
    now = world["now"]
    first = ask(world["wait"], now)
    again = ask(world["later"], now + timedelta(seconds=20))
    assert first is not None and again is not None
    assert (first["state"], again["state"]) == ("pending", "pending") and first["computed"] is None
    assert first["sentence"] == "estimating when it will start\u2026"
    assert sent == [world["cluster"].pk] and not StartEstimates.objects.exists()
    # the worker's round answers every reader after it, and the next stale round is asked for anew
    assert tasks.estimate_starts.apply(args=[world["cluster"].pk]).get() == "ran"
    got = ask(world["wait"], now + timedelta(seconds=25))
    assert got is not None and got["state"] == "estimated"
    StartEstimates.objects.update(computed=now - timedelta(seconds=600))  # older than three TTLs
    stale = ask(world["wait"], now + timedelta(seconds=26))
    assert stale is not None and stale["state"] == "pending" and len(sent) == 2
    # no round came within the wait: the reader computes it itself
    late = ask(world["wait"], now + timedelta(seconds=60))
    assert late is not None and late["state"] == "estimated" and len(sent) == 2
    assert StartEstimates.objects.get().computed == now + timedelta(seconds=60)


def test_a_job_submitted_after_the_round_is_pending_and_asks_for_a_new_one(
    world: dict[str, Any], ask: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[int] = []
    monkeypatch.setattr(tasks.estimate_starts, "delay", lambda cluster_id: sent.append(cluster_id))
    ask(world["wait"], world["now"])
    PodGroup.objects.filter(pk=world["later"].pk).update(created=world["now"] + timedelta(seconds=5))
    StartEstimates.objects.update(jobs={k: v for k, v in StartEstimates.objects.get().jobs.items() if "later" not in k})
    got = ask(PodGroup.objects.get(pk=world["later"].pk), world["now"] + timedelta(seconds=10))
    assert got is not None and got["state"] == "pending" and sent == [world["cluster"].pk]
    # the task's round (run here as the worker would) estimates it
    assert tasks.estimate_starts.apply(args=[world["cluster"].pk]).get() == "ran"
    got = ask(PodGroup.objects.get(pk=world["later"].pk))
    assert got is not None and got["state"] == "estimated"


def test_the_task_of_a_deleted_cluster_is_gone(db: None) -> None:
    assert tasks.estimate_starts.apply(args=[987654]).get() == "gone"


def test_the_task_goes_to_the_estimates_queue(settings: Any) -> None:
    assert settings.CELERY_TASK_ROUTES["planning.tasks.estimate_starts"] == {"queue": "estimates"}


def test_the_why_endpoint_and_the_job_page_give_the_estimate(
    world: dict[str, Any], admin_api: Any, client: Any, make_user: Any
) -> None:
    pg = world["wait"]
    body = admin_api.get(f"/api/v1/podgroups/{pg.pk}/why/").json()
    estimate = body["start_estimate"]
    assert estimate["state"] == "estimated" and estimate["sentence"].startswith("likely to start in about 2")
    assert 1100 < estimate["p50_seconds"] <= 1260 and estimate["draws"] == 5
    running = PodGroup.objects.get(name="run")
    assert admin_api.get(f"/api/v1/podgroups/{running.pk}/why/").json()["start_estimate"] is None
    client.force_login(make_user("boss", staff=True))
    page = client.get("/jobs/ns-a/wait/").content.decode()
    assert 'data-testid="job-start-estimate" data-state="estimated"' in page
    assert "Likely to start in about" in page and "(9 times in 10)." in page


def test_the_sentence_in_peoples_words() -> None:
    e = {"p50_seconds": 720.0, "p90_seconds": 2400.0, "later_than_seconds": None}
    assert estimates.sentence(e) == "likely to start in about 12 min (half the time), within 40 min (9 times in 10)"
    e = {"p50_seconds": 1190.0, "p90_seconds": 1220.0, "later_than_seconds": None}  # the same minute: said once
    assert estimates.sentence(e) == "likely to start in about 20 min (9 times in 10)"
    e = {"p50_seconds": 20.0, "p90_seconds": 70.0, "later_than_seconds": None}
    assert estimates.sentence(e) == "likely to start within a minute (9 times in 10)"
    e = {"p50_seconds": 30.0, "p90_seconds": None, "later_than_seconds": 7200.0}
    assert estimates.sentence(e) == (
        "likely to start within a minute (half the time), but it may take more than 2 h (1 time in 10 or more)"
    )


def test_a_page_round_the_budget_cuts_says_how_far_it_looked_and_asks_the_worker(
    world: dict[str, Any], ask: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[int] = []
    monkeypatch.setattr(tasks.estimate_starts, "delay", lambda cluster_id: sent.append(cluster_id))
    settings.FAIRWAY = {**settings.FAIRWAY, "START_ESTIMATE_PAGE_BUDGET_SECONDS": 1e-9}
    got = ask(world["later"], world["now"])
    assert got is not None and got["state"] == "estimated" and got["p50_seconds"] is None
    assert "(as far as the replays the CPU budget allowed looked)" in got["sentence"]
    assert sent == [world["cluster"].pk]  # the worker's round, with its own budget, follows


def test_a_round_stops_at_twice_its_budget_of_wall_clock_time_on_a_loaded_machine(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker given a sliver of a core spent its 20 s of CPU over more than the task's 80 s limit and was killed
    with nothing written (seen under ``make run`` on the loaded machine). Here the wall clock runs 10 s a reading
    while the CPU clock barely moves: the round stops at its budget's wall-clock bound and writes what it found."""
    wall = iter(range(0, 10**6, 10))
    real = estimates.budget_clock
    monkeypatch.setattr(estimates, "budget_clock", lambda: real(wall_clock=lambda: float(next(wall))))
    row = estimates.refresh(world["cluster"], budget=15.0)  # 30 s of wall clock: three readings after the start
    assert row.jobs, row.jobs
    for entry in row.jobs.values():  # cut by the wall clock: fewer than the 5 draws, "as far as it looked"
        assert entry["cut"] and entry["draws"] < 5 and entry["later_than"] is not None, entry


def test_the_budget_clock_counts_cpu_time_when_the_worker_has_its_core() -> None:
    cpu, wall = iter([0.0, 5.0]), iter([100.0, 106.0])
    assert estimates.budget_clock(lambda: next(cpu), lambda: next(wall))() == 5.0  # 5 s of CPU in 6 s: the CPU time
    cpu, wall = iter([0.0, 1.0]), iter([100.0, 130.0])
    # 1 s of CPU in 30 s: the wall-clock time over 2
    assert estimates.budget_clock(lambda: next(cpu), lambda: next(wall))() == 15.0


def test_the_job_page_fills_its_estimate_in_by_itself_while_it_is_computed(
    world: dict[str, Any], client: Any, make_user: Any, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """While the worker computes the round, the page says "estimating" and loads ``estimate.js``, which asks the page
    for the estimate alone (``?estimate=1``) until it is there: no reload. A job that no longer waits answers none;
    someone who may not read the job gets no estimate either."""
    settings.FAIRWAY = {**settings.FAIRWAY, "START_ESTIMATE_WORKER_WAIT_SECONDS": 30.0}
    monkeypatch.setattr(tasks.estimate_starts, "delay", lambda cluster_id: None)
    client.force_login(make_user("boss", staff=True))
    page = client.get("/jobs/ns-a/wait/").content.decode()
    assert 'data-state="pending" data-poll-url="?estimate=1"' in page and "frontend/js/estimate" in page
    pending = client.get("/jobs/ns-a/wait/?estimate=1")
    assert pending["Content-Type"] == "application/json" and pending.json()["state"] == "pending"
    assert tasks.estimate_starts.apply(args=[world["cluster"].pk]).get() == "ran"
    done = client.get("/jobs/ns-a/wait/?estimate=1").json()
    assert done["state"] == "estimated" and 'data-state="estimated"' in done["html"]
    assert "Likely to start in about" in done["html"] and "data-poll-url" not in done["html"]
    assert "frontend/js/estimate" not in client.get("/jobs/ns-a/wait/").content.decode()  # nothing left to wait for
    assert client.get("/jobs/ns-a/run/?estimate=1").json() == {"state": None, "html": ""}  # it runs: no estimate
    client.force_login(make_user("stranger"))
    assert client.get("/jobs/ns-a/wait/?estimate=1").status_code in (403, 404)
