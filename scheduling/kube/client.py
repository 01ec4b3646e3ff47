"""The API client of a ``source=kubernetes`` cluster, and the kinds the adapter reads.

``api_client`` builds the official client's ``ApiClient`` from the cluster's kubeconfig text (``Cluster.kubeconfig``)
or, when that is blank, from the pod's service account (in-cluster config). ``KINDS`` lists every kind the adapter
lists and watches, with the path it uses; ``deploy/kubernetes/rbac.yaml`` grants exactly these plus the writes of
``mirror_out`` and ``leader`` (``tests/kube/test_rbac.py`` checks the manifest against the requests the adapter
sends).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from engine.manifests.common import KUEUE_QUEUE_LABEL

__all__ = ["CONCURRENT_CALLS", "KINDS", "Kind", "api_client", "error_status", "kueue_config_kind", "refusal"]


BUILT_IN_GROUPS = ("", "scheduling.k8s.io", "batch", "node.k8s.io")


@dataclass(frozen=True)
class Kind:
    """A kind the adapter mirrors: its API group, version, plural, kind and the objects it keeps."""

    kind: str
    group: str
    version: str
    plural: str
    namespaced: bool
    field_selector: str = ""  # ``{scheduler}`` is the cluster's scheduler name
    label_selector: str = ""  # e.g. a label's existence (``kueue.x-k8s.io/queue-name``): only those objects are read
    namespace: str = ""  # a namespaced kind read in this namespace only (its path is the namespace's collection)
    # whether the kind's CRD serves a ``status`` subresource: where it does, a write of the main resource ignores
    # ``status`` and ``…/status`` must be used; where it does not (Volcano's PodGroup and Koordinator's
    # ElasticQuota declare ``subresources: {}`` or none), ``…/status`` is a 404 and the status is written with the
    # object, as their own controllers do. ``tests/kube/test_kinds.py`` checks these against the peers' CRDs.
    status_subresource: bool = True
    # a kind whose CRD most clusters do not have (JobSet, Kubeflow's jobs): its absence is logged, not a problem of
    # every pass (``informer``)
    integration: bool = False

    @property
    def crd(self) -> str:
        """The name of the CustomResourceDefinition that serves the kind ('' for a built-in kind)."""
        return "" if self.group in BUILT_IN_GROUPS else f"{self.plural}.{self.group}"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self) -> str:
        """The collection path: cluster-wide (every namespace for a namespaced kind), or ``namespace``'s."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        where = f"/namespaces/{self.namespace}" if self.namespace else ""
        return f"{base}{where}/{self.plural}"


KINDS: tuple[Kind, ...] = (
    Kind("PriorityClass", "scheduling.k8s.io", "v1", "priorityclasses", False),
    Kind("RuntimeClass", "node.k8s.io", "v1", "runtimeclasses", False),
    Kind("Namespace", "", "v1", "namespaces", False),
    Kind("ResourceQuota", "", "v1", "resourcequotas", True),
    Kind("LimitRange", "", "v1", "limitranges", True),
    Kind("Queue", "scheduling.volcano.sh", "v1beta1", "queues", False),
    Kind("ElasticQuota", "scheduling.sigs.k8s.io", "v1alpha1", "elasticquotas", True, status_subresource=False),
    Kind("ElasticQuota", "scheduling.x-k8s.io", "v1alpha1", "elasticquotas", True),
    Kind("Node", "", "v1", "nodes", False),
    Kind("PodGroup", "scheduling.volcano.sh", "v1beta1", "podgroups", True, status_subresource=False),
    # Kueue's quota tree (read only: Fairway schedules the pods its LocalQueues name, with Kueue's quotas)
    Kind("ResourceFlavor", "kueue.x-k8s.io", "v1beta2", "resourceflavors", False, status_subresource=False),
    Kind("Cohort", "kueue.x-k8s.io", "v1beta2", "cohorts", False),
    Kind("ClusterQueue", "kueue.x-k8s.io", "v1beta2", "clusterqueues", False),
    Kind("LocalQueue", "kueue.x-k8s.io", "v1beta2", "localqueues", True),
    # Kueue's batch/v1 Jobs (those labelled with a LocalQueue): their pods are one podgroup each (read only; a partial
    # admission patches ``spec.parallelism``)
    Kind("Job", "batch", "v1", "jobs", True, label_selector=KUEUE_QUEUE_LABEL),
    # Kueue's workloads of several pod sets (those labelled with a LocalQueue; a suspended one is resumed once
    # admitted): the pods their controllers make are one podgroup each (``engine.manifests.kueuepodsets``)
    Kind("JobSet", "jobset.x-k8s.io", "v1alpha2", "jobsets", True, label_selector=KUEUE_QUEUE_LABEL, integration=True),
    *(
        Kind(kind, "kubeflow.org", "v1", f"{kind.lower()}s", True, label_selector=KUEUE_QUEUE_LABEL, integration=True)
        for kind in ("PyTorchJob", "TFJob", "XGBoostJob", "PaddleJob", "JAXJob")
    ),
    Kind("MPIJob", "kubeflow.org", "v2beta1", "mpijobs", True, label_selector=KUEUE_QUEUE_LABEL, integration=True),
    Kind("Pod", "", "v1", "pods", True, field_selector="spec.schedulerName={scheduler}"),
)
KIND_BY_PATH = {(k.group, k.plural): k for k in KINDS}


def kueue_config_kind(name: str, namespace: str) -> Kind:
    """The ConfigMap of Kueue's Configuration (``FAIRWAY_KUEUE_CONFIGMAP`` in ``FAIRWAY_KUEUE_NAMESPACE``), read
    like the other kinds: listed and watched in its namespace, by name."""
    return Kind("ConfigMap", "", "v1", "configmaps", True, field_selector=f"metadata.name={name}", namespace=namespace)


# Calls the adapter sends at once (``mirror_out``: bindings, PodGroup statuses); the client's connection pool holds as
# many kept-alive connections, beside one long-lived watch per kind.
CONCURRENT_CALLS = 16


def api_client(kubeconfig: str, *, context: str | None = None) -> k8s.ApiClient:
    """An ``ApiClient`` for a kubeconfig text (YAML), or for the pod's service account when it is blank.

    Raises ``kubernetes.config.ConfigException`` (or ``yaml.YAMLError``) for a kubeconfig that cannot be used."""
    configuration = k8s.Configuration()
    if kubeconfig.strip():
        data = yaml.safe_load(kubeconfig)
        if not isinstance(data, Mapping):
            raise k8s_config.ConfigException("the kubeconfig is not a YAML mapping")
        k8s_config.load_kube_config_from_dict(
            dict(data), context=context, client_configuration=configuration, persist_config=False
        )
    else:
        k8s_config.load_incluster_config(client_configuration=configuration)
    configuration.connection_pool_maxsize = len(KINDS) + CONCURRENT_CALLS + 3  # a watch per kind, Kueue's ConfigMap
    return k8s.ApiClient(configuration)


def refusal(exc: BaseException, doing: str) -> str:
    """One sentence for an API error met while ``doing`` something: a 403 quotes the server's message, which names
    the user, the verb and the resource (``… cannot list resource "pods" in API group "" …``), and says where the
    adapter's rights come from."""
    status, message, _ = error_status(exc)
    if status == 403:
        return (f"the API server forbids it ({doing}): {message}; the adapter's ServiceAccount needs that verb "
                "(deploy/kubernetes/rbac.yaml)")  # fmt: skip
    return f"{doing}: {status or ''} {message}".replace(":  ", ": ")


def error_status(exc: BaseException) -> tuple[int, str, Any]:
    """(HTTP status, message, the Status body's details) of an ``ApiException``; (0, text, None) otherwise."""
    status = getattr(exc, "status", None)
    if not isinstance(status, int):
        return 0, str(exc), None
    body = getattr(exc, "body", None)
    try:
        parsed = yaml.safe_load(body) if body else None
    except yaml.YAMLError:
        parsed = None
    if isinstance(parsed, Mapping):
        return status, str(parsed.get("message") or getattr(exc, "reason", "")), parsed.get("details")
    return status, str(getattr(exc, "reason", "") or body or ""), None
