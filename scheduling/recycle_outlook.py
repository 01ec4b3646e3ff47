"""What recycling will take unless usage falls: the one warning the team page, the job page and ``fairway job why``
(the API's ``podgroups/{id}/why/``) show before it acts.

Recycling (``engine.session.recycle``, run by ``scheduling.sessions.run_recycle_pass`` every second) evicts pods of
a quota group that has used more than its runtime for longer than ``delayEvictTime``; the time it was first seen over
is kept in the database (``QuotaOverState``). The warning is a dry run of that very pass on the current snapshot:
``engine.session.recycle.recycle_outlook`` is the function the pass itself calls to choose its victims
(``recycle_plan``), so the pods counted here are the pods the pass would take now, and nothing is recomputed by
another rule. A group is warned about only once a recycling pass has recorded it over (so the time left starts from
the recorded time: ``over since + delayEvictTime - now``, "any moment now" once that is past), only while the
cluster's policy runs recycling (``monitorAllQuotas``), and never while the pass is paused by an outage (it clears
the recorded times then). ``now`` is always passed in.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from engine.fairshare.elastic import ElasticResult
from engine.objects import Snapshot
from engine.session.recycle import recycle_outlook
from engine.wording import amount, duration, plural
from scheduling.feed.mirror import mirror_of
from scheduling.models import Cluster, QuotaOverState

__all__ = ["RecycleWarning", "recycle_warnings"]


@dataclass(frozen=True)
class Victim:
    """A pod recycling would take: its uid (``namespace/name``), its job (podgroup key) and the job's queue."""

    pod: str
    job: str
    queue: str


@dataclass(frozen=True)
class RecycleWarning:
    """A quota group over its runtime and what recycling will take from it unless its usage falls.

    ``falls_to`` and ``used``: per resource it uses above its runtime, the runtime (what usage must fall to) and what
    it uses, base units; ``seconds_left``: until the recycling pass acts (0: any moment now)."""

    group: str
    victims: tuple[Victim, ...]
    since: datetime
    due: datetime
    delay: float
    seconds_left: float
    over_for: float
    used: Mapping[str, int]
    falls_to: Mapping[str, int]

    @property
    def pods(self) -> int:
        return len(self.victims)

    @property
    def when(self) -> str:
        """ "in about 20 s", or "any moment now" once the delay is past."""
        left = math.ceil(self.seconds_left)
        return f"in about {duration(left)}" if left > 0 else "any moment now"

    @property
    def target(self) -> str:
        """What usage must fall to, in people's units ("124 cores", "124 cores and 480 GiB")."""
        return _joined(amount(v, r) for r, v in self.falls_to.items())

    @property
    def sentence(self) -> str:
        """ "3 pods will be recycled in about 20 s unless usage falls to 124 cores"."""
        return f"{plural(self.pods, 'pod')} will be recycled {self.when} unless usage falls to {self.target}"

    @property
    def reason(self) -> str:
        """Why, with the numbers: "uses 132 cores, above its runtime 124 cores, for 10 s (delayEvictTime 30 s)"."""
        used = _joined(amount(v, r) for r, v in self.used.items())
        return (
            f"uses {used}, above its runtime {self.target}, for {duration(self.over_for)} "
            f"(delayEvictTime {duration(self.delay)})"
        )

    @property
    def detail(self) -> str:
        """The reason with the group's name: "quota group ml uses 132 cores, above its runtime 124 cores, ..."."""
        return f"quota group {self.group} {self.reason}"

    def of_jobs(self, jobs: set[str]) -> int:
        """How many of the pods recycling would take belong to ``jobs`` (podgroup keys)."""
        return sum(1 for v in self.victims if v.job in jobs)

    def to_dict(self, *, jobs: set[str] | None = None) -> dict[str, Any]:
        """The warning as the API gives it (amounts in base units and in words); with ``jobs``, how many of the
        pods are theirs (``job_pods``) and those pods' names, else every pod's."""
        mine = [v.pod for v in self.victims if jobs is None or v.job in jobs]
        out: dict[str, Any] = {
            "quota_group": self.group,
            "pods": self.pods,
            "seconds_left": round(self.seconds_left, 3),
            "over_since": self.since,
            "due": self.due,
            "delay_evict_time": self.delay,
            "over_for": round(self.over_for, 3),
            "resources": [
                {
                    "resource": r,
                    "used": self.used[r],
                    "runtime": v,
                    "used_text": amount(self.used[r], r),
                    "runtime_text": amount(v, r),
                }
                for r, v in self.falls_to.items()
            ],
            "sentence": self.sentence,
            "detail": self.detail,
        }
        if jobs is not None:
            out["job_pods"] = len(mine)
        out["victims"] = mine
        return out


def _joined(parts: Any) -> str:
    items = list(parts)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _moment(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=UTC)


def recycle_warnings(
    cluster: Cluster,
    *,
    now: datetime,
    snapshot: Snapshot | None = None,
    quotas: ElasticResult | None = None,
) -> list[RecycleWarning]:
    """The quota groups of ``cluster`` that recycling will take pods from unless their usage falls, by name.

    ``snapshot`` and ``quotas``: the cluster's snapshot and its quota values when the caller has them (the pages:
    ``planning.valuecache``); else the snapshot is read through the process's mirror of the cluster. Two cheap
    queries when no group is recorded over (the usual case): the engine is not run then."""
    if not cluster.policy.elastic_quota_args().monitor_all_quotas:
        return []
    recorded = {
        name: ts.timestamp()
        for name, ts in QuotaOverState.objects.filter(cluster=cluster).values_list("name", "over_since")
    }
    if not recorded:
        return []
    if snapshot is None:
        snapshot, _ = mirror_of(cluster.pk).read(cluster)
        quotas = None
    out: list[RecycleWarning] = []
    at = now.timestamp()
    for entry in recycle_outlook(snapshot, now=at, over_since=recorded, quotas=quotas):
        if entry.group not in recorded or not entry.victims:
            continue  # not seen over by a pass yet, or nothing it may take (protected pods, a parent group)
        victims = tuple(
            Victim(t.uid, t.podgroup, pg.queue if (pg := snapshot.podgroups.get(t.podgroup)) is not None else "")
            for t in entry.victims
        )
        out.append(
            RecycleWarning(
                group=entry.group,
                victims=victims,
                since=_moment(entry.since),
                due=_moment(entry.due),
                delay=entry.delay,
                seconds_left=entry.seconds_left(at),
                over_for=max(0.0, at - entry.since),
                used={r: entry.used[r] for r in entry.over},
                falls_to={r: entry.runtime[r] for r in entry.over},
            )
        )
    return out
