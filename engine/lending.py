"""What each tree node could lend now: the part of its entitlement that it neither uses nor holds for admitted work.

Kueue users asked for this number (kubernetes-sigs/kueue #12282: "how much can this ClusterQueue lend right now");
the metrics (``fairway_queue_lendable_resources``) and the pages read it from here, so it has one computation:

* a queue: ``(deserved - allocated - reserved)+`` per resource. ``deserved`` is what the queue policy entitles it
  to now (capacity: its deserved; proportion: its water-filled share), ``reserved`` what its admitted jobs hold
  for their gangs; what is left is what a sibling may borrow without taking anything from this queue's work;
* a quota group: ``(min - used - reserved)+`` per resource when it lends (``allow_lent``, Koordinator's
  ``allow-lent-resource``), nothing when it does not (its unused min stays its own).

A lending limit (on a queue or a quota group, per resource) bounds both: no more than the limit is lendable. In a
hierarchy, what the lending limits below a queue keep and leave unused is its children's alone, so it is not lendable
either (Kueue: a cohort lends only what its children lend it).

The amounts are in base units (milli-units, bytes), as every value of ``engine.values``.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.objects import QuotaGroupSpec
from engine.resources import ResourceList
from engine.values import QuotaValues

__all__ = ["lendable_groups", "lendable_queues"]


def _unused(
    entitled: Mapping[str, int], *held: Mapping[str, int], limit: Mapping[str, int] | None = None
) -> ResourceList:
    out = {}
    for name, amount in entitled.items():
        left = amount - sum(h.get(name, 0) for h in held)
        if limit is not None and name in limit:
            left = min(left, limit[name])
        if left > 0:
            out[name] = left
    return ResourceList(out)


def lendable_queues(values: QuotaValues) -> dict[str, ResourceList]:
    """Per queue, what it could lend now (resources with nothing to lend left out)."""
    book = values.queues
    honoured = book.honours_lending_limits
    return {
        name: _unused(
            book[name].deserved,
            book[name].allocated,
            book[name].inqueue,
            book.kept_below(name) if honoured else {},
            limit=(book.spec(name).lending_limit or None) if honoured else None,
        )
        for name in book
    }


def lendable_groups(values: QuotaValues, specs: Mapping[str, QuotaGroupSpec]) -> dict[str, ResourceList]:
    """Per quota group of ``specs``, what it could lend now (nothing when it does not lend)."""
    held = values.reservations.amounts
    out: dict[str, ResourceList] = {}
    for name, spec in specs.items():
        if name not in values.quotas or not spec.allow_lent:
            out[name] = ResourceList()
            continue
        out[name] = _unused(spec.min, values.quotas[name].used, held.get(name, {}), limit=spec.lending_limit or None)
    return out
