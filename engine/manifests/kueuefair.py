"""How a Kueue input turns on Kueue's Fair Sharing and preemption (the ``kueuefair`` plugin, issue 28 items 4 and 6).

A Kueue Configuration may come with the manifests or as the policy file (``is_kueue_configuration_text``: the callers
then read it with the manifests).

Fairway's Kueue policy (``engine.manifests.kueue.KUEUE_POLICY``: Volcano's default actions, ``capacity`` with
``enableHierarchy``) admits and never evicts, as Kueue does with its defaults (every ClusterQueue preemption policy
``Never``, fair sharing off). When the input says otherwise — a ClusterQueue with a ``spec.preemption`` policy other
than Never, or a Kueue ``Configuration`` with a ``fairSharing`` section — and no scheduler policy is given,
``kueue_fair_policy`` adds the ``kueuefair`` plugin first in the first tier (its ``fairSharing`` section as its
arguments: ``enable``, ``preemptionStrategies``), turns off the victim rules of ``priority``, ``drf`` and the queue
plugin (Kueue's are the ClusterQueues' policies; with them in another tier, a tier where kueuefair spares everyone would
leave the choice to them), and adds the ``preempt`` and ``reclaim`` actions after ``allocate``, both choosing whole
gangs (``wholeGangs``: Kueue evicts whole workloads).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from engine.limits import load_yaml
from engine.manifests.common import _FieldError, _map
from engine.manifests.kueueconfig import KUEUE_CONFIG_GROUP, is_kueue_configuration
from engine.objects import KueuePreemption
from engine.policy.arguments import PolicyError
from engine.policy.policy import Policy
from engine.session.plugins.kueuefair.arguments import read_kueuefair_args

__all__ = [
    "KUEUE_ACTIONS",
    "fair_sharing_section",
    "is_kueue_configuration_text",
    "kueue_fair_policy",
    "wants_kueuefair",
]

# Kueue evicts when a workload does not fit: one set from the preemptor's own ClusterQueue and the cohort's, classical
# or fair. The reclaim action chooses that set (with the queue's own workloads when both policies allow some,
# ``reclaims_within_queue``), so it runs first: ``preempt`` after it, within a ClusterQueue, finds its own set only
# for a ClusterQueue whose policies leave reclaim nothing (no Cohort, or ``reclaimWithinCohort: Never``), or where the
# set takes none of the others' (with preempt first, a ClusterQueue's own lower-priority workloads would go where
# Kueue's fair sharing takes a workload of the ClusterQueue with the higher share).
KUEUE_ACTIONS = "enqueue, allocate, reclaim, preempt, backfill"


def is_kueue_configuration_text(text: str, max_depth: int) -> bool:
    """Whether a policy file is a Kueue Configuration (one ``config.kueue.x-k8s.io`` ``Configuration`` document)
    rather than a scheduler policy: ``--policy`` (and the simulate endpoint's ``policy``) then reads it as part of the
    input, as if it were among the manifests."""
    if "Configuration" not in text or KUEUE_CONFIG_GROUP not in text:
        return False
    try:
        return is_kueue_configuration(load_yaml(text, max_depth))
    except yaml.YAMLError:
        return False


def fair_sharing_section(config: Mapping[str, Any]) -> dict[str, Any] | None:
    """A Kueue Configuration's ``fairSharing`` section as the plugin's arguments (None when it has none); a value
    Kueue would refuse is a ``_FieldError`` naming the field."""
    if config.get("fairSharing") is None:
        return None
    section = dict(_map(config.get("fairSharing"), "fairSharing"))
    try:
        read_kueuefair_args(section)
    except PolicyError as exc:
        raise _FieldError(str(exc).replace("kueuefair: ", "fairSharing.", 1)) from None
    return section


def wants_kueuefair(preemption: Mapping[str, KueuePreemption], fair_sharing: Mapping[str, Any] | None) -> bool:
    """Whether the input asks for evictions Kueue would make: fair sharing configured, or a ClusterQueue that may
    preempt (a policy other than Never)."""
    if fair_sharing is not None:
        return True
    return any(p.reclaim_within_cohort != "Never" or p.within_cluster_queue != "Never" for p in preemption.values())


def kueue_fair_policy(base: Policy, fair_sharing: Mapping[str, Any] | None) -> Policy:
    """``base`` with ``kueuefair`` first in the first tier (``fair_sharing`` its arguments; None: fair sharing off,
    the preemption policies still enforced) and the reclaim and preempt actions after allocate (reclaim first: it
    chooses Kueue's one set from the ClusterQueue's own workloads and the cohort's, ``KUEUE_ACTIONS``)."""
    arguments = dict(fair_sharing or {})
    read_kueuefair_args(arguments)  # refused here when Kueue would refuse it
    data = base.to_dict()
    tiers = data.get("tiers") or [{"plugins": []}]
    for tier in tiers:
        tier["plugins"] = [p for p in tier.get("plugins", []) if p.get("name") != "kueuefair"]
        for p in tier["plugins"]:
            # Kueue's victim rules are the ClusterQueues' policies and fair sharing, the kueuefair plugin's: the other
            # queue and priority rules choose no victims (gang and conformance, in kueuefair's tier, still spare)
            if p.get("name") in ("priority", "drf", "proportion", "capacity"):
                p["enablePreemptable"] = False
                p["enableReclaimable"] = False
            if p.get("name") in ("proportion", "capacity"):
                p["enablePreemptive"] = False  # kueuefair's gate: a borrowing ClusterQueue may reclaim in Kueue
    entry: dict[str, Any] = {"name": "kueuefair"}
    if arguments:
        entry["arguments"] = arguments
    tiers[0]["plugins"] = [entry, *tiers[0]["plugins"]]
    data["tiers"] = tiers
    data["actions"] = KUEUE_ACTIONS
    # Kueue evicts whole workloads: victims are chosen with gangs in mind (``actions.gangvictims``)
    configurations = {c["name"]: c for c in data.get("configurations", [])}
    for action in ("preempt", "reclaim"):
        entry = configurations.setdefault(action, {"name": action, "arguments": {}})
        entry.setdefault("arguments", {})["wholeGangs"] = True
    data["configurations"] = list(configurations.values())
    return Policy.from_dict(data)
