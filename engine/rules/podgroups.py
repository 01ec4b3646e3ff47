"""PodGroup admission (Volcano's podgroup and job webhooks, seed 003): queue, size, namespace quota."""

from __future__ import annotations

from collections.abc import Mapping

from engine.objects import DEFAULT_QUEUE, ROOT_QUEUE, QueueSpec
from engine.resources import ResourceList, milli_scale
from engine.rules.common import (
    FieldError,
    _names,
    _q,
    validate_dns_label,
    validate_dns_subdomain,
)
from engine.rules.tree import (
    _negative_errors,
)
from engine.wording import plural


def _quota_key(key: str) -> tuple[str, int] | None:
    """A ResourceQuota ``hard`` key -> (resource name, divisor to reach that resource's base units).

    ``requests.memory`` parsed as a non-byte name is in milli-bytes, hence the divisor; ``limits.*`` do not
    constrain requests and are skipped.
    """
    if key.startswith("limits."):
        return None
    if key.startswith("requests."):
        resource = key[len("requests.") :]
        return resource, milli_scale(key) // milli_scale(resource)
    return key, 1


def validate_podgroup(
    queues: Mapping[str, QueueSpec],
    queue_name: str,
    *,
    min_member: int,
    min_resources: ResourceList,
    namespace: str,
    namespace_hard: ResourceList | None,
    other_min_resources: ResourceList,
    name: str = "",
) -> list[FieldError]:
    """Check creating a podgroup: its queue exists, is Open, is not root and is a leaf; ``min_member >= 0``;
    and the namespace's podgroups' ``minResources`` (``other_min_resources`` plus this one) stay within the
    namespace's ResourceQuota ``namespace_hard`` on every resource it defines (seed 003).

    An empty ``queue_name`` means the default queue. ``namespace_hard`` keys may be plain (``cpu``) or
    ``requests.*``; ``None`` means the namespace has no ResourceQuota.
    """
    obj = f"podgroup {name} in namespace {namespace}" if name else f"podgroup in namespace {namespace}"
    errors = validate_dns_label(namespace, what="namespace", field="namespace")
    if name:
        errors += validate_dns_subdomain(name, what="podgroup name")
    errors += _podgroup_queue_errors(obj, queues, queue_name or DEFAULT_QUEUE)
    if isinstance(min_member, bool) or not isinstance(min_member, int):
        errors.append(FieldError("min_member", f"{obj}: min_member must be an integer, got {min_member!r}", "invalid"))
    elif min_member < 0:
        errors.append(
            FieldError("min_member", f"{obj}: min_member {min_member} must be greater than or equal to 0", "negative")
        )
    errors += _negative_errors(obj, "min_resources", min_resources)
    if namespace_hard is not None:
        errors += _namespace_quota_errors(obj, namespace_hard, min_resources, other_min_resources)
    return errors


def _podgroup_queue_errors(obj: str, queues: Mapping[str, QueueSpec], queue_name: str) -> list[FieldError]:
    """The podgroup's queue exists, is Open, is not root and is a leaf."""
    errors: list[FieldError] = []
    queue = queues.get(queue_name)
    if queue is None:
        errors.append(FieldError("queue", f"{obj}: queue {queue_name} does not exist", "not_found"))
    else:
        if queue.state != "Open":
            errors.append(
                FieldError(
                    "queue",
                    "can only submit podgroup to queue with state Open, "
                    f"queue {queue_name} is {queue.state or 'unset'}",
                    "queue_not_open",
                )
            )
        if queue_name == ROOT_QUEUE:
            errors.append(FieldError("queue", f"{obj}: podgroups cannot be submitted to the root queue", "root_queue"))
        else:
            children = sorted(q for q, spec in queues.items() if spec.parent == queue_name and q != queue_name)
            if children:
                errors.append(
                    FieldError(
                        "queue",
                        f"can only submit podgroup to a leaf queue, queue {queue_name} has "
                        f"{plural(len(children), 'child queue')}: {_names(children)}",
                        "not_leaf",
                    )
                )
    return errors


def _namespace_quota_errors(
    obj: str, namespace_hard: ResourceList, min_resources: ResourceList, other_min_resources: ResourceList
) -> list[FieldError]:
    """The namespace's podgroups' minResources within its ResourceQuota on every resource the quota defines."""
    errors: list[FieldError] = []
    hard: dict[str, int] = {}
    for key, amount in namespace_hard.items():
        mapped = _quota_key(key)
        if mapped is None:
            continue
        resource, divisor = mapped
        value = -(-amount // divisor)  # ceiling, as parsing rounds fractional base units up
        hard[resource] = min(hard.get(resource, value), value)  # the tighter of cpu / requests.cpu
    for resource in sorted(hard):
        request = min_resources[resource]
        if request <= 0:
            continue
        used = other_min_resources[resource]
        if used + request > hard[resource]:
            errors.append(
                FieldError(
                    f"min_resources.{resource}",
                    f"{obj}: min_resources {resource} {_q(request, resource)} plus {_q(used, resource)} already "
                    f"reserved by the namespace's other podgroups is {_q(used + request, resource)}, more than "
                    f"the namespace's resource quota {resource} {_q(hard[resource], resource)}",
                    "exceeds_namespace_quota",
                )
            )
    return errors
