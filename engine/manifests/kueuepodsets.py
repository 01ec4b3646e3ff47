"""Kueue's workloads of several pod sets: a JobSet, Kubeflow's training jobs and an MPIJob labelled
``kueue.x-k8s.io/queue-name``, read as Kueue's job integrations read them (``pkg/controller/jobs/jobset``,
``pkg/controller/jobs/kubeflow``, ``pkg/controller/jobs/mpijob`` of kubernetes-sigs/kueue at ``ff69552e79``, v0.17):

* each kind gives a list of **pod sets** (a name, a count of pods, the pod template), in Kueue's order:

  - ``jobset.x-k8s.io/v1alpha2`` JobSet: one per ``spec.replicatedJobs[i]``, named as it is, of ``replicas``
    (default 1) times its Job template's pods (``parallelism``, default 1, or ``completions`` when fewer: Kueue's
    ``podsCount``);
  - ``kubeflow.org/v1`` PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob: one per replica type of
    ``spec.<kind>ReplicaSpecs`` in the kind's order (PyTorch, XGBoost, Paddle: Master, Worker; TF: Chief, Master,
    PS, Worker, Evaluator; JAX: Worker), of ``replicas`` pods (default 1);
  - ``kubeflow.org/v2beta1`` MPIJob: ``spec.mpiReplicaSpecs`` Launcher, then Worker, of ``replicas`` pods (default 1);

  a pod set's name is Kueue's (the replica type in lower case); a Kubeflow replica type is matched without regard
  to case, as the training operator's defaulting writes it (an MPIJob's as written: the MPI operator has no such
  defaulting); a replica type without ``replicas`` counts 1, as Kueue counts it (the MPI operator's own default for
  its Worker is 0, which Kueue does not apply);
* the pod sets of one object are **one podgroup** named after it, in its LocalQueue's ClusterQueue, admitted whole
  (``minMember`` every pod, ``minResources`` their sum), as Kueue admits one Workload; its pods are named as their
  controllers name them (JobSet: ``<jobset>-<replicatedJob>-<job index>-<pod index>``; Kubeflow and MPI:
  ``<job>-<replica type>-<index>``; a Job's pod is numbered as Fairway numbers a Job's pods, without Kubernetes'
  random suffix), each with its pod set as its role;
* the priority is Kueue's: the WorkloadPriorityClass of the ``kueue.x-k8s.io/priority-class`` label, else the
  PriorityClass of ``spec.runPolicy.schedulingPolicy.priorityClass`` (Kubeflow, MPI), else the first pod set's
  ``priorityClassName`` in the order above; the pods keep their own;
* what cannot be used exits 2 naming the field (``spec.replicatedJobs[1].replicas``), the limits on replicas and
  pods included; an object without the queue label is skipped with a warning, as a Job is;
* **live** (``load_objects(live=True)``: the Kubernetes adapter) the pods are not made from the templates: the pods
  the object's controllers made join its podgroup (``_live_pod_set_job_of``: a JobSet's by its name and uid labels,
  a Kubeflow job's by their controller reference, an MPIJob's launcher by its Job), each with its pod set as its
  role; the podgroup's minimum is still every pod of its pod sets, read from the object, and it waits, holding no
  quota, until that many exist (``kueuejobs.job_wait``, as a Kueue Job waits); a suspended object
  (``spec.suspend``, Kubeflow's and MPI's ``spec.runPolicy.suspend``) is admitted from its templates (its minimum
  resources are theirs) and resumed by the adapter as Kueue resumes it (``scheduling.kube.mirror_out``), its pods
  awaited a while after (``fairway.io/resumed``); its pod sets' templates are kept with it (``pod_set_template``:
  each pod set's count, request in all and placement) and, while it has no pods, stand for them
  (``pod_set_template_pods``), so that in a ClusterQueue with flavored resource groups Kueue's flavor assigner gives
  each pod set its flavors, which the adapter writes into each pod set's template when it resumes it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.manifests.common import (
    KUEUE_PRIORITY_LABEL,
    KUEUE_QUEUE_LABEL,
    KueueJob,
    _Doc,
    _FieldError,
    _int,
    _list,
    _map,
    _str,
    _string_map,
    _time,
    max_exec,
)
from engine.manifests.core import CoreReaders, read_placement
from engine.manifests.export import placement_spec
from engine.manifests.kueuegroups import group_phase
from engine.manifests.kueuejobs import ORIGINAL_PLACEMENT, job_wait, resumed_at
from engine.objects import PodGroupInfo, TaskInfo
from engine.resources import ResourceList
from engine.vocabulary import PodGroupPhase

__all__ = ["KUBEFLOW_KINDS", "KueuePodSetReaders", "PodSet", "pod_set_template", "pod_set_template_pods"]

# kind -> (its replica specs field, its replica types in Kueue's order: ``OrderedReplicaTypes``)
KUBEFLOW_KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "PyTorchJob": ("pytorchReplicaSpecs", ("Master", "Worker")),
    "TFJob": ("tfReplicaSpecs", ("Chief", "Master", "PS", "Worker", "Evaluator")),
    "XGBoostJob": ("xgbReplicaSpecs", ("Master", "Worker")),
    "PaddleJob": ("paddleReplicaSpecs", ("Master", "Worker")),
    "JAXJob": ("jaxReplicaSpecs", ("Worker",)),
    "MPIJob": ("mpiReplicaSpecs", ("Launcher", "Worker")),
}
# the version of each kind that Kueue's integration reads; another is skipped with a warning
_VERSIONS: dict[str, str] = {
    "JobSet": "jobset.x-k8s.io/v1alpha2",
    "MPIJob": "kubeflow.org/v2beta1",
    **{kind: "kubeflow.org/v1" for kind in KUBEFLOW_KINDS if kind != "MPIJob"},
}


@dataclass(frozen=True)
class PodSet:
    """One of Kueue's pod sets: its name (the pods' role), its count of pods, its pod template and that template's
    field path; its pods are ``<prefix>-<index>``, or ``<prefix>-<index // per_job>-<index % per_job>`` when it is
    made of Jobs of ``per_job`` pods each (a JobSet's replicated job)."""

    name: str
    count: int
    template: Mapping[str, Any]
    path: str
    prefix: str
    per_job: int = 0

    def pod_name(self, index: int) -> str:
        if self.per_job:
            return f"{self.prefix}-{index // self.per_job}-{index % self.per_job}"
        return f"{self.prefix}-{index}"


class KueuePodSetReaders(CoreReaders):
    """The builder's part that reads the JobSets, Kubeflow's jobs and MPIJobs (the module docstring)."""

    def _read_pod_set_jobs(self) -> None:
        for doc in self.docs("JobSet"):
            self._run(doc, self._jobset)
        for kind in KUBEFLOW_KINDS:
            for doc in self.docs(kind):
                self._run(doc, self._kubeflow_job)

    def _jobset(self, doc: _Doc) -> None:
        self._pod_set_workload(doc, "spec.replicatedJobs", lambda: self._jobset_pod_sets(doc), ("", ""))

    def _kubeflow_job(self, doc: _Doc) -> None:
        run_policy = _map(doc.spec.get("runPolicy"), "spec.runPolicy")
        scheduling = _map(run_policy.get("schedulingPolicy"), "spec.runPolicy.schedulingPolicy")
        path = "spec.runPolicy.schedulingPolicy.priorityClass"
        own_class = (_str(scheduling.get("priorityClass"), path), path)
        field = f"spec.{KUBEFLOW_KINDS[doc.kind][0]}"
        self._pod_set_workload(doc, field, lambda: self._replica_pod_sets(doc), own_class)

    def _jobset_pod_sets(self, doc: _Doc) -> list[PodSet]:
        """One pod set per replicated job: ``replicas`` Jobs of ``min(parallelism, completions)`` pods each."""
        pod_sets: list[PodSet] = []
        for i, raw in enumerate(_list(doc.spec.get("replicatedJobs"), "spec.replicatedJobs")):
            path = f"spec.replicatedJobs[{i}]"
            replicated = _map(raw, path)
            name = _str(replicated.get("name"), f"{path}.name")
            if not name:
                raise _FieldError(f"{path}.name: missing")
            if any(p.name == name for p in pod_sets):
                raise _FieldError(f"{path}.name: {name!r} is the name of an earlier replicated job (JobSet refuses it)")
            replicas = self._replicas(replicated.get("replicas"), f"{path}.replicas")
            job = _map(_map(replicated.get("template"), f"{path}.template").get("spec"), f"{path}.template.spec")
            per_job = self._replicas(job.get("parallelism"), f"{path}.template.spec.parallelism")
            if job.get("completions") is not None:  # Kueue's podsCount: the completions when fewer
                per_job = min(per_job, _int(job.get("completions"), f"{path}.template.spec.completions", 1, minimum=0))
            template_path = f"{path}.template.spec.template"
            template = _map(job.get("template"), template_path)
            pod_sets.append(PodSet(name, replicas * per_job, template, template_path, f"{doc.name}-{name}", per_job))
        if not pod_sets:
            raise _FieldError("spec.replicatedJobs: missing (a JobSet runs at least one replicated job)")
        return pod_sets

    def _replica_pod_sets(self, doc: _Doc) -> list[PodSet]:
        """One pod set per replica type of ``spec.<kind>ReplicaSpecs``, in the kind's order, of ``replicas`` pods."""
        field, types = KUBEFLOW_KINDS[doc.kind]
        path = f"spec.{field}"
        specs = _map(doc.spec.get(field), path)
        # the training operator's defaulting writes a replica type in its case (``worker`` is Worker); the MPI
        # operator's (v2beta1) has none, and Kueue reads its keys as written
        exact = doc.kind == "MPIJob"
        canonical = {t if exact else t.lower(): t for t in types}
        found: dict[str, tuple[str, Any]] = {}
        for key, raw in specs.items():
            kind = canonical.get(str(key) if exact else str(key).lower())
            if kind is None:
                raise _FieldError(f"{path}.{key}: not a replica type of {doc.kind} (one of {', '.join(types)})")
            if kind in found:
                raise _FieldError(f"{path}.{key}: replica type {kind} is given twice ({found[kind][0]} and {key})")
            found[kind] = (str(key), raw)
        pod_sets: list[PodSet] = []
        for kind in types:
            if kind not in found or found[kind][1] is None:  # Kueue skips a replica type whose spec is null
                continue
            key, raw = found[kind]
            spec = _map(raw, f"{path}.{key}")
            count = self._replicas(spec.get("replicas"), f"{path}.{key}.replicas")
            template = _map(spec.get("template"), f"{path}.{key}.template")
            role = kind.lower()
            pod_sets.append(PodSet(role, count, template, f"{path}.{key}.template", f"{doc.name}-{role}"))
        if not pod_sets:
            raise _FieldError(f"{path}: missing (a {doc.kind} has at least one of {', '.join(types)})")
        return pod_sets

    def _pod_set_workload(
        self, doc: _Doc, field: str, read_pod_sets: Callable[[], list[PodSet]], own_class: tuple[str, str]
    ) -> None:
        """The workload of ``doc``: its pod sets (``read_pod_sets()``, under ``field``) as one podgroup admitted
        whole, in its LocalQueue's ClusterQueue; ``own_class``: the object's own PriorityClass name and its field
        (Kubeflow's and MPI's ``runPolicy.schedulingPolicy.priorityClass``), which Kueue takes before the pod sets'."""
        api_version = doc.obj.get("apiVersion")
        if api_version != _VERSIONS[doc.kind]:
            self.warnings.append(
                f"{doc.where}: {api_version} {doc.kind} is not read (Kueue reads {_VERSIONS[doc.kind]}); skipped"
            )
            return
        labels = _string_map(doc.meta.get("labels"), "metadata.labels", doc, self.warnings)
        queue = self._kueue_queue(doc, doc.namespace, labels)
        if queue is None:
            self.warnings.append(f"{doc.where}: a {doc.kind} without the label {KUEUE_QUEUE_LABEL}; skipped")
            return
        pod_sets = read_pod_sets()
        created = _time(doc.meta.get("creationTimestamp"), "metadata.creationTimestamp") or 0.0
        pg_key = f"{doc.namespace}/{doc.name}"
        if pg_key in self.podgroups:
            self.warnings.append(f"{doc.where}: PodGroup {pg_key} is in the input; the {doc.kind} is not expanded")
            return
        total = sum(p.count for p in pod_sets)
        if not self.live:  # (live, the pods are the cluster's, not made here)
            self._room_for_pods(total, field)
        self._room_for_podgroup()
        samples = [self._pod_set_sample(doc, p, pg_key) for p in pod_sets]  # every template read before a pod is added
        phase, templated = PodGroupPhase.PENDING, False
        if self.live:
            phase, templated = self._live_pod_set_wait(doc, labels, pg_key, pod_sets, samples)
        else:
            for pod_set, sample in zip(pod_sets, samples, strict=True):
                self._add_pod_set_pods(doc, pod_set, sample)
        priority, class_name = self._pod_set_priority(doc, labels, own_class, samples)
        self._origin("PodGroup", pg_key)
        self.podgroups[pg_key] = PodGroupInfo(
            namespace=doc.namespace,
            name=doc.name,
            queue=queue,
            min_member=total,
            min_resources=ResourceList.total(
                ResourceList({r: v * p.count for r, v in s.request.items()})
                for p, s in zip(pod_sets, samples, strict=True)
            ),
            priority=self._kueue_workload(doc, doc.namespace, labels, pg_key, priority),
            priority_class=class_name,
            phase=phase,
            creation_timestamp=created,
            pod_sets=tuple(p.name for p in pod_sets),
        )
        if templated:  # admissible while suspended: its pod sets read as their templates' pods
            stored = self.kueue_jobs[pg_key].pod_set_templates
            self.admission.templates[pg_key] = pod_set_template_pods(self.podgroups[pg_key], stored)
        why = self.limit_ranges.wait(pg_key)
        if why is not None and not self.live:  # its templates outside its namespace's LimitRanges: Kueue keeps it
            self.admission.pod_group_waits[pg_key] = why

    def _index_live_pod_set_jobs(self) -> None:
        """Live: each JobSet, Kubeflow job and MPIJob labelled with a LocalQueue, at the version Kueue reads, by its
        key, with its kind and uid; read before the pods, which join its podgroup (``_live_pod_set_job_of``)."""
        for kind in ("JobSet", *KUBEFLOW_KINDS):
            for doc in self.docs(kind):
                labels, uid = doc.meta.get("labels"), doc.meta.get("uid")
                if (
                    isinstance(labels, Mapping)
                    and labels.get(KUEUE_QUEUE_LABEL)
                    and isinstance(uid, str)
                    and uid
                    and doc.obj.get("apiVersion") == _VERSIONS[doc.kind]
                ):
                    self.live_pod_set_jobs[f"{doc.namespace}/{doc.name}"] = (doc.kind, uid)

    def _live_pod_set_wait(
        self, doc: _Doc, labels: Mapping[str, str], pg_key: str, pod_sets: list[PodSet], samples: list[TaskInfo]
    ) -> tuple[PodGroupPhase, bool]:
        """Live: whether the workload waits for its pods, kept as a Kueue Job's count is (``kueue_jobs``: the adapter
        stores it, with its pod sets' templates, and the sessions wait by it); ``labels``: the object's (its
        LocalQueue, its maximum execution time); ``samples``: each pod set's first pod, as its template makes it.
        Returns its podgroup's phase from its pods, and whether it is admissible while suspended (its pod sets then
        stand for its pods: ``AdmissionLevers.templates``)."""
        local_queue = labels[KUEUE_QUEUE_LABEL]
        tasks = self.job_pods.get(pg_key, [])
        run_policy = doc.spec.get("runPolicy") if doc.kind != "JobSet" else None
        where = doc.spec if run_policy is None else _map(run_policy, "spec.runPolicy")
        path = "spec.suspend" if run_policy is None else "spec.runPolicy.suspend"
        suspend = where.get("suspend")
        if suspend is not None and not isinstance(suspend, bool):
            raise _FieldError(f"{path}: {suspend!r} is not true or false")
        limit_range = self.limit_ranges.wait(pg_key)
        why = job_wait(sum(p.count for p in pod_sets), tasks, bool(suspend), doc.kind, limit_range=limit_range)
        if suspend and why is not None:
            self.warnings.append(f"{doc.where}: {why}")
        if why is not None:
            self.admission.pod_group_waits[pg_key] = why
        placements = self._pod_set_placements(doc, pod_sets, samples)
        templates = tuple(pod_set_template(p, s, placements[p.name]) for p, s in zip(pod_sets, samples, strict=True))
        self.kueue_jobs[pg_key] = KueueJob(
            local_queue, sum(p.count for p in pod_sets), None, bool(suspend), sum(p.count for p in pod_sets),
            doc.kind, _VERSIONS[doc.kind], tuple(p.name for p in pod_sets),
            resumed_at=resumed_at(doc, self._annotations(doc), self.warnings), limit_range=limit_range,
            max_exec_seconds=max_exec(labels), pod_set_templates=templates,
        )  # fmt: skip
        phase = group_phase(tasks) if tasks else PodGroupPhase.PENDING
        return phase, bool(suspend) and why is None and not any(t.node is not None for t in tasks)

    def _pod_set_placements(
        self, doc: _Doc, pod_sets: list[PodSet], samples: list[TaskInfo]
    ) -> dict[str, dict[str, Any]]:
        """Where each pod set's pods may run (``export.placement_spec``), by pod set: its template's own, or the one
        ``fairway.io/original-placement`` keeps (by pod set: its own ``nodeSelector`` and ``tolerations``, which
        replace the template's) when a resume wrote its flavors' node labels and tolerations into the templates; a
        kept one that cannot be read is left out with a warning (the templates' are used)."""
        own = {p.name: placement_spec(s) for p, s in zip(pod_sets, samples, strict=True)}
        raw = self._annotations(doc).get(ORIGINAL_PLACEMENT)
        if raw is None:
            return own
        where = f"metadata.annotations.{ORIGINAL_PLACEMENT}"
        try:
            kept = json.loads(raw)
            if not isinstance(kept, dict):
                raise ValueError("not a JSON object")
            for name, placement in kept.items():
                if name in own:
                    read_placement(_map(placement, f"{where}.{name}"), f"{where}.{name}")
        except ValueError as exc:
            self.warnings.append(f"{doc.where}: {where}: {exc}; the templates' placements are used")
            return own
        return {name: {**placement, **(kept.get(name) or {})} for name, placement in own.items()}

    def _pod_set_priority(
        self, doc: _Doc, labels: Mapping[str, str], own_class: tuple[str, str], samples: list[TaskInfo]
    ) -> tuple[int, str]:
        """The workload's priority when no WorkloadPriorityClass gives it, and the PriorityClass it comes from, as
        Kueue's ``ExtractPriority`` takes it: the object's own class, else the first pod set's ``priorityClassName``
        (a class missing from the input was named in a warning when its pod was read), else the global default."""
        class_name, path = own_class
        wanted = labels.get(KUEUE_PRIORITY_LABEL)
        if class_name:
            if wanted and wanted in self.workload_priority_classes:  # not used: no warning for a missing class
                return self.global_default, class_name
            return self._class_priority(doc, class_name, path)[0], class_name
        class_name = next((s.priority_class for s in samples if s.priority_class), "")
        known = self.priority_classes.get(class_name)
        return (known.value if known is not None else self.global_default), class_name

    def _pod_set_sample(self, doc: _Doc, pod_set: PodSet, pg_key: str) -> TaskInfo:
        """The first pod of ``pod_set`` (its template read even when it has no pods, so that errors surface)."""
        t_meta = _map(pod_set.template.get("metadata"), f"{pod_set.path}.metadata")
        t_spec = _map(pod_set.template.get("spec"), f"{pod_set.path}.spec")
        labels = _string_map(t_meta.get("labels"), f"{pod_set.path}.metadata.labels", doc, self.warnings)
        annotations = _string_map(t_meta.get("annotations"), f"{pod_set.path}.metadata.annotations", doc, self.warnings)
        pod_meta = {"creationTimestamp": doc.meta.get("creationTimestamp")}
        sample = self._task(
            doc, doc.namespace, pod_set.pod_name(0), labels, annotations, t_spec, {}, pod_meta,
            podgroup=pg_key, path=f"{pod_set.path}.spec", template=True,
        )  # fmt: skip
        return dataclasses.replace(sample, task_role=pod_set.name)

    def _add_pod_set_pods(self, doc: _Doc, pod_set: PodSet, sample: TaskInfo) -> None:
        for index in range(pod_set.count):
            task = dataclasses.replace(sample, name=pod_set.pod_name(index)) if index else sample
            if task.uid in self.tasks:
                self.warnings.append(f"{doc.where}: Pod {task.uid} is in the input; the generated one is dropped")
                continue
            self._origin("Pod", task.uid)
            self.tasks[task.uid] = task


def pod_set_template(pod_set: PodSet, sample: TaskInfo, placement: Mapping[str, Any]) -> dict[str, Any]:
    """What the store keeps of a pod set's template (``KueueJob.pod_set_templates``): its name, its count, what its
    pods ask for in all (``sample``, its first pod, times its count; amounts as ``ResourceList`` keeps them) and where
    they may run (``placement``: ``export.placement_spec``)."""
    return {
        "name": pod_set.name,
        "count": pod_set.count,
        "request": {r: v * pod_set.count for r, v in sample.request.raw.items()},
        "placement": dict(placement),
    }


def pod_set_template_pods(pg: PodGroupInfo, templates: Sequence[Mapping[str, Any]]) -> tuple[TaskInfo, ...]:
    """The pods a workload's pod sets stand for while it has none (``AdmissionLevers.templates``), one per pod set
    (``pod_set_template``) in Kueue's order: each asks for its whole pod set, has the pod set as its role and may run
    where its template's placement allows. A ``ValueError`` names a bad field (``podSetTemplates[1].count``)."""
    out: list[TaskInfo] = []
    for i, template in enumerate(templates):
        where = f"podSetTemplates[{i}]"
        name = template.get("name")
        if not isinstance(name, str) or not name:
            raise _FieldError(f"{where}.name: {name!r} is not a pod set's name")
        _int(template.get("count"), f"{where}.count", 1, minimum=0)
        request = _map(template.get("request"), f"{where}.request")
        for resource, amount in request.items():
            if not isinstance(amount, int) or isinstance(amount, bool) or amount < 0:
                raise _FieldError(f"{where}.request.{resource}: {amount!r} is not a whole amount of 0 or more")
        selector, tolerations, affinity = read_placement(
            _map(template.get("placement"), f"{where}.placement"), f"{where}.placement"
        )
        out.append(
            TaskInfo(
                namespace=pg.namespace,
                name=f"{pg.name}-{name}-template",
                podgroup=pg.key,
                request=ResourceList({str(r): v for r, v in request.items()}),
                priority=pg.priority,
                node_selector=selector,
                tolerations=tolerations,
                node_affinity=affinity,
                task_role=name,
            )
        )
    return tuple(out)
