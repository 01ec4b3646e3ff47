"""Kubernetes manifests -> engine ``Snapshot`` (for ``fairway simulate`` and the what-if API).

One module per source: ``core`` (PriorityClass, Namespace, ResourceQuota, Pod, Node), ``volcano`` (Queue,
PodGroup, vcjob), ``koordinator`` (ElasticQuota tree, the plugin's arguments), ``scheduler_plugins`` (the flat
ElasticQuota), ``kueue`` (Cohort, ClusterQueue, LocalQueue, ResourceFlavor, labelled batch Jobs; ``kueuegroups``: Kueue's pod groups); ``common`` holds the errors, the result, documents and field readers, ``builder`` reads the kinds
in order (ConfigMaps: the Volcano scheduler configuration or a KubeSchedulerConfiguration), and ``yamlload`` reads
the YAML texts as PyYAML's safe loader does, in about 0.6 of its time.

``load_manifests`` reads YAML texts (multi-document, or ``kind: List`` as ``kubectl get -o yaml`` prints it)
and builds a ``Snapshot``; several sources merge in order, a later object of the same kind and name replacing
the earlier one, with a warning naming both. Exactly the fields listed in SIMULATE.md's "Input kinds" table are read:

==================================================  ==============================================================
kind                                                becomes
==================================================  ==============================================================
``v1 Node``                                         ``NodeInfo`` (``status.allocatable``, else ``status.capacity``)
``v1 Namespace``, ``v1 ResourceQuota``              ``NamespaceInfo`` (default queue, weight, hard limits)
``v1 Pod``                                          ``TaskInfo`` (+ a podgroup of its own when it names none)
``scheduling.volcano.sh Queue`` / ``PodGroup``      ``QueueSpec`` / ``PodGroupInfo``
``scheduling.k8s.io PriorityClass``                 ``PriorityClassInfo`` (resolves ``priorityClassName``)
``scheduling.sigs.k8s.io ElasticQuota``             Koordinator quota group (labels and annotations of §10)
``scheduling.x-k8s.io ElasticQuota``                scheduler-plugins quota: one per namespace, group = namespace
``v1 ConfigMap volcano-scheduler-configmap``        the scheduler ``Policy``
``batch.volcano.sh Job`` (vcjob)                    a PodGroup and its task pods, as Volcano's job controller does
``KubeSchedulerConfiguration`` (bare or in a        Koordinator ``ElasticQuotaArgs`` (the ``ElasticQuota`` plugin's
ConfigMap)                                          ``pluginConfig``)
``kueue.x-k8s.io`` Cohort, ClusterQueue,            queues (``kueue``: cohorts are inner queues, ClusterQueues
LocalQueue, ResourceFlavor; ``batch/v1 Job``        leaves); labelled pods and Jobs join their LocalQueue's
labelled ``kueue.x-k8s.io/queue-name``              ClusterQueue; a pod group (``pod-group-name``) is one
                                                    podgroup (``kueuegroups``)
``jobset.x-k8s.io`` JobSet; ``kubeflow.org``        one podgroup of the pod sets' pods, admitted whole, in the
PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob,   LocalQueue's ClusterQueue (``kueuepodsets``)
MPIJob, labelled with a LocalQueue
``kueue.x-k8s.io`` WorkloadPriorityClass;          a labelled Job's or pod's priority; the admission levers
``config.kueue.x-k8s.io`` Configuration (bare or    (``kueuelevers``, ``kueueconfig``: ``Snapshot.admission``,
in ``kueue-manager-config``)                        the ``enqueue`` configuration)
==================================================  ==============================================================

Anything else (Deployments, YuniKorn objects, Kueue's other kinds, CRDs, documents without a ``kind``) is skipped with a
warning naming the file, the document, the kind and the name. Computed values found on input (a queue's
``status.allocated``, Koordinator's ``runtime``/``request`` annotations, ``status.used``) are ignored, never
trusted. A document whose ``apiVersion`` is missing is read by its kind when the kind is one of the above (an
``ElasticQuota`` is then taken as Koordinator's), with a warning saying so.

``LoadResult.origins`` tells where each object came from (file, document, List item), so that a later check, such
as the tree rules ``fairway simulate`` runs, can name the document too.

Input that cannot be used raises ``ManifestError``, whose ``str()`` is one line naming the file, the 1-based
document index (and item index inside a List), the kind, the name and the field, e.g.
``snapshot.yaml: document 3 (Queue q1): spec.capability.cpu: '-1' must be greater than or equal to 0``.
Tree rules (a child's min above its parent's, cycles, ...) are not checked here: ``engine.rules`` does that
for every caller.

Decisions worth knowing, each following the peer named:

* Pod requests are Kubernetes' ``PodRequests``: the larger of the sum of containers (plus sidecar init
  containers) and each init container, plus ``spec.overhead``; a container limit without a request counts as
  the request (API-server defaulting).
* Pod status (Volcano ``getTaskStatus``): ``Succeeded``/``Failed``/``Unknown`` phases as such; a
  ``deletionTimestamp`` means Releasing; ``spec.nodeName`` set means Running, or Bound when ``status.phase`` is
  explicitly ``Pending``; otherwise Pending.
* A pod without ``scheduling.k8s.io/group-name`` gets ``podgroup-<pod name>`` (minMember 1, minResources = its
  request, priority class of the pod, phase from the pod), queued to the pod's ``scheduling.volcano.sh/queue-name``
  annotation, else its namespace's, else ``default`` (Volcano's podgroup controller and PodGroup webhook).
* A PodGroup manifest that names no queue takes its namespace's ``scheduling.volcano.sh/queue-name`` (Volcano's
  webhook); one that names ``default`` keeps it, since a manifest read back from a cluster is past the webhook.
* A vcjob is expanded as Volcano's job controller would once its PodGroup is admitted (pods ``<job>-<task>-<i>``,
  Pending; a PodGroup named like the job, minMember = ``minAvailable``, minTaskMember and minResources computed as
  the controller does, queue ``default`` replaced by the namespace's). A vcjob whose pods (``volcano.sh/job-name``)
  or PodGroup (owner reference) are already in the input is not expanded again.
* A pod's ``spec.schedulerName`` is not read: the snapshot is what Fairway's engine schedules.
* Namespace weight: the highest ``volcano.sh/namespace.weight`` over the namespace's ResourceQuotas; a value that
  is missing, not a whole number or below 1 reads as 1 (SIMULATE.md; Volcano rounded fractions up).
* Koordinator's ``koordinator-root-quota`` / ``-system-quota`` / ``-default-quota`` are our ``root`` / ``system`` /
  ``default``; a quota labelled ``is-root: "true"`` (a tree root of a multi-tree setup) has no parent; a missing
  ``tree-id`` is inherited from the parent, as Koordinator's mutating webhook does.
* Label values must be strings in Kubernetes; the documentation examples write ``is-parent: false`` unquoted, so a
  boolean or number is accepted as its text, with a warning.

Fairway-only annotations (prefix ``fairway.io/``) carry the two values no peer's manifest can express, so that
the tests' ``dump_snapshot`` (``tests/support/manifest_dump.py``) -> ``load_manifests`` gives back an equal snapshot: ``fairway.io/priority`` on a PodGroup whose
priority differs from its priority class, ``fairway.io/min-scale-exempt`` on an ElasticQuota. Session-internal
task statuses (Allocated, Binding, Pipelined) have no manifest form: they are written as Bound or Pending.
"""

from __future__ import annotations

from engine.manifests.builder import load_manifests, load_objects
from engine.manifests.common import InvalidObject, LoadResult, ManifestError

__all__ = ["InvalidObject", "LoadResult", "ManifestError", "load_manifests", "load_objects"]
