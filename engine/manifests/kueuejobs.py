"""Kueue's ``batch/v1`` Jobs in a live cluster (``load_objects(live=True)``: the Kubernetes adapter).

``fairway simulate`` expands a Job labelled ``kueue.x-k8s.io/queue-name`` from its template (``kueue``'s
``_batch_job``). A live cluster has the pods themselves: the Job controller makes them from the template, with its
``schedulerName``, usually without the queue label, which is on the Job. So, live:

* the Job is never expanded; the pods it controls (an ``ownerReference`` with ``controller: true``, kind ``Job`` of
  ``batch/v1``, the Job's name and uid; the ``batch.kubernetes.io/job-name`` label is only a hint) are ONE podgroup
  ``<namespace>/<job>`` in its LocalQueue's ClusterQueue, whatever labels they carry, with Kueue's pod count (the
  parallelism, or the completions when fewer) as its minimum and that many times the template's request as its
  minimum resources;
* before admission, a Job with fewer pods that can run than its count waits, holding no quota (``job_wait``, the rule
  of Kueue's pod groups, ``kueuegroups.pod_group_wait``): a Job half created never takes part of its quota. Once one of
  its pods is on a node it is admitted, and the pods the Job controller makes later (one that failed and was
  replaced, completions above the parallelism) join it and are placed;
* a suspended Job (``spec.suspend: true``, as Kueue's webhook leaves every Job it manages and as Kueue's samples are
  written) has no pods: it is admitted as Kueue admits it, from its template (its podgroup's minimum and minimum
  resources are the template's), and once a session admits it the adapter resumes it (``spec.suspend: false``,
  ``scheduling.kube.mirror_out``), whereupon the Job controller makes its pods and they join the admitted podgroup;
  an admitted Job that waits again (evicted, or not placed in time) is suspended again, as Kueue suspends it. Until
  it has pods its template stands for them (``AdmissionLevers.templates``, ``template_pod``: one pod asking for the
  whole Job, with the template's nodeSelector, tolerations and required node affinity, which the store keeps with
  the Job), so in a ClusterQueue with flavored resource groups Kueue's flavor assigner gives it its flavors as it
  gives a Job with pods (``engine.flavors``); the flavors are kept with the admitted Job and its pods, once made,
  ask for them; a suspended Job that may be admitted in part is sized on its template too (``engine.partial``), and
  the adapter resumes it with the parallelism it was admitted with. A suspended workload of several pod sets (a
  JobSet, Kubeflow's and MPI's jobs) is given a flavor per pod set the same way, from its pod sets' templates
  (``kueuepodsets``);
* partial admission (``kueue.x-k8s.io/job-min-parallelism``) is sized by ``engine.partial`` as in simulate; when a
  session admits k of its N pods the adapter lowers ``spec.parallelism`` to k and keeps N in the Job's annotation
  ``fairway.io/original-parallelism``, from which this reader counts the Job's pods (and checks the minimum); the
  adapter gives the Job its parallelism back once it waits again (evicted), as Kueue restores it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from engine.manifests.common import (
    KUEUE_QUEUE_LABEL,
    ORIGINAL_PARALLELISM,
    KueueJob,
    _Doc,
    _FieldError,
    _int,
    _time,
    max_exec,
)
from engine.manifests.core import read_placement
from engine.manifests.export import placement_spec
from engine.manifests.kueuegroups import KueuePodGroupReaders, can_run, group_phase, pod_group_wait
from engine.objects import PodGroupInfo, TaskInfo
from engine.resources import ResourceList
from engine.vocabulary import PodGroupPhase

__all__ = ["ORIGINAL_PLACEMENT", "RESUMED", "KueueJobReaders", "job_wait", "template_pod"]

RESUMED = "fairway.io/resumed"  # on a Job the adapter resumed: suspended again when it waits again, as Kueue does
# on a Job the adapter resumed with its flavors' node labels and tolerations written into its template (as Kueue
# writes them): the template's own placement (``export.placement_spec``, JSON), which the reader takes as the
# template's and the next resume starts from; on a workload of several pod sets, each pod set's own node selector
# and tolerations, by pod set (``kueuepodsets``)
ORIGINAL_PLACEMENT = "fairway.io/original-placement"

SUSPENDED_FLAVORED = (
    "the Job is suspended (spec.suspend: true) in a ClusterQueue with flavored resource groups, and where its pods may "
    "run (its pod template) is not known yet: it is given its flavors once the adapter reads the Job again"
)

SUSPENDED_WORKLOAD = (
    "the {kind} is suspended in a ClusterQueue with flavored resource groups, and where its pod sets' pods may run "
    "(their pod templates) is not known yet: its pod sets are given their flavors once the adapter reads the {kind} "
    "again"
)


def job_wait(
    count: int,
    tasks: Iterable[TaskInfo],
    suspended: bool,
    kind: str = "Job",
    *,
    untemplated: bool = False,
    limit_range: str | None = None,
) -> str | None:
    """Why a Kueue Job of ``count`` pods whose pods are ``tasks`` waits, holding no quota: fewer of its pods can run
    than its count and none is on a node (``pod_group_wait``, the rule of Kueue's pod groups). None when it does not
    wait. A suspended Job none of whose pods is on a node does not wait: it is admitted from its template, and the
    adapter resumes it (the module docstring), unless its ClusterQueue has flavored resource groups and its pod
    template is not known (``untemplated``: a stored Job read before templates were kept).
    ``kind``: a workload of several pod sets read live (a JobSet, ...) waits by the same rule for all the pods of its
    pod sets; suspended, it is admitted from its pod sets' templates and resumed as a Job is (``untemplated``: in a
    flavored ClusterQueue, a row written before its pod sets' templates were kept).
    ``limit_range``: why its templates fall outside its namespace's LimitRanges (``engine.manifests.limitranges``):
    it waits for that while none of its pods is on a node, as Kueue keeps such a workload pending."""
    tasks = list(tasks)
    if limit_range is not None and all(t.node is None for t in tasks):
        return limit_range
    if suspended and all(t.node is None for t in tasks):
        if not untemplated:
            return None
        return SUSPENDED_FLAVORED if kind == "Job" else SUSPENDED_WORKLOAD.format(kind=kind)
    if pod_group_wait(count, tasks) is None:
        return None
    active = sum(1 for t in tasks if can_run(t))
    counted = "the Job's parallelism, or its completions when fewer" if kind == "Job" else "all its pod sets' pods"
    return f"{active} of its {count} pods exist ({counted}): a {kind} is admitted once all its pods exist"


def template_pod(pg: PodGroupInfo, placement: Mapping[str, Any]) -> TaskInfo:
    """The pod a suspended Job's template stands for while the Job has none (``AdmissionLevers.templates``): it asks
    for the whole Job (its podgroup's minimum resources) and may run where the template's ``placement``
    (``export.placement_spec``: nodeSelector, tolerations, required node affinity) allows. A ``ValueError`` names a
    bad field of ``placement``."""
    selector, tolerations, affinity = read_placement(placement, "template")
    return TaskInfo(
        namespace=pg.namespace,
        name=f"{pg.name}-template",
        podgroup=pg.key,
        request=pg.min_resources or ResourceList(),
        priority=pg.priority,
        node_selector=selector,
        tolerations=tolerations,
        node_affinity=affinity,
    )


def resumed_at(doc: _Doc, annotations: Mapping[str, str], warnings: list[str]) -> float | None:
    """When the adapter resumed the workload ``doc`` (its ``fairway.io/resumed`` annotation), or None. A value that
    is not a time is left out with a warning in ``warnings``: the object is read, only its pods are not awaited after a
    resume."""
    value = annotations.get(RESUMED)
    if value is None:
        return None
    try:
        return _time(value, f"metadata.annotations.{RESUMED}")
    except _FieldError as exc:
        warnings.append(f"{doc.where}: {exc}")
        return None


class KueueJobReaders(KueuePodGroupReaders):
    """The builder's part that reads Kueue's Jobs live (the module docstring)."""

    def _index_live_job(self, doc: _Doc) -> None:
        """Live: a Job labelled with a LocalQueue, by its key, with its uid (its pods' controller reference names
        it); read before the pods, which join its podgroup. A Job that cannot be read is refused by ``_batch_job``."""
        labels, uid = doc.meta.get("labels"), doc.meta.get("uid")
        if isinstance(labels, Mapping) and labels.get(KUEUE_QUEUE_LABEL) and isinstance(uid, str) and uid:
            self.live_jobs[f"{doc.namespace}/{doc.name}"] = uid

    def _job_parallelism(self, doc: _Doc) -> int:
        """The Job's ``spec.parallelism`` (default 1); live, the one ``fairway.io/original-parallelism`` keeps when the
        adapter lowered it for a partial admission."""
        parallelism = _int(doc.spec.get("parallelism"), "spec.parallelism", 1, minimum=0)
        if not self.live:
            return parallelism
        annotations = self._annotations(doc)
        raw = annotations.get(ORIGINAL_PARALLELISM)
        if raw is None:
            return parallelism
        if not re.fullmatch(r"[0-9]{1,9}", raw.strip()):
            raise _FieldError(f"metadata.annotations.{ORIGINAL_PARALLELISM}: {raw!r} is not a whole number")
        return int(raw)

    def _resumed_at(self, doc: _Doc) -> float | None:
        return resumed_at(doc, self._annotations(doc), self.warnings)

    def _placement(self, doc: _Doc, sample: TaskInfo) -> dict[str, Any]:
        """Where the pods of a suspended Job's template may run (``export.placement_spec``): its own, kept in
        ``fairway.io/original-placement`` when a resume wrote its flavors' into the template; one that cannot be read
        there is left out with a warning (the template's is used)."""
        raw = self._annotations(doc).get(ORIGINAL_PLACEMENT)
        if raw is None:
            return placement_spec(sample)
        where = f"metadata.annotations.{ORIGINAL_PLACEMENT}"
        try:
            kept = json.loads(raw)
            if not isinstance(kept, dict):
                raise ValueError("not a JSON object")
            read_placement(kept, where)
        except ValueError as exc:
            self.warnings.append(f"{doc.where}: {where}: {exc}; the template's placement is used")
            return placement_spec(sample)
        return kept

    def _live_batch_job(
        self, doc: _Doc, queue: str, labels: Mapping[str, str], count: int, least: int | None, sample: TaskInfo
    ) -> None:
        """The podgroup of a Kueue Job read live: its pods are those it controls (``job_pods``)."""
        key = f"{doc.namespace}/{doc.name}"
        tasks = self.job_pods.get(key, [])
        suspend = doc.spec.get("suspend")
        if suspend is not None and not isinstance(suspend, bool):
            raise _FieldError(f"spec.suspend: {suspend!r} is not true or false")
        limit_range = self.limit_ranges.wait(key)
        why = job_wait(count, tasks, bool(suspend), limit_range=limit_range)
        if suspend and why is not None:
            self.warnings.append(f"{doc.where}: {why}")
        if why is not None:
            self.admission.pod_group_waits[key] = why
        parallelism = _int(doc.spec.get("parallelism"), "spec.parallelism", 1, minimum=0)
        resumed = self._resumed_at(doc)
        placement = self._placement(doc, sample) if suspend else None  # where its pods may run, before it has any
        self.kueue_jobs[key] = KueueJob(
            labels[KUEUE_QUEUE_LABEL], count, least, bool(suspend), parallelism,
            resumed_at=resumed, template=placement, limit_range=limit_range, max_exec_seconds=max_exec(labels),
        )  # fmt: skip
        self._job_podgroup(doc, queue, labels, count, sample, group_phase(tasks) if tasks else PodGroupPhase.PENDING)
        if placement is not None and why is None:  # admissible while suspended: read as its template's pod
            self.admission.templates[key] = template_pod(self.podgroups[key], placement)

    def _job_podgroup(
        self, doc: _Doc, queue: str, labels: Mapping[str, str], count: int, sample: TaskInfo, phase: PodGroupPhase
    ) -> None:
        """The podgroup of a Kueue Job, live or expanded from its template: ``count`` pods like ``sample``, admitted
        whole."""
        key = f"{doc.namespace}/{doc.name}"
        self._origin("PodGroup", key)
        self.podgroups[key] = PodGroupInfo(
            namespace=doc.namespace,
            name=doc.name,
            queue=queue,
            min_member=count,
            min_resources=ResourceList({r: v * count for r, v in sample.request.items()}),
            priority=self._kueue_workload(doc, doc.namespace, labels, key, sample.priority),
            priority_class=sample.priority_class,
            phase=phase,
            creation_timestamp=_time(doc.meta.get("creationTimestamp"), "metadata.creationTimestamp") or 0.0,
        )
