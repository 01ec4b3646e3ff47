"""The sessions' decisions -> the API server. Everything here reads rows the normal scheduling session
(``scheduling.tasks.run_session``) wrote and the informers' caches, and sends what the cluster does not have yet:

* **bindings**: a pod Bound here whose object has no ``spec.nodeName`` gets ``POST pods/{name}/binding``
  (a 409 means it is bound already: the watch brings where, and the mirror follows); ``client.CONCURRENT_CALLS`` at a
  time on kept-alive connections, as are the PodGroup statuses that changed (a session places thousands at once);
* **Kueue Jobs**: a suspended Job a session admitted is resumed (``spec.suspend: false``), and suspended again when it
  waits again; ``spec.parallelism`` lowered to the count a session admitted a Job with in part (once its pods are bound
  there, or with the resume), the Job's own kept in ``fairway.io/original-parallelism``, and given back when it waits
  again (``write_kueue_jobs``); Kueue's JobSets, Kubeflow's training jobs and MPIJobs resumed and suspended again
  likewise (``write_kueue_workloads``);
* **evictions**: a pod Releasing here (its ``Eviction`` row names why) whose object is not being deleted gets a
  policy/v1 ``POST pods/{name}/eviction``, which respects PodDisruptionBudgets: a refusal (429) is recorded on the
  eviction row (``api_status`` refused, ``api_refusal`` with the budget's reason) and tried again after a backoff
  (2 s doubling, at most 60 s); the pod stays Releasing, holding its node, meanwhile;
* **deletions** a person asked for (``scheduling.job_actions.delete``): the job's pods, then its PodGroup, are
  deleted (one a controller owns is left, with the reason on the job);
* **PodGroup status** as Volcano writes it: ``phase``, ``conditions`` (Scheduled / Unschedulable with reason,
  message, transitionID, lastTransitionTime), and the ``running`` / ``succeeded`` / ``failed`` counts;
* **Queue status** as Volcano's queue controller writes it: ``state``, the podgroups ``pending`` / ``inqueue`` /
  ``running`` / ``completed`` / ``unknown``, and ``allocated`` (the last session's sample);
* **ElasticQuota**: Koordinator's ``quota.scheduling.koordinator.sh/runtime`` annotation (a JSON resource list) and
  ``status.used`` (the last session's sample); a scheduler-plugins ElasticQuota gets ``status.used``;
* **the trees**, when Fairway owns them (``tree_source=fairway``): every queue and quota group as the Volcano Queue
  and Koordinator ElasticQuota ``engine.manifests.export`` builds, created or replaced when they differ (labelled
  ``app.kubernetes.io/managed-by: fairway``; one that Fairway made and no longer has is deleted);
* **problems**: a ``KubeObjectProblem`` not yet told gets a Warning ``Event`` on its object (reason
  ``FairwayInvalid``).

Status writes replace the ``status`` subresource with the ``resourceVersion`` they were read at — or, for a kind whose
CRD has no status subresource (Volcano's PodGroup, Koordinator's ElasticQuota: ``Kind.status_subresource``), the
whole object as read with its new status, as Volcano's controllers update a PodGroup; a 409 Conflict (the object
changed meanwhile) is retried on a fresh read, up to ``CONFLICT_RETRIES`` times.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
from collections import Counter
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, NamedTuple

from django.db import transaction
from django.db.models import Count, Q
from kubernetes import client as k8s

from engine.manifests.common import _FROM_KOORD, _TO_KOORD, KOORD, ORIGINAL_PARALLELISM, controller_ref
from engine.manifests.export import export_trees
from engine.manifests.kueuejobs import ORIGINAL_PLACEMENT, RESUMED
from engine.manifests.kueuepodsets import KUBEFLOW_KINDS
from engine.resources import ResourceList, is_unlimited
from engine.vocabulary import PodGroupPhase
from quotas.models import Namespace, Queue, ResourceFlavor
from scheduling import max_exec
from scheduling.agent import confirm_gone
from scheduling.choices import PodStatus
from scheduling.kube.client import CONCURRENT_CALLS, KIND_BY_PATH, Kind, error_status, refusal
from scheduling.models import (
    Cluster,
    Eviction,
    EvictionApiStatus,
    KubeObjectProblem,
    Pod,
    PodGroup,
    PodGroupReason,
)

__all__ = ["CONFLICT_RETRIES", "Sender"]

logger = logging.getLogger(__name__)

CONFLICT_RETRIES = 5
KOORD_RUNTIME = KOORD + "runtime"
MANAGED_BY = "app.kubernetes.io/managed-by"
RETRY_BASE_SECONDS, RETRY_MAX_SECONDS = 2, 60
Cache = Mapping[str, list[dict[str, Any]]]  # "group/plural" -> objects


def cache_key(group: str, plural: str) -> str:
    return f"{group}/{plural}"


class Sender:
    """Sends one cluster's decisions (see the module docstring); ``caches`` are the informers' objects."""

    def __init__(
        self,
        api: k8s.ApiClient,
        cluster: Cluster,
        caches: Cache,
        now: datetime,
        *,
        missing: frozenset[str] = frozenset(),
    ) -> None:
        self.core, self.custom, self.batch = k8s.CoreV1Api(api), k8s.CustomObjectsApi(api), k8s.BatchV1Api(api)
        self.cluster, self.caches, self.now = cluster, caches, now
        self.missing = missing  # the cache keys of the kinds whose CRD is not installed: nothing is written there
        self.counts: dict[str, int] = {}
        self.problems: list[str] = []  # this pass's refusals, as sentences (also logged)
        self._values: Any = None

    def values(self) -> Any:
        """The tree values now (``engine.values.compute_values`` on the cluster's mirror, as the pages compute
        them): what each queue has allocated and each quota group uses and may use (runtime), after the last
        session's bindings and evictions."""
        if self._values is None:
            from engine.values import compute_values
            from scheduling.feed.mirror import mirror_of

            self._values = compute_values(mirror_of(self.cluster.pk).read(self.cluster)[0])
        return self._values

    def send_all(self) -> dict[str, int]:
        for step in (self.enforce_max_exec_time, self.send_bindings, self.write_kueue_jobs, self.send_evictions,
                     self.send_deletions,
                     self.write_podgroup_status,
                     self.write_queue_status, self.write_elastic_quotas, self.write_trees,
                     self.send_problem_events):  # fmt: skip
            try:
                step()
            except k8s.ApiException as exc:  # one failed kind does not stop the others; the next pass retries
                self._problem(exc, step.__name__.replace("_", " "))
        return self.counts

    def _problem(self, exc: BaseException, doing: str) -> None:
        sentence = f"cluster {self.cluster.name}: " + refusal(exc, doing)
        self.problems.append(sentence)
        logger.log(logging.ERROR if getattr(exc, "status", None) == 403 else logging.WARNING, "%s", sentence)

    def _count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    def objects(self, group: str, plural: str) -> dict[tuple[str, str], dict[str, Any]]:
        out = {}
        for obj in self.caches.get(cache_key(group, plural), []):
            meta = obj.get("metadata") or {}
            out[(meta.get("namespace") or "", meta.get("name") or "")] = obj
        return out

    # -- pods -----------------------------------------------------------------------------------------------

    def send_bindings(self) -> None:
        """The pods Bound here and not there, ``CONCURRENT_CALLS`` bindings in flight at once (each on a kept-alive
        connection of the client's pool): a session binds thousands of pods at once, and one call at a time would
        wait for each round trip in turn."""
        pods = self.objects("", "pods")
        rows = Pod.objects.filter(cluster=self.cluster, status=PodStatus.BOUND, node__isnull=False)
        todo = []
        for ns, name, node in rows.values_list("namespace__name", "name", "node__name"):
            obj = pods.get((ns, name))
            if (
                obj is None
                or (obj.get("spec") or {}).get("nodeName")
                or (obj.get("metadata") or {}).get("deletionTimestamp")
            ):
                continue
            todo.append((ns, name, node))
        for (ns, name, node), exc in zip(todo, _at_once(self._bind, todo), strict=True):
            if exc is None:
                self._count("bound")
                continue
            status, message, _ = error_status(exc)
            if status == 409:  # bound already: the watch brings where
                logger.info("binding %s/%s to %s: %s %s", ns, name, node, status, message)
            else:
                self._problem(exc, f"binding pod {ns}/{name} to {node}")

    def _bind(self, pod: tuple[str, str, str]) -> k8s.ApiException | None:
        """``POST pods/{name}/binding`` (HTTP only: it runs in the senders' threads); the refusal, if any."""
        ns, name, node = pod
        body = k8s.V1Binding(
            metadata=k8s.V1ObjectMeta(name=name, namespace=ns),
            target=k8s.V1ObjectReference(api_version="v1", kind="Node", name=node),
        )
        try:  # the server answers a Status, not the Binding the generated method expects: read it raw
            _drain(self.core.create_namespaced_pod_binding(name, ns, body, _preload_content=False))
        except k8s.ApiException as exc:
            return exc
        return None

    def enforce_max_exec_time(self) -> None:
        """Kueue's maximum execution time (``scheduling.max_exec``): a job labelled with one that has been admitted
        that long is suspended (its pods evicted below, in this pass; a Kueue Job the adapter resumed is suspended
        again by ``write_kueue_jobs``), as Kueue deactivates it."""
        for done in max_exec.enforce(self.cluster.pk, self.now):
            self._count("max_exec_suspended")
            logger.info("cluster %s: %s", self.cluster.name, done.message)

    def write_kueue_jobs(self) -> None:
        """Kueue's Jobs as Kueue's controller keeps them, each with one merge patch (``_job_patch``):

        * a suspended Job (``spec.suspend: true``) a session admitted (its podgroup Inqueue or Running) is resumed:
          ``spec.suspend: false`` and the annotation ``fairway.io/resumed`` (the time), with its parallelism lowered in
          the same patch when it was admitted in part (no pod of it exists yet, so none can be lost) and its flavors'
          node labels and tolerations written into its pod template (``_placement_patch``, as Kueue writes them);
        * a Job so resumed whose podgroup waits again (evicted, or given back for not being placed in time) is
          suspended again and the annotation removed, its parallelism given back, as Kueue suspends an evicted Job
          (the Job controller deletes its pods);
        * partial admission of a Job that runs unsuspended: a Job a session admitted with k of its N pods
          (``PodGroup.kueue_admitted_count``) gets ``spec.parallelism: k`` and the annotation
          ``fairway.io/original-parallelism: N`` once the cache shows k of its pods bound (the Job controller then
          deletes the pods beyond k that no node holds); a Job that no longer has a count (it waits again: evicted)
          gets N back and the annotation removed, as Kueue restores a Job's parallelism.

        Kueue's JobSets, Kubeflow's training jobs and MPIJobs are resumed and suspended again the same way
        (``write_kueue_workloads``)."""
        jobs = self.objects("batch", "jobs")
        todo, workloads = [], []
        rows = PodGroup.objects.filter(cluster=self.cluster, kueue_job__isnull=False)
        specs: dict[str, tuple[dict[str, str], list[dict[str, Any]]]] | None = None
        for ns, name, phase, count, flavors, pod_set_flavors, stored in rows.values_list(
            "namespace__name", "name", "phase", "kueue_admitted_count", "flavors", "pod_set_flavors", "kueue_job"
        ):
            if flavors and specs is None:  # the ResourceFlavors, read once a pass when a job has flavors
                specs = {f.name: (f.node_labels or {}, f.tolerations or []) for f in ResourceFlavor.objects.all()}
            kind = stored.get("kind") if isinstance(stored, Mapping) else None
            if kind is not None:  # a workload of several pod sets (``engine.manifests.kueuepodsets``)
                placements = _pod_set_placements(stored, flavors, pod_set_flavors, specs or {})
                workloads.append(Workload(str(kind), ns, name, phase, placements))
                continue
            obj = jobs.get((ns, name))
            if obj is None:
                continue
            placement = _flavor_placement(flavors, specs or {})
            if (change := _job_patch(obj, phase, count, self.now, placement)) is not None:
                todo.append((ns, name, obj, *change))
        bound = _bound_by_controller(self.caches.get(cache_key("", "pods"), [])) if todo else Counter()
        for ns, name, obj, what, patch, needs_bound in todo:
            if needs_bound and bound[((obj.get("metadata") or {}).get("uid"), ns)] < needs_bound:
                continue  # its pods' bindings not seen yet: the controller could delete one of them
            self._patch(
                partial(self.batch.patch_namespaced_job, name, ns, patch, **_MERGE_PATCH), what, f"Job {ns}/{name}"
            )
        self.write_kueue_workloads(workloads)

    def _patch(self, send: Callable[[], Any], what: str, target: str) -> None:
        """Send one merge patch of a Kueue workload (``send``, a raw answer) and count it as ``what``; a 404 (deleted
        meanwhile: the watch brings it, and the mirror removes its job) is nothing, another refusal a problem naming
        ``target``, tried again on the next pass."""
        try:
            _drain(send())
        except k8s.ApiException as exc:
            if exc.status != 404:
                self._problem(exc, f"{_JOB_WORDS[what]} {target}")
            return
        self._count(what)

    def write_kueue_workloads(self, workloads: list[Workload]) -> None:
        """Kueue's JobSets, Kubeflow's training jobs and MPIJobs (``workloads``), as Kueue's controller keeps them, each
        with one merge patch (``_suspension_patch``): a suspended one (a JobSet's ``spec.suspend``, the others'
        ``spec.runPolicy.suspend``) a session admitted is resumed, with the annotation ``fairway.io/resumed`` (the
        time: its pods are awaited a while after) and, when its pod sets were given flavors, each pod set's flavors'
        node labels and tolerations written into its pod template (``_pod_set_template_patch``, as Kueue writes
        them); one so resumed whose podgroup waits again is suspended again and the annotation removed (its
        controller deletes its pods)."""
        kinds = {k.kind: k for k in KIND_BY_PATH.values() if k.integration}
        objects: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}  # each kind's, read once a pass
        for kind_name, ns, name, phase, placements in workloads:
            kind = kinds.get(kind_name)
            if kind is None:
                continue
            if kind_name not in objects:
                objects[kind_name] = self.objects(kind.group, kind.plural)
            obj = objects[kind_name].get((ns, name))
            if obj is None or (change := _suspension_patch(obj, kind_name, phase, self.now)) is None:
                continue
            what, patch = change
            annotations = (obj.get("metadata") or {}).get("annotations") or {}
            if what == "job_resumed" and (placements or ORIGINAL_PLACEMENT in annotations):
                templates, own = _pod_set_template_patch(obj, kind_name, placements)
                if templates:
                    patch["spec"] = _merged(patch["spec"], templates)
                    patch["metadata"]["annotations"][ORIGINAL_PLACEMENT] = own
                    # (a list replaced whole: the object as read, or the server refuses it)
                    patch["metadata"]["resourceVersion"] = (obj.get("metadata") or {}).get("resourceVersion")
            send = partial(self.custom.patch_namespaced_custom_object, kind.group, kind.version, ns, kind.plural, name)
            self._patch(partial(send, patch, **_MERGE_PATCH), what, f"{kind.kind} {ns}/{name}")

    def send_evictions(self) -> None:
        pods = self.objects("", "pods")
        rows = Pod.objects.filter(cluster=self.cluster, status=PodStatus.RELEASING).select_related("namespace")
        for pod in rows:
            obj = pods.get((pod.namespace.name, pod.name))
            if obj is None or (obj.get("metadata") or {}).get("deletionTimestamp"):
                continue  # gone (the mirror confirms it) or being deleted already
            eviction = Eviction.objects.filter(pod=pod).order_by("-created", "-id").first()
            if eviction is not None and eviction.api_retry_at is not None and eviction.api_retry_at > self.now:
                continue
            self._evict(pod, eviction)

    def _evict(self, pod: Pod, eviction: Eviction | None) -> None:
        ns, name = pod.namespace.name, pod.name
        body = k8s.V1Eviction(metadata=k8s.V1ObjectMeta(name=name, namespace=ns))
        attempts = (eviction.api_attempts if eviction else 0) + 1
        update: dict[str, Any] = {"api_attempts": attempts}
        try:
            _drain(self.core.create_namespaced_pod_eviction(name, ns, body, _preload_content=False))
            update.update(api_status=EvictionApiStatus.DONE, api_retry_at=None)
            self._count("evicted")
        except k8s.ApiException as exc:
            status, message, details = error_status(exc)
            if status == 404:
                confirm_gone(pod, self.now)
                update.update(api_status=EvictionApiStatus.DONE, api_retry_at=None)
            else:
                causes = [c.get("message", "") for c in (details or {}).get("causes") or [] if isinstance(c, dict)]
                delay = min(RETRY_MAX_SECONDS, RETRY_BASE_SECONDS * 2 ** (attempts - 1))
                update.update(
                    api_status=EvictionApiStatus.REFUSED,
                    api_refusal=" ".join([f"{status}:", message, *causes])[:2000],
                    api_retry_at=self.now + timedelta(seconds=delay),
                )
                self._count("eviction_refused")
                logger.info("eviction of %s/%s refused (%s): %s", ns, name, status, message)
        if eviction is not None:
            Eviction.objects.filter(pk=eviction.pk).update(**update)

    def send_deletions(self) -> None:
        """The jobs a person asked to delete (``scheduling.job_actions.delete``: ``PodGroup.deletion_requested_at``):
        their pods, then their PodGroup, are deleted from the API server (a 404 is gone already); the mirror then sees
        them gone and records the job as removed, cause ``deleted``. A PodGroup that a controller owns (a Volcano
        Job, ...) is not deleted, since its controller would make it again: the request is dropped and the job's
        reason history says to delete its owner instead."""
        kind = KIND_BY_PATH[("scheduling.volcano.sh", "podgroups")]
        objects = self.objects(kind.group, kind.plural)
        asked = PodGroup.objects.filter(cluster=self.cluster, deletion_requested_at__isnull=False).select_related(
            "namespace"
        )
        for pg in asked:
            ns = pg.namespace.name
            obj = objects.get((ns, pg.name))
            if obj is None:
                continue  # gone already: the mirror removes the row
            owner = next(
                (r for r in (obj.get("metadata") or {}).get("ownerReferences") or [] if r.get("controller")), None
            )
            if owner is not None:
                self._refuse_deletion(pg, owner)
                continue
            for pod in Pod.objects.filter(podgroup=pg).values_list("name", flat=True):
                try:
                    _drain(self.core.delete_namespaced_pod(pod, ns, _preload_content=False))
                except k8s.ApiException as exc:
                    if exc.status != 404:
                        raise
            try:
                self.custom.delete_namespaced_custom_object(kind.group, kind.version, ns, kind.plural, pg.name)
            except k8s.ApiException as exc:
                if exc.status != 404:
                    raise
            self._count("jobs_deleted")

    def _refuse_deletion(self, pg: PodGroup, owner: Mapping[str, Any]) -> None:
        """An owner that came after the request (the API refuses a known one, ``job_actions.delete``)."""
        from scheduling.job_actions import owned_refusal

        what = f"{owner.get('kind', '?')} {owner.get('name', '?')} ({owner.get('apiVersion', '?')})"
        message = owned_refusal(pg, what)
        with transaction.atomic():
            PodGroup.objects.filter(pk=pg.pk).update(
                deletion_requested_at=None, deletion_requested_by=None, reason="DeleteRefused", message=message
            )
            PodGroupReason.objects.create(
                podgroup=pg, time=self.now, phase=pg.phase, reason="DeleteRefused", message=message,
                blocker={"kind": "policy", "name": f"{pg.namespace.name}/{pg.name}", "resource": None,
                         "requested": None, "available": None, "limit": "owner"},
            )  # fmt: skip
        self.problems.append(f"cluster {self.cluster.name}: {message}")
        self._count("deletions_refused")

    # -- statuses -------------------------------------------------------------------------------------------

    def write_status(self, kind: Kind, obj: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
        """Merge ``desired`` into the object's status when it differs; a 409 is retried on a fresh read."""
        meta = obj.get("metadata") or {}
        ns, name = meta.get("namespace") or "", meta["name"]
        current: dict[str, Any] = copy.deepcopy(dict(obj))
        for _ in range(CONFLICT_RETRIES):
            status = dict(current.get("status") or {})
            if all(status.get(k) == v for k, v in desired.items()):
                return False
            current["status"] = {**status, **desired}
            try:
                self._replace_status(kind, ns, name, current)
                return True
            except k8s.ApiException as exc:
                if exc.status != 409:
                    raise
                logger.info("%s %s: conflict on status, reading it again", kind.kind, name)
                current = self._read(kind, ns, name)
        raise k8s.ApiException(status=409, reason=f"{kind.kind} {name}: still conflicting after retries")

    def _read(self, kind: Kind, ns: str, name: str) -> dict[str, Any]:
        if ns:
            got = self.custom.get_namespaced_custom_object(kind.group, kind.version, ns, kind.plural, name)
        else:
            got = self.custom.get_cluster_custom_object(kind.group, kind.version, kind.plural, name)
        return dict(got)

    def _replace_status(self, kind: Kind, ns: str, name: str, body: dict[str, Any]) -> None:
        """``PUT …/status`` where the kind's CRD serves that subresource, else ``PUT`` of the whole object (with
        the spec as read: only the status differs)."""
        args = (kind.group, kind.version, ns, kind.plural, name, body) if ns else (
            kind.group, kind.version, kind.plural, name, body)  # fmt: skip
        if kind.status_subresource:
            write = (self.custom.replace_namespaced_custom_object_status if ns
                     else self.custom.replace_cluster_custom_object_status)  # fmt: skip
        else:
            write = self.custom.replace_namespaced_custom_object if ns else self.custom.replace_cluster_custom_object
        write(*args)

    def write_podgroup_status(self) -> None:
        kind = KIND_BY_PATH[("scheduling.volcano.sh", "podgroups")]
        objects = self.objects(kind.group, kind.plural)
        counts = _pod_counts(self.cluster)
        todo = []
        for pg in PodGroup.objects.filter(cluster=self.cluster).select_related("namespace"):
            obj = objects.get((pg.namespace.name, pg.name))
            if obj is None:
                continue
            running, succeeded, failed = counts.get(pg.pk, (0, 0, 0))
            desired = {"phase": pg.phase, "conditions": pg.conditions or [], "running": running,
                       "succeeded": succeeded, "failed": failed}  # fmt: skip
            status = obj.get("status") or {}
            if any(status.get(k) != v for k, v in desired.items()):
                todo.append((obj, desired))
        # a session that admits a thousand gangs changes a thousand statuses: written CONCURRENT_CALLS at a time
        for written in _at_once(lambda job: self.write_status(kind, *job), todo):
            if written:
                self._count("podgroup_status")

    def write_queue_status(self) -> None:
        kind = KIND_BY_PATH[("scheduling.volcano.sh", "queues")]
        objects = self.objects(kind.group, kind.plural)
        phases = _queue_phases(self.cluster)
        for queue in Queue.objects.filter(name__in=[n for _, n in objects]):
            counts = phases.get(queue.pk, {})
            book = self.values().queues
            used = book[queue.name].allocated if queue.name in book else {}
            desired: dict[str, Any] = {"state": queue.state, "allocated": _quantities(used)}
            for phase in ("pending", "inqueue", "running", "completed", "unknown"):
                desired[phase] = counts.get(phase, 0)
            if self.write_status(kind, objects[("", queue.name)], desired):
                self._count("queue_status")

    def write_elastic_quotas(self) -> None:
        koord = KIND_BY_PATH[("scheduling.sigs.k8s.io", "elasticquotas")]
        for (ns, name), obj in self.objects(koord.group, koord.plural).items():
            group = self._group(_FROM_KOORD.get(name, name))
            if group is None:
                continue
            obj = self._runtime_annotation(koord, ns, name, obj, group.runtime)
            if self.write_status(koord, obj, {"used": _quantities(group.used)}):
                self._count("elastic_quota_status")
        plugins = KIND_BY_PATH[("scheduling.x-k8s.io", "elasticquotas")]
        homes = dict(Namespace.objects.filter(quota_group__isnull=False).values_list("name", "quota_group__name"))
        for (ns, _), obj in self.objects(plugins.group, plugins.plural).items():
            group = self._group(homes.get(ns, ns))  # the namespace's quota group (read from it: the namespace)
            if group is not None and self.write_status(plugins, obj, {"used": _quantities(group.used)}):
                self._count("elastic_quota_status")

    def _group(self, name: str) -> Any:
        return self.values().quotas.get(name)

    def _runtime_annotation(
        self, kind: Kind, ns: str, name: str, obj: Mapping[str, Any], runtime: Any
    ) -> Mapping[str, Any]:
        """Koordinator's runtime annotation (JSON quantities; an unlimited amount left out); returns the object as
        the patch left it, whose resourceVersion the status write must carry."""
        text = json.dumps(_quantities(runtime), sort_keys=True)
        if ((obj.get("metadata") or {}).get("annotations") or {}).get(KOORD_RUNTIME) == text:
            return obj
        patch = {"metadata": {"annotations": {KOORD_RUNTIME: text}}}
        patched = self.custom.patch_namespaced_custom_object(
            kind.group, kind.version, ns, kind.plural, name, patch, _content_type="application/merge-patch+json"
        )
        self._count("elastic_quota_runtime")
        return patched if isinstance(patched, Mapping) else obj

    # -- trees and events -----------------------------------------------------------------------------------

    def write_trees(self) -> None:
        """``tree_source=fairway``: the trees as Volcano Queues and Koordinator ElasticQuotas."""
        if self.cluster.owns_trees:
            return
        from scheduling.store import read_cluster

        snapshot = read_cluster(self.cluster)[0]
        for fmt, kind_path in (("volcano", ("scheduling.volcano.sh", "queues")),
                               ("koordinator", ("scheduling.sigs.k8s.io", "elasticquotas"))):  # fmt: skip
            kind = KIND_BY_PATH[kind_path]
            if cache_key(*kind_path) in self.missing:
                continue  # the informer said which CRD is missing
            wanted = [d for d in export_trees(snapshot, fmt) if d["kind"] == kind.kind]
            self._apply_desired(kind, wanted)

    def _apply_desired(self, kind: Kind, wanted: list[dict[str, Any]]) -> None:
        have = self.objects(kind.group, kind.plural)
        keep = set()
        for doc in wanted:
            meta = doc["metadata"]
            key = (meta.get("namespace") or "", meta["name"])
            keep.add(key)
            meta.setdefault("labels", {})[MANAGED_BY] = "fairway"
            doc.pop("status", None)
            current = have.get(key)
            if current is None:
                self._create(kind, key[0], doc)
            elif _differs(current, doc):
                self._replace(kind, key, current, doc)
        for key, obj in have.items():
            labels = (obj.get("metadata") or {}).get("labels") or {}
            if key not in keep and labels.get(MANAGED_BY) == "fairway":
                self._delete(kind, key)

    def _create(self, kind: Kind, ns: str, doc: dict[str, Any]) -> None:
        if ns:
            self.custom.create_namespaced_custom_object(kind.group, kind.version, ns, kind.plural, doc)
        else:
            self.custom.create_cluster_custom_object(kind.group, kind.version, kind.plural, doc)
        self._count("tree_written")

    def _replace(self, kind: Kind, key: tuple[str, str], current: Mapping[str, Any], doc: dict[str, Any]) -> None:
        for _ in range(CONFLICT_RETRIES):
            body = {**doc, "metadata": {**doc["metadata"], "resourceVersion": current["metadata"]["resourceVersion"]}}
            try:
                if key[0]:
                    self.custom.replace_namespaced_custom_object(kind.group, kind.version, key[0], kind.plural,
                                                                 key[1], body)  # fmt: skip
                else:
                    self.custom.replace_cluster_custom_object(kind.group, kind.version, kind.plural, key[1], body)
                self._count("tree_written")
                return
            except k8s.ApiException as exc:
                if exc.status != 409:
                    raise
                current = self._read(kind, *key)

    def _delete(self, kind: Kind, key: tuple[str, str]) -> None:
        if key[0]:
            self.custom.delete_namespaced_custom_object(kind.group, kind.version, key[0], kind.plural, key[1])
        else:
            self.custom.delete_cluster_custom_object(kind.group, kind.version, kind.plural, key[1])
        self._count("tree_deleted")

    def send_problem_events(self) -> None:
        for problem in KubeObjectProblem.objects.filter(cluster=self.cluster, event_sent=False):
            ref = self._involved(problem)
            event = k8s.CoreV1Event(
                metadata=k8s.V1ObjectMeta(generate_name=f"{problem.name}.", namespace=ref.namespace or "default"),
                involved_object=ref, reason=problem.reason, message=problem.message[:1024], type="Warning",
                source=k8s.V1EventSource(component="fairway-adapter"), first_timestamp=self.now,
                last_timestamp=self.now, count=1,
            )  # fmt: skip
            self.core.create_namespaced_event(ref.namespace or "default", event)
            KubeObjectProblem.objects.filter(pk=problem.pk, message=problem.message).update(event_sent=True)
            self._count("events")

    def _involved(self, problem: KubeObjectProblem) -> k8s.V1ObjectReference:
        for (group, plural), kind in KIND_BY_PATH.items():
            if kind.kind != problem.kind:
                continue
            name = _TO_KOORD.get(problem.name, problem.name) if problem.kind == "ElasticQuota" else problem.name
            for (ns, n), obj in self.objects(group, plural).items():
                if n == name and (ns == problem.namespace or not problem.namespace):
                    meta = obj.get("metadata") or {}
                    return k8s.V1ObjectReference(api_version=kind.api_version, kind=kind.kind, name=n,
                                                 namespace=ns or None, uid=meta.get("uid"),
                                                 resource_version=meta.get("resourceVersion"))  # fmt: skip
        return k8s.V1ObjectReference(kind=problem.kind, name=problem.name, namespace=problem.namespace or None)


def _at_once(call: Callable[[Any], Any], jobs: list[Any]) -> list[Any]:
    """``call(job)`` for every job, ``CONCURRENT_CALLS`` at a time, each on a kept-alive connection of the client's
    pool; the results in the jobs' order (the first exception raised, once every call has ended). The calls are HTTP
    only: the database is read before and written after, in the adapter's thread."""
    if len(jobs) <= 1:
        return [call(job) for job in jobs]
    with ThreadPoolExecutor(min(CONCURRENT_CALLS, len(jobs)), thread_name_prefix="kube-send") as pool:
        return list(pool.map(call, jobs))


# a Kueue workload's patch: a JSON merge patch, its answer read raw (``_drain``)
_MERGE_PATCH: dict[str, Any] = {"_content_type": "application/merge-patch+json", "_preload_content": False}
# what each of ``_job_patch``'s patches does, for the counts and a refusal's words
_JOB_WORDS = {
    "job_resumed": "resuming",
    "job_suspended": "suspending",
    "job_parallelism": "setting the parallelism of",
}
_ADMITTED = frozenset({PodGroupPhase.INQUEUE, PodGroupPhase.RUNNING})


Placement = tuple[dict[str, str], list[dict[str, Any]]]  # a Job's flavors' node labels and tolerations


def _flavor_placement(flavors: Any, specs: Mapping[str, Placement]) -> Placement | None:
    """The node labels and tolerations of a job's flavors (``PodGroup.flavors``: resource -> flavor), as Kueue
    writes them into a Job's template when it admits it; None when it has no flavor with either."""
    if not isinstance(flavors, Mapping):
        return None
    labels: dict[str, str] = {}
    tolerations: list[dict[str, Any]] = []
    for name in sorted(set(flavors.values())):
        node_labels, flavor_tolerations = specs.get(name, ({}, []))
        labels.update(node_labels)
        tolerations.extend(t for t in flavor_tolerations if t not in tolerations)
    return (labels, tolerations) if labels or tolerations else None


def _placement_patch(obj: Mapping[str, Any], flavor: Placement) -> tuple[dict[str, Any], str]:
    """A resume's change to a Job's pod template for its flavors (``flavor``): the template's own node selector
    with the flavors' node labels, its own tolerations with theirs; and the template's own placement, for
    ``fairway.io/original-placement`` (taken from that annotation when an earlier resume wrote it: the template
    then holds an earlier flavor's)."""
    template = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
    kept = _kept_placement(obj)
    own = _own_placement(template, kept if isinstance(kept, dict) and "nodeSelector" in kept else None)
    change = {"spec": _placed(template, own, flavor, removing=True)}
    return change, json.dumps(own, sort_keys=True, separators=(",", ":"))


def _kept_placement(obj: Mapping[str, Any]) -> Any:
    """What ``fairway.io/original-placement`` keeps on ``obj`` (None when absent or not JSON)."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    with contextlib.suppress(ValueError, TypeError):
        return json.loads(annotations.get(ORIGINAL_PLACEMENT) or "null")
    return None


def _own_placement(template: Mapping[str, Any], kept: Any) -> dict[str, Any]:
    """A pod template's own ``nodeSelector`` and ``tolerations``: those ``kept`` (an earlier resume's record) when it
    is a record, else the template's."""
    source = kept if isinstance(kept, dict) else template
    return {"nodeSelector": source.get("nodeSelector") or {}, "tolerations": source.get("tolerations") or []}


def _placed(
    template: Mapping[str, Any], own: Mapping[str, Any], flavor: Placement, *, removing: bool
) -> dict[str, Any]:
    """A pod template spec's ``nodeSelector`` and ``tolerations`` for a resume with ``flavor``: its own (``own``)
    with the flavors' node labels and tolerations; ``removing``: for a merge patch of the template itself, the
    template's node selector keys that are not its own are removed (null)."""
    labels, tolerations = flavor
    selector: dict[str, Any] = {key: None for key in template.get("nodeSelector") or {}} if removing else {}
    selector.update(own["nodeSelector"])
    selector.update(labels)
    given = [*own["tolerations"], *(t for t in tolerations if t not in own["tolerations"])]
    return {"nodeSelector": selector, "tolerations": given or None}


class Workload(NamedTuple):
    """A Kueue workload of several pod sets the adapter keeps as Kueue's controller does (``write_kueue_workloads``):
    its kind, namespace and name, its podgroup's phase, and its pod sets' flavors' node labels and tolerations (by pod
    set; those without any left out)."""

    kind: str
    namespace: str
    name: str
    phase: str
    placements: dict[str, Placement]


def _pod_set_placements(
    stored: Mapping[str, Any], flavors: Any, pod_set_flavors: Any, specs: Mapping[str, Placement]
) -> dict[str, Placement]:
    """Each pod set's flavors' node labels and tolerations (``_flavor_placement``), by pod set (``stored``: the row's
    ``kueue_job``, its ``podSets``): its own flavors (``PodGroup.pod_set_flavors``) when its pod sets were given
    different ones, else the workload's (``PodGroup.flavors``)."""
    names = stored.get("podSets") if isinstance(stored.get("podSets"), list) else []
    own = pod_set_flavors if isinstance(pod_set_flavors, Mapping) else {}
    out: dict[str, Placement] = {}
    for name in names:
        placement = _flavor_placement(own.get(name, flavors), specs)
        if placement is not None:
            out[str(name)] = placement
    return out


def _pod_set_template_patch(
    obj: Mapping[str, Any], kind: str, placements: Mapping[str, Placement]
) -> tuple[dict[str, Any], str]:
    """A resume's change to a workload's pod set templates for their flavors (``placements``, by pod set): each
    template's own node selector and tolerations (``_own_placement``, from ``fairway.io/original-placement`` when an
    earlier resume wrote it) with its flavors' node labels and tolerations, as Kueue's ``RunWithPodSetsInfo`` writes
    them; and the templates' own placements by pod set, for that annotation. A JobSet's ``replicatedJobs`` is a list,
    which a merge patch replaces whole: every replicated job is sent as read, its template changed. ({}, '') when the
    object has no pod set to change."""
    spec = obj.get("spec") or {}
    kept = _kept_placement(obj)
    kept = kept if isinstance(kept, dict) else {}
    own_by_set: dict[str, dict[str, Any]] = {}

    def changed(name: str, template: Mapping[str, Any], removing: bool) -> dict[str, Any]:
        own = own_by_set[name] = _own_placement(template, kept.get(name))
        return _placed(template, own, placements.get(name, ({}, [])), removing=removing)

    if kind == "JobSet":
        replicated = copy.deepcopy(spec.get("replicatedJobs") or [])
        for job in replicated:
            pod = (((job.get("template") or {}).get("spec") or {}).get("template") or {}).setdefault("spec", {})
            pod.update({k: v for k, v in changed(str(job.get("name")), pod, False).items() if v is not None})
            if not pod.get("tolerations"):
                pod.pop("tolerations", None)
        out: dict[str, Any] = {"replicatedJobs": replicated} if replicated else {}
    else:
        field = KUBEFLOW_KINDS[kind][0]
        out = {}
        for key, replica in (spec.get(field) or {}).items():
            template = ((replica or {}).get("template") or {}).get("spec") or {}
            out.setdefault(field, {})[key] = {"template": {"spec": changed(str(key).lower(), template, True)}}
    return out, json.dumps(own_by_set, sort_keys=True, separators=(",", ":"))


def _merged(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``extra`` merged in, map by map (a JSON merge patch of both)."""
    out = dict(base)
    for key, value in extra.items():
        out[key] = _merged(out[key], value) if isinstance(out.get(key), dict) and isinstance(value, Mapping) else value
    return out


def _job_patch(
    obj: Mapping[str, Any], phase: str, count: int | None, now: datetime, flavor: Placement | None = None
) -> tuple[str, dict[str, Any], int] | None:
    """What a Kueue Job ``obj`` whose podgroup is in ``phase``, admitted with ``count`` pods (None: whole, or not
    admitted), needs from the adapter (``Sender.write_kueue_jobs``) at ``now``: (what, the merge patch, the pods of
    it that must be seen bound first), or None when nothing. A resume writes ``now`` in ``fairway.io/resumed``: the
    sessions await the Job's pods for a while after it (``scheduling.store.read.with_pod_group_waits``); and, for a
    Job given flavors (``flavor``: their node labels and tolerations), writes them into its pod template as Kueue
    does (``_placement_patch``; the template's own placement kept in ``fairway.io/original-placement``)."""
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    annotations = meta.get("annotations") or {}
    original = annotations.get(ORIGINAL_PARALLELISM)
    given_back = original is not None and original.strip().isdigit()
    parallelism = spec.get("parallelism", 1)
    change = _suspension_patch(obj, "Job", phase, now)
    if change is not None and change[0] == "job_resumed":
        patch = change[1]
        if count is not None and count != parallelism:
            patch["metadata"]["annotations"][ORIGINAL_PARALLELISM] = original or str(parallelism)
            patch["spec"]["parallelism"] = count
        if flavor is not None or ORIGINAL_PLACEMENT in annotations:  # (no flavor now: the template's own again)
            patch["spec"]["template"], patch["metadata"]["annotations"][ORIGINAL_PLACEMENT] = _placement_patch(
                obj, flavor or ({}, [])
            )
        return "job_resumed", patch, 0
    if change is not None:
        patch = change[1]
        if given_back:
            patch["metadata"]["annotations"][ORIGINAL_PARALLELISM] = None
            patch["spec"]["parallelism"] = int(original)
        return "job_suspended", patch, 0
    if count is not None and count != parallelism:
        patch = {"metadata": {"annotations": {ORIGINAL_PARALLELISM: original or str(parallelism)}},
                 "spec": {"parallelism": count}}  # fmt: skip
        return "job_parallelism", patch, count
    if count is None and given_back:
        patch = {"metadata": {"annotations": {ORIGINAL_PARALLELISM: None}}, "spec": {"parallelism": int(original)}}
        return "job_parallelism", patch, 0
    return None


def _suspension_patch(obj: Mapping[str, Any], kind: str, phase: str, now: datetime) -> tuple[str, Any] | None:
    """How a Kueue workload ``obj`` of ``kind`` whose podgroup is in ``phase`` is resumed or suspended again at
    ``now``, as Kueue's controller does: (``job_resumed`` or ``job_suspended``, the merge patch), or None. Suspended
    and admitted, it is resumed with ``fairway.io/resumed`` (the time: the sessions await its pods a while after,
    ``scheduling.store.read.with_pod_group_waits``); resumed by the adapter and waiting again, it is suspended again
    and the annotation removed. Its suspend field is ``spec.suspend`` (a Job, a JobSet) or ``spec.runPolicy.suspend``
    (Kubeflow's jobs, an MPIJob)."""
    spec = obj.get("spec") or {}
    run_policy = kind not in ("Job", "JobSet")
    where = (spec.get("runPolicy") or {}) if run_policy else spec
    annotations = (obj.get("metadata") or {}).get("annotations") or {}

    def suspend(value: bool) -> dict[str, Any]:
        return {"runPolicy": {"suspend": value}} if run_policy else {"suspend": value}

    if where.get("suspend") is True and phase in _ADMITTED:
        stamp = now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return "job_resumed", {"metadata": {"annotations": {RESUMED: stamp}}, "spec": suspend(False)}
    if where.get("suspend") is not True and annotations.get(RESUMED) and phase == PodGroupPhase.PENDING:
        return "job_suspended", {"metadata": {"annotations": {RESUMED: None}}, "spec": suspend(True)}
    return None


def _bound_by_controller(pods: list[dict[str, Any]]) -> Counter[tuple[Any, Any]]:
    """The pods with a node, by (their controller's uid, their namespace)."""
    return Counter(
        (ref.get("uid"), (obj.get("metadata") or {}).get("namespace"))
        for obj in pods
        if (obj.get("spec") or {}).get("nodeName") and (ref := controller_ref(obj.get("metadata") or {})) is not None
    )


def _drain(response: Any) -> None:
    """Read a raw answer (``_preload_content=False``) to its end, which hands its connection back to the client's
    pool: left unread, the connection is lost and the next call opens (and TLS-handshakes) a new one."""
    response.data  # noqa: B018 (reading the property reads the body)
    response.release_conn()


def _differs(current: Mapping[str, Any], doc: Mapping[str, Any]) -> bool:
    meta, want = current.get("metadata") or {}, doc["metadata"]
    if current.get("spec") != doc.get("spec"):
        return True
    for part in ("labels", "annotations"):
        have = meta.get(part) or {}
        if any(have.get(k) != v for k, v in (want.get(part) or {}).items()):
            return True
    return False


def _quantities(amounts: Any) -> dict[str, str]:
    """Kubernetes quantities of a resource list; an unlimited amount (a built-in group's runtime) is left out."""
    kept = {str(k): int(v) for k, v in dict(amounts or {}).items() if not is_unlimited(int(v))}
    return ResourceList(kept).to_quantities()


def _pod_counts(cluster: Cluster) -> dict[int, tuple[int, int, int]]:
    running = (PodStatus.BOUND, PodStatus.RUNNING)
    rows = (
        Pod.objects.filter(cluster=cluster, podgroup__isnull=False)
        .values("podgroup_id")
        .annotate(
            r=Count("id", filter=Q(status__in=running)),
            s=Count("id", filter=Q(status=PodStatus.SUCCEEDED)),
            f=Count("id", filter=Q(status=PodStatus.FAILED)),
        )
        .order_by()
    )
    return {row["podgroup_id"]: (row["r"], row["s"], row["f"]) for row in rows}


def _queue_phases(cluster: Cluster) -> dict[int, dict[str, int]]:
    out: dict[int, dict[str, int]] = {}
    rows = PodGroup.objects.filter(cluster=cluster).values_list("queue_id", "phase").annotate(n=Count("id")).order_by()
    for queue_id, phase, n in rows:
        out.setdefault(queue_id, {})[phase.lower()] = n
    return out
