"""The builder: every reader in order, then one ``Snapshot``."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import yaml

from engine.flavors import flavored_nodes, flavored_tasks
from engine.limits import Limits, load_yaml
from engine.manifests.common import (
    PLUGINS_QUOTA_GROUP,
    SCHEDULER_CONF_KEY,
    SCHEDULER_CONFIGMAP,
    InvalidObject,
    LoadResult,
    ManifestError,
    _Doc,
    _FieldError,
    _make_doc,
    _map,
    _split_documents,
    yaml_problem,
)
from engine.manifests.koordinator import (
    KoordinatorReaders,
)
from engine.manifests.kueue import KUEUE_POLICY, KueueReaders
from engine.manifests.kueueconfig import KUEUE_CONFIG_KEY, KUEUE_CONFIGMAP
from engine.manifests.kueuefair import fair_sharing_section, kueue_fair_policy, wants_kueuefair
from engine.manifests.kueuepodsets import KueuePodSetReaders
from engine.manifests.scheduler_plugins import SchedulerPluginsReaders
from engine.manifests.volcano import (
    VolcanoReaders,
)
from engine.objects import (
    NodeInfo,
    Snapshot,
)
from engine.policy.policy import Policy, PolicyError
from engine.usage import UsageHistory


class _Builder(VolcanoReaders, KueueReaders, KueuePodSetReaders, KoordinatorReaders, SchedulerPluginsReaders):
    """Reads the documents kind by kind, in the order the later kinds need the earlier ones."""

    def build(self) -> LoadResult:
        self._read_classes_and_namespaces()
        self._read_trees()
        self._read_jobs()
        self._read_policy()
        nodes: dict[str, NodeInfo] = {}
        for doc in self.docs("Node"):
            self._run(doc, lambda d: nodes.__setitem__(d.name, self._node(d)))
            self._origin("Node", doc.name)
        self._complete_namespaces()
        tasks = self.tasks
        if self.kueue_flavors is not None:  # several flavors per resource: counted per flavor (``engine.flavors``)
            tasks = flavored_tasks(tasks, nodes, self.kueue_flavors)
            nodes = flavored_nodes(nodes, self.kueue_flavors, self.warnings)
        snapshot = Snapshot(
            nodes=nodes,
            tasks=tasks,
            podgroups=self.podgroups,
            queues=self.queues,
            quota_groups=self.groups,
            namespaces=self.namespaces,
            priority_classes=self.priority_classes,
            policy=self.policy,
            quota_namespaces=self.quota_namespaces,
            queue_hierarchy=self.hierarchy,
            kueue_names=self.kueue_names,
            kueue_weights=self.kueue_weights,
            kueue_preemption=self.kueue_preemption,
            kueue_flavors=self.kueue_flavors,
            elastic_quota_args=self.eq_args,
            admission=self.admission.freeze(self.queues),
            past_usage=UsageHistory(recorded=dict(self.past_ratios)) if self.past_ratios else None,
        )
        self.warnings.extend(snapshot.problems())
        return LoadResult(
            snapshot=snapshot,
            warnings=self.warnings,
            policy_source=self.policy_source,
            origins=self.origins,
            kueue_pod_groups={k: n for k, n in self.kueue_pod_groups.items() if k in self.podgroups},
            kueue_jobs={k: j for k, j in self.kueue_jobs.items() if k in self.podgroups},
            kueue_max_exec=self._kueue_max_exec(),
        )

    def _kueue_max_exec(self) -> dict[str, int]:
        """Every Kueue workload's maximum execution time (``LoadResult.kueue_max_exec``): a Job's (JobSet's, ...), a
        pod group's, a plain pod's."""
        out = {k: j.max_exec_seconds for k, j in self.kueue_jobs.items() if j.max_exec_seconds is not None}
        out.update(self.kueue_max_exec)
        return {k: seconds for k, seconds in sorted(out.items()) if k in self.podgroups}

    def _read_classes_and_namespaces(self) -> None:
        for doc in self.docs("PriorityClass"):
            self._run(doc, self._priority_class)
        defaults = [pc for pc in self.priority_classes.values() if pc.global_default]
        self.global_default_class = max(defaults, key=lambda pc: pc.value, default=None)
        self.global_default = self.global_default_class.value if self.global_default_class is not None else 0
        for doc in self.docs("RuntimeClass"):
            self._run(doc, self._runtime_class)
        for doc in self.docs("Namespace"):
            self._run(doc, self._namespace)
        for doc in self.docs("ResourceQuota"):
            self._run(doc, self._resource_quota)
        for doc in self.docs("LimitRange"):
            self._run(doc, self._limit_range)
        self.limit_ranges.summarize()

    def _read_trees(self) -> None:
        for doc in self.docs("Queue"):
            self._run(doc, self._queue)
        self._apply_queue_hierarchy()
        self._read_kueue()
        for doc in self.docs("ElasticQuota"):
            self._run(doc, self._flat_elastic_quota if doc.group == PLUGINS_QUOTA_GROUP else self._elastic_quota)
        self._inherit_tree_ids()

    def _read_jobs(self) -> None:
        for doc in self.docs("PodGroup"):
            self._run(doc, self._podgroup)
        if self.live:  # the Kueue Jobs whose pods (read next) join their podgroup (``engine.manifests.kueuejobs``)
            for doc in self.docs("BatchJob"):
                self._index_live_job(doc)
            self._index_live_pod_set_jobs()  # the JobSets, Kubeflow's jobs and MPIJobs, likewise (``kueuepodsets``)
        for doc in self.docs("Pod"):
            self._run(doc, self._pod)
        self._kueue_pod_groups()
        for doc in self.docs("VolcanoJob"):
            self._run(doc, self._volcano_job)
        for doc in self.docs("BatchJob"):
            self._run(doc, self._batch_job)
        self._read_pod_set_jobs()
        for key, pg in self.auto_podgroups.items():
            self.podgroups.setdefault(key, pg)
        for key, (user, groups) in self.pod_users.items():
            named = self.podgroups.get(key)
            if named is not None and not named.user:  # a PodGroup's own annotation wins over its pods'
                self.podgroups[key] = replace(named, user=user, user_groups=groups)

    def _read_policy(self) -> None:
        for doc in self.docs("ConfigMap"):
            self._run(doc, self._configmap)
        for doc in self.docs("KubeSchedulerConfiguration"):
            self._run(doc, self._kube_scheduler_configuration)
        for doc in self.docs("KueueConfiguration"):
            self._run(doc, self._kueue_configuration)
        if self.kueue_objects and self.policy_source is None:
            self.policy = KUEUE_POLICY
            self.warnings.append(
                "Kueue objects and no scheduler policy: capacity with enableHierarchy used in place of proportion"
            )
        self._apply_kueue_fair()
        self._apply_kueue_configuration()

    def _apply_kueue_fair(self) -> None:
        """Kueue's Fair Sharing and preemption policies (``engine.manifests.kueuefair``): with no scheduler policy
        given, the ``kueuefair`` plugin and the evicting actions when the input asks for them."""
        config = getattr(self, "kueue_config", None)
        fair = None
        if config is not None:
            try:
                fair = fair_sharing_section(config.raw)
            except _FieldError as exc:
                docs = [*self.docs("KueueConfiguration"), *self.docs("ConfigMap")]
                doc = next((d for d in docs if config.where.startswith(d.where)), None)
                if doc is None:
                    raise ManifestError(config.where, 0, "Configuration", None, str(exc)) from None
                raise doc.error(str(exc)) from None
        if not wants_kueuefair(self.kueue_preemption, fair):
            return
        if self.policy_source is not None:
            if not any(p.name == "kueuefair" for p in self.policy.plugins()):
                self.warnings.append(
                    f"Kueue preemption policies or fairSharing are not enforced: the scheduler policy of "
                    f"{self.policy_source} does not name the kueuefair plugin"
                )
            return
        self.policy = kueue_fair_policy(self.policy, fair)
        enabled = bool(fair and fair.get("enable"))
        self.warnings.append(
            "Kueue preemption: the kueuefair plugin enforces the ClusterQueues' preemption policies"
            + (" with Fair Sharing" if enabled else "")
            + "; preempt and reclaim run after allocate"
        )

    def _configmap(self, doc: _Doc) -> None:
        data = _map(doc.obj.get("data"), "data")
        if doc.name == KUEUE_CONFIGMAP and isinstance(data.get(KUEUE_CONFIG_KEY), str):
            self._kueue_configmap(doc, data[KUEUE_CONFIG_KEY])
            return
        if doc.name == SCHEDULER_CONFIGMAP:
            text = data.get(SCHEDULER_CONF_KEY)
            if not isinstance(text, str):
                raise _FieldError(f"data[{SCHEDULER_CONF_KEY!r}]: missing (the scheduler policy)")
            try:
                policy = Policy.from_yaml(text, max_depth=self.limits.max_yaml_depth)
            except PolicyError as exc:
                raise _FieldError(f"data[{SCHEDULER_CONF_KEY!r}]: {exc}") from None
            self.policy = policy
            self.policy_source = doc.where
            self.warnings.extend(f"{doc.where}: policy: {w}" for w in policy.warnings)
            return
        for key, text in data.items():
            if isinstance(text, str) and "KubeSchedulerConfiguration" in text:
                try:
                    config = load_yaml(text, self.limits.max_yaml_depth)
                except yaml.YAMLError as exc:
                    raise _FieldError(f"data[{key!r}]: invalid YAML: {yaml_problem(exc)}") from None
                if (
                    isinstance(config, Mapping)
                    and config.get("kind") == "KubeSchedulerConfiguration"
                    and self._elastic_quota_plugin_args(doc, config, f"data[{key!r}]")
                ):
                    return
        self.warnings.append(f"{doc.where}: ConfigMap {doc.label} is not {SCHEDULER_CONFIGMAP}; skipped")


def load_manifests(
    sources: Sequence[tuple[str, str]],
    *,
    limits: Limits | None = None,
    checkpoint: Callable[[], None] | None = None,
) -> LoadResult:
    """Read (file name, YAML text) sources, in order, into a ``Snapshot``. Raises ``ManifestError``.

    ``limits`` (default ``Limits()``) bound the nesting depth, the replicas of a vcjob task and the pods and
    podgroups of the snapshot: input over them is a ``ManifestError`` naming the document. ``checkpoint`` is called
    between documents (a ``Deadline.check``: it raises to stop the work)."""
    limits = limits or Limits()
    warnings: list[str] = []
    docs = _split_documents(sources, warnings, limits)
    return _Builder(docs, warnings, limits, checkpoint).build()


class _TolerantBuilder(_Builder):
    """The builder for the objects of a live API server (``load_objects``): an object that cannot be read is set
    aside in ``invalid`` with its reason, and the others are read as ``load_manifests`` reads them."""

    def __init__(
        self, docs: list[_Doc], warnings: list[str], limits: Limits, invalid: list[InvalidObject], live: bool
    ) -> None:
        super().__init__(docs, warnings, limits)
        self.invalid = invalid
        self.live = live

    def _run(self, doc: _Doc, fn: Callable[[_Doc], None]) -> None:
        try:
            super()._run(doc, fn)
        except ManifestError as exc:
            self.invalid.append(InvalidObject(doc.kind, doc.namespace, doc.name, exc.message, doc.index))

    def _apply_queue_hierarchy(self) -> None:
        try:
            super()._apply_queue_hierarchy()
        except ManifestError as exc:
            self.invalid.append(InvalidObject(exc.kind or "Queue", "", exc.name or "", exc.message, exc.index))


def load_objects(
    objects: Sequence[Mapping[str, object]],
    *,
    source: str = "cluster",
    limits: Limits | None = None,
    live: bool = False,
) -> tuple[LoadResult, list[InvalidObject]]:
    """Read Kubernetes objects (as the API server serves them, each with its ``apiVersion`` and ``kind``) into a
    ``Snapshot`` with the readers ``load_manifests`` uses, one difference aside: an object that cannot be read is
    returned in the second list (kind, namespace, name, the reason, its 1-based position in ``objects``) and left
    out, instead of stopping the read. ``LoadResult.origins`` names ``source`` and each object's position.

    ``live``: the objects are a cluster's as they stand (the Kubernetes adapter): a Kueue ``batch/v1`` Job is never
    expanded from its template; its podgroup holds the pods it controls (``engine.manifests.kueuejobs``). The bounds
    on a snapshot's pods and podgroups (``max_pods``, ``max_podgroups``: what one simulate request may make) do not
    apply there: a cluster holds the pods it holds (20,000 nodes run 200,000), its nodes bounded by the adapter's
    ``FAIRWAY_MAX_NODES`` and its pods by Kubernetes (``maxPods`` per node, ResourceQuotas' ``count/pods``)."""
    limits = limits or Limits()
    if live:
        limits = dataclasses.replace(limits, max_pods=sys.maxsize, max_podgroups=sys.maxsize)
    warnings: list[str] = []
    invalid: list[InvalidObject] = []
    docs: list[_Doc] = []
    for index, obj in enumerate(objects, start=1):
        try:
            doc = _make_doc(source, index, None, obj, warnings)
        except ManifestError as exc:
            meta = obj.get("metadata")
            ns = str(meta.get("namespace") or "") if isinstance(meta, Mapping) else ""
            invalid.append(InvalidObject(str(obj.get("kind") or ""), ns, exc.name or "", exc.message, index))
            continue
        if doc is not None:
            docs.append(doc)
    return _TolerantBuilder(docs, warnings, limits, invalid, live).build(), invalid
