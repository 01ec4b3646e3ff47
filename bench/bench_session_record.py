"""Benchmark: what recording a session's inputs (``scheduling.recording``) costs the live session.

On the cluster of ``bench/bench_steady.py`` (N nodes, 10 N pods; built unless ``--reuse``), in one process as a
worker would, sessions run in pairs, one with recording on and one with it off, alternately (the same load on the
machine for both), in the steady state and after ``--churn`` % of the pods changed before each session. It prints
for each: the session's CPU time (this process's) with and without recording, the recording's own CPU time (each
record's ``record_ms``: the delta found and compressed, the row written), a keyframe's (the whole snapshot), and the
cost per session with a keyframe as often as the settings make one (``FAIRWAY_SESSION_RECORD_KEYFRAME_SESSIONS``, or
sooner: ``..._KEYFRAME_DELTA_RATIO``), as a share of the session's CPU time. Then it replays the last recorded session (``planning.session_replay``) and says whether it
decided the same.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/fairway_record_bench .venv/bin/python bench/bench_session_record.py \
        --nodes 5000 --repeat 10
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/fairway_record_bench")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")
os.environ.setdefault("STATICFILES_STORAGE", "django.contrib.staticfiles.storage.StaticFilesStorage")

import bench_steady  # noqa: E402  (after the environment it reads)

INSERT_MS = 0.15  # the row's prepared insert (not in ``record_ms``): 0.12-0.16 ms measured over 600 inserts


def _record_ms(cluster_id: int) -> tuple[float, str, int]:
    from scheduling.models import SessionRecord

    row = SessionRecord.objects.filter(cluster_id=cluster_id).order_by("-session_id").first()
    assert row is not None
    return row.record_ms, row.kind, len(row.payload)


def pairs(cluster_id: int, repeat: int, before: Any, block: int = 4) -> dict[str, list[float]]:
    """``repeat`` sessions with recording on and as many with it off, in alternate blocks of ``block`` (the same load
    on the machine for both). The first session of each block is left out of the figures: the first with recording
    on after some without diffs its pods against an older snapshot than its predecessor's, which a worker that always
    records never does."""
    from django.conf import settings

    fw = settings.FAIRWAY
    hours = fw["SESSION_RECORD_RETENTION_HOURS"] or 24.0
    out: dict[str, list[float]] = {"on": [], "off": [], "record": [], "bytes": []}
    for i in range(2 * ((repeat + block - 2) // (block - 1))):
        on = i % 2 == 0
        fw["SESSION_RECORD_RETENTION_HOURS"] = hours if on else 0.0
        for k in range(block):
            if before is not None:
                before()
            run = bench_steady.one_session(cluster_id)
            if k == 0:
                continue
            out["on" if on else "off"].append(run["cpu"])
            if on:
                ms, kind, size = _record_ms(cluster_id)
                assert kind == "delta", kind
                out["record"].append(ms)
                out["bytes"].append(float(size))
    fw["SESSION_RECORD_RETENTION_HOURS"] = hours
    return out


def report(label: str, runs: dict[str, list[float]], keyframe_ms: float, keyframe_bytes: int) -> None:
    """The recording's cost per session: its own CPU time, plus a keyframe's shared by the sessions between two (at
    most ``FAIRWAY_SESSION_RECORD_KEYFRAME_SESSIONS``, fewer when the deltas reach ``..._KEYFRAME_DELTA_RATIO`` times
    the keyframe's bytes first), against the session's CPU time without recording."""
    from django.conf import settings

    fw = settings.FAIRWAY
    med = statistics.median
    on, off, rec, size = med(runs["on"]), med(runs["off"]), med(runs["record"]), med(runs["bytes"])
    between = min(
        fw["SESSION_RECORD_KEYFRAME_SESSIONS"], fw["SESSION_RECORD_KEYFRAME_DELTA_RATIO"] * keyframe_bytes / size
    )
    per_session = rec + INSERT_MS + keyframe_ms / between
    print(
        f"  {label}: session CPU {off:,.1f} ms without recording, {on:,.1f} ms with (medians of {len(runs['off'])} "
        f"runs each, in alternate blocks); the recording {rec:,.2f} ms (min {min(runs['record']):,.2f}, max {max(runs['record']):,.2f}) "
        f"+ its insert ~{INSERT_MS} ms, {size / 1024:,.1f} KiB a delta; a keyframe every {between:,.0f} sessions: "
        f"{per_session:,.2f} ms a session = {100.0 * per_session / off:.2f} % of the session's CPU"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--churn", type=float, default=1.0, help="percentage of the pods changed (default 1)")
    parser.add_argument("--reuse", action="store_true", help="use the cluster an earlier run built")
    args = parser.parse_args()
    pods = args.nodes * 10
    if not args.reuse:
        bench_steady.build(args.nodes, pods)
    import django

    django.setup()
    from planning.session_replay import find_record, replay_record
    from scheduling import recording
    from scheduling.feed.mirror import forget
    from scheduling.models import Cluster

    forget()
    recording.forget()
    cluster = Cluster.objects.get(name="bench")
    first = bench_steady.one_session(cluster.pk)  # a full read, and the first record: a keyframe
    ms, kind, size = _record_ms(cluster.pk)
    print(
        f"{args.nodes:,} nodes / {pods:,} pods: first session {first['cpu']:,.0f} ms CPU; {kind} {ms:,.0f} ms CPU, "
        f"{size / 1024 / 1024:,.1f} MiB"
    )
    bench_steady.one_session(cluster.pk)  # reads back the first session's bindings
    keyframes = []
    for _ in range(3):
        recording.forget(cluster.pk)  # the next record is a keyframe
        bench_steady.one_session(cluster.pk)
        ms, kind, size = _record_ms(cluster.pk)
        assert kind == "keyframe"
        keyframes.append(ms)
    keyframe_ms = statistics.median(keyframes)
    print(f"  a keyframe (the whole snapshot): {keyframe_ms:,.0f} ms CPU (of {keyframes}), {size / 1024:,.0f} KiB")
    report("steady state", pairs(cluster.pk, args.repeat * 3, None), keyframe_ms, size)
    n = max(2, int(pods * args.churn / 100))
    base = [int(time.time()) * 100]

    def change() -> None:
        base[0] += 1
        bench_steady.churn(cluster.pk, n, base[0])

    report(f"{args.churn:g} % changed ({n:,} pods)", pairs(cluster.pk, args.repeat, change), keyframe_ms, size)
    record = find_record(_last_session(cluster.pk))
    t0 = time.process_time()
    doc = replay_record(record)
    print(
        f"  replay of the last session ({doc['inputs']['deltas']} deltas after its keyframe): "
        f"{'identical' if doc['identical'] else doc['differences'][:5]}, {time.process_time() - t0:,.1f} s CPU "
        f"(rebuild {doc['cpu_ms']['rebuild']:,.0f} ms, engine {doc['cpu_ms']['engine']:,.0f} ms)"
    )


def _last_session(cluster_id: int) -> int:
    from scheduling.models import SessionRecord

    row = SessionRecord.objects.filter(cluster_id=cluster_id).order_by("-session_id").first()
    assert row is not None
    return int(row.session_id)


if __name__ == "__main__":
    main()
