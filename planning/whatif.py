"""The what-if, one service for every caller: proposed changes (``engine.changes``' language) applied to the chosen
cluster's snapshot with the configured rules (``FAIRWAY_MAX_QUEUE_DEPTH``, ``settings.FAIRWAY_LIMITS``, the control
plane's known resource names), then the values before and after.

The API (``POST /api/v1/whatif/``), the what-if page, the editor's Stage button, the staged list's Apply and the
change requests all come here, so a change one of them accepts the others accept too, on the same cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from core.facts import known_resource_names
from engine import rules
from engine.changes import ProposalError, apply_changes, compare
from engine.limits import Deadline
from engine.manifests.kueuestored import with_stored_levers
from engine.objects import Snapshot
from engine.values import QuotaValues, compute_values
from planning import valuecache
from scheduling.models import Cluster


def cluster_named(name: str | None) -> Cluster:
    """The cluster a what-if runs on: ``name``, else the default cluster (``FAIRWAY_DEFAULT_CLUSTER``); raises
    ``Cluster.DoesNotExist``."""
    return Cluster.objects.get(name=name or settings.FAIRWAY["DEFAULT_CLUSTER"])


def state_of(cluster: Cluster) -> tuple[Snapshot, QuotaValues]:
    """The snapshot and values of ``cluster`` now (reused while the database is unchanged: ``planning.valuecache``)."""
    snapshot, values = valuecache.current(cluster)
    return snapshot, values


def apply(snapshot: Snapshot, changes: Any, *, checkpoint: Callable[[], None] | None = None) -> Snapshot:
    """The snapshot after ``changes`` under the configured rules; raises ``ProposalError`` (field paths
    ``changes.<i>.…``). ``checkpoint``: a request's deadline, called before each change. A queue's changed Kueue
    levers (its ``kueue`` field) become the snapshot's, as the live sessions read them."""
    after = apply_changes(
        snapshot,
        changes,
        max_depth=int(settings.FAIRWAY["MAX_QUEUE_DEPTH"]),
        limits=settings.FAIRWAY_LIMITS,
        resource_names=known_resource_names(),
        checkpoint=checkpoint,
    )
    return with_stored_levers(after)


def apply_each(snapshot: Snapshot, changes: Sequence[Mapping[str, Any]]) -> Iterator[Snapshot]:
    """The snapshot after each change in turn, each applied to the one the earlier changes left (what a write of
    change ``i`` takes its values from). Raises ``ProposalError`` with the paths of the whole list."""
    snap = snapshot
    for i, change in enumerate(changes):
        try:
            snap = apply(snap, [dict(change)])
        except ProposalError as exc:
            raise ProposalError(
                [
                    rules.FieldError(f"changes.{i}" + e.field.removeprefix("changes.0"), e.message, e.code)
                    for e in exc.errors
                ]
            ) from exc
        yield snap


def with_kept_usage(cluster: Cluster, snapshot: Snapshot, now: float) -> Snapshot:
    """``snapshot`` with what Admission Fair Sharing orders the jobs by in ``cluster``'s live sessions: each job's
    LocalQueue and each LocalQueue's kept usage (``scheduling.LocalQueueUsage``) sampled at ``now``, read only; the
    snapshot itself when no ClusterQueue uses it."""
    from scheduling.store.localqueues import read_local_queue_usage

    return read_local_queue_usage(cluster, snapshot, now)[0]


@dataclass(frozen=True)
class Outcome:
    """A what-if evaluated: the snapshots and values before and after."""

    before: Snapshot
    after: Snapshot
    values_before: QuotaValues
    values_after: QuotaValues

    def comparison(self) -> dict[str, Any]:
        """Every node's values before and after and what changed (``engine.changes.compare``)."""
        return compare(self.values_before, self.values_after)


def evaluate(snapshot: Snapshot, values: QuotaValues, changes: Any, *, deadline: Deadline | None = None) -> Outcome:
    """``changes`` applied to ``snapshot`` (whose values are ``values``) and the values after; raises
    ``ProposalError``. ``deadline``: a request's, checked before each change and before the values, and told what
    is being done. The pods are the same before and after, so their aggregates are reused."""
    if deadline is not None:
        deadline.progress = "checking the proposed changes"
    after = apply(snapshot, changes, checkpoint=deadline.check if deadline is not None else None)
    if deadline is not None:
        deadline.progress = "computing the values after the proposal"
        deadline.check()
    return Outcome(snapshot, after, values, compute_values(after, base=values))
