"""Benchmark: the memory of a worker holding a big cluster, and what its sessions add to the database per day.

Builds the cluster of ``bench/bench_store_session.py`` (N nodes, 10 N pending pods in gang jobs; PostgreSQL), then,
in this process as a worker runs them (``scheduling.tasks.run_session``):

* **memory**: the resident set size (RSS) after Django and the engine's imports, after the first session (the
  cluster's copy read in full, 10 N placements), after the second (its own writes read back), and after
  ``--sessions`` sessions each after 1 % of the pods changed (``bench_steady.churn``); the peak (``ru_maxrss``).
  The breakdown: the interpreter with the project's modules; the cluster's copy and the engine's kept state (what
  stays after the sessions); the transient peak of a session above that;
* **storage**: the size of every table (``pg_total_relation_size``, indexes and TOAST included) before and after
  the churned sessions; per session, the bytes each table grew; per day at one session a second, with that churn
  and with none (a steady cluster), and what the retention keeps (docs/benchmarks.md states the figures).

    .venv/bin/python bench/bench_footprint.py --nodes 20000 --sessions 20

``DATABASE_URL`` picks the server (default ``postgres://postgres@127.0.0.1:5432/fairway_bench``); the cluster is
rebuilt unless ``--reuse`` (then it must be the size asked).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/fairway_bench")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")
os.environ.setdefault("STATICFILES_STORAGE", "django.contrib.staticfiles.storage.StaticFilesStorage")

from bench_steady import build, churn, one_session  # noqa: E402

MB = 1024 * 1024


def rss() -> int:
    """This process's resident set size now, in bytes (Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def table_sizes() -> dict[str, int]:
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(
            "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'"
        )
        return dict(cur.fetchall())


def row_counts(tables: list[str]) -> dict[str, int]:
    from django.db import connection

    out = {}
    with connection.cursor() as cur:
        for t in tables:
            cur.execute(f'SELECT count(*) FROM "{t}"')
            out[t] = cur.fetchone()[0]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=20000)
    parser.add_argument("--sessions", type=int, default=20, help="sessions after 1 %% churn each")
    parser.add_argument("--reuse", action="store_true", help="use the cluster built by an earlier run")
    args = parser.parse_args()
    pods = args.nodes * 10
    if not args.reuse:
        build(args.nodes, pods)

    import django

    django.setup()
    import numpy  # noqa: F401 - the engine's arrays: part of the baseline
    from django.conf import settings

    import engine.session.run  # noqa: F401
    import scheduling.tasks  # noqa: F401
    from scheduling.feed.mirror import forget
    from scheduling.models import Cluster

    forget()
    cluster = Cluster.objects.get(name="bench")
    base = rss()
    print(f"{args.nodes:,} nodes / {pods:,} pods on {settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}")
    print(f"  RSS with Django, the engine and the tasks imported: {base / MB:,.0f} MB")
    first = one_session(cluster.pk)
    after_first = rss()
    print(
        f"  after the first session ({first['wall'] / 1000:.1f} s, full read, {first['placed']:,} placed): "
        f"RSS {after_first / MB:,.0f} MB, peak so far {peak() / MB:,.0f} MB"
    )
    one_session(cluster.pk)
    after_second = rss()
    print(f"  after the second session (its writes read back): RSS {after_second / MB:,.0f} MB")

    before = table_sizes()
    counts = row_counts(list(before))
    n = max(2, pods // 100)
    round_base = int(time.time()) * 100  # new jobs' names, unique across runs on a reused cluster
    walls = []
    for r in range(args.sessions):
        churn(cluster.pk, n, round_base + r)
        walls.append(one_session(cluster.pk)["wall"])
    after = table_sizes()
    kept = rss()
    top = peak()
    print(
        f"  after {args.sessions} sessions with 1 % changed ({n:,} pods each, median "
        f"{sorted(walls)[len(walls) // 2]:,.0f} ms): RSS {kept / MB:,.0f} MB; peak {top / MB:,.0f} MB"
    )
    print(
        f"  breakdown: interpreter, Django, numpy and the project's modules {base / MB:,.0f} MB; the cluster's copy "
        f"and the engine's kept state {(kept - base) / MB:,.0f} MB; a session's transient peak above that "
        f"{max(0, top - kept) / MB:,.0f} MB"
    )

    report(f"{args.sessions} sessions, each after 1 % of the pods changed", before, after, counts, args.sessions)

    # a steady cluster: sessions with nothing changed
    before = table_sizes()
    counts = row_counts(list(before))
    for _ in range(args.sessions):
        one_session(cluster.pk)
    report(f"{args.sessions} steady sessions (nothing changed)", before, table_sizes(), counts, args.sessions)


def report(label: str, before: dict[str, int], after: dict[str, int], counts: dict[str, int], sessions: int) -> None:
    """Per table that grew: rows added per session, bytes per row, and the table's growth per session (rows added
    plus, for tables whose rows are updated, the dead versions autovacuum reclaims in a real deployment)."""
    now = row_counts(list(after))
    print(f"  {label}: per session (a day at one a second is 86,400 of them)")
    total_rows = total_bytes = 0.0
    for t in sorted(after, key=lambda t: -(after[t] - before.get(t, 0))):
        grew = after[t] - before.get(t, 0)
        rows = now[t] - counts.get(t, 0)
        if grew <= 0 and rows <= 0:
            continue
        per_row = after[t] / now[t] if now[t] else 0.0
        total_rows += rows / sessions
        total_bytes += max(0, rows) * per_row / sessions
        print(
            f"    {t:34s} rows {rows / sessions:9,.1f}  ({per_row:6,.0f} B/row)  "
            f"table grew {grew / sessions / 1024:8,.1f} KiB"
        )
    print(f"    rows added per session {total_rows:,.0f}, about {total_bytes / 1024:,.1f} KiB of rows kept")


if __name__ == "__main__":
    main()
