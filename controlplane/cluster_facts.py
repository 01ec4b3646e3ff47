"""What the trees' writers need to know of the clusters, without importing the app that keeps them: each cluster's
name, its total allocatable (Ready, schedulable nodes) and its queue policy. The scheduling app registers the
provider when it is ready (``scheduling.apps``), as it does for ``controlplane.resource_names``; the warnings of a
tree write (``engine.rules.warnings``, through ``quotas.services.change_warnings``) read them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class ClusterFacts:
    name: str
    total: Mapping[str, int]
    queue_policy: str  # "proportion" | "capacity" | "capacity-hierarchy"


_provider: Callable[[], list[ClusterFacts]] | None = None


def register(provider: Callable[[], list[ClusterFacts]]) -> None:
    """Make ``provider`` the source of the clusters' facts (a later registration replaces an earlier one)."""
    global _provider
    _provider = provider


def clusters() -> list[ClusterFacts]:
    """Every cluster's facts now (none when no provider is registered)."""
    return _provider() if _provider is not None else []


_mirrored: Callable[[], set[str]] | None = None


def register_mirrored(provider: Callable[[], set[str]]) -> None:
    """Make ``provider`` the source of ``mirrored_clusters``."""
    global _mirrored
    _mirrored = provider


def mirrored_clusters() -> set[str]:
    """The names of the clusters mirrored from Kubernetes, whose nodes, podgroups and pods only their adapter writes
    (``scheduling.ownership``): a tree write that would delete some of them (a forced queue delete) is refused."""
    return _mirrored() if _mirrored is not None else set()
