"""A namespace's LimitRanges (``v1 LimitRange``): the requests its pods get, and the workloads they refuse.

Kubernetes' LimitRanger admission gives each container of a pod created in the namespace the LimitRange's default
limits and default requests for the resources it leaves out, and refuses a pod whose containers (type ``Container``) or
whole request (type ``Pod``) fall outside the ranges' ``min`` and ``max``. Kueue sizes a workload the same way before
its pods exist (``workload.AdjustResources``), and keeps a workload whose templates fall outside the ranges pending
("resources didn't satisfy LimitRange constraints"). So, read here:

* a pod read from manifests (``fairway simulate``: what the API server would make of it) and the pod templates of
  Kueue's workloads (a ``batch/v1`` Job, a JobSet, Kubeflow's jobs, an MPIJob; in simulate and live, where a
  suspended Job is admitted from its template) get the defaults; a pod read live already has them (the API server
  gave them), and a Volcano job's templates are sized as Volcano's controller sizes its PodGroup, as written;
* the defaults are applied as the API server applies them to a pod: a container's limit without a request is its
  request first, then the ranges' defaults fill what is left (Kueue applies the defaults first, so for a container
  with a limit and no request it counts the default request where the pod will ask for the limit: Fairway counts
  what the pod will ask for);
* several LimitRanges of a namespace are summarized as Kueue does (``limitrange.Summarize``), in the order of their
  names: the lowest ``max``, the highest ``min``, the first ``default`` and ``defaultRequest`` of each resource;
* a LimitRange item is completed as the API server completes it on create (``SetDefaults_LimitRangeItem``, type
  ``Container``): a missing default limit is the ``max``, a missing default request the default limit, else the
  ``min``. A LimitRange read live is complete already; one from manifests is completed the same way;
* ``maxLimitRequestRatio`` and the ``PersistentVolumeClaim`` type bound neither requests nor quota and are not read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.manifests.common import _FieldError, _list, _map, _rl, _str
from engine.resources import ResourceList, sorted_resources
from engine.vocabulary import LIMIT_RANGE_WAIT, RESOURCES_INVALID
from engine.wording import amount

__all__ = [
    "LIMIT_RANGE_WAIT",
    "RESOURCES_INVALID",
    "LimitRangeItem",
    "LimitRangeSummary",
    "NamespaceLimits",
    "read_limit_range",
    "summarize",
]

_TYPES = ("Container", "Pod", "PersistentVolumeClaim")
ABOVE_MAX = "requests must not be above the LimitRange max"
BELOW_MIN = "requests must not be below the LimitRange min"
ABOVE_LIMIT = "requests must not exceed its limits"


@dataclass(frozen=True)
class LimitRangeItem:
    """One item of a LimitRange's ``spec.limits`` (type ``Container`` or ``Pod``), completed as the API server
    completes it."""

    type: str
    max: ResourceList = field(default_factory=ResourceList)
    min: ResourceList = field(default_factory=ResourceList)
    default: ResourceList = field(default_factory=ResourceList)
    default_request: ResourceList = field(default_factory=ResourceList)


def read_limit_range(spec: Mapping[str, Any]) -> tuple[LimitRangeItem, ...]:
    """The items of a LimitRange's ``spec`` that bound pods (types ``Container`` and ``Pod``); a ``_FieldError``
    names a bad field."""
    items: list[LimitRangeItem] = []
    for i, raw in enumerate(_list(spec.get("limits"), "spec.limits")):
        path = f"spec.limits[{i}]"
        item = _map(raw, path)
        kind = _str(item.get("type"), f"{path}.type")
        if kind not in _TYPES:
            raise _FieldError(f"{path}.type: {kind!r} is not one of {', '.join(_TYPES)}")
        if kind == "PersistentVolumeClaim":
            continue
        bounds = {name: _rl(item.get(key), f"{path}.{key}") for name, key in _FIELDS}
        if kind == "Container":  # the API server's completion of a container item
            default = {**bounds["max"], **bounds["default"]}
            bounds["default"] = ResourceList(default)
            bounds["default_request"] = ResourceList({**bounds["min"], **default, **bounds["default_request"]})
        items.append(LimitRangeItem(kind, **bounds))
    return tuple(items)


_FIELDS = (("max", "max"), ("min", "min"), ("default", "default"), ("default_request", "defaultRequest"))


@dataclass(frozen=True)
class LimitRangeSummary:
    """A namespace's LimitRanges summarized (``summarize``): per type, the bounds and defaults its pods get."""

    container: LimitRangeItem | None = None
    pod: LimitRangeItem | None = None

    def container_request(
        self, requests: Mapping[str, int], limits: Mapping[str, int]
    ) -> tuple[dict[str, int], dict[str, int]]:
        """A container's requests and limits once the API server has defaulted them: a limit without a request is
        the request, then the default limits and default requests fill the resources left out."""
        asked = {**limits, **requests}
        c = self.container
        if c is None:
            return asked, dict(limits)
        return {**c.default_request, **asked}, {**c.default, **limits}

    def violations(
        self,
        containers: Iterable[tuple[str, Mapping[str, int], Mapping[str, int]]],
        pod_request: Mapping[str, int],
        pod_limits: Mapping[str, int] | None = None,
    ) -> list[str]:
        """Where a pod's defaulted containers (``(path, requests, limits)``) and its whole request fall outside the
        ranges, one message per container or pod and rule, naming the resources with the bound. The whole pod is
        checked as Kueue checks a workload's templates (its request, overhead included, against both bounds), or,
        given ``pod_limits``, as the API server's LimitRanger checks a pod (``_pod_refusals``)."""
        found: list[str] = []
        for path, requests, limits in containers:
            above_limit = sorted_resources(r for r, v in requests.items() if r in limits and v > limits[r])
            if above_limit:
                found.append(f"{path}: {', '.join(above_limit)}: {ABOVE_LIMIT}")
            if self.container is not None:
                high = {r: max(requests.get(r, 0), limits.get(r, 0)) for r in {*requests, *limits}}
                low = {r: min(requests.get(r, v), limits.get(r, v)) for r, v in {**limits, **requests}.items()}
                found.extend(_outside(path, high, low, self.container))
        if self.pod is not None:
            if pod_limits is None:
                found.extend(_outside("the pod", pod_request, pod_request, self.pod))
            else:
                found.extend(_pod_refusals(pod_request, pod_limits, self.pod))
        return found


def _pod_refusals(requests: Mapping[str, int], limits: Mapping[str, int], item: LimitRangeItem) -> list[str]:
    """The API server's LimitRanger on a whole pod (type ``Pod``; checked against a real kube-apiserver): its
    ``min`` against the pod's requests, which must name the resource (and its limits, where they do); its ``max``
    against its limits, which must name the resource (and its requests, where they do). ``requests`` and ``limits``
    are the pod's without its overhead: a RuntimeClass's overhead counts in neither. One message per bound broken."""
    found = []
    for r in sorted_resources(item.min):
        bound, what = amount(item.min[r], r), ""
        if r not in requests:
            what = "no request is specified"
        elif requests[r] < item.min[r]:
            what = f"its request is {amount(requests[r], r)}"
        elif r in limits and limits[r] < item.min[r]:
            what = f"its limit is {amount(limits[r], r)}"
        if what:
            found.append(f"the pod: the minimum {r} of a pod is {bound}, but {what}")
    for r in sorted_resources(item.max):
        bound, what = amount(item.max[r], r), ""
        if r not in limits:
            what = "no limit is specified"
        elif limits[r] > item.max[r]:
            what = f"its limit is {amount(limits[r], r)}"
        elif r in requests and requests[r] > item.max[r]:
            what = f"its request is {amount(requests[r], r)}"
        if what:
            found.append(f"the pod: the maximum {r} of a pod is {bound}, but {what}")
    return found


def _outside(path: str, high: Mapping[str, int], low: Mapping[str, int], item: LimitRangeItem) -> list[str]:
    """The messages of ``path`` whose ``high`` amounts exceed the item's ``max`` or ``low`` ones (a resource left out
    counts as none) fall below its ``min``."""
    found = []
    above = [r for r in sorted_resources(item.max) if r in high and high[r] > item.max[r]]
    if above:
        found.append(f"{path}: {_bounds(above, item.max)}: {ABOVE_MAX}")
    below = [r for r in sorted_resources(item.min) if low.get(r, 0) < item.min[r]]
    if below:
        found.append(f"{path}: {_bounds(below, item.min)}: {BELOW_MIN}")
    return found


def _bounds(names: list[str], bound: Mapping[str, int]) -> str:
    return ", ".join(f"{r} ({amount(bound[r], r)})" for r in names)


def summarize(ranges: Iterable[tuple[LimitRangeItem, ...]]) -> LimitRangeSummary:
    """Several LimitRanges' items as one (``ranges`` in the order of their names), as Kueue summarizes them: per
    type the lowest ``max``, the highest ``min``, and the first ``default`` and ``defaultRequest`` of each
    resource."""
    merged: dict[str, LimitRangeItem] = {}
    for items in ranges:
        for item in items:
            seen = merged.get(item.type)
            merged[item.type] = item if seen is None else _merge(seen, item)
    return LimitRangeSummary(container=merged.get("Container"), pod=merged.get("Pod"))


def _merge(a: LimitRangeItem, b: LimitRangeItem) -> LimitRangeItem:
    return LimitRangeItem(
        a.type,
        max=ResourceList({r: min(v, a.max[r]) if r in a.max else v for r, v in {**a.max, **b.max}.items()}),
        min=ResourceList({r: max(v, a.min[r]) if r in a.min else v for r, v in {**a.min, **b.min}.items()}),
        default=ResourceList({**b.default, **a.default}),
        default_request=ResourceList({**b.default_request, **a.default_request}),
    )


@dataclass
class NamespaceLimits:
    """What the manifests' reader keeps of the LimitRanges: each namespace's by name (``ranges``), summarized once
    all are read (``summaries``), and where the Kueue workloads' templates fall outside them (``refusals``, by
    podgroup key)."""

    ranges: dict[str, dict[str, tuple[LimitRangeItem, ...]]] = field(default_factory=dict)
    summaries: dict[str, LimitRangeSummary] = field(default_factory=dict)
    refusals: dict[str, list[str]] = field(default_factory=dict)

    def summarize(self) -> None:
        """Each namespace's LimitRanges as one, in the order of their names."""
        self.summaries = {
            ns: summarize(items for _, items in sorted(named.items())) for ns, named in self.ranges.items()
        }

    def wait(self, key: str) -> str | None:
        """Why the Kueue workload ``key`` waits when its templates ask for more than their limits (Kueue validates
        that first) or fall outside its namespace's LimitRanges."""
        found = self.refusals.get(key)
        if not found:
            return None
        invalid = [f for f in found if f.endswith(ABOVE_LIMIT)]
        return f"{RESOURCES_INVALID}: {'; '.join(invalid)}" if invalid else f"{LIMIT_RANGE_WAIT}: {'; '.join(found)}"
