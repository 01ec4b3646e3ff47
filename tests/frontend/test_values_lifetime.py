"""What a page leaves behind after a change: the values it was shown with are freed by reference counting once
the value cache replaces them, without waiting for the cyclic collector (which, when something held them, walked
hundreds of thousands of such objects in one request in ten: issue 12's tree page right after a change)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

from engine import collector
from engine.values import QuotaValues, compute_values
from frontend.presenters import trees
from quotas.models import Queue
from scheduling.models import Cluster
from scheduling.store import load_snapshot
from tests.frontend import builders as b


@pytest.fixture
def collector_off() -> Iterator[None]:
    """Nothing in these tests may rely on the cyclic collector: it stays off, as inside a request."""
    gc.collect()
    with collector.paused():
        yield


def _alive(kind: type) -> int:
    return sum(1 for o in gc.get_objects() if type(o) is kind)


def test_a_tree_goes_with_its_values(db: Any, collector_off: None) -> None:
    b.seed000_table2()
    snapshot = load_snapshot(Cluster.objects.get(name="default"))
    values = compute_values(snapshot)
    tree = trees.whole("queue", snapshot, values)
    key: tuple[trees.Kind, int] = ("queue", id(values))
    assert trees._BUILT[key][1] is tree
    del values
    assert key not in trees._BUILT  # dropped when the values died, not when newer trees pushed it out
    again = compute_values(snapshot)
    assert trees.whole("queue", snapshot, again) is not tree  # a new values object at the same address: rebuilt


def test_the_clusters_usage_is_summed_once_per_values_and_goes_with_them(db: Any, collector_off: None) -> None:
    """The overview's allocated and requested sums (a loop over every pod) are kept with the values they were
    shown with, as copies the page may change, and dropped when the values die."""
    b.seed000_table2()
    snapshot = load_snapshot(Cluster.objects.get(name="default"))
    values = compute_values(snapshot)
    first = trees.cluster_usage(snapshot, values)
    assert first == trees.cluster_usage(snapshot) and first[1]["cpu"] == 27_000  # every pod asks 1 cpu
    assert id(values) in trees._USAGE
    first[1]["cpu"] = 0
    assert trees.cluster_usage(snapshot, values)[1]["cpu"] == 27_000
    del values
    assert trees._USAGE == {}


@pytest.mark.parametrize("path", ["/trees/queues/", "/trees/quotas/", "/overview/"])
def test_pages_after_changes_keep_only_the_current_values(admin_client: Any, path: str, collector_off: None) -> None:
    b.seed000_table2()
    # values another test's cluster left in this process's value cache (one per cluster) are not this page's
    before = _alive(QuotaValues)
    for weight in (2, 3, 2, 3, 2, 3):
        Queue.objects.filter(name="q1").update(weight=weight)  # moves the trees' revision: values recomputed
        assert admin_client.get(path).status_code == 200
    assert _alive(QuotaValues) <= before + 2  # the cache's (and the base it was computed from, while it is computed)
    assert len(trees._BUILT) <= 2
