"""Kueue's objects (``kueue.x-k8s.io``) onto the queue tree, and the pods and Jobs labelled with a LocalQueue.

The mapping (docs/simulate.md states it too):

* a ``Cohort`` is an inner queue of its name, under its ``spec.parentName`` (v1beta1 ``parent``) or ``root``; a
  cohort that ClusterQueues name but no Cohort object defines exists without quota of its own, as in Kueue;
* a ``ClusterQueue`` is a leaf queue of its name, under its ``spec.cohortName`` (v1beta1 ``cohort``) or ``root``;
* any valid Kubernetes name works: a Cohort or ClusterQueue whose name is Fairway's built-in (``root``, ``default``),
  a Volcano Queue's of the input, a Cohort's (for a ClusterQueue: Kueue keeps the two apart), or not a queue name
  (dots, over 63 characters) is the queue ``<name>-cohort`` / ``<name>-clusterqueue`` (``_identity``), and
  ``Snapshot.kueue_names`` keeps its Kueue name for the outputs and the export; a Volcano Queue ``root`` or
  ``default`` stays the built-in, as in Volcano;
* per resource, ``nominalQuota`` is the queue's **deserved**; a cohort deserves its own quota plus its children's
  (its subtree's nominal quota); ``borrowingLimit`` and ``lendingLimit`` are the queue's limits, with Kueue's rule at
  every depth (``engine.fairshare.capacity``: what a node keeps never reaches any ancestor, so Kueue's
  ``subtreeQuota`` is the deserved less what the limits below keep); a ClusterQueue without a cohort, and a cohort
  without a parent, cannot borrow: their **capability** is their deserved (and a quota of 0 cpu or memory there a
  borrowing limit of 0, since a capability of 0 cpu reads as unlimited), as Kueue admits nothing beyond the quota of
  a tree;
* a ClusterQueue's ``spec.stopPolicy`` ``Hold`` or ``HoldAndDrain`` makes its queue Closed (nothing new is admitted);
  ``HoldAndDrain`` also drains it, and ``queueingStrategy``, ``namespaceSelector``, ``admissionScope``, a LocalQueue's
  ``fairSharing`` and WorkloadPriorityClasses are read by ``engine.manifests.kueuelevers`` (``Snapshot.admission``);
* a ClusterQueue's ``spec.preemption`` (``reclaimWithinCohort``, ``borrowWithinCohort``, ``withinClusterQueue``) is
  kept in ``Snapshot.kueue_preemption`` by queue identity, enforced by the ``kueuefair`` plugin, which a policy other
  than Never turns on (``engine.manifests.kueuefair``);
* ``spec.fairSharing.weight`` is a quantity, read exactly; the queue's whole **weight** keeps the ratios among the
  children of one cohort (a set with a fraction is multiplied by its least common denominator: 0.75 and 0.25 are 3
  and 1) and ``Snapshot.kueue_weights`` the exact ones of such a set, and 0 (Kueue's infinite share, fair
  sharing's), which is the whole weight 1 with a warning;
* a ``ResourceFlavor`` (``nodeLabels``, ``nodeTaints``, ``tolerations``): a resource given quota in one flavor keeps
  its name; one given quota in several (``on-demand`` and ``spot`` cpu), and every resource of a resource group with
  one, is counted per flavor under ``<resource>@<flavor>`` in every queue, with the ClusterQueues' resource groups
  and ``flavorFungibility`` in ``Snapshot.kueue_flavors`` (``engine.flavors``: the nodes and the workloads' flavors);
* a ``LocalQueue`` (namespace, name) points at its ``spec.clusterQueue``: a pod labelled
  ``kueue.x-k8s.io/queue-name: <LocalQueue>`` goes to that ClusterQueue's queue (its podgroup of one pod); a
  ``batch/v1`` Job so labelled becomes a podgroup of ``spec.parallelism`` pods (default 1) from its template, all of
  them needed at once (Kueue admits a Job whole); a Job without the label is skipped with a warning; the pods of a
  Kueue pod group (``kueue.x-k8s.io/pod-group-name``) are one podgroup named after the group (``kueuegroups``);
* a JobSet, Kubeflow's training jobs and an MPIJob so labelled are one podgroup of their pod sets (``kueuepodsets``);
* resources a ClusterQueue does not cover are not limited by it (Kueue would not admit such a workload).

The policy: input with Kueue objects and no scheduler policy (neither ``--policy`` nor a ConfigMap) runs Volcano's
default actions with ``capacity`` and ``enableHierarchy`` in place of ``proportion``, the plugin whose deserved,
guarantee and capability carry Kueue's quota tree.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any, TypeVar

from engine.admission import LocalQueueSpec
from engine.amounts import STANDARD_RESOURCES
from engine.kueuepolicy import kueue_policy_value
from engine.manifests.common import (
    KUEUE_MIN_PARALLELISM,
    KUEUE_QUEUE_LABEL,
    _Doc,
    _FieldError,
    _int,
    _is_kube_name,
    _list,
    _map,
    _rl,
    _str,
    _string_map,
)
from engine.manifests.core import _toleration
from engine.manifests.kueuejobs import KueueJobReaders
from engine.objects import (
    DEFAULT_QUEUE,
    ROOT_QUEUE,
    FlavorFungibility,
    FlavorGroup,
    KueueFlavors,
    KueueName,
    KueuePreemption,
    QueueSpec,
    ResourceFlavorSpec,
    Taint,
    TaskInfo,
)
from engine.policy.policy import Policy, default_policy_with
from engine.resources import FLAVOR_MARK, QuantityError, ResourceList, parse_exact_quantity
from engine.rules.common import MAX_WEIGHT
from engine.vocabulary import PodGroupPhase, QueueState

# Volcano's default policy with capacity (hierarchical) in place of proportion: Kueue's quota tree
KUEUE_POLICY: Policy = default_policy_with({"name": "capacity", "enableHierarchy": True})

_Quotas = dict[str, dict[str, tuple[str, int, int | None, int | None]]]  # resource -> flavor -> (path, n, b, l)
_Node = tuple[_Doc, str | None, _Quotas]  # a Cohort or ClusterQueue: its document, parent and quotas


class KueueReaders(KueueJobReaders):
    """The builder's Kueue part: ``_read_kueue`` after the Volcano queues, ``_batch_job`` with the jobs, and
    ``_kueue_pod_groups`` after the pods (``engine.manifests.kueuegroups``)."""

    # -- the tree -------------------------------------------------------------------------------------------------
    def _read_kueue(self) -> None:
        """Kueue's Cohorts and ClusterQueues as queues of the tree (after the Volcano queues: their names are taken),
        and the LocalQueues that point at them."""
        self._read_workload_priority_classes()
        flavor_specs: dict[str, ResourceFlavorSpec] = {}
        for doc in self.docs("ResourceFlavor"):
            self._run(doc, lambda d: flavor_specs.__setitem__(d.name, _resource_flavor(d)))
        flavors = set(flavor_specs)
        cohorts: dict[str, _Node] = {}
        members: dict[str, _Node] = {}
        for doc in self.docs("Cohort"):
            self._run(doc, lambda d: cohorts.__setitem__(d.name, self._kueue_node(d, "parentName", "parent")))
        for doc in self.docs("ClusterQueue"):
            self._run(doc, lambda d: members.__setitem__(d.name, self._kueue_node(d, "cohortName", "cohort")))
        for doc in self.docs("LocalQueue"):
            self._run(doc, self._local_queue)
        if not (cohorts or members or self.local_queues or flavors):
            return
        self.kueue_objects = True
        flavored = self._several_flavors({**{f"c/{n}": v for n, v in cohorts.items()}, **members}, flavors)
        implicit = sorted({p for _, p, _ in members.values() if p is not None and p not in cohorts})
        ids = self._kueue_identities(cohorts, members, implicit)
        specs = self._kueue_specs(cohorts, members, implicit, flavored, ids)
        if flavored:
            self._kueue_flavors(flavor_specs, flavored, {ids[("ClusterQueue", n)]: v for n, v in members.items()})
        depths = _kueue_depths(specs)  # (a cycle of cohorts is refused here)
        _uncovered_held(specs, {ids[("ClusterQueue", n)] for n in members})
        self._add_kueue_queues(specs, depths)
        self.local_queues = {key: ids.get(("ClusterQueue", cq), cq) for key, cq in self.local_queues.items()}
        for (ns, lq), queue in self.local_queues.items():  # the LocalQueues as the Kueue export writes them again
            usage = self.admission.local_queues.get((ns, lq))
            if usage is not None:  # (none: its fairSharing could not be read, and the object is refused)
                self.admission.local_queue_specs[(ns, lq)] = LocalQueueSpec(ns, lq, queue, usage.weight)
        if self.admission.namespace_selectors:
            self._namespace_labels()

    def _kueue_identities(
        self, cohorts: Mapping[str, _Node], members: Mapping[str, _Node], implicit: list[str]
    ) -> dict[tuple[str, str], str]:
        """Each Cohort's and ClusterQueue's queue identity, by (kind, name): its name where that is a queue name
        (a DNS-1123 label) nobody holds yet — not a built-in (``root``, ``default``), a Volcano Queue of the input, or
        a Cohort of the same name (Kueue keeps Cohorts and ClusterQueues apart); otherwise ``<name>-cohort`` or
        ``<name>-clusterqueue`` (dots as ``-``; cut with a hash of the name when too long; ``-2``, ``-3``… while
        taken), remembered in ``kueue_names`` so every output can name the object as Kueue does."""
        for name, (doc, _, _) in [*cohorts.items(), *members.items()]:
            if not _is_kube_name(name):
                raise doc.error(f"metadata.name: {name!r} is not a valid Kubernetes name (a DNS-1123 subdomain)")
        for name in implicit:
            if not _is_kube_name(name):
                doc = members[sorted(m for m, v in members.items() if v[1] == name)[0]][0]
                raise doc.error(f"spec.cohortName: {name!r} is not a valid Kubernetes name (a DNS-1123 subdomain)")
        objects = [("Cohort", n) for n in sorted({*cohorts, *implicit})] + [
            ("ClusterQueue", n) for n in sorted(members)
        ]
        taken = {ROOT_QUEUE, DEFAULT_QUEUE, *self.queues}
        ids: dict[tuple[str, str], str] = {}
        for kind, name in objects:
            if name not in taken and len(name) <= _LABEL_MAX and "." not in name:
                ids[(kind, name)] = name
                taken.add(name)
        for kind, name in objects:
            if (kind, name) in ids:
                continue
            ident = _identity(kind, name, taken)
            ids[(kind, name)] = ident
            taken.add(ident)
            self.kueue_names[ident] = KueueName(kind, name)
        return ids

    def _kueue_specs(
        self,
        cohorts: Mapping[str, _Node],
        members: Mapping[str, _Node],
        implicit: list[str],
        flavored: Mapping[str, tuple[str, ...]],
        ids: Mapping[tuple[str, str], str],
    ) -> dict[str, dict[str, Any]]:
        """Each queue's settings as Kueue gives them (its document, parent, quota, limits, weight, and a
        ClusterQueue's state from its stop policy), by queue identity, cohorts first; an implicit cohort has none of
        its own. A parent is a cohort's identity (a cohort no object defines keeps its name, to be reported)."""
        specs: dict[str, dict[str, Any]] = {}

        def parent_of(parent: str | None) -> str | None:
            return None if parent is None else ids.get(("Cohort", parent), parent)

        for name, (doc, parent, quotas) in cohorts.items():
            specs[ids[("Cohort", name)]] = {"doc": doc, "parent": parent_of(parent), **self._levers(quotas, flavored)}
        for name in implicit:
            specs[ids[("Cohort", name)]] = {
                "doc": None, "parent": None, "deserved": {}, "borrowing": {}, "lending": {},
                "exact_weight": Fraction(1),
            }  # fmt: skip
        for name, (doc, _, _) in cohorts.items():
            specs[ids[("Cohort", name)]]["exact_weight"] = _read(doc, self._weight)
        for name, (doc, parent, quotas) in members.items():
            spec = specs[ids[("ClusterQueue", name)]] = {
                "doc": doc, "parent": parent_of(parent), **self._levers(quotas, flavored),
                "exact_weight": _read(doc, self._weight),
            }  # fmt: skip
            preemption = _read(doc, _preemption)
            if preemption is not None:
                self.kueue_preemption[ids[("ClusterQueue", name)]] = preemption
            stop = _str(doc.spec.get("stopPolicy"), "spec.stopPolicy") or "None"
            if stop not in ("None", "Hold", "HoldAndDrain"):
                raise doc.error(f"spec.stopPolicy: {stop!r} is not one of None, Hold, HoldAndDrain")
            spec["state"] = QueueState.OPEN.value if stop == "None" else QueueState.CLOSED.value
            queue = ids[("ClusterQueue", name)]
            _read(doc, lambda d: self._cluster_queue_levers(queue, d))  # noqa: B023 (run at once)
        self._whole_weights(specs)
        return specs

    def _add_kueue_queues(self, specs: Mapping[str, dict[str, Any]], depth: Mapping[str, int]) -> None:
        """The queues, parents first: a cohort deserves its own quota plus its children's (summed deepest first),
        and a queue at the top of a tree can use no more than it deserves."""
        subtree = {name: dict(spec["deserved"]) for name, spec in specs.items()}
        for name in sorted(specs, key=lambda n: -depth[n]):
            parent = specs[name]["parent"]
            if parent is not None:
                for r, v in subtree[name].items():
                    subtree[parent][r] = subtree[parent].get(r, 0) + v
        for name in sorted(specs, key=lambda n: (depth[n], n)):
            spec = specs[name]
            deserved = ResourceList(subtree[name])
            borrowing = ResourceList(spec["borrowing"])
            if spec["parent"] is None:
                # the top of a tree uses at most its quota; a capability of 0 cpu or memory reads as unlimited
                # (Volcano's), so a quota of 0 there is held by a borrowing limit of 0 instead
                zero = {r: 0 for r in STANDARD_RESOURCES if r in deserved and not deserved[r]}
                borrowing = ResourceList({**spec["borrowing"], **zero})
            self.queues[name] = QueueSpec(
                name=name,
                parent=spec["parent"] or ROOT_QUEUE,
                weight=spec["weight"],
                deserved=deserved,
                capability=deserved if spec["parent"] is None else ResourceList(),
                borrowing_limit=borrowing,
                lending_limit=ResourceList(spec["lending"]),
                state=spec.get("state", QueueState.OPEN.value),
                kueue=self._stored_levers(name),
            )
            self._origin("Queue", name)

    def _stored_levers(self, queue: str) -> dict[str, Any] | None:
        """The levers read for ``queue`` as its spec's ``kueue`` field (``engine.kueuepolicy``), so that an import
        stores what the side tables hold (``engine.manifests.kueuestored`` gives them back to a live session)."""
        draft = self.admission
        flavors = self.kueue_flavors  # the ClusterQueue's flavored resource groups and fungibility, stored with it
        stop = "HoldAndDrain" if queue in draft.draining else "Hold" if queue in draft.held else "None"
        return kueue_policy_value(
            kueue_name=self.kueue_names.get(queue),
            strict_fifo=queue in draft.strict_fifo,
            stop_policy=stop,
            namespace_selector=draft.namespace_selectors.get(queue),
            preemption=self.kueue_preemption.get(queue),
            usage_based=queue in draft.fair_sharing_queues,
            weight=self.kueue_weights.get(queue),
            groups=flavors.groups.get(queue, ()) if flavors is not None else (),
            fungibility=flavors.fungibility.get(queue) if flavors is not None else None,
        )

    def _kueue_node(self, doc: _Doc, parent_key: str, old_key: str) -> tuple[_Doc, str | None, _Quotas]:
        spec = doc.spec
        parent = _str(spec.get(parent_key), f"spec.{parent_key}") or _str(spec.get(old_key), f"spec.{old_key}")
        quotas: _Quotas = {}
        groups: list[FlavorGroup] = []
        for i, group in enumerate(_list(spec.get("resourceGroups"), "spec.resourceGroups")):
            gpath = f"spec.resourceGroups[{i}]"
            cpath = f"{gpath}.coveredResources"
            covered = [_str(r, cpath) for r in _list(_map(group, gpath).get("coveredResources"), cpath)]
            names: list[str] = []
            for j, flavor in enumerate(_list(_map(group, gpath).get("flavors"), f"{gpath}.flavors")):
                fpath = f"{gpath}.flavors[{j}]"
                fmap = _map(flavor, fpath)
                fname = _str(fmap.get("name"), f"{fpath}.name")
                names.append(fname)
                for k, res in enumerate(_list(fmap.get("resources"), f"{fpath}.resources")):
                    rpath = f"{fpath}.resources[{k}]"
                    rmap = _map(res, rpath)
                    rname = _str(rmap.get("name"), f"{rpath}.name")
                    if not rname:
                        raise _FieldError(f"{rpath}.name: missing")
                    amounts = {}
                    for key in ("nominalQuota", "borrowingLimit", "lendingLimit"):
                        if rmap.get(key) is not None:
                            amounts[key] = _rl({rname: rmap[key]}, f"{rpath}.{key}")[rname]
                    quotas.setdefault(rname, {})[fname] = (
                        rpath,
                        amounts.get("nominalQuota", 0),
                        amounts.get("borrowingLimit"),
                        amounts.get("lendingLimit"),
                    )
                    covered.append(rname)
            groups.append(FlavorGroup(resources=tuple(dict.fromkeys(covered)), flavors=tuple(dict.fromkeys(names))))
        if parent_key == "cohortName":
            self.kueue_groups[doc.name] = (tuple(groups), _read(doc, _fungibility))
        unread = sorted(set(spec) - (_CLUSTER_QUEUE_FIELDS if parent_key == "cohortName" else _COHORT_FIELDS))
        if unread:
            fields = ", ".join(f"spec.{key}" for key in unread)
            self.warnings.append(f"{doc.where}: not read, left out: {fields}")
        return doc, parent or None, quotas

    def _several_flavors(
        self, nodes: Mapping[str, tuple[_Doc, str | None, _Quotas]], known: set[str]
    ) -> dict[str, tuple[str, ...]]:
        """The resources read per flavor, each with its flavors in the order first met: those given quota in more
        than one flavor, and with them every resource of a resource group that has one (a workload takes one flavor
        for the whole group). A flavor no ResourceFlavor defines is named in a warning."""
        by_resource: dict[str, dict[str, None]] = {}
        for doc, _, quotas in nodes.values():
            for resource, per_flavor in quotas.items():
                by_resource.setdefault(resource, {}).update(dict.fromkeys(per_flavor))
                for flavor in per_flavor:
                    if known and flavor not in known:
                        self.warnings.append(f"{doc.where}: flavor {flavor!r} is not a ResourceFlavor of the input")
        flavored = {r for r, fl in by_resource.items() if len(fl) > 1}
        groups = [g for gs, _ in self.kueue_groups.values() for g in gs]
        grown = True
        while grown:  # a group with one flavored resource has all of its resources flavored
            grown = False
            for group in groups:
                if flavored.intersection(group.resources) and not flavored.issuperset(group.resources):
                    flavored.update(group.resources)
                    grown = True
        return {r: tuple(by_resource.get(r, {})) for r in sorted(flavored)}

    @staticmethod
    def _levers(quotas: _Quotas, flavored: Mapping[str, tuple[str, ...]]) -> dict[str, Any]:
        """A node's quota and limits by resource; a resource read per flavor by its flavored key (``cpu@spot``)."""
        deserved: dict[str, int] = {}
        borrowing: dict[str, int] = {}
        lending: dict[str, int] = {}
        for resource, per_flavor in quotas.items():
            for flavor, (_, nominal, b, lend) in per_flavor.items():
                key = f"{resource}{FLAVOR_MARK}{flavor}" if resource in flavored else resource
                deserved[key] = nominal
                if b is not None:
                    borrowing[key] = b
                if lend is not None:
                    lending[key] = lend
        return {"deserved": deserved, "borrowing": borrowing, "lending": lending}

    def _kueue_flavors(
        self,
        specs: Mapping[str, ResourceFlavorSpec],
        flavored: Mapping[str, tuple[str, ...]],
        members: Mapping[str, _Node],
    ) -> None:
        """``kueue_flavors``: the ResourceFlavors, the resources read per flavor, and each ClusterQueue's resource
        groups over them (its flavors in order) and its fungibility, by queue identity."""
        groups: dict[str, tuple[FlavorGroup, ...]] = {}
        fungibility: dict[str, FlavorFungibility] = {}
        for ident, (doc, _, _) in members.items():
            own, fung = self.kueue_groups.get(doc.name, ((), FlavorFungibility()))
            kept = tuple(g for g in own if any(r in flavored for r in g.resources))
            if kept:
                groups[ident] = kept
            if fung != FlavorFungibility():
                fungibility[ident] = fung
        named = {f: specs[f] for fl in flavored.values() for f in fl if f in specs}
        self.kueue_flavors = KueueFlavors(
            flavors=dict(sorted(named.items())), resources=dict(flavored), groups=groups, fungibility=fungibility
        )

    @staticmethod
    def _weight(doc: _Doc) -> Fraction:
        """``spec.fairSharing.weight``, a quantity, exactly (default 1): 0, or greater than 10^-9, as Kueue accepts
        (no upper bound: a whole weight above 65535 is scaled down by ``_whole_weights``)."""
        sharing = _map(doc.spec.get("fairSharing"), "spec.fairSharing")
        raw = sharing.get("weight")
        if raw is None:
            return Fraction(1)
        if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
            raise _FieldError(f"spec.fairSharing.weight: {raw!r} is not a quantity")
        try:
            value = parse_exact_quantity(str(raw), "spec.fairSharing.weight")
        except QuantityError as exc:
            raise _FieldError(f"spec.fairSharing.weight: {exc.message}") from None
        if value < 0 or (0 < value <= _LEAST_WEIGHT):
            raise _FieldError(f"spec.fairSharing.weight: {raw!r} must be 0 or greater than 10^-9 (Kueue's bounds)")
        return value

    def _whole_weights(self, specs: Mapping[str, dict[str, Any]]) -> None:
        """Each queue's whole ``weight`` from Kueue's exact ones, sibling set by sibling set (the children of one
        cohort; the tops of the trees together): whole weights stay; in a set with a fraction every weight is
        multiplied by the least common denominator, so the ratios stay exact (0.75 and 0.25 are 3 and 1). The exact
        weights of such a set or of one scaled down (below), and a weight of 0, are kept in ``kueue_weights`` (for export and fair sharing). A set
        whose whole weights would pass 65535 is scaled down to fit, rounded (a warning names it); a weight of 0 is the
        whole weight 1, the least a queue has (its infinite share is fair sharing's, with a warning)."""
        sets: dict[str | None, list[str]] = {}
        for name, spec in specs.items():
            sets.setdefault(spec["parent"], []).append(name)
        for members in sets.values():
            exact = {n: specs[n]["exact_weight"] for n in sorted(members)}
            scale = math.lcm(*(w.denominator for w in exact.values()))
            whole = {n: int(w * scale) for n, w in exact.items()}
            scaled = scale > 1 or max(whole.values()) > MAX_WEIGHT
            if max(whole.values()) > MAX_WEIGHT:
                top = max(exact.values())
                whole = {n: max(1, round(w * MAX_WEIGHT / top)) if w else 0 for n, w in exact.items()}
                self.warnings.append(
                    f"Kueue fairSharing.weight of {', '.join(sorted(exact))}: the ratios need whole weights above "
                    f"{MAX_WEIGHT}; read as {', '.join(str(whole[n]) for n in sorted(exact))}"
                )
            for n, w in exact.items():
                if scaled or not w:
                    self.kueue_weights[n] = w
                if not w:
                    doc = specs[n]["doc"]
                    self.warnings.append(
                        f"{doc.where}: spec.fairSharing.weight 0 (an infinite share in Kueue's fair sharing) is the "
                        "whole weight 1 for proportion, the least a queue has"
                    )
                specs[n]["weight"] = max(1, whole[n])

    def _local_queue(self, doc: _Doc) -> None:
        cq = _str(doc.spec.get("clusterQueue"), "spec.clusterQueue")
        if not cq:
            raise _FieldError("spec.clusterQueue: missing")
        self.local_queues[(doc.namespace or "default", doc.name)] = cq
        self._local_queue_usage(doc)

    # -- batch/v1 Jobs ----------------------------------------------------------------------------------------------
    def _batch_job(self, doc: _Doc) -> None:
        labels = _string_map(doc.meta.get("labels"), "metadata.labels", doc, self.warnings)
        queue = self._kueue_queue(doc, doc.namespace, labels)
        if queue is None:
            self.warnings.append(f"{doc.where}: a Job without the label {KUEUE_QUEUE_LABEL}; skipped")
            return
        spec = doc.spec
        parallelism = self._within_max_replicas(self._job_parallelism(doc), "spec.parallelism")
        # Kueue's pod count: the parallelism, or the completions when fewer (``podsCount``)
        completions = spec.get("completions")
        if completions is not None:
            parallelism = min(parallelism, _int(completions, "spec.completions", 1, minimum=0))
        pg_key = f"{doc.namespace}/{doc.name}"
        least = self._min_parallelism(doc, parallelism)
        if pg_key in self.podgroups:
            self.warnings.append(f"{doc.where}: PodGroup {pg_key} is in the input; the Job is not expanded")
            return
        if least is not None:
            self.admission.partial_admission[pg_key] = least
        if self.live:  # its pods are those it controls (``kueuejobs``): the template is not expanded
            self._room_for_podgroup()
            self._live_batch_job(doc, queue, labels, parallelism, least, self._job_sample(doc, pg_key))
            return
        self._room_for_pods(parallelism, "spec.parallelism")
        self._room_for_podgroup()
        sample = self._job_sample(doc, pg_key)
        for index in range(parallelism):
            task = dataclasses.replace(sample, name=f"{doc.name}-{index}") if index else sample
            if task.uid in self.tasks:
                self.warnings.append(f"{doc.where}: Pod {task.uid} is in the input; the generated one is dropped")
                continue
            self._origin("Pod", task.uid)
            self.tasks[task.uid] = task
        self._job_podgroup(doc, queue, labels, parallelism, sample, PodGroupPhase.PENDING)
        why = self.limit_ranges.wait(pg_key)
        if why is not None:  # its template outside its namespace's LimitRanges: Kueue keeps it pending
            self.admission.pod_group_waits[pg_key] = why

    def _job_sample(self, doc: _Doc, pg_key: str) -> TaskInfo:
        """The pod of a Job's ``spec.template`` (named ``<job>-0``): its request, priority and placement."""
        template = _map(doc.spec.get("template"), "spec.template")
        t_meta = _map(template.get("metadata"), "spec.template.metadata")
        t_spec = _map(template.get("spec"), "spec.template.spec")
        pod_labels = _string_map(t_meta.get("labels"), "spec.template.metadata.labels", doc, self.warnings)
        pod_annotations = _string_map(
            t_meta.get("annotations"), "spec.template.metadata.annotations", doc, self.warnings
        )
        pod_meta = {"creationTimestamp": doc.meta.get("creationTimestamp")}
        return self._task(
            doc, doc.namespace, f"{doc.name}-0", pod_labels, pod_annotations, t_spec, {}, pod_meta,
            podgroup=pg_key, path="spec.template.spec", template=True,
        )  # fmt: skip

    def _min_parallelism(self, doc: _Doc, count: int) -> int | None:
        """The Job's ``kueue.x-k8s.io/job-min-parallelism`` (Kueue's partial admission, ``engine.partial``): a whole
        number from 1 to one less than its pods, as Kueue's webhook checks it; None when not set."""
        annotations = self._annotations(doc)
        raw = annotations.get(KUEUE_MIN_PARALLELISM)
        if raw is None:
            return None
        where = f"metadata.annotations.{KUEUE_MIN_PARALLELISM}"
        if not re.fullmatch(r"[+-]?[0-9]+", raw.strip()):
            raise _FieldError(f"{where}: {raw!r} is not a whole number")
        least = int(raw)
        if not 0 < least < count:
            raise _FieldError(f"{where}: {least} should be between 1 and {count - 1} (the Job's pods less one)")
        return least


_T = TypeVar("_T")
_LABEL_MAX = 63  # a queue name is a DNS-1123 label
# The spec fields a Cohort's and a ClusterQueue's readers take (this module and ``kueuelevers``); any other is named in
# a warning (admission checks, concurrent admission, a field of a later Kueue), never dropped in silence.
_COHORT_FIELDS = frozenset({"parentName", "parent", "resourceGroups", "fairSharing"})
_CLUSTER_QUEUE_FIELDS = frozenset(
    {
        "cohortName", "cohort", "resourceGroups", "fairSharing", "preemption", "flavorFungibility", "stopPolicy",
        "queueingStrategy", "namespaceSelector", "admissionScope",
    }
)  # fmt: skip
_LEAST_WEIGHT = Fraction(1, 10**9)  # Kueue: a weight other than 0 must be greater than 10^-9


def _read(doc: _Doc, reader: Callable[[_Doc], _T]) -> _T:
    """``reader(doc)``, a bad field named with the document (outside the builder's ``_run``)."""
    try:
        return reader(doc)
    except (_FieldError, QuantityError) as exc:
        raise doc.error(str(exc)) from None


_RECLAIM = ("Never", "LowerPriority", "Any")
_BORROW = ("Never", "LowerPriority")
_WITHIN = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")


def _preemption(doc: _Doc) -> KueuePreemption | None:
    """A ClusterQueue's ``spec.preemption`` (None when it has none), each policy checked against Kueue's values;
    ``borrowWithinCohort`` other than Never needs ``reclaimWithinCohort`` other than Never, as Kueue validates."""
    if doc.spec.get("preemption") is None:
        return None
    section = _map(doc.spec.get("preemption"), "spec.preemption")

    def choice(value: object, path: str, allowed: tuple[str, ...]) -> str:
        text = _str(value, path) or "Never"
        if text not in allowed:
            raise _FieldError(f"{path}: {text!r} is not one of {', '.join(allowed)}")
        return text

    borrow = _map(section.get("borrowWithinCohort"), "spec.preemption.borrowWithinCohort")
    threshold = borrow.get("maxPriorityThreshold")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, int)):
        raise _FieldError(f"spec.preemption.borrowWithinCohort.maxPriorityThreshold: {threshold!r} is not an integer")
    out = KueuePreemption(
        reclaim_within_cohort=choice(
            section.get("reclaimWithinCohort"), "spec.preemption.reclaimWithinCohort", _RECLAIM
        ),
        borrow_within_cohort=choice(borrow.get("policy"), "spec.preemption.borrowWithinCohort.policy", _BORROW),
        max_priority_threshold=threshold,
        within_cluster_queue=choice(section.get("withinClusterQueue"), "spec.preemption.withinClusterQueue", _WITHIN),
    )
    if out.borrow_within_cohort != "Never" and out.reclaim_within_cohort == "Never":
        raise _FieldError(
            "spec.preemption.borrowWithinCohort.policy: LowerPriority needs reclaimWithinCohort other than Never "
            "(Kueue refuses the ClusterQueue)"
        )
    return out


_WHEN_CAN_BORROW = {"MayStopSearch": "MayStopSearch", "Borrow": "MayStopSearch", "TryNextFlavor": "TryNextFlavor"}
_WHEN_CAN_PREEMPT = {"MayStopSearch": "MayStopSearch", "Preempt": "MayStopSearch", "TryNextFlavor": "TryNextFlavor"}
_PREFERENCES = ("BorrowingOverPreemption", "PreemptionOverBorrowing")


def _fungibility(doc: _Doc) -> FlavorFungibility:
    """A ClusterQueue's ``spec.flavorFungibility`` (Kueue's defaults when absent), each field checked against
    Kueue's values; the deprecated ``Borrow`` and ``Preempt`` are ``MayStopSearch``, as in Kueue."""
    section = _map(doc.spec.get("flavorFungibility"), "spec.flavorFungibility")

    def choice(key: str, allowed: Mapping[str, str], default: str) -> str:
        text = _str(section.get(key), f"spec.flavorFungibility.{key}") or default
        if text not in allowed:
            raise _FieldError(f"spec.flavorFungibility.{key}: {text!r} is not one of {', '.join(allowed)}")
        return allowed[text]

    return FlavorFungibility(
        when_can_borrow=choice("whenCanBorrow", _WHEN_CAN_BORROW, "MayStopSearch"),
        when_can_preempt=choice("whenCanPreempt", _WHEN_CAN_PREEMPT, "TryNextFlavor"),
        preference=choice("preference", {p: p for p in _PREFERENCES}, "BorrowingOverPreemption"),
    )


def _resource_flavor(doc: _Doc) -> ResourceFlavorSpec:
    """A ``ResourceFlavor``: ``spec.nodeLabels``, ``spec.nodeTaints``, ``spec.tolerations`` and ``spec.topologyName``."""
    return _flavor_spec(doc.name, doc.spec, "spec")


def resource_flavor_spec(name: str, spec: Mapping[str, Any], where: str = "spec") -> ResourceFlavorSpec:
    """The ResourceFlavor ``name`` of a ``spec`` in Kueue's spelling (``nodeLabels``, ``nodeTaints``, ``tolerations``,
    ``topologyName``), checked as the reader checks it: ``ValueError`` with a sentence naming the field under
    ``where`` (the dashboard's stored flavors are read with it)."""
    try:
        return _flavor_spec(name, spec, where)
    except _FieldError as exc:
        raise ValueError(str(exc)) from None


def _flavor_spec(name: str, spec: Mapping[str, Any], where: str) -> ResourceFlavorSpec:
    labels = _map(spec.get("nodeLabels"), f"{where}.nodeLabels")
    for key, value in labels.items():
        if not isinstance(value, str):
            raise _FieldError(f"{where}.nodeLabels.{key}: {value!r} is not a string")
    taints = []
    for i, raw in enumerate(_list(spec.get("nodeTaints"), f"{where}.nodeTaints")):
        path = f"{where}.nodeTaints[{i}]"
        t = _map(raw, path)
        key = _str(t.get("key"), f"{path}.key")
        if not key:
            raise _FieldError(f"{path}.key: missing")
        effect = _str(t.get("effect"), f"{path}.effect")
        if effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            raise _FieldError(f"{path}.effect: {effect!r} is not one of NoSchedule, PreferNoSchedule, NoExecute")
        taints.append(Taint(key=key, value=_str(t.get("value"), f"{path}.value"), effect=effect))
    tolerations = tuple(
        _toleration(raw, f"{where}.tolerations[{i}]")
        for i, raw in enumerate(_list(spec.get("tolerations"), f"{where}.tolerations"))
    )
    for i, tol in enumerate(tolerations):  # as the API server checks a pod's (the flavor's go onto its pods)
        if tol.operator not in ("Equal", "Exists", ""):
            raise _FieldError(f"{where}.tolerations[{i}].operator: {tol.operator!r} is not one of Equal, Exists")
        if tol.effect not in ("", "NoSchedule", "PreferNoSchedule", "NoExecute"):
            raise _FieldError(
                f"{where}.tolerations[{i}].effect: {tol.effect!r} is not one of NoSchedule, PreferNoSchedule, NoExecute"
            )
    topology = _str(spec.get("topologyName"), f"{where}.topologyName")
    return ResourceFlavorSpec(
        name=name,
        node_labels=dict(labels),
        node_taints=tuple(taints),
        tolerations=tolerations,
        topology_name=topology,
    )


def _identity(kind: str, name: str, taken: set[str]) -> str:
    """A queue identity for the Kueue object ``kind``/``name`` that no queue holds: ``<name>-<kind>`` with dots as
    ``-``, cut and given 8 hex digits of the name's SHA-256 when longer than a label may be, then ``-2``, ``-3``…"""
    base = f"{name.replace('.', '-')}-{kind.lower()}"
    if len(base) > _LABEL_MAX - 3:
        digest = hashlib.sha256(f"{kind}/{name}".encode()).hexdigest()[:8]
        base = f"{base[: _LABEL_MAX - 3 - 9].rstrip('-')}-{digest}"
    ident, n = base, 1
    while ident in taken:
        n += 1
        ident = f"{base}-{n}"
    return ident


def _uncovered_held(specs: Mapping[str, dict[str, Any]], cluster_queues: set[str]) -> None:
    """Kueue's ClusterQueue uses only the resources its ``resourceGroups`` cover: a resource (read in one flavor)
    that another node of its tree has quota for but the ClusterQueue does not list gets a quota and a borrowing limit
    of 0 there, so that it borrows none of its Cohorts' (Kueue: "resource ... unavailable in ClusterQueue")."""

    def top(name: str) -> str:
        while specs[name]["parent"] in specs:
            name = specs[name]["parent"]
        return name

    listed: dict[str, set[str]] = {}
    for name, spec in specs.items():
        listed.setdefault(top(name), set()).update(r for r in spec["deserved"] if FLAVOR_MARK not in r)
    for name in cluster_queues:
        spec = specs[name]
        if spec["parent"] is None:
            continue  # alone at the top of its tree: it uses at most its own quota already
        for r in sorted(listed.get(top(name), set()) - set(spec["deserved"])):
            spec["deserved"] = {**spec["deserved"], r: 0}
            spec["borrowing"] = {**spec["borrowing"], r: 0}


def _kueue_depths(specs: Mapping[str, dict[str, Any]]) -> dict[str, int]:
    """Each queue's depth below root, once every parent is known to exist and no cohorts form a cycle."""
    for spec in specs.values():
        parent = spec["parent"]
        if parent is not None and parent not in specs:
            raise spec["doc"].error(f"spec.parentName: cohort {parent!r} does not exist")
    depth: dict[str, int] = {}
    for name in specs:
        seen, cur, d = {name}, specs[name]["parent"], 0
        while cur is not None:
            if cur in seen:
                raise specs[name]["doc"].error(f"spec.parentName: cohorts form a cycle through {cur!r}")
            seen.add(cur)
            cur, d = specs[cur]["parent"], d + 1
        depth[name] = d
    return depth


__all__ = ["KUEUE_POLICY", "KueueReaders", "resource_flavor_spec"]
