"""``/metrics`` for Prometheus: every tree node's values per resource, the waiting jobs, the nodes' heartbeats, every
cluster's session counters and what blocks admission now, and the web process' own request metrics
(django-prometheus).

The tree figures are computed at scrape time from the values the pages show (``planning.valuecache``: the same
``compute_values`` as the tree page, the API and the scheduler), so a scrape and a page never disagree and every
process answers the same. Amounts are in Prometheus' base units: cores, bytes, whole GPUs (``milli_scale``); a
capability or max that is unlimited is left out rather than written as a huge number. Names echo Kueue's where they
mean the same (``…_lendable_resources``, and ``…_borrowing_limit`` / ``…_lending_limit`` with issue 13's limits).

Who may scrape: a request with ``Authorization: Bearer <FAIRWAY_METRICS_TOKEN>`` (when that setting is given: what
a Prometheus scrape config sends), or an admin (session or API token); anyone else gets 401.
"""

from __future__ import annotations

import hmac
import os
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from engine.lending import lendable_groups, lendable_queues
from engine.objects import PodGroupPhase
from engine.resources import ResourceList, is_unlimited, milli_scale
from planning import valuecache
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


class TreeCollector(Collector):
    """The tree figures of every cluster, computed at each scrape from the cached values."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        queue_families = {
            k: GaugeMetricFamily(f"fairway_queue_{k}", v, labels=QUEUE_LABELS) for k, v in QUEUE_GAUGES.items()
        }
        group_families = {
            k: GaugeMetricFamily(f"fairway_quota_group_{k}", v, labels=GROUP_LABELS) for k, v in GROUP_GAUGES.items()
        }
        waiting = GaugeMetricFamily(
            "fairway_queue_waiting_jobs", "Jobs of the queue waiting, by phase", labels=("cluster", "queue", "phase")
        )
        for cluster in Cluster.objects.order_by("name"):
            snapshot, values = valuecache.current(cluster)
            self._queues(cluster.name, snapshot, values, queue_families)
            self._groups(cluster.name, snapshot, values, group_families)
            counts: dict[tuple[str, str], int] = {}
            for pg in snapshot.podgroups.values():
                if pg.phase in WAITING:
                    counts[(pg.queue, str(pg.phase))] = counts.get((pg.queue, str(pg.phase)), 0) + 1
            for name in sorted(snapshot.queues):
                for phase in WAITING:
                    waiting.add_metric((cluster.name, name, str(phase)), counts.get((name, str(phase)), 0))
        yield from queue_families.values()
        yield from group_families.values()
        yield waiting
        yield from _node_families()

    @staticmethod
    def _queues(cluster: str, snapshot: Any, values: Any, families: Mapping[str, GaugeMetricFamily]) -> None:
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
            _add(families, figures, (cluster, name, parent))

    @staticmethod
    def _groups(cluster: str, snapshot: Any, values: Any, families: Mapping[str, GaugeMetricFamily]) -> None:
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
            _add(families, figures, (cluster, name, spec.parent or ""))


def _minus(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    return {r: v - b.get(r, 0) for r, v in a.items() if v - b.get(r, 0) > 0}


def _add(
    families: Mapping[str, GaugeMetricFamily], figures: Mapping[str, Mapping[str, int]], labels: tuple[str, ...]
) -> None:
    for key, amounts in figures.items():
        family = families[key]
        for resource in sorted(amounts):
            family.add_metric((*labels, resource), _amount(resource, amounts[resource]))


def _node_families() -> Iterator[GaugeMetricFamily]:
    age = GaugeMetricFamily(
        "fairway_node_heartbeat_age_seconds",
        "Seconds since the node's agent last reported (absent for a node that never did)",
        labels=("cluster", "node"),
    )
    ready = GaugeMetricFamily("fairway_nodes", "Nodes of the cluster by readiness", labels=("cluster", "ready"))
    now = timezone.now()
    counts: dict[tuple[str, str], int] = {}
    rows = Node.objects.order_by("cluster__name", "name").values_list(
        "cluster__name", "name", "last_heartbeat", "ready"
    )
    for cluster, node, beat, is_ready in rows:
        if beat is not None:
            age.add_metric((cluster, node), max(0.0, (now - beat).total_seconds()))
        key = (cluster, "true" if is_ready else "false")
        counts[key] = counts.get(key, 0) + 1
    for (cluster, flag), n in sorted(counts.items()):
        ready.add_metric((cluster, flag), n)
    yield age
    yield ready


class SessionCollector(Collector):
    """Every cluster's session counters (``scheduling.counters``, cumulative in the database, so every web process
    answers the same whichever worker ran the sessions) and the jobs refused admission now, by what blocks them."""

    def collect(self) -> Iterator[Any]:
        sessions = CounterMetricFamily(
            "fairway_sessions",
            "Scheduling sessions and recycling passes by outcome (ok, skipped: another worker held the lock, failed)",
            labels=("cluster", "kind", "status"),
        )
        duration = HistogramMetricFamily(
            "fairway_session_duration_seconds",
            "How long each session took, end to end (read, engine, writes), by kind",
            labels=("cluster", "kind"),
        )
        binds = CounterMetricFamily("fairway_binds", "Pods bound to a node by the sessions", labels=("cluster",))
        pipelined = CounterMetricFamily(
            "fairway_pipelined", "Pods placed on resources still being released (pipelined)", labels=("cluster",)
        )
        evictions = CounterMetricFamily(
            "fairway_evictions",
            "Pods evicted, by action (reclaim, preempt, recycle, node-lost, gang-release)",
            labels=("cluster", "action"),
        )
        by_node = _tree_eviction_families()
        rows = ClusterCounters.objects.order_by("cluster__name").values_list("cluster__name", "counts")
        for cluster, counts in rows:
            for key, n in sorted((counts.get("sessions") or {}).items()):
                kind, _, status = key.partition(":")
                sessions.add_metric((cluster, kind, status), n)
            for kind, histogram in sorted((counts.get("duration") or {}).items()):
                duration.add_metric(
                    (cluster, kind), cumulative(histogram["buckets"]), sum_value=histogram.get("sum", 0.0)
                )
            binds.add_metric((cluster,), counts.get("binds", 0))
            pipelined.add_metric((cluster,), counts.get("pipelined", 0))
            for action, n in sorted((counts.get("evictions") or {}).items()):
                evictions.add_metric((cluster, action), n)
            for (key, kind), family in by_node.items():
                for name, actions in sorted(((counts.get(key) or {}).get(kind) or {}).items()):
                    for action, n in sorted(actions.items()):
                        family.add_metric((cluster, name, action), n)
        yield from (sessions, duration, binds, pipelined, evictions)
        yield from by_node.values()
        yield _blocked_family()


def _tree_eviction_families() -> dict[tuple[str, str], CounterMetricFamily]:
    """The evictions and the thrash per tree node (``scheduling.counters``: ``tree_evictions`` / ``tree_thrash``
    by ``queue`` / ``quota_group``, then node name, then action)."""
    out = {}
    for key, metric, what in (
        ("tree_evictions", "evictions", "Pods evicted"),
        ("tree_thrash", "thrash_evictions", THRASH_HELP),
    ):
        for kind, label in (("queue", "queue"), ("quota_group", "quota_group")):
            out[(key, kind)] = CounterMetricFamily(
                f"fairway_{kind}_{metric}",
                f"{what}, by the {label.replace('_', ' ')} of the pod and the action",
                labels=("cluster", label, "action"),
            )
    return out


def _blocked_family() -> GaugeMetricFamily:
    blocked = GaugeMetricFamily(
        "fairway_admission_blocked_jobs",
        "Jobs waiting now because a tree node or the cluster's capacity refuses them, by that node and resource",
        labels=("cluster", "blocker_kind", "blocker", "resource"),
    )
    counts: Counter[tuple[str, str, str, str]] = Counter()
    waiting = PodGroup.objects.filter(phase__in=[str(p) for p in WAITING], blocker__isnull=False)
    for cluster, blocker in waiting.values_list("cluster__name", "blocker"):
        if isinstance(blocker, dict) and blocker.get("kind"):
            kind = str(blocker["kind"])
            if kind in TREE_BLOCKERS:
                name = str(blocker.get("name") or "")
            elif kind == "cluster":
                name = cluster  # its capacity
            else:  # the job itself (its gang, the enqueue policy): the rule, never the job (a label per job)
                name = str(blocker.get("limit") or "")
            counts[(cluster, kind, name, str(blocker.get("resource") or ""))] += 1
    for labels, n in sorted(counts.items()):
        blocked.add_metric(labels, n)
    return blocked


_TREES = CollectorRegistry(auto_describe=False)
_TREES.register(TreeCollector())
_TREES.register(SessionCollector())


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
    body = generate_latest(_process_registry()) + generate_latest(_TREES)
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
