"""Warnings about a tree change that the rules accept: the change is written, and the writer is told.

* **Overcommitted**: the top-level queues' deserved or guarantee (or the top-level quota groups' min) add up to more
  than the cluster has. Below the top level the rules keep children within their parent; the top level is bounded
  only by the cluster, which changes as nodes come and go, so this is a warning (as in Volcano, whose webhook
  does not compare queues with the cluster either), not a refusal.
* **No effect under the policy**: a queue's weight counts only under the ``proportion`` policy (the ``capacity``
  plugin gives each queue its deserved), and its deserved and lending limit only under ``capacity``
  (``proportion`` computes the deserved share from the weights and never lends a guarantee). Setting or changing
  one where it does not count is accepted and said.

Each warning is a ``FieldError`` (field path, message, code ``overcommitted`` or ``no_effect``), like the rules'
errors, so writers show them at the same fields.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.objects import DEFAULT_GROUP, ROOT_GROUP, ROOT_QUEUE, SYSTEM_GROUP, QueueSpec, QuotaGroupSpec
from engine.resources import ResourceList
from engine.rules.common import FieldError, _q


def _over(
    obj: str, what: str, kind: str, lists: list[ResourceList], total: Mapping[str, int], where: str, touched: set[str]
) -> list[FieldError]:
    out: list[FieldError] = []
    summed = ResourceList.total(lists)
    for name in sorted(set(summed) & touched):
        have = int(total.get(name, 0))
        if name not in total or summed[name] <= have:
            continue
        out.append(
            FieldError(
                f"{kind}.{name}",
                f"{obj}: the {what}' {kind} {name} add up to {_q(summed[name], name)}, more than the {where}'s "
                f"{_q(have, name)}: not all of it can be served at once",
                "overcommitted",
            )
        )
    return out


def _changed(new: ResourceList, old: ResourceList | None) -> set[str]:
    """The resources of a list that a change sets or alters."""
    if old is None:
        return set(new)
    before, after = old.to_dict(), new.to_dict()
    return {r for r in set(before) | set(after) if before.get(r) != after.get(r)}


def queue_warnings(
    tree: Mapping[str, QueueSpec],
    new: QueueSpec,
    old: QueueSpec | None,
    *,
    total: Mapping[str, int],
    policy: str,
    cluster: str = "",
) -> list[FieldError]:
    """The warnings about creating or changing queue ``new`` (``old`` before, ``None`` for a create); ``tree`` is
    the queue tree after the change, ``total`` the cluster's allocatable and ``policy`` its queue policy
    ("proportion", "capacity" or "capacity-hierarchy"). ``cluster`` names the cluster in the message."""
    obj = f"queue {new.name}"
    where = f"cluster {cluster}" if cluster else "cluster"
    out: list[FieldError] = []
    moved = old is None or old.parent != new.parent or old.name != new.name
    if new.parent == ROOT_QUEUE:
        top = [spec for spec in tree.values() if spec.parent == ROOT_QUEUE]
        for kind in ("deserved", "guarantee"):
            mine = getattr(new, kind)
            touched = set(mine) if moved else _changed(mine, getattr(old, kind) if old else None)
            lists = [getattr(spec, kind) for spec in top]
            out += _over(obj, "top-level queues", kind, lists, total, where, touched & set(mine))
    capacity = policy.startswith("capacity")
    weight_set = new.weight != (old.weight if old is not None else 1)
    if capacity and weight_set:
        out.append(
            FieldError(
                "weight",
                f"{obj}: weight has no effect under the {where}'s {policy} policy, where each queue gets its "
                "deserved; weights share the cluster only under the proportion policy",
                "no_effect",
            )
        )
    if not capacity and _changed(new.deserved, old.deserved if old else None) and new.deserved:
        out.append(
            FieldError(
                "deserved",
                f"{obj}: deserved has no effect under the {where}'s {policy} policy, which computes each queue's "
                "deserved share from the weights; it counts only under the capacity policy",
                "no_effect",
            )
        )
    if not capacity and _changed(new.lending_limit, old.lending_limit if old else None) and new.lending_limit:
        out.append(
            FieldError(
                "lending_limit",
                f"{obj}: lending_limit has no effect under the {where}'s {policy} policy, which never lends a "
                "guarantee and computes deserved from the weights; it counts only under the capacity policy",
                "no_effect",
            )
        )
    return out


def quota_group_warnings(
    tree: Mapping[str, QuotaGroupSpec],
    new: QuotaGroupSpec,
    old: QuotaGroupSpec | None,
    *,
    total: Mapping[str, int],
    cluster: str = "",
) -> list[FieldError]:
    """The warnings about creating or changing quota group ``new``: the first-level groups' min (their guarantees,
    which the rules do not sum, as Koordinator does not) adding up to more than the cluster has."""
    if new.parent != ROOT_GROUP or new.name in (SYSTEM_GROUP, DEFAULT_GROUP):
        return []
    moved = old is None or old.parent != new.parent or old.name != new.name
    touched = set(new.min) if moved else _changed(new.min, old.min if old else None) & set(new.min)
    top = [
        spec.min
        for spec in tree.values()
        if spec.parent == ROOT_GROUP and spec.name not in (SYSTEM_GROUP, DEFAULT_GROUP)
    ]
    where = f"cluster {cluster}" if cluster else "cluster"
    return _over(f"quota group {new.name}", "first-level groups", "min", top, total, where, touched)
