"""What the lower apps need to know of the clusters, asked through one typed interface.

The trees (``quotas``), the API's fields and the pages need a few facts that only the app that keeps the clusters
can answer: which resource names the nodes offer (a quota may only name those and the standard ones), each cluster's
total and queue policy (the warnings of a tree write), which clusters the Kubernetes adapter mirrors (their rows are
its to write) and which cluster, if any, owns the trees. They cannot import that app (it stands above them), so it
provides a ``ClusterFacts`` implementation when it is ready (``scheduling.apps`` → ``scheduling.facts``); without one
(a process that does not install it) there are no clusters, nothing is mirrored, Fairway owns the trees, and asking
for the known resource names is an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from engine.resources import ResourceNames, is_standard_resource

__all__ = [
    "ClusterFacts",
    "ClusterSummary",
    "JobMinimum",
    "check_known",
    "clusters",
    "known_resource_names",
    "largest_job_minimums",
    "mirrored_clusters",
    "provide",
    "tree_owner",
]


@dataclass(frozen=True)
class ClusterSummary:
    """A cluster as the trees' warnings see it: its name, its total allocatable (Ready, schedulable nodes) and its
    queue policy (``proportion``, ``capacity`` or ``capacity-hierarchy``)."""

    name: str
    total: Mapping[str, int]
    queue_policy: str


@dataclass(frozen=True)
class JobMinimum:
    """An unfinished job (podgroup) as a tree write's warnings see it: where it is and what its minimum (its gang:
    minMember pods, or its minResources) asks, in base units."""

    cluster: str
    namespace: str
    name: str
    min_resources: Mapping[str, int]


class ClusterFacts(Protocol):
    """What the app that keeps the clusters answers (each call one or two queries)."""

    def offered_resource_names(self) -> set[str]:
        """Every resource name some node offers, across all clusters."""
        ...

    def clusters(self) -> list[ClusterSummary]:
        """Every cluster's summary, by name."""
        ...

    def mirrored_clusters(self) -> set[str]:
        """The clusters whose nodes, podgroups and pods the Kubernetes adapter writes."""
        ...

    def tree_owner(self) -> str | None:
        """The cluster whose API server owns the trees, or None when Fairway does."""
        ...

    def largest_job_minimums(
        self, *, queue: str | None = None, quota_group: str | None = None
    ) -> dict[str, JobMinimum]:
        """Per resource, the unfinished job (any cluster) whose minimum asks the most of it: the jobs of leaf queue
        ``queue``, or of the namespaces of quota group ``quota_group``."""
        ...


_facts: ClusterFacts | None = None


def provide(facts: ClusterFacts) -> None:
    """Make ``facts`` the answer to every question here (a later call replaces an earlier one)."""
    global _facts
    _facts = facts


def clusters() -> list[ClusterSummary]:
    return _facts.clusters() if _facts is not None else []


def mirrored_clusters() -> set[str]:
    """The clusters mirrored from Kubernetes: a tree write that would delete some of their rows (a forced queue
    delete) is refused (``quotas.services``)."""
    return _facts.mirrored_clusters() if _facts is not None else set()


def tree_owner() -> str | None:
    return _facts.tree_owner() if _facts is not None else None


def largest_job_minimums(*, queue: str | None = None, quota_group: str | None = None) -> dict[str, JobMinimum]:
    """Per resource, the unfinished job of ``queue`` or of ``quota_group``'s namespaces with the largest minimum of
    it (a tree write warns when a deserved or min is below it); none without a provider."""
    return _facts.largest_job_minimums(queue=queue, quota_group=quota_group) if _facts is not None else {}


def known_resource_names() -> ResourceNames:
    """The resource names a quota may name now: the standard ones and every name some node offers."""
    if _facts is None:
        raise RuntimeError("no provider of cluster facts is registered (is the scheduling app installed?)")
    return ResourceNames(_facts.offered_resource_names())


def check_known(names: Iterable[str], field: str) -> None:
    """Raise ``QuantityError`` at ``field.<name>`` for the first name no node offers and no standard resource is;
    asks the provider only when some name is not a standard one."""
    names = list(names)
    if all(is_standard_resource(n) for n in names):
        return
    known_resource_names().check(names, field)
