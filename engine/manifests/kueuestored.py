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

What a stored tree cannot hold, said where it is documented (docs/kubernetes.md): a LocalQueue's recorded usage and
weight (the live usage ordering counts every job's LocalQueue usage as 0, so it keeps the job order), and the labels
of namespaces (a namespace selector sees the ``kubernetes.io/metadata.name`` label only).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from fractions import Fraction
from typing import Any

import yaml

from engine.admission import AdmissionDraft
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
from engine.objects import KueueName, KueuePreemption, QueueSpec, Snapshot
from engine.vocabulary import QueueState

__all__ = ["StoredConfiguration", "read_stored_configuration", "with_stored_levers"]


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


def with_stored_levers(snapshot: Snapshot, configuration: StoredConfiguration | None = None) -> Snapshot:
    """``snapshot`` (read from the stored trees) with the Kueue levers its queues and ``configuration`` hold, as the
    module docstring says; the snapshot itself when there are none. The side tables of the snapshot's queues are made
    again from their ``kueue`` fields (a what-if that changed one gets the levers it asks for); without
    ``configuration``, the snapshot's admission fair sharing is kept."""
    levered = {name: q.kueue for name, q in snapshot.queues.items() if q.kueue}
    tables = (snapshot.kueue_names, snapshot.kueue_weights, snapshot.kueue_preemption)
    if not levered and configuration is None and not (any(tables) or snapshot.admission):
        return snapshot
    before = snapshot.admission
    draft = AdmissionDraft(
        fair_sharing=before.fair_sharing,
        local_queues=dict(before.local_queues),
        podgroup_local_queue=dict(before.podgroup_local_queue),
        namespace_labels=dict(before.namespace_labels),
    )
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
