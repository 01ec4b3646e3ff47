"""Kueue's plain-Pod groups (``pkg/controller/jobs/pod`` of kubernetes-sigs/kueue at ``ff69552e79``, v0.17): the pods
of one namespace labelled ``kueue.x-k8s.io/pod-group-name: <group>`` (or so annotated, which Kueue reads first since
0.18), each annotated ``kueue.x-k8s.io/pod-group-total-count: "<N>"``, are ONE workload in Kueue, named after the
group, admitted whole once N of its pods exist. Here they are one podgroup:

* named after the group, in the queue of its pods' LocalQueue (``kueue.x-k8s.io/queue-name``), ``minMember`` = N (a
  gang: admitted whole), ``minResources`` the sum of its pods that can run, the priority of a Job's workload (its
  ``kueue.x-k8s.io/priority-class`` label, else its first pod's), created when its earliest pod was;
* pods that can run are Kueue's ``isPodRunnableOrSucceeded``: not Failed, and not deleted before they had a node.
  While fewer than N exist and none of its pods is on a node, Kueue has made no workload of the group: it waits,
  Pending, admitted by no session (``AdmissionLevers.pod_group_waits``, reason ``NotEnoughPods`` with the count); a
  pod on a node means Kueue admitted it, and it stays admitted. That rule is ``pod_group_wait``, which the live
  sessions apply too: the Kubernetes adapter stores N (``LoadResult.kueue_pod_groups``) and the store finds the groups
  that wait from the pods it holds (``scheduling.store.with_pod_group_waits``);
* what Kueue refuses exits 2 naming the document and the field: a count without a group name or a name without a
  count, a count that is not a whole number greater than 0, a name that is not a Kubernetes name (its pod webhook),
  pods of one group that name different LocalQueues or counts (a Failed pod aside, as Kueue skips it), and more pods
  that can run than the count (Kueue deletes the newest beyond it: the input is not a state it keeps);
* a group none of whose pods has the queue label is not managed by Kueue: each pod is a workload of its own, with a
  warning; a pod that names a Volcano PodGroup (``scheduling.k8s.io/group-name``) is that PodGroup's, and Kueue's
  keys on it are not read;
* ``kueue.x-k8s.io/pod-group-fast-admission: "true"`` (on the group's first pod that can run, whose annotations
  Kueue reads): Kueue makes the workload on that pod, N pods of its shape, and admits it without the others; so the
  podgroup's ``minResources`` is N times that pod's request (admitting it reserves the quota of all N, and a Running
  group keeps the part its missing pods would take) and its gang the pods that exist. ``retriable-in-group:
  "false"`` (the group ends once no pod of it can run, rather than waiting for replacements) is how Fairway reads
  every group: a group whose pods have all finished is Completed, and no quota is kept for pods to come;
* ``kueue.x-k8s.io/max-exec-time-seconds`` on its pods (as on a plain pod Kueue manages, or a Job): admitted that
  long in all, the group is suspended (``scheduling.max_exec``); its pods give one value (Kueue reads the label of
  whichever pod made its workload, so pods that differ are refused here, naming the label).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from engine.manifests.common import (
    KUEUE_GROUP_COUNT,
    KUEUE_GROUP_FAST_ADMISSION,
    KUEUE_GROUP_NAME,
    KUEUE_MAX_EXEC_LABEL,
    KUEUE_QUEUE_LABEL,
    GroupPod,
    _Doc,
    max_exec,
    user_annotation,
)
from engine.manifests.kueuelevers import KueueLeverReaders
from engine.objects import DEFAULT_QUEUE, PodGroupInfo, TaskInfo
from engine.resources import ResourceList
from engine.vocabulary import PodGroupPhase, TaskStatus

__all__ = ["KueuePodGroupReaders", "can_run", "group_phase", "pod_group_wait"]

_COUNT_PATH = f"metadata.annotations[{KUEUE_GROUP_COUNT}]"
_QUEUE_PATH = f"metadata.labels[{KUEUE_QUEUE_LABEL}]"
_DONE = frozenset({TaskStatus.SUCCEEDED, TaskStatus.FAILED})


def can_run(task: TaskInfo) -> bool:
    """Kueue's ``isPodRunnableOrSucceeded``: not Failed, and not being deleted before it had a node."""
    return task.status is not TaskStatus.FAILED and not (task.status is TaskStatus.RELEASING and task.node is None)


def pod_group_wait(count: int, tasks: Iterable[TaskInfo]) -> str | None:
    """Why a Kueue pod group of ``count`` pods (its ``pod-group-total-count``) whose pods are ``tasks`` waits for the
    others, Kueue having made no workload of it yet: fewer than ``count`` of them can run and none is on a node. None
    when it does not wait. The one rule of ``fairway simulate`` (the readers) and the live sessions (the store)."""
    tasks = list(tasks)
    active = sum(1 for t in tasks if can_run(t))
    if active >= count or any(t.node is not None for t in tasks):
        return None
    return (
        f"{active} of its {count} pods exist ({KUEUE_GROUP_COUNT}): Kueue admits a pod group only once all its pods "
        "exist"
    )


def _name_path(pod: GroupPod) -> str:
    where = "annotations" if pod.annotations.get(KUEUE_GROUP_NAME) else "labels"
    return f"metadata.{where}[{KUEUE_GROUP_NAME}]"


def group_phase(tasks: list[TaskInfo]) -> PodGroupPhase:
    """As a pod's own podgroup: Completed when every pod has finished, Running when one holds a node."""
    if all(t.status in _DONE for t in tasks):
        return PodGroupPhase.COMPLETED
    if any(t.node is not None and t.status is not TaskStatus.PENDING and t.status not in _DONE for t in tasks):
        return PodGroupPhase.RUNNING
    return PodGroupPhase.PENDING


def _check_agreement(key: str, ref: GroupPod, pods: list[GroupPod]) -> None:
    """Kueue's ``validatePodGroupMetadata``: the pods of a group (a Failed one aside) name ``ref``'s LocalQueue and
    total count; the first that does not is refused, naming its field."""
    for pod in pods:
        if pod.task.status is TaskStatus.FAILED:
            continue
        if pod.queue != ref.queue:
            mine = repr(pod.queue) if pod.queue else "missing"
            raise pod.doc.error(
                f"{_QUEUE_PATH}: {mine} where pod {ref.doc.label} of Kueue pod group {key} has {ref.queue!r}: the "
                "pods of a group name one LocalQueue (Kueue refuses the group)"
            )
        if pod.count != ref.count:
            raise pod.doc.error(
                f"{_COUNT_PATH}: {pod.count} where pod {ref.doc.label} of Kueue pod group {key} has {ref.count}: the "
                "pods of a group give one total count (Kueue refuses the group)"
            )
        limit, theirs = pod.labels.get(KUEUE_MAX_EXEC_LABEL), ref.labels.get(KUEUE_MAX_EXEC_LABEL)
        if limit != theirs:  # Kueue would take the one of whichever pod made its workload: Fairway asks for one
            said = "missing" if limit is None else repr(limit)
            raise pod.doc.error(
                f"metadata.labels[{KUEUE_MAX_EXEC_LABEL}]: {said} where pod {ref.doc.label} of Kueue pod group {key} "
                f"has {'none' if theirs is None else repr(theirs)}: the pods of a group give one maximum execution time"
            )


class KueuePodGroupReaders(KueueLeverReaders):
    """The builder's part that makes Kueue's pod groups once every pod is read (the module docstring)."""

    def _kueue_pod_groups(self) -> None:
        for key, pods in self.kueue_group_pods.items():
            managed = [p for p in pods if p.queue]
            if not managed:
                self.warnings.append(
                    f"{pods[0].doc.where}: Kueue pod group {key}: no pod of it has the label {KUEUE_QUEUE_LABEL}, so "
                    "Kueue does not manage it; each pod is a workload of its own"
                )
                continue
            ref = next((p for p in managed if p.task.status is not TaskStatus.FAILED), managed[0])
            self._run(ref.doc, partial(self._kueue_pod_group, key, ref, pods))

    def _kueue_pod_group(self, key: str, ref: GroupPod, pods: list[GroupPod], _doc: _Doc) -> None:
        """The podgroup of the group ``key`` (``ref``: its first pod that can run, else its first), once its pods
        agree; ``_doc`` is ``ref``'s document, read (``_run``)."""
        _check_agreement(key, ref, pods)
        limit = max_exec(ref.labels)  # its maximum execution time (``scheduling.max_exec``), as its pods agree
        members = [p for p in pods if p.queue]  # (a Failed pod without the label has a podgroup of its own)
        count = ref.count
        active = [p for p in members if can_run(p.task)]
        if len(active) > count:
            raise active[count].doc.error(
                f"{_COUNT_PATH}: {count}, but {len(active)} pods of Kueue pod group {key} that can run are in the "
                "input (Kueue deletes the newest beyond the count: not a state it keeps)"
            )
        if key in self.podgroups:
            raise ref.doc.error(f"{_name_path(ref)}: PodGroup {key} is in the input too; give the group another name")
        self._room_for_podgroup()
        ns, name = ref.task.namespace, key.split("/", 1)[1]
        tasks = [p.task for p in members]
        gang, minimum = self._gang(key, ref, active, tasks)
        for pod in members:  # who submitted it: its first pod that says
            user = user_annotation(pod.annotations, self.limits.max_json_depth)
            if user[0]:
                self.pod_users.setdefault(key, user)
        self._origin("PodGroup", key)
        self.podgroups[key] = PodGroupInfo(
            namespace=ns,
            name=name,
            queue=self._kueue_queue(ref.doc, ns, ref.labels) or DEFAULT_QUEUE,
            min_member=gang,
            min_resources=minimum,
            priority=self._kueue_workload(ref.doc, ns, ref.labels, key, ref.task.priority),
            priority_class=ref.task.priority_class,
            phase=group_phase(tasks),
            creation_timestamp=min((t.creation_timestamp for t in tasks if t.creation_timestamp), default=0.0),
        )
        if limit is not None:
            self.kueue_max_exec[key] = limit

    def _gang(self, key: str, ref: GroupPod, active: list[GroupPod], tasks: list[TaskInfo]) -> tuple[int, ResourceList]:
        """The group's ``minMember`` and ``minResources`` (``active``: its pods that can run; ``tasks``: all its pods),
        noting a group that waits for its pods in ``pod_group_waits``, and one that Kueue admits only once all its pods
        exist (not ``fast-admission``) in ``kueue_pod_groups`` (the store keeps it, for the live sessions)."""
        count = ref.count
        total = ResourceList.total(p.task.request for p in active)
        if active and ref.annotations.get(KUEUE_GROUP_FAST_ADMISSION) == "true" and len(active) < count:
            # Kueue's workload is made on the first pod that can run: N pods of its shape, admitted without the others
            first = active[0].task.request
            return len(active), ResourceList({r: v * count for r, v in first.items()})
        self.kueue_pod_groups[key] = count
        why = pod_group_wait(count, tasks)
        if why is not None:
            self.admission.pod_group_waits[key] = why
            return count, total
        if len(active) >= count or not active:
            return count, total
        self.warnings.append(
            f"{ref.doc.where}: Kueue pod group {key}: {len(active)} of its {count} pods ({KUEUE_GROUP_COUNT}) can run "
            f"and it is admitted (a pod on a node): read as a gang of {len(active)}, as Kueue keeps it admitted while "
            "it waits for the others"
        )
        return len(active), total
