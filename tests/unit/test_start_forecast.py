"""``engine.replay.forecast``: when a waiting job starts, by a forward replay from the cluster's state with runtimes
drawn from its queue's recorded ones (the starts worked out by hand in the comments), and why a job that can never
start cannot."""

from __future__ import annotations

import itertools

from engine.objects import PodGroupInfo, PodGroupPhase, Snapshot, TaskInfo, TaskStatus
from engine.replay.forecast import forecast_starts, nearest_rank, waiting_jobs
from engine.replay.loop import tree_snapshot
from engine.resources import parse_resource_list

NOW = 1_780_000_000.0  # on the 60 s grid of the forecast (its origin)
PERIOD = 60.0
# How far ahead the forecasts of a job that can never start look: an hour (60 sessions) rather than the default six;
# the job waits alone on an idle cluster, so later sessions see the same state, and the reason comes from the
# engine's own sessions on the empty cluster, whatever the horizon.
NEVER_HORIZON = 3600.0


def tree(capability: str | None = None) -> Snapshot:
    queue: dict[str, object] = {"weight": 1}
    if capability is not None:
        queue["capability"] = {"nvidia.com/gpu": capability}
    return tree_snapshot(
        [
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": "n1"},
                "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "4", "pods": "110"}},
            },
            {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "a"}, "spec": queue},
        ]
    )


def job(name: str, gpus: int, submit: float, *, started: float | None = None) -> tuple[PodGroupInfo, TaskInfo]:
    pg = PodGroupInfo(
        namespace="ns",
        name=name,
        queue="a",
        phase=PodGroupPhase.RUNNING if started is not None else PodGroupPhase.PENDING,
        creation_timestamp=submit,
    )
    task = TaskInfo(
        namespace="ns",
        name=f"{name}-0",
        podgroup=pg.key,
        request=parse_resource_list({"cpu": "1", "nvidia.com/gpu": str(gpus)}, "request"),
        status=TaskStatus.RUNNING if started is not None else TaskStatus.PENDING,
        node="n1" if started is not None else None,
        start_timestamp=started,
        creation_timestamp=submit,
    )
    return pg, task


def cluster(*jobs: tuple[PodGroupInfo, TaskInfo], capability: str | None = None) -> Snapshot:
    return tree(capability).with_podgroups([pg for pg, _ in jobs]).with_tasks([t for _, t in jobs])


# r1 holds the node's 4 GPUs since 10 min ago; w1 then w2 (4 GPUs each) wait in the same queue.
STATE = cluster(
    job("r1", 4, NOW - 900, started=NOW - 600),
    job("w1", 4, NOW - 300),
    job("w2", 4, NOW - 200),
)


def test_with_one_recorded_runtime_the_forecast_is_the_start_worked_out_by_hand() -> None:
    # every job runs 30 min: r1 finishes at now + 20 min (it ran 10), w1 starts at the next session (+ 1 period),
    # runs 30 min, w2 starts one period after that
    got = forecast_starts(STATE, now=NOW, period=PERIOD, runtimes={"a": [1800.0]}, targets=["ns/w1", "ns/w2"], draws=3)
    assert got["ns/w1"].starts == (1260.0, 1260.0, 1260.0)
    assert got["ns/w2"].starts == (3120.0, 3120.0, 3120.0)
    assert got["ns/w1"].quantile(0.5) == got["ns/w1"].quantile(0.9) == 1260.0
    assert got["ns/w1"].never is None


def test_the_draws_bracket_the_true_start() -> None:
    # recorded runtimes 20, 30 and 40 min: r1 (10 min in) ends 10, 20 or 30 min from now, w1 starts a period later
    runtimes = {"a": [1200.0, 1800.0, 2400.0]}
    got = forecast_starts(STATE, now=NOW, period=PERIOD, runtimes=runtimes, targets=["ns/w1"], draws=30, seed=4)
    w1 = got["ns/w1"]
    assert set(w1.starts) <= {660.0, 1260.0, 1860.0} and len(set(w1.starts)) > 1
    p50, p90 = w1.quantile(0.5), w1.quantile(0.9)
    assert p50 is not None and p90 is not None and p50 <= p90
    # r1 truly runs 30 min (one of the recorded runtimes): w1 starts 21 min from now, within the 90 % bound
    assert min(s for s in w1.starts if s is not None) <= 1260.0 <= p90


def test_a_running_job_runs_longer_than_it_already_has() -> None:
    # r1 has run 25 min: of the recorded 20, 30 and 40 min only 30 and 40 are left for it (5 or 15 min more)
    state = cluster(job("r1", 4, NOW - 2000, started=NOW - 1500), job("w1", 4, NOW - 300))
    got = forecast_starts(
        state, now=NOW, period=PERIOD, runtimes={"a": [1200.0, 1800.0, 2400.0]}, targets=["ns/w1"], draws=20
    )
    assert set(got["ns/w1"].starts) <= {360.0, 960.0}
    # past every recorded runtime (50 min in), it runs as long again: 50 min more
    state = cluster(job("r1", 4, NOW - 4000, started=NOW - 3000), job("w1", 4, NOW - 300))
    got = forecast_starts(state, now=NOW, period=PERIOD, runtimes={"a": [1200.0]}, targets=["ns/w1"], draws=2)
    assert got["ns/w1"].starts == (3060.0, 3060.0)


def test_a_queue_without_a_recorded_runtime_draws_from_every_queues() -> None:
    got = forecast_starts(STATE, now=NOW, period=PERIOD, runtimes={"other": [1800.0]}, targets=["ns/w1"], draws=2)
    assert got["ns/w1"].starts == (1260.0, 1260.0)


def test_past_the_horizon_the_forecast_says_how_far_it_looked() -> None:
    got = forecast_starts(
        STATE, now=NOW, period=PERIOD, runtimes={"a": [1800.0]}, targets=["ns/w2"], draws=2, horizon=2000
    )
    w2 = got["ns/w2"]
    assert w2.starts == (None, None) and w2.quantile(0.5) is None and w2.bound(0.5) == 2000
    assert w2.never is None  # alone on the cluster it starts: it is only late


def test_the_budget_stops_the_draws_and_says_how_far_they_got() -> None:
    ticks = itertools.count()
    got = forecast_starts(
        STATE,
        now=NOW,
        period=PERIOD,
        runtimes={"a": [1800.0]},
        targets=["ns/w2"],
        draws=4,
        clock=lambda: float(next(ticks)),  # one "second" per look at the clock
        budget=4.0,
    )
    w2 = got["ns/w2"]
    assert 1 <= len(w2.starts) < 4  # cut: not every draw ran
    assert all(s is None for s in w2.starts) and all(r < 3120.0 for r in w2.reached)


def test_a_gang_bigger_than_the_cluster_can_never_start_and_the_engine_says_why() -> None:
    state = cluster(job("big", 8, NOW - 60))
    got = forecast_starts(
        state, now=NOW, period=PERIOD, runtimes={"a": [600.0]}, targets=["ns/big"], draws=2, horizon=NEVER_HORIZON
    )
    never = got["ns/big"].never
    assert never is not None and "nvidia.com/gpu" in never


def test_a_job_over_its_queues_capability_can_never_start() -> None:
    state = cluster(job("w", 4, NOW - 60), capability="2")
    got = forecast_starts(
        state, now=NOW, period=PERIOD, runtimes={"a": [600.0]}, targets=["ns/w"], draws=2, horizon=NEVER_HORIZON
    )
    never = got["ns/w"].never
    assert never is not None and "queue a" in never and "requested 4, available 2" in never


def test_waiting_jobs_in_queue_order_first_n_per_queue() -> None:
    assert waiting_jobs(STATE) == ["ns/w1", "ns/w2"]
    assert waiting_jobs(STATE, per_queue=1) == ["ns/w1"]


def test_nearest_rank_counts_a_draw_not_started_as_later_than_all() -> None:
    assert nearest_rank([30.0, 10.0, None, 20.0], 0.5) == 20.0
    assert nearest_rank([30.0, 10.0, None, 20.0], 0.9) is None
    assert nearest_rank([], 0.5) is None


def test_the_work_that_keeps_coming_may_pass_the_targets() -> None:
    # a priority-10 job of 4 GPUs was submitted 30 min ago: its copies arrive once an hour ahead, each placed before w2
    from engine.replay.trace import TraceJob, TraceRole

    urgent = TraceJob(
        namespace="ns",
        name="urgent",
        queue="a",
        submit=NOW - 1800,
        priority=10,
        roles=(TraceRole(name="", pods=1, request=parse_resource_list({"cpu": "1", "nvidia.com/gpu": "4"}, "r")),),
    )
    kwargs = {"now": NOW, "period": PERIOD, "runtimes": {"a": [1800.0]}, "targets": ["ns/w2"], "draws": 6}
    alone = forecast_starts(STATE, **kwargs)  # type: ignore[arg-type]
    busy = forecast_starts(STATE, recent=[urgent], window=3600.0, **kwargs)  # type: ignore[arg-type]
    assert alone["ns/w2"].starts == (3120.0,) * 6
    later = [s for s in busy["ns/w2"].starts if s is not None]
    assert all(s >= 3120.0 for s in later) and (len(later) < 6 or max(later) > 3120.0)
