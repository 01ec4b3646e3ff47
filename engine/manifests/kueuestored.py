"""Kueue's levers as the dashboard stores them, turned into the snapshot a live session runs on, the way ``fairway
simulate`` turns Kueue's manifests into one (issue 28 item 9).

The stored trees keep each queue's levers in its ``kueue`` field (``engine.kueuepolicy``), and a cluster may keep
Kueue's Configuration (``Cluster.kueue_configuration``: the ``config.kueue.x-k8s.io`` document the Kubernetes adapter
reads from Kueue's ConfigMap, or an admin pastes). ``with_stored_levers`` gives the snapshot the same side tables the
manifest readers (``engine.manifests.kueue``, ``kueuelevers``, ``kueuefair``, ``kueueconfig``) give a simulated one,
so the session's code path is the same one:

* ``queueingStrategy``, ``stopPolicy``, ``namespaceSelector``, ``admissionScope`` become ``Snapshot.admission``
  (``engine.admission.AdmissionDraft.freeze``, as the readers freeze theirs); ``stopPolicy`` Hold or HoldAndDrain
  makes the queue Closed, as the reader does;
* ``preemption`` becomes ``Snapshot.kueue_preemption``, ``fairSharing.weight`` ``Snapshot.kueue_weights``, ``kind``
  and ``name`` ``Snapshot.kueue_names``;
* the Configuration's ``fairSharing`` and the preemption policies turn the ``kueuefair`` plugin on over the
  cluster's scheduler policy (``kueue_fair_policy``) unless that policy names the plugin itself; its
  ``waitForPodsReady`` sets the ``enqueue`` action's gang repair and backoff (``apply_wait_for_pods_ready``), and its
  ``admissionFairSharing`` the usage ordering of the queues whose ``admissionScope`` asks for it.

Kueue's ResourceFlavors (issue 28 item 7) are stored beside the trees (the dashboard's ResourceFlavor rows) and each
queue keeps its quota per flavor under the flavored keys (``cpu@spot``) with its flavored resource groups and
``flavorFungibility`` in its ``kueue`` field; ``with_stored_flavors`` gives the snapshot the ``kueue_flavors`` the Kueue
reader gives a simulated one, and counts the nodes and the pods on them per flavor as the reader does
(``engine.flavors.flavored_nodes``, ``flavored_tasks``). The flavors of a resource are in the order the queues (by
name) name them, where the reader keeps the order of the input's documents: it decides only which flavor a node
matching several flavors with as many labels serves.

Kueue's LocalQueues are stored beside the trees too (the dashboard's LocalQueue rows: namespace, name, leaf queue,
``fairSharing.weight``); ``local_queues`` gives them to the snapshot (``AdmissionLevers.local_queue_specs``, which the
Kueue export writes, and their weights), and the live session adds each job's LocalQueue and the usage it keeps per
cluster (``with_local_queue_usage``; ``engine.localqueues``), so Admission Fair Sharing orders as in ``simulate``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from fractions import Fraction
from typing import Any

import yaml

from engine.admission import AdmissionDraft, LocalQueueKey, LocalQueueSpec, LocalQueueUsage, namespace_labels
from engine.flavors import FlavorMemo, flavored_nodes, flavored_tasks
from engine.kueuepolicy import KueuePolicy
from engine.limits import Limits, load_yaml
from engine.manifests.common import _FieldError
from engine.manifests.kueueconfig import (
    KueueConfiguration,
    apply_wait_for_pods_ready,
    is_kueue_configuration,
    read_kueue_configuration,
)
from engine.manifests.kueuefair import fair_sharing_section, kueue_fair_policy, wants_kueuefair
from engine.manifests.kueuelevers import take_queue_levers
from engine.objects import (
    FlavorFungibility,
    FlavorGroup,
    KueueFlavors,
    KueueName,
    KueuePreemption,
    QueueSpec,
    ResourceFlavorSpec,
    Snapshot,
)
from engine.resources import FLAVOR_MARK, split_flavor
from engine.vocabulary import QueueState

__all__ = [
    "StoredConfiguration",
    "read_stored_configuration",
    "stored_kueue_flavors",
    "uses_flavors",
    "with_local_queue_usage",
    "with_stored_flavors",
    "with_stored_levers",
]


class StoredConfiguration:
    """A cluster's Kueue Configuration, read once: the decoded sections and its ``fairSharing`` arguments."""

    def __init__(self, config: KueueConfiguration, fair_sharing: Mapping[str, Any] | None) -> None:
        self.config = config
        self.fair_sharing = fair_sharing


def read_stored_configuration(text: str, where: str = "kueue_configuration") -> StoredConfiguration | None:
    """The Configuration of ``text`` (YAML; blank: None). Raises ``ValueError`` with a sentence naming the field."""
    if not text.strip():
        return None
    try:
        obj = load_yaml(text, Limits().max_yaml_depth)
    except yaml.YAMLError as exc:
        raise ValueError(f"{where}: invalid YAML: {exc}") from None
    if not is_kueue_configuration(obj):
        raise ValueError(
            f"{where}: expected a Kueue Configuration (apiVersion config.kueue.x-k8s.io/v1beta1 or v1beta2, "
            "kind Configuration)"
        )
    assert isinstance(obj, Mapping)
    try:
        config = read_kueue_configuration(obj, where)
        return StoredConfiguration(config, fair_sharing_section(obj))
    except _FieldError as exc:
        raise ValueError(f"{where}: {exc}") from None


def _admission_draft(snapshot: Snapshot, specs: dict[LocalQueueKey, LocalQueueSpec]) -> AdmissionDraft:
    """The snapshot's admission data opened again with the stored LocalQueues' weights (``specs``) and the stored
    namespaces' labels, for ``with_stored_levers`` to add the queues' levers to."""
    before = snapshot.admission
    usage = dict(before.local_queues)
    for key, lq in specs.items():  # the stored weight; the usage is the live session's (``engine.localqueues``)
        old = usage.get(key)
        usage[key] = LocalQueueUsage(lq.weight, old.consumed if old is not None else {})
    return AdmissionDraft(
        fair_sharing=before.fair_sharing,
        local_queues=usage,
        podgroup_local_queue=dict(before.podgroup_local_queue),
        # the stored namespaces' labels (a what-if's snapshot carries them in its namespaces too)
        namespace_labels={**before.namespace_labels, **namespace_labels(snapshot.namespaces)},
        local_queue_specs=specs,
    )


def with_stored_levers(
    snapshot: Snapshot,
    configuration: StoredConfiguration | None = None,
    local_queues: Iterable[LocalQueueSpec] | None = None,
) -> Snapshot:
    """``snapshot`` (read from the stored trees) with the Kueue levers its queues and ``configuration`` hold, as the
    module docstring says; the snapshot itself when there are none. The side tables of the snapshot's queues are made
    again from their ``kueue`` fields (a what-if that changed one gets the levers it asks for); without
    ``configuration``, the snapshot's admission fair sharing is kept. ``local_queues``: the stored LocalQueues
    (their weights; without them, the snapshot's are kept), which the usage ordering and the Kueue export read."""
    levered = {name: q.kueue for name, q in snapshot.queues.items() if q.kueue}
    tables = (snapshot.kueue_names, snapshot.kueue_weights, snapshot.kueue_preemption)
    before = snapshot.admission
    specs = {lq.key: lq for lq in (before.local_queue_specs if local_queues is None else local_queues)}
    if not levered and configuration is None and not (any(tables) or before or specs):
        return snapshot
    draft = _admission_draft(snapshot, specs)
    names: dict[str, KueueName] = {}
    weights: dict[str, Fraction] = {}
    preemption: dict[str, KueuePreemption] = {}
    queues: dict[str, QueueSpec] = {}
    for name, value in sorted(levered.items()):  # the readers' own step (a Volcano Queue's levers)
        if take_queue_levers(draft, preemption, weights, names, name, value):
            spec = snapshot.queues[name]
            if spec.state != QueueState.CLOSED.value:
                queues[name] = replace(spec, state=QueueState.CLOSED.value)
    policy = snapshot.policy
    fair = None
    if configuration is not None:
        draft.fair_sharing = configuration.config.admission_fair_sharing
        fair = configuration.fair_sharing
    if wants_kueuefair(preemption, fair) and not any(p.name == "kueuefair" for p in policy.plugins()):
        policy = kueue_fair_policy(policy, fair)
    if configuration is not None:
        policy, _ = apply_wait_for_pods_ready(policy, configuration.config)
    all_queues = {**snapshot.queues, **queues} if queues else snapshot.queues

    def others(table: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in table.items() if k not in all_queues}

    changes: dict[str, Any] = {
        "admission": draft.freeze(all_queues),
        "kueue_names": {**others(snapshot.kueue_names), **names},
        "kueue_weights": {**others(snapshot.kueue_weights), **weights},
        "kueue_preemption": {**others(snapshot.kueue_preemption), **preemption},
    }
    if queues:
        changes["queues"] = all_queues
    if policy is not snapshot.policy:
        changes["policy"] = policy
    return snapshot.replace(**changes)


def with_local_queue_usage(
    snapshot: Snapshot,
    usage: Mapping[LocalQueueKey, LocalQueueUsage],
    podgroup_local_queue: Mapping[str, LocalQueueKey],
) -> Snapshot:
    """``snapshot`` with each LocalQueue's weight and kept usage (``usage``, ``engine.localqueues.usage_table``) and
    each podgroup's LocalQueue, which Admission Fair Sharing orders the queues that ask for it by; the snapshot itself
    when no queue does (as the manifest readers keep them only then)."""
    levers = snapshot.admission
    if not (levers.fair_sharing is not None and levers.fair_sharing_queues):
        return snapshot
    return snapshot.replace(
        admission=replace(levers, local_queues=dict(usage), podgroup_local_queue=dict(podgroup_local_queue))
    )


def uses_flavors(queues: Mapping[str, QueueSpec]) -> bool:
    """Whether some queue has quota in a ResourceFlavor (a flavored key) or flavored resource groups."""
    for q in queues.values():
        if q.kueue and "resourceGroups" in q.kueue:
            return True
        for amounts in (q.deserved, q.borrowing_limit, q.lending_limit, q.capability, q.guarantee):
            if amounts and FLAVOR_MARK in "".join(amounts.raw):  # one scan in C: every session reads it
                return True
    return False


def stored_kueue_flavors(
    queues: Mapping[str, QueueSpec], specs: Mapping[str, ResourceFlavorSpec]
) -> KueueFlavors | None:
    """The ``kueue_flavors`` of stored trees (the module docstring): the resources with quota per flavor, each with
    its flavors (from the queues' flavored keys and resource groups, queues by name), each ClusterQueue's flavored
    resource groups and fungibility, and the ResourceFlavors ``specs`` among those named. None: no flavor."""
    resources: dict[str, dict[str, None]] = {}
    groups: dict[str, tuple[FlavorGroup, ...]] = {}
    fungibility: dict[str, FlavorFungibility] = {}
    for name in sorted(queues):
        q = queues[name]
        policy = KueuePolicy.of(q.kueue, name) if q.kueue else None
        if policy is not None and policy.groups:
            groups[name] = policy.groups
            for group in policy.groups:
                for resource in group.resources:
                    resources.setdefault(resource, {}).update(dict.fromkeys(group.flavors))
        if policy is not None and policy.fungibility != FlavorFungibility():
            fungibility[name] = policy.fungibility
        for amounts in (q.deserved, q.borrowing_limit, q.lending_limit, q.capability, q.guarantee):
            for key in amounts or ():
                resource, flavor = split_flavor(key)
                if flavor:
                    resources.setdefault(resource, {})[flavor] = None
    if not resources:
        return None
    named = {f: specs[f] for fl in resources.values() for f in fl if f in specs}
    return KueueFlavors(
        flavors=dict(sorted(named.items())),
        resources={r: tuple(fl) for r, fl in sorted(resources.items())},
        groups=groups,
        fungibility=fungibility,
    )


def with_stored_flavors(
    snapshot: Snapshot,
    read_specs: Callable[[], Mapping[str, ResourceFlavorSpec]],
    memo: FlavorMemo | None = None,
) -> Snapshot:
    """``snapshot`` (read from the stored trees) with its ``kueue_flavors`` and its nodes and placed pods counted per
    flavor (the module docstring); ``read_specs`` gives the stored ResourceFlavors and is called only when some queue
    names a flavor. Without flavors, the snapshot as it is. Applying it twice changes nothing more. ``memo`` (a
    caller that keeps the cluster in memory): the flavored node or pod of the last call again for a node or pod that
    is the same object (``engine.flavors.FlavorMemo``), so that only what changed is counted again."""
    if not uses_flavors(snapshot.queues):
        return snapshot if snapshot.kueue_flavors is None else snapshot.replace(kueue_flavors=None)
    flavors = stored_kueue_flavors(snapshot.queues, read_specs())
    if flavors is None:  # pragma: no cover - uses_flavors said some queue names one
        return snapshot
    tasks = flavored_tasks(snapshot.tasks, snapshot.nodes, flavors, memo)
    nodes = flavored_nodes(snapshot.nodes, flavors, memo=memo)
    return snapshot.replace(tasks=tasks, nodes=nodes, kueue_flavors=flavors)
