"""Kueue's flavors per pod set (``engine.flavors``): a workload of several pod sets (``PodGroupInfo.pod_sets``) gets
a flavor per pod set; each pod asks for its own pod set's flavored keys and gets that flavor's tolerations, the
podgroup's ``minResources`` is split by pod set, an admitted workload's pods keep the flavors of their own pod set
(``with_kept_flavors``), and the memo hands the same objects again while nothing changed."""

from __future__ import annotations

import dataclasses

from engine.flavors import FlavorMemo, assign_flavors, with_kept_flavors
from engine.manifests import load_manifests
from engine.objects import Snapshot, Toleration
from engine.resources import ResourceList
from engine.vocabulary import PodGroupPhase, TaskStatus
from tests.cli.test_simulate_kueue_pod_sets import flavored


def _snapshot() -> Snapshot:
    """The PyTorchJob ``ns/train`` (a Master, two Workers of 1 core) in a ClusterQueue of 2 cores on-demand, then
    4 spot; the spot flavor tolerated through its ResourceFlavor's ``tolerations``."""
    text = flavored("2").replace(
        "spec: {nodeLabels: {instance: spot}}",
        "spec: {nodeLabels: {instance: spot}, tolerations: [{key: spot, operator: Exists, effect: NoSchedule}]}",
    )
    return load_manifests([("in.yaml", text)]).snapshot


SPOT = Toleration(key="spot", operator="Exists", effect="NoSchedule")


def test_each_pod_asks_for_its_pod_sets_flavor() -> None:
    snapshot = _snapshot()
    assert snapshot.podgroups["ns/train"].pod_sets == ("master", "worker")
    out, choices = assign_flavors(snapshot)
    tasks = {t.name: t for t in out.tasks.values()}
    assert dict(tasks["train-master-0"].request.raw) == {"cpu@on-demand": 1000}
    assert dict(tasks["train-worker-1"].request.raw) == {"cpu@spot": 1000}
    assert SPOT in tasks["train-worker-0"].tolerations and SPOT not in tasks["train-master-0"].tolerations
    assert dict(out.podgroups["ns/train"].min_resources.raw) == {"cpu@on-demand": 1000, "cpu@spot": 2000}
    choice = choices["ns/train"]
    assert dict(choice.flavors) == {"cpu": "on-demand"}
    assert [(p.name, dict(p.flavors)) for p in choice.pod_sets] == [
        ("master", {"cpu": "on-demand"}),
        ("worker", {"cpu": "spot"}),
    ]


def test_the_memo_hands_the_same_objects_again() -> None:
    snapshot, memo = _snapshot(), FlavorMemo()
    first, _ = assign_flavors(snapshot, memo)
    again, _ = assign_flavors(snapshot, memo)
    assert all(again.tasks[uid] is first.tasks[uid] for uid in first.tasks)
    assert again.podgroups["ns/train"] is first.podgroups["ns/train"]


def test_an_admitted_workload_keeps_each_pod_sets_flavors() -> None:
    """A store whose pods keep their plain requests: the Master on od (on-demand), a Worker on sp (spot); the other
    Worker, not on a node yet, takes its own pod set's flavor (spot), not the Master's; ``minResources`` split."""
    snapshot = _snapshot()
    by_name = {t.name: t for t in snapshot.tasks.values()}
    placed = [
        dataclasses.replace(by_name["train-master-0"], status=TaskStatus.RUNNING, node="od",
                            request=ResourceList({"cpu@on-demand": 1000})),
        dataclasses.replace(by_name["train-worker-0"], status=TaskStatus.RUNNING, node="sp",
                            request=ResourceList({"cpu@spot": 1000})),
    ]  # fmt: skip
    pg = dataclasses.replace(snapshot.podgroups["ns/train"], phase=PodGroupPhase.RUNNING)
    admitted = snapshot.with_tasks(placed).with_podgroups([pg])
    out = with_kept_flavors(admitted, {})
    assert dict(out.tasks["ns/train-worker-1"].request.raw) == {"cpu@spot": 1000}
    assert SPOT in out.tasks["ns/train-worker-1"].tolerations
    assert dict(out.podgroups["ns/train"].min_resources.raw) == {"cpu@on-demand": 1000, "cpu@spot": 2000}
