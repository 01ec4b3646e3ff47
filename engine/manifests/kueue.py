"""Kueue's objects (``kueue.x-k8s.io``) onto the queue tree, and the pods and Jobs labelled with a LocalQueue.

The mapping (docs/simulate.md states it too):

* a ``Cohort`` is an inner queue of its name, under its ``spec.parentName`` (v1beta1 ``parent``) or ``root``; a
  cohort that ClusterQueues name but no Cohort object defines exists without quota of its own, as in Kueue;
* a ``ClusterQueue`` is a leaf queue of its name, under its ``spec.cohortName`` (v1beta1 ``cohort``) or ``root``;
* per resource, ``nominalQuota`` is the queue's **deserved**; a cohort deserves its own quota plus its children's
  (Kueue's "subtree quota"); ``borrowingLimit`` and ``lendingLimit`` are the queue's limits (Kueue's meaning, the
  engine's own); a ClusterQueue without a cohort, and a cohort without a parent, cannot borrow: their
  **capability** is their deserved, as Kueue admits nothing beyond the quota of a tree;
* a ClusterQueue's ``spec.stopPolicy`` ``Hold`` or ``HoldAndDrain`` makes its queue Closed (nothing new is admitted);
* ``spec.fairSharing.weight`` is the queue's weight (a whole number at least 1; a fraction is rounded, with a
  warning);
* a ``ResourceFlavor`` is one flavor per resource: a resource given quota in several flavors (``on-demand`` and
  ``spot`` cpu) is left out of every queue, with a warning naming the resource and the flavors;
* a ``LocalQueue`` (namespace, name) points at its ``spec.clusterQueue``: a pod labelled
  ``kueue.x-k8s.io/queue-name: <LocalQueue>`` goes to that ClusterQueue's queue (its podgroup of one pod); a
  ``batch/v1`` Job so labelled becomes a podgroup of ``spec.parallelism`` pods (default 1) from its template, all of
  them needed at once (Kueue admits a Job whole); a Job without the label is skipped with a warning;
* resources a ClusterQueue does not cover are not limited by it (Kueue would not admit such a workload).

The policy: input with Kueue objects and no scheduler policy (neither ``--policy`` nor a ConfigMap) runs Volcano's
default actions with ``capacity`` and ``enableHierarchy`` in place of ``proportion``, the plugin whose deserved,
guarantee and capability carry Kueue's quota tree.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from engine.fairshare.queues import DEFAULT_QUEUE, ROOT_QUEUE, QueueSpec
from engine.limits import ENV_VARS
from engine.manifests.common import (
    KUEUE_QUEUE_LABEL,
    _Doc,
    _FieldError,
    _int,
    _list,
    _map,
    _rl,
    _str,
    _string_map,
    _time,
)
from engine.manifests.core import CoreReaders
from engine.objects import PodGroupInfo
from engine.resources import ResourceList
from engine.session.policy import Policy, default_policy_with
from engine.vocabulary import PodGroupPhase, QueueState

# Volcano's default policy with capacity (hierarchical) in place of proportion: Kueue's quota tree
KUEUE_POLICY: Policy = default_policy_with({"name": "capacity", "enableHierarchy": True})

_Quotas = dict[str, dict[str, tuple[str, int, int | None, int | None]]]  # resource -> flavor -> (path, n, b, l)
_Node = tuple[_Doc, str | None, _Quotas]  # a Cohort or ClusterQueue: its document, parent and quotas


class KueueReaders(CoreReaders):
    """The builder's Kueue part: ``_read_kueue`` after the Volcano queues, ``_batch_job`` with the jobs."""

    # -- the tree -------------------------------------------------------------------------------------------------
    def _read_kueue(self) -> None:
        """Kueue's Cohorts and ClusterQueues as queues of the tree (after the Volcano queues: their names are taken),
        and the LocalQueues that point at them."""
        flavors = {doc.name for doc in self.docs("ResourceFlavor")}
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
        skipped = self._several_flavors({**{f"c/{n}": v for n, v in cohorts.items()}, **members}, flavors)
        implicit = sorted({p for _, p, _ in members.values() if p is not None and p not in cohorts})
        self._check_kueue_names(cohorts, members, implicit)
        specs = self._kueue_specs(cohorts, members, implicit, skipped)
        self._add_kueue_queues(specs, _kueue_depths(specs))

    def _check_kueue_names(
        self, cohorts: Mapping[str, _Node], members: Mapping[str, _Node], implicit: list[str]
    ) -> None:
        """Cohorts and ClusterQueues are queues: their names, and those of the cohorts only named by ClusterQueues,
        must be free (not a queue of the input, a built-in queue, or each other's)."""
        names: dict[str, _Doc] = {}
        for table in (cohorts, members):
            for name, (doc, _, _) in table.items():
                if name in (ROOT_QUEUE, DEFAULT_QUEUE) or name in self.queues or name in names:
                    other = names[name].where if name in names else f"queue {name}"
                    raise doc.error(f"metadata.name: {name!r} is taken ({other}): cohorts and ClusterQueues are queues")
                names[name] = doc
        for name in implicit:
            if name in self.queues or name in names or name in (ROOT_QUEUE, DEFAULT_QUEUE):
                raise members[sorted(m for m, v in members.items() if v[1] == name)[0]][0].error(
                    f"spec.cohortName: {name!r} is a queue or ClusterQueue already: cohorts and ClusterQueues are queues"
                )

    def _kueue_specs(
        self, cohorts: Mapping[str, _Node], members: Mapping[str, _Node], implicit: list[str], skipped: set[str]
    ) -> dict[str, dict[str, Any]]:
        """Each queue's settings as Kueue gives them (its document, parent, quota, limits, weight, and a
        ClusterQueue's state from its stop policy), cohorts first; an implicit cohort has none of its own."""
        specs: dict[str, dict[str, Any]] = {}
        for name, (doc, parent, quotas) in [*cohorts.items(), *members.items()]:
            specs[name] = {"doc": doc, "parent": parent, **self._levers(quotas, skipped)}
        for name in implicit:
            specs[name] = {"doc": None, "parent": None, "deserved": {}, "borrowing": {}, "lending": {}, "weight": 1}
        for name, (doc, _, _) in cohorts.items():
            specs[name]["weight"] = self._weight(doc)
        for name, (doc, _, _) in members.items():
            specs[name]["weight"] = self._weight(doc)
            stop = _str(doc.spec.get("stopPolicy"), "spec.stopPolicy") or "None"
            if stop not in ("None", "Hold", "HoldAndDrain"):
                raise doc.error(f"spec.stopPolicy: {stop!r} is not one of None, Hold, HoldAndDrain")
            specs[name]["state"] = QueueState.OPEN.value if stop == "None" else QueueState.CLOSED.value
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
            self.queues[name] = QueueSpec(
                name=name,
                parent=spec["parent"] or ROOT_QUEUE,
                weight=spec["weight"],
                deserved=deserved,
                capability=deserved if spec["parent"] is None else ResourceList(),
                borrowing_limit=ResourceList(spec["borrowing"]),
                lending_limit=ResourceList(spec["lending"]),
                state=spec.get("state", QueueState.OPEN.value),
            )
            self._origin("Queue", name)

    def _kueue_node(self, doc: _Doc, parent_key: str, old_key: str) -> tuple[_Doc, str | None, _Quotas]:
        spec = doc.spec
        parent = _str(spec.get(parent_key), f"spec.{parent_key}") or _str(spec.get(old_key), f"spec.{old_key}")
        quotas: _Quotas = {}
        for i, group in enumerate(_list(spec.get("resourceGroups"), "spec.resourceGroups")):
            gpath = f"spec.resourceGroups[{i}]"
            for j, flavor in enumerate(_list(_map(group, gpath).get("flavors"), f"{gpath}.flavors")):
                fpath = f"{gpath}.flavors[{j}]"
                fmap = _map(flavor, fpath)
                fname = _str(fmap.get("name"), f"{fpath}.name")
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
        return doc, parent or None, quotas

    def _several_flavors(self, nodes: Mapping[str, tuple[_Doc, str | None, _Quotas]], known: set[str]) -> set[str]:
        """The resources given quota in more than one flavor (left out, with one warning each); a flavor no
        ResourceFlavor defines is named in a warning too."""
        by_resource: dict[str, set[str]] = {}
        for doc, _, quotas in nodes.values():
            for resource, per_flavor in quotas.items():
                by_resource.setdefault(resource, set()).update(per_flavor)
                for flavor in per_flavor:
                    if known and flavor not in known:
                        self.warnings.append(f"{doc.where}: flavor {flavor!r} is not a ResourceFlavor of the input")
        skipped = {r for r, fl in by_resource.items() if len(fl) > 1}
        for r in sorted(skipped):
            self.warnings.append(
                f"resource {r} has quota in several flavors ({', '.join(sorted(by_resource[r]))}); Fairway reads one "
                f"flavor per resource, so {r} is left out of every ClusterQueue and Cohort"
            )
        return skipped

    @staticmethod
    def _levers(quotas: _Quotas, skipped: set[str]) -> dict[str, Any]:
        deserved: dict[str, int] = {}
        borrowing: dict[str, int] = {}
        lending: dict[str, int] = {}
        for resource, per_flavor in quotas.items():
            if resource in skipped:
                continue
            ((_, nominal, b, lend),) = per_flavor.values()
            deserved[resource] = nominal
            if b is not None:
                borrowing[resource] = b
            if lend is not None:
                lending[resource] = lend
        return {"deserved": deserved, "borrowing": borrowing, "lending": lending}

    def _weight(self, doc: _Doc) -> int:
        sharing = _map(doc.spec.get("fairSharing"), "spec.fairSharing")
        raw = sharing.get("weight")
        if raw is None:
            return 1
        try:
            value = float(str(raw))
        except ValueError:
            raise _FieldError(f"spec.fairSharing.weight: {raw!r} is not a number") from None
        if not 0 <= value <= 65535:
            raise _FieldError(f"spec.fairSharing.weight: {raw!r} must be between 0 and 65535")
        weight = max(1, round(value))
        if weight != value:
            self.warnings.append(f"{doc.where}: spec.fairSharing.weight {raw} read as the whole weight {weight}")
        return weight

    def _local_queue(self, doc: _Doc) -> None:
        cq = _str(doc.spec.get("clusterQueue"), "spec.clusterQueue")
        if not cq:
            raise _FieldError("spec.clusterQueue: missing")
        self.local_queues[(doc.namespace or "default", doc.name)] = cq

    # -- batch/v1 Jobs ----------------------------------------------------------------------------------------------
    def _batch_job(self, doc: _Doc) -> None:
        labels = _string_map(doc.meta.get("labels"), "metadata.labels", doc, self.warnings)
        queue = self._kueue_queue(doc, doc.namespace, labels)
        if queue is None:
            self.warnings.append(f"{doc.where}: a Job without the label {KUEUE_QUEUE_LABEL}; skipped")
            return
        spec = doc.spec
        parallelism = _int(spec.get("parallelism"), "spec.parallelism", 1, minimum=0)
        if parallelism > self.limits.max_replicas:
            raise _FieldError(
                f"spec.parallelism: {parallelism} is more than {self.limits.max_replicas} ({ENV_VARS['max_replicas']})"
            )
        pg_key = f"{doc.namespace}/{doc.name}"
        if pg_key in self.podgroups:
            self.warnings.append(f"{doc.where}: PodGroup {pg_key} is in the input; the Job is not expanded")
            return
        self._room_for_pods(parallelism, "spec.parallelism")
        self._room_for_podgroup()
        template = _map(spec.get("template"), "spec.template")
        t_meta = _map(template.get("metadata"), "spec.template.metadata")
        t_spec = _map(template.get("spec"), "spec.template.spec")
        pod_labels = _string_map(t_meta.get("labels"), "spec.template.metadata.labels", doc, self.warnings)
        pod_annotations = _string_map(
            t_meta.get("annotations"), "spec.template.metadata.annotations", doc, self.warnings
        )
        meta = doc.meta
        pod_meta = {"creationTimestamp": meta.get("creationTimestamp")}
        sample = self._task(
            doc, doc.namespace, f"{doc.name}-0", pod_labels, pod_annotations, t_spec, {}, pod_meta,
            podgroup=pg_key, path="spec.template.spec",
        )  # fmt: skip
        for index in range(parallelism):
            task = dataclasses.replace(sample, name=f"{doc.name}-{index}") if index else sample
            if task.uid in self.tasks:
                self.warnings.append(f"{doc.where}: Pod {task.uid} is in the input; the generated one is dropped")
                continue
            self._origin("Pod", task.uid)
            self.tasks[task.uid] = task
        self._origin("PodGroup", pg_key)
        self.podgroups[pg_key] = PodGroupInfo(
            namespace=doc.namespace,
            name=doc.name,
            queue=queue,
            min_member=parallelism,
            min_resources=ResourceList({r: v * parallelism for r, v in sample.request.items()}),
            priority=sample.priority,
            priority_class=sample.priority_class,
            phase=PodGroupPhase.PENDING,
            creation_timestamp=_time(meta.get("creationTimestamp"), "metadata.creationTimestamp") or 0.0,
        )


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


__all__ = ["KUEUE_POLICY", "KueueReaders"]
