"""``/metrics`` for Prometheus: every tree node's values per resource, the waiting jobs, every cluster's nodes by state
(with series of their own only for the nodes that need attention), every cluster's session counters and what blocks
admission now, and the web process' own request metrics (django-prometheus).

The tree figures come from the values the pages show (``planning.valuecache``: the same ``compute_values`` as the tree
page, the API and the scheduler), so a scrape and a page never disagree and every process answers the same. Amounts
are in Prometheus' base units: cores, bytes, whole GPUs (``milli_scale``); a capability or max that is unlimited is
left out rather than written as a huge number. Names echo Kueue's where they mean the same
(``…_lendable_resources``, and ``…_borrowing_limit`` / ``…_lending_limit`` with issue 13's limits).

**What a scrape costs** (issue 25: a hostile agent may register nodes up to ``FAIRWAY_MAX_NODES``). The text is made of
one part per cluster and kind, each kept in the process with what it was built from and rebuilt only when that
changed:

* the trees, the waiting jobs and the jobs blocked from admission: rebuilt when the cluster's values are (the very
  values object ``planning.valuecache`` hands back; a podgroup's blocker is in the change feed, so a blocker written
  gives new values too);
* the session counters: rebuilt when the cluster's ``ClusterCounters`` row differs from the one the text was built
  from (the row is read at every scrape, so a counter is never behind the database);
* the waits to start (how long the jobs submitted in the last ``FAIRWAY_METRICS_WAIT_WINDOW_SECONDS`` waited for their
  first pod, per queue and quota group with its subtree: ``planning.audit.recorded_jobs``, ``engine.waits``, as the
  audit counts them): rebuilt when older than ``FAIRWAY_METRICS_WAITS_EVERY_SECONDS``;
* the nodes: computed at every scrape, in the database (one aggregate query, and one more only when some node needs
  attention), so that heartbeat ages and "silent" are those of the scrape's instant. Healthy nodes are counted,
  never listed: the answer holds per cluster the counts by state and the oldest heartbeat, and series of their own
  for at most ``FAIRWAY_METRICS_NODE_SERIES_LIMIT`` nodes that need attention (NotReady, set aside, silent: Ready
  but not heard of for longer than the cluster's heartbeat timeout), with the number left out.

Who may scrape: a request with ``Authorization: Bearer <FAIRWAY_METRICS_TOKEN>`` (when that setting is given: what
a Prometheus scrape config sends), or an admin (session or API token); anyone else gets 401.
"""

from __future__ import annotations

import functools
import hmac
import os
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Case, Count, F, IntegerField, Min, Q, Value, When
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector

from engine.lending import lendable_groups, lendable_queues
from engine.objects import PodGroupPhase
from engine.resources import ResourceList, is_unlimited, milli_scale
from engine.waits import QUEUE, TreeParents, node_waits
from planning import valuecache
from planning.audit import recorded_jobs
from quotas.access import is_admin
from scheduling.counters import cumulative
from scheduling.models import Cluster, ClusterCounters, Node, PodGroup
from security.authentication import TokenThrottled, authenticate_key
from security.tokens import TokenRefused

QUEUE_LABELS = ("cluster", "queue", "parent", "resource")
GROUP_LABELS = ("cluster", "quota_group", "parent", "resource")
WAITING = (PodGroupPhase.PENDING, PodGroupPhase.INQUEUE)
TREE_BLOCKERS = ("queue", "quota", "namespace")  # blockers named by a tree node
THRASH_HELP = (
    "Thrash: evictions (reclaim, preempt, recycle, gang-release) of pods that had run less than "
    "FAIRWAY_THRASH_WINDOW_SECONDS since they started, or had not started"
)

QUEUE_GAUGES = {
    "guarantee": "What is reserved for the queue whatever the others do",
    "deserved": "What the queue policy entitles the queue to now",
    "capability": "The most the queue may use (its realCapability; absent when unlimited)",
    "allocated": "What the queue's running and bound pods hold",
    "reserved": "What the queue's admitted jobs reserve for their gangs, not yet allocated",
    "borrowed": "What the queue uses beyond what it deserves",
    "lent": "What of the queue's deserved its siblings use now",
    "lendable_resources": "What the queue could lend now: deserved minus allocated and reserved, at most its lending limit",
    "borrowing_limit": "The most the queue may use beyond its deserved (absent when unlimited)",
    "lending_limit": "The most of its unused deserved others may take (absent when unlimited)",
    "pending_demand": "What the queue's jobs ask and do not hold: request minus allocated",
}
GROUP_GAUGES = {
    "min": "The quota group's guaranteed minimum",
    "runtime": "What the quota group may use now (its runtime quota)",
    "max": "The most the quota group may use (absent when unlimited)",
    "used": "What the quota group's allocated pods hold",
    "reserved": "What admitted jobs with pods in the group reserve",
    "borrowed": "What the quota group uses beyond its min",
    "lent": "What of the quota group's min others use now",
    "lendable_resources": (
        "What the quota group could lend now: min minus used and reserved, at most its lending limit (0 unless it lends)"
    ),
    "borrowing_limit": "The most the quota group may use beyond its min (absent when unlimited)",
    "lending_limit": "The most of its unused min others may take (absent when unlimited)",
    "pending_demand": "What the quota group's pods ask and do not hold: request minus used",
}


def _amount(resource: str, amount: int) -> float:
    return amount / milli_scale(resource)


NODE_STATES = ("ready", "not_ready", "silent", "set_aside", "cordoned")
# the states whose nodes get series of their own, in the order they are listed (then the longest silent first)
ATTENTION = ("not_ready", "set_aside", "silent")

# Cluster texts built by this process, by part ("values": the trees, waiting and blocked jobs; "counters": the
# session counters; "waits": the waits to start). The tests and ``bench/bench_metrics.py`` count rebuilds with it.
BUILDS: Counter[str] = Counter()


# -- the families -------------------------------------------------------------------------------------------------


def _value_families() -> dict[str, Any]:
    """The families built from a cluster's values, empty (the jobs blocked from admission are apart: they come last)."""
    out: dict[str, Any] = {
        f"queue_{k}": GaugeMetricFamily(f"fairway_queue_{k}", v, labels=QUEUE_LABELS) for k, v in QUEUE_GAUGES.items()
    }
    out |= {
        f"group_{k}": GaugeMetricFamily(f"fairway_quota_group_{k}", v, labels=GROUP_LABELS)
        for k, v in GROUP_GAUGES.items()
    }
    out["waiting"] = GaugeMetricFamily(
        "fairway_queue_waiting_jobs", "Jobs of the queue waiting, by phase", labels=("cluster", "queue", "phase")
    )
    return out


def _node_families() -> dict[str, Any]:
    return {
        "ready": GaugeMetricFamily("fairway_nodes", "Nodes of the cluster by readiness", labels=("cluster", "ready")),
        "by_state": GaugeMetricFamily(
            "fairway_nodes_by_state",
            "Nodes of the cluster by state, each counted once: not_ready, set_aside (it reported more than one node "
            "may have), silent (Ready but not heard of for longer than the cluster's heartbeat timeout), cordoned, "
            "ready",
            labels=("cluster", "state"),
        ),
        "oldest": GaugeMetricFamily(
            "fairway_nodes_oldest_heartbeat_age_seconds",
            "Seconds since the least recent heartbeat of the cluster's Ready nodes (absent when none has reported)",
            labels=("cluster",),
        ),
        "age": GaugeMetricFamily(
            "fairway_node_heartbeat_age_seconds",
            "Seconds since the node's agent last reported, for the nodes that need attention only (NotReady, set "
            "aside, silent; absent for a node that never reported)",
            labels=("cluster", "node"),
        ),
        "attention": GaugeMetricFamily(
            "fairway_node_needs_attention",
            "1 for each node that needs attention, by why: not_ready, set_aside, silent (at most "
            "FAIRWAY_METRICS_NODE_SERIES_LIMIT per cluster: NotReady first, then set aside, then the longest silent)",
            labels=("cluster", "node", "state"),
        ),
        "omitted": GaugeMetricFamily(
            "fairway_node_series_omitted",
            "Nodes that need attention but have no series of their own (beyond FAIRWAY_METRICS_NODE_SERIES_LIMIT)",
            labels=("cluster",),
        ),
    }


def _counter_families() -> dict[str, Any]:
    out: dict[str, Any] = {
        "sessions": CounterMetricFamily(
            "fairway_sessions",
            "Scheduling sessions and recycling passes by outcome (ok, skipped: another worker held the lock, failed)",
            labels=("cluster", "kind", "status"),
        ),
        "duration": HistogramMetricFamily(
            "fairway_session_duration_seconds",
            "How long each session took, end to end (read, engine, writes), by kind",
            labels=("cluster", "kind"),
        ),
        "binds": CounterMetricFamily("fairway_binds", "Pods bound to a node by the sessions", labels=("cluster",)),
        "pipelined": CounterMetricFamily(
            "fairway_pipelined", "Pods placed on resources still being released (pipelined)", labels=("cluster",)
        ),
        "evictions": CounterMetricFamily(
            "fairway_evictions",
            "Pods evicted, by action (reclaim, preempt, recycle, node-lost, gang-release, suspend, requeue)",
            labels=("cluster", "action"),
        ),
    }
    for (key, kind), family in _tree_eviction_families().items():
        out[f"{key}:{kind}"] = family
    return out


def _wait_families() -> dict[str, Any]:
    """The waits to start per tree node, empty."""
    window = "the jobs submitted to the {} (its subtree's included) in the last FAIRWAY_METRICS_WAIT_WINDOW_SECONDS"
    out: dict[str, Any] = {}
    for key, prefix, label, what in (
        ("queue", "fairway_queue", "queue", "queue"),
        ("group", "fairway_quota_group", "quota_group", "quota group"),
    ):
        jobs = window.format(what)
        out[f"{key}_wait"] = GaugeMetricFamily(
            f"{prefix}_job_wait_seconds",
            f"How long {jobs} that started waited for their first pod: the median and 95th percentile (absent when "
            "none started)",
            labels=("cluster", label, "quantile"),
        )
        out[f"{key}_longest"] = GaugeMetricFamily(
            f"{prefix}_job_wait_longest_seconds",
            f"The longest wait of {jobs}, a job still waiting counted with its wait so far",
            labels=("cluster", label),
        )
        out[f"{key}_started"] = GaugeMetricFamily(
            f"{prefix}_jobs_started_recently",
            f"How many of {jobs} have started (the quantiles' sample)",
            labels=("cluster", label),
        )
    return out


def _blocked_family() -> GaugeMetricFamily:
    return GaugeMetricFamily(
        "fairway_admission_blocked_jobs",
        "Jobs waiting now because a tree node or the cluster's capacity refuses them, by that node and resource",
        labels=("cluster", "blocker_kind", "blocker", "resource"),
    )


def _all_families() -> list[Metric]:
    """Every family /metrics writes after the process' own, empty, in the order they are written."""
    return [
        *_value_families().values(),
        *_node_families().values(),
        *_counter_families().values(),
        *_wait_families().values(),
        _blocked_family(),
    ]


class _Families:
    """Families as a collector, for ``generate_latest``."""

    def __init__(self, families: Iterable[Metric]) -> None:
        self._families = list(families)

    def collect(self) -> Iterator[Metric]:
        return iter(self._families)


def _split(families: Iterable[Metric]) -> list[tuple[str, bytes, bytes]]:
    """(name, HELP and TYPE lines, sample lines) of each family, formatted by prometheus-client (its escaping, its
    numbers). A sample line never starts with ``#``: a label value's newline is escaped."""
    out: list[tuple[str, list[bytes], list[bytes]]] = []
    for line in generate_latest(_Families(families)).splitlines(keepends=True):
        if line.startswith(b"# HELP "):
            out.append((line.split(b" ", 3)[2].decode(), [line], []))
        elif line.startswith(b"# TYPE "):
            out[-1][1].append(line)
        else:
            out[-1][2].append(line)
    return [(name, b"".join(head), b"".join(samples)) for name, head, samples in out]


def _samples(families: Iterable[Metric]) -> dict[str, bytes]:
    """Each family's sample lines by name (what one cluster adds to it)."""
    return {name: samples for name, _, samples in _split(families) if samples}


@functools.cache
def _headers() -> tuple[tuple[str, bytes], ...]:
    """(name, HELP and TYPE lines) of every family, in order."""
    return tuple((name, head) for name, head, _ in _split(_all_families()))


# -- one cluster's parts, kept while what they were built from stays the same ------------------------------------


@dataclass
class _Part:
    source: tuple[Any, ...]  # what the text was built from
    samples: dict[str, bytes]


_parts: dict[tuple[int, str], _Part] = {}
_parts_lock = threading.Lock()


def _kept(cluster_id: int, kind: str, same: Any) -> dict[str, bytes] | None:
    with _parts_lock:
        part = _parts.get((cluster_id, kind))
    return part.samples if part is not None and same(part.source) else None


def _keep(cluster_id: int, kind: str, source: tuple[Any, ...], samples: dict[str, bytes]) -> dict[str, bytes]:
    BUILDS[kind] += 1
    with _parts_lock:
        _parts[(cluster_id, kind)] = _Part(source, samples)
    return samples


def clear() -> None:
    """Forget every kept text (the next scrape builds them all)."""
    with _parts_lock:
        _parts.clear()


def _values_part(cluster: Cluster) -> dict[str, bytes]:
    """The trees, the waiting jobs and the jobs blocked from admission of ``cluster``: rebuilt when its values are
    new (``valuecache`` keeps one values object for as long as nothing they are computed from changed)."""
    snapshot, values = valuecache.current(cluster)
    kept = _kept(cluster.pk, "values", lambda s: s[0] == cluster.name and s[1] is values)
    if kept is not None:
        return kept
    families = _value_families()
    _queues(cluster.name, snapshot, values, families)
    _groups(cluster.name, snapshot, values, families)
    counts: Counter[tuple[str, str]] = Counter()
    for pg in snapshot.podgroups.values():
        if pg.phase in WAITING:
            counts[(pg.queue, str(pg.phase))] += 1
    for name in sorted(snapshot.queues):
        for phase in WAITING:
            families["waiting"].add_metric((cluster.name, name, str(phase)), counts[(name, str(phase))])
    blocked = _blocked(cluster)
    return _keep(cluster.pk, "values", (cluster.name, values), _samples([*families.values(), blocked]))


def _counters_part(cluster: Cluster, counts: Mapping[str, Any] | None) -> dict[str, bytes]:
    """The session counters of ``cluster`` (its ``ClusterCounters`` row, read at this scrape): rebuilt when the row
    differs from the one the text was made of."""
    if counts is None:  # no session counted yet
        return {}
    kept = _kept(cluster.pk, "counters", lambda s: s == (cluster.name, counts))
    if kept is not None:
        return kept
    families = _counter_families()
    name = cluster.name
    for key, n in sorted((counts.get("sessions") or {}).items()):
        kind, _, status = key.partition(":")
        families["sessions"].add_metric((name, kind, status), n)
    duration = families["duration"]
    assert isinstance(duration, HistogramMetricFamily)
    for kind, histogram in sorted((counts.get("duration") or {}).items()):
        duration.add_metric((name, kind), cumulative(histogram["buckets"]), sum_value=histogram.get("sum", 0.0))
    families["binds"].add_metric((name,), counts.get("binds", 0))
    families["pipelined"].add_metric((name,), counts.get("pipelined", 0))
    for action, n in sorted((counts.get("evictions") or {}).items()):
        families["evictions"].add_metric((name, action), n)
    for key, kind in _tree_eviction_families():
        family = families[f"{key}:{kind}"]
        for node, actions in sorted(((counts.get(key) or {}).get(kind) or {}).items()):
            for action, n in sorted(actions.items()):
                family.add_metric((name, node, action), n)
    return _keep(cluster.pk, "counters", (cluster.name, counts), _samples(families.values()))


def _waits_part(cluster: Cluster, now: datetime) -> dict[str, bytes]:
    """How long the jobs of ``cluster`` submitted in the last window waited to start, per tree node: rebuilt when the
    kept text is older than ``FAIRWAY_METRICS_WAITS_EVERY_SECONDS``."""
    every = float(settings.FAIRWAY["METRICS_WAITS_EVERY_SECONDS"])
    kept = _kept(cluster.pk, "waits", lambda s: s[0] == cluster.name and (now - s[1]).total_seconds() < every)
    if kept is not None:
        return kept
    snapshot, _ = valuecache.current(cluster)
    parents = TreeParents.of(snapshot)
    window = timedelta(seconds=float(settings.FAIRWAY["METRICS_WAIT_WINDOW_SECONDS"]))
    figures = node_waits(recorded_jobs(cluster, now - window, now), parents, now.timestamp())
    families = _wait_families()
    for (tree, name), w in sorted(figures.items()):
        if name not in parents.tree(tree):  # a queue or quota group deleted since: no series
            continue
        key = "queue" if tree == QUEUE else "group"
        families[f"{key}_started"].add_metric((cluster.name, name), w.started)
        for quantile, seconds in (("0.5", w.p50), ("0.95", w.p95)):
            if seconds is not None:
                families[f"{key}_wait"].add_metric((cluster.name, name, quantile), round(seconds, 3))
        if w.longest is not None:
            families[f"{key}_longest"].add_metric((cluster.name, name), round(w.longest, 3))
    return _keep(cluster.pk, "waits", (cluster.name, now), _samples(families.values()))


def _node_part(cluster: Cluster, now: datetime, limit: int) -> dict[str, bytes]:
    """The nodes of ``cluster`` at ``now``: counted by state in the database (healthy nodes are never listed), and the
    ``limit`` nodes that need attention most with a series of their own."""
    cutoff = now - timedelta(seconds=cluster.node_heartbeat_timeout)
    aside = Q(set_aside__isnull=False) & ~Q(set_aside="")
    silent = Q(last_heartbeat__lt=cutoff)
    nodes = Node.objects.filter(cluster_id=cluster.pk).order_by()
    n = nodes.aggregate(  # (aliases apart from the fields' names: an alias would stand for its field in a filter)
        n_total=Count("id"),
        n_not_ready=Count("id", filter=Q(ready=False)),
        n_set_aside=Count("id", filter=Q(ready=True) & aside),
        n_silent=Count("id", filter=Q(ready=True) & ~aside & silent),
        n_cordoned=Count("id", filter=Q(ready=True, unschedulable=True) & ~aside & ~silent),
        oldest_beat=Min("last_heartbeat", filter=Q(ready=True)),
    )
    states = {state: n[f"n_{state}"] for state in (*ATTENTION, "cordoned")}
    states["ready"] = n["n_total"] - sum(states.values())
    families = _node_families()
    name = cluster.name
    families["ready"].add_metric((name, "true"), n["n_total"] - n["n_not_ready"])
    families["ready"].add_metric((name, "false"), n["n_not_ready"])
    for state in NODE_STATES:
        families["by_state"].add_metric((name, state), states[state])
    if n["oldest_beat"] is not None:
        families["oldest"].add_metric((name,), _age(now, n["oldest_beat"]))
    needing = sum(states[s] for s in ATTENTION)
    listed = 0
    if needing and limit > 0:
        rank = Case(When(ready=False, then=Value(0)), When(aside, then=Value(1)), default=Value(2),
                    output_field=IntegerField())  # fmt: skip
        rows = (
            nodes.filter(Q(ready=False) | aside | silent)
            .annotate(attention_rank=rank)
            .order_by("attention_rank", F("last_heartbeat").asc(nulls_first=True), "name")
            .values_list("name", "attention_rank", "last_heartbeat")[:limit]
        )
        for node, why, beat in rows:
            listed += 1
            families["attention"].add_metric((name, node, ATTENTION[why]), 1)
            if beat is not None:
                families["age"].add_metric((name, node), _age(now, beat))
    families["omitted"].add_metric((name,), max(0, needing - listed))
    return _samples(families.values())


def _age(now: datetime, beat: datetime) -> float:
    return max(0.0, round((now - beat).total_seconds(), 3))


def exposition() -> bytes:
    """Every cluster's families after the process' own: each family's HELP and TYPE once, then each cluster's samples
    (clusters by name)."""
    now = timezone.now()
    limit = int(settings.FAIRWAY["METRICS_NODE_SERIES_LIMIT"])
    clusters = list(Cluster.objects.order_by("name"))
    counters = dict(ClusterCounters.objects.values_list("cluster_id", "counts"))
    parts: list[dict[str, bytes]] = []
    for cluster in clusters:
        part = dict(_values_part(cluster))
        part.update(_counters_part(cluster, counters.get(cluster.pk)))
        part.update(_waits_part(cluster, now))
        part.update(_node_part(cluster, now, limit))
        parts.append(part)
    there = {c.pk for c in clusters}
    with _parts_lock:  # the texts of clusters deleted since
        for key in [k for k in _parts if k[0] not in there]:
            del _parts[key]
    return b"".join(head + b"".join(p.get(name, b"") for p in parts) for name, head in _headers())


def _queues(cluster: str, snapshot: Any, values: Any, families: Mapping[str, Any]) -> None:
    lendable = lendable_queues(values)
    book = values.queues
    for name in sorted(book):
        q = book[name]
        parent = (snapshot.queues[name].parent or "") if name in snapshot.queues else ""
        figures: dict[str, Mapping[str, int]] = {
            "guarantee": q.guarantee,
            "deserved": q.deserved,
            "capability": {r: v for r, v in q.real_capability.items() if not is_unlimited(v)},
            "allocated": q.allocated,
            "reserved": q.inqueue,
            "borrowed": q.borrowed,
            "lent": q.lent,
            "lendable_resources": lendable.get(name, ResourceList()),
            "pending_demand": _minus(q.request, q.allocated),
            "borrowing_limit": book.spec(name).borrowing_limit,
            "lending_limit": book.spec(name).lending_limit,
        }
        _add(families, "queue_", figures, (cluster, name, parent))


def _groups(cluster: str, snapshot: Any, values: Any, families: Mapping[str, Any]) -> None:
    specs = snapshot.quota_groups
    lendable = lendable_groups(values, specs)
    held = values.reservations.amounts
    for name in sorted(specs):
        if name not in values.quotas:
            continue
        g, spec = values.quotas[name], specs[name]
        figures: dict[str, Mapping[str, int]] = {
            "min": spec.min,
            "runtime": {r: v for r, v in g.runtime.items() if not is_unlimited(v)},
            "max": {r: v for r, v in spec.max.items() if not is_unlimited(v)},
            "used": g.used,
            "reserved": held.get(name, {}),
            "borrowed": g.borrowed,
            "lent": g.lent,
            "lendable_resources": lendable.get(name, ResourceList()),
            "pending_demand": _minus(g.request, g.used),
            "borrowing_limit": spec.borrowing_limit,
            "lending_limit": spec.lending_limit,
        }
        _add(families, "group_", figures, (cluster, name, spec.parent or ""))


def _minus(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    return {r: v - b.get(r, 0) for r, v in a.items() if v - b.get(r, 0) > 0}


def _add(
    families: Mapping[str, Any], prefix: str, figures: Mapping[str, Mapping[str, int]], labels: tuple[str, ...]
) -> None:
    for key, amounts in figures.items():
        family = families[prefix + key]
        for resource in sorted(amounts):
            family.add_metric((*labels, resource), _amount(resource, amounts[resource]))


def _tree_eviction_families() -> dict[tuple[str, str], CounterMetricFamily]:
    """The evictions and the thrash per tree node and per subtree (``scheduling.counters``: ``tree_evictions`` /
    ``tree_thrash`` / ``subtree_evictions`` / ``subtree_thrash`` by ``queue`` / ``quota_group``, then node name, then
    action)."""
    out = {}
    for key, metric, what, whose in (
        ("tree_evictions", "evictions", "Pods evicted", "the {} of the pod"),
        ("tree_thrash", "thrash_evictions", THRASH_HELP, "the {} of the pod"),
        ("subtree_evictions", "subtree_evictions", "Pods evicted", "the {} and its descendants"),
        ("subtree_thrash", "subtree_thrash_evictions", THRASH_HELP, "the {} and its descendants"),
    ):
        for kind, label in (("queue", "queue"), ("quota_group", "quota_group")):
            out[(key, kind)] = CounterMetricFamily(
                f"fairway_{kind}_{metric}",
                f"{what}, by {whose.format(label.replace('_', ' '))} and the action",
                labels=("cluster", label, "action"),
            )
    return out


def _blocked(cluster: Cluster) -> GaugeMetricFamily:
    """The jobs of ``cluster`` waiting now, by what blocks them."""
    blocked = _blocked_family()
    counts: Counter[tuple[str, str, str, str]] = Counter()
    waiting = PodGroup.objects.filter(cluster_id=cluster.pk, phase__in=[str(p) for p in WAITING],
                                      blocker__isnull=False)  # fmt: skip
    for blocker in waiting.values_list("blocker", flat=True):
        if isinstance(blocker, dict) and blocker.get("kind"):
            kind = str(blocker["kind"])
            if kind in TREE_BLOCKERS:
                name = str(blocker.get("name") or "")
            elif kind == "cluster":
                name = cluster.name  # its capacity
            else:  # the job itself (its gang, the enqueue policy): the rule, never the job (a label per job)
                name = str(blocker.get("limit") or "")
            counts[(cluster.name, kind, name, str(blocker.get("resource") or ""))] += 1
    for labels, n in sorted(counts.items()):
        blocked.add_metric(labels, n)
    return blocked


def _process_registry() -> CollectorRegistry:
    """The web process' own metrics (django-prometheus): every process' files under ``PROMETHEUS_MULTIPROC_DIR`` when
    it is set (several gunicorn workers), else this process'."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
        return registry
    return REGISTRY


def _allowed(request: HttpRequest) -> bool:
    token = settings.FAIRWAY.get("METRICS_TOKEN") or ""
    header = request.headers.get("Authorization", "")
    if token and header.startswith("Bearer ") and hmac.compare_digest(header[len("Bearer ") :], token):
        return True
    try:
        found = authenticate_key(request, header)  # an API token: hashed, expiring, failures throttled and logged
    except TokenRefused:
        return False
    if found is not None:
        return is_admin(found[0])
    return bool(request.user.is_authenticated and is_admin(request.user))


def metrics(request: HttpRequest) -> HttpResponse:
    """The Prometheus text exposition: the process' metrics, then the trees'."""
    try:
        allowed = _allowed(request)
    except TokenThrottled as exc:
        response = HttpResponse(f"metrics: {exc.detail}\n", status=429)
        response["Retry-After"] = str(int(exc.wait or 1))
        response["Content-Type"] = "text/plain; charset=utf-8"
        return response
    if not allowed:
        response = HttpResponse("metrics: an admin's login or token, or the metrics bearer token\n", status=401)
        response["WWW-Authenticate"] = 'Bearer realm="fairway-metrics"'
        response["Content-Type"] = "text/plain; charset=utf-8"
        return response
    body = generate_latest(_process_registry()) + exposition()
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
