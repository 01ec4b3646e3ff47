"""The engine's input: one cluster at one instant, as plain immutable-ish dataclasses.

A ``Snapshot`` is what every caller hands to the engine: the scheduling session, the recycling pass, the
what-if endpoints and ``fairway simulate``. ``engine/manifests/`` builds one from Kubernetes YAML and
``scheduling/store/`` from database rows, so nothing here knows about either: no Kubernetes object shapes,
no YAML, no ORM.

The model follows Volcano's scheduler cache (``pkg/scheduler/api``):

* ``NodeInfo``: a node's allocatable resources, labels, taints and whether it can take new pods.
* ``TaskInfo``: a pod. Its ``uid`` is ``"namespace/name"``; it belongs to exactly one podgroup (``podgroup`` is
  the podgroup's key ``"namespace/name"``); ``status`` is Volcano's task status. Two different "may be evicted"
  flags are kept apart: Volcano's ``volcano.sh/preemptable`` (``volcano_preemptable``, None when not set,
  which Volcano reads as true) and Koordinator's quota label ``quota.scheduling.koordinator.sh/preemptible``
  (``quota_preemptible``; false pins the pod to its quota's min and exempts it from revocation).
* ``PodGroupInfo``: a Volcano PodGroup (a "job"): gang minimum, per-role minimum, minResources, queue, phase.
  A task whose podgroup is missing from the snapshot is never scheduled (Volcano ignores a job without a
  PodGroup) but still occupies its node.
* ``NamespaceInfo``: a namespace's fair-share weight (seed 000, ``volcano.sh/namespace.weight``), its default
  queue and its ResourceQuota hard limits.
* Queues (``QueueSpec``) and elastic quota groups (``QuotaGroupSpec``) are the admin's trees. The built-in queues
  ``root`` and ``default`` and the built-in quota groups ``root``, ``system`` and ``default`` always exist, as in
  Volcano and Koordinator; defining one of them replaces the built-in.
* ``policy``: the scheduler policy (actions and plugin tiers).

Amounts are exact integers (``ResourceList``: cpu in millicores, memory in bytes, other resources in
milli-units). Times are floats in seconds; the snapshot never reads a clock.

Derived indexes (total allocatable, tasks by podgroup / node / quota group, the pod -> quota group mapping,
numpy matrices of requests and allocatable) are computed once, on first use, and cached on the snapshot.
Treat the mappings as read-only: build changed copies with the ``with_*`` / ``without_*`` / ``replace``
helpers, which copy only what changes and keep every cached index that the change cannot affect.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from engine.admission import AdmissionLevers
from engine.limits import ENV_VARS, Limits, node_amount_errors
from engine.policy.policy import DEFAULT_POLICY, ElasticQuotaArgs, Policy
from engine.resources import MAX_AMOUNT, ResourceList
from engine.usage import UsageHistory
from engine.userlimits import UserLimit
from engine.vocabulary import (  # re-exported: the snapshot's words
    ALLOCATED_STATUSES as ALLOCATED_STATUSES,
)
from engine.vocabulary import (
    CLOSED_QUEUE_STATES as CLOSED_QUEUE_STATES,
)
from engine.vocabulary import (
    OCCUPYING_STATUSES as OCCUPYING_STATUSES,
)
from engine.vocabulary import (
    PREEMPTABLE_STATUSES as PREEMPTABLE_STATUSES,
)
from engine.vocabulary import (
    QUEUE_STATES as QUEUE_STATES,
)
from engine.vocabulary import (
    READY_STATUSES as READY_STATUSES,
)
from engine.vocabulary import (
    SCHEDULED_STATUSES as SCHEDULED_STATUSES,
)
from engine.vocabulary import (
    PodGroupPhase as PodGroupPhase,
)
from engine.vocabulary import (
    QueueState as QueueState,
)
from engine.vocabulary import (
    TaskStatus as TaskStatus,
)

if TYPE_CHECKING:  # numpy is imported where a matrix is made (``_matrix``): Django imports this module at start-up
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "ALLOCATED_STATUSES",
    "BUILTIN_PRIORITY_CLASSES",
    "BUILTIN_QUEUES",
    "BUILTIN_QUOTA_GROUPS",
    "CLOSED_QUEUE_STATES",
    "DEFAULT_GROUP",
    "DEFAULT_QUEUE",
    "OCCUPYING_STATUSES",
    "OPEN",
    "PREEMPTABLE_STATUSES",
    "QUEUE_STATES",
    "READY_STATUSES",
    "ROOT_GROUP",
    "ROOT_QUEUE",
    "SCHEDULED_STATUSES",
    "SYSTEM_GROUP",
    "FlavorFungibility",
    "FlavorGroup",
    "KueueFlavors",
    "KueueName",
    "KueuePreemption",
    "NamespaceInfo",
    "NodeInfo",
    "PodGroupCondition",
    "PodGroupInfo",
    "PodGroupPhase",
    "PriorityClassInfo",
    "QueueHierarchy",
    "QueueSpec",
    "QueueState",
    "QuotaGroupSpec",
    "ResourceFlavorSpec",
    "Snapshot",
    "Taint",
    "TaskInfo",
    "TaskStatus",
    "Toleration",
    "own_podgroup_name",
]


# -- the trees as the admin configures them ---------------------------------------------------------------------

ROOT_QUEUE = "root"
DEFAULT_QUEUE = "default"
OPEN = "Open"
ROOT_GROUP = "root"
SYSTEM_GROUP = "system"
DEFAULT_GROUP = "default"


_RETRY_SUFFIX = re.compile(r"-r(\d+)$")


def replacement_name(name: str) -> str:
    """The name a simulated job controller gives an evicted pod's replacement (``scheduling.agent``, the replay):
    ``<name>-r1``, then ``<name>-r2`` for the replacement's own, and so on."""
    match = _RETRY_SUFFIX.search(name)
    return f"{name[: match.start()]}-r{int(match.group(1)) + 1}" if match else f"{name}-r1"


@dataclass(frozen=True)
class QueueSpec:
    """A queue as the admin configured it (Volcano's ``Queue.spec`` plus its state)."""

    name: str
    parent: str | None = ROOT_QUEUE  # None for root itself
    weight: int = 1
    capability: ResourceList = field(default_factory=ResourceList)  # a missing dimension is unlimited
    deserved: ResourceList = field(default_factory=ResourceList)
    guarantee: ResourceList = field(default_factory=ResourceList)
    reclaimable: bool = True
    priority: int = 0
    state: str = "Open"  # Open | Closing | Closed | Unknown
    # Kueue's levers, per resource; a resource left out is unlimited (see ``set_keep``)
    borrowing_limit: ResourceList = field(default_factory=ResourceList)
    lending_limit: ResourceList = field(default_factory=ResourceList)
    # KAI's min-runtime: seconds a pod of this subtree is kept from reclaim and preempt after it starts, unless its
    # evictor's priority is strictly higher (``engine.session.actions.common.MinRuntime``); None: the parent's,
    # then the policy's ``minRuntime`` of the action
    min_runtime: float | None = None
    description: str = ""  # free text for people; no rule reads it (``engine.treefields``)
    # YuniKorn's per-user and per-group limits inside this queue's subtree (``engine.userlimits``); () for none
    user_limits: tuple[UserLimit, ...] = ()
    # Kueue's levers and policies of the queue, normalized in Kueue's spelling (``engine.kueuepolicy``); None: none
    kueue: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class QuotaGroupSpec:
    """A quota group as the admin configured it."""

    name: str
    parent: str | None = ROOT_GROUP  # None only for a tree root; "root" is the default tree's root
    is_parent: bool = False
    min: ResourceList = field(default_factory=ResourceList)
    max: ResourceList = field(default_factory=ResourceList)
    shared_weight: ResourceList | None = None  # None -> max
    allow_lent: bool = True
    tree_id: str = ""
    min_scale_exempt: bool = False
    # Kueue's levers, per resource; a resource left out is unlimited (see the module docstring)
    borrowing_limit: ResourceList = field(default_factory=ResourceList)
    lending_limit: ResourceList = field(default_factory=ResourceList)
    description: str = ""  # free text for people; no rule reads it (``engine.treefields``)
    # YuniKorn's per-user and per-group limits inside this group's subtree (``engine.userlimits``); () for none
    user_limits: tuple[UserLimit, ...] = ()


# -- nodes ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str = ""
    effect: str = "NoSchedule"  # NoSchedule | PreferNoSchedule | NoExecute


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str = ""  # empty with operator Exists tolerates every taint
    operator: str = "Equal"  # Equal | Exists
    value: str = ""
    effect: str = ""  # empty matches every effect
    toleration_seconds: int | None = None

    def tolerates(self, taint: Taint) -> bool:
        """Kubernetes' ``Toleration.ToleratesTaint``."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.operator in ("Equal", "") and self.value == taint.value


_GO_INT = re.compile(r"[+-]?[0-9]+")  # what Go's strconv.ParseInt reads (base 10)
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def go_int64(text: str | None) -> int | None:
    """``text`` as Go's ``strconv.ParseInt(text, 10, 64)`` reads it, None where that fails (what Kubernetes compares
    for ``Gt`` / ``Lt``)."""
    if text is None or not _GO_INT.fullmatch(text):
        return None
    number = int(text)
    return number if INT64_MIN <= number <= INT64_MAX else None


@dataclass(frozen=True, slots=True)
class NodeSelectorRequirement:
    """One ``matchExpressions`` entry of a pod's required node affinity (Kubernetes' ``NodeSelectorRequirement``)."""

    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist | Gt | Lt
    values: tuple[str, ...] = ()
    # a ``matchFields`` entry: ``key`` is the node's field ``metadata.name`` (In / NotIn, one value), not a label
    match_field: bool = False

    def matches(self, labels: Mapping[str, str], name: str | None = None) -> bool:
        """Kubernetes' reading of the requirement against a node's ``labels`` (Gt/Lt compare 64-bit integers), or,
        for a ``matchFields`` entry, against the node's ``name``."""
        if self.match_field:
            return (name in self.values) is (self.operator == "In")
        present = self.key in labels
        if self.operator == "In":
            return present and labels[self.key] in self.values
        if self.operator == "NotIn":
            return not present or labels[self.key] not in self.values
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return not present
        have, bound = go_int64(labels.get(self.key)), go_int64(self.values[0])
        if have is None or bound is None:
            return False  # Kubernetes: a label (or bound) that is not a 64-bit integer does not match Gt or Lt
        return have > bound if self.operator == "Gt" else have < bound


def _setstate_with_defaults(self: Any, state: Sequence[Any]) -> None:
    """A slotted frozen dataclass pickled by an older engine (a session record written before a field was added at
    the end) loads with the defaults of the fields it lacks. Attached after the class is made (``setattr``):
    ``dataclass(slots=True, frozen=True)`` of Python 3.11.0 to 3.11.4 replaces a ``__setstate__`` written in the class
    body with its own, which needs every field."""
    values = list(state)
    for i, f in enumerate(dataclasses.fields(self)):
        object.__setattr__(self, f.name, values[i] if i < len(values) else f.default)


# a requirement recorded before ``match_field``
setattr(NodeSelectorRequirement, "__setstate__", _setstate_with_defaults)  # noqa: B010 (mypy: slotted, none declared)

NodeAffinity: TypeAlias = tuple[tuple[NodeSelectorRequirement, ...], ...]


def affinity_admits(terms: NodeAffinity, labels: Mapping[str, str], name: str) -> bool:
    """Whether a node (its ``labels`` and ``name``) passes a pod's required node affinity as Kubernetes reads it
    (``k8s.io/component-helpers/scheduling/corev1/nodeaffinity``): no affinity admits every node; otherwise some
    term has all its requirements met, and a term without any requirement matches no node."""
    if not terms:
        return True
    return any(term and all(e.matches(labels, name) for e in term) for term in terms)


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """A node as the scheduler sees it."""

    name: str
    allocatable: ResourceList = field(default_factory=ResourceList)
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    ready: bool = True

    @property
    def schedulable(self) -> bool:
        """Ready and not cordoned: counts towards the cluster total and may take new pods."""
        return self.ready and not self.unschedulable

    def __hash__(self) -> int:
        return hash(self.name)


# -- tasks (pods) --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, init=False)
class TaskInfo:
    """A pod. ``uid`` (``"namespace/name"``) and ``best_effort`` (empty request) are derived.

    Frozen like every object of a snapshot, with a hand-written ``__init__`` (the fields' defaults are those of
    the dataclass fields below): the generated one of a frozen dataclass sets each field through
    ``object.__setattr__`` by name, 4.2 µs a pod, a fifth of reading a 50,000-pod cluster; this one sets the slots
    through their descriptors directly, 1.6 µs. ``tests/unit/test_objects.py`` checks that it sets every field."""

    namespace: str
    name: str
    podgroup: str  # the podgroup's key, "namespace/name"
    request: ResourceList = field(default_factory=ResourceList)
    priority: int = 0
    priority_class: str = ""
    volcano_preemptable: bool | None = None  # volcano.sh/preemptable; None = not set (Volcano reads true)
    quota_preemptible: bool = True  # quota.scheduling.koordinator.sh/preemptible != "false"
    quota_group: str | None = None  # the quota.scheduling.koordinator.sh/name label, as written
    status: TaskStatus = TaskStatus.PENDING
    node: str | None = None
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Toleration, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)  # without the three keys read into fields above
    task_role: str = ""  # Volcano's volcano.sh/task-spec annotation, the key of minTaskMember
    creation_timestamp: float | None = None
    start_timestamp: float | None = None
    preemption_policy: str = "PreemptLowerPriority"  # PreemptLowerPriority | Never
    # a Pending pod that the last session pipelined onto a node (waiting for resources being freed); the next
    # session decides anew, so it stays Pending here, but the values count what it requests apart (``pipelined``)
    pipelined: bool = False
    # the node it was pipelined to (Kubernetes' nominatedNodeName): the next session holds the pod's request there
    # against every other job until its own job's turn (``Session`` ``holds``), so the room its preemption freed is
    # not taken by others first
    nominated: str | None = None
    # the pod's required node affinity: its ``nodeSelectorTerms`` (ORed), each its ``matchExpressions`` and
    # ``matchFields`` (ANDed; ``affinity_admits``). The predicates plugin filters the nodes by it; the flavor
    # assigner (``engine/flavors.py``) reads the ``matchExpressions`` on the flavors' label keys
    node_affinity: tuple[tuple[NodeSelectorRequirement, ...], ...] = ()
    uid: str = field(init=False, repr=False)
    best_effort: bool = field(init=False, repr=False, compare=False)

    def __init__(
        self,
        namespace: str,
        name: str,
        podgroup: str,
        request: ResourceList | None = None,
        priority: int = 0,
        priority_class: str = "",
        volcano_preemptable: bool | None = None,
        quota_preemptible: bool = True,
        quota_group: str | None = None,
        status: TaskStatus = TaskStatus.PENDING,
        node: str | None = None,
        node_selector: Mapping[str, str] | None = None,
        tolerations: tuple[Toleration, ...] = (),
        labels: Mapping[str, str] | None = None,
        task_role: str = "",
        creation_timestamp: float | None = None,
        start_timestamp: float | None = None,
        preemption_policy: str = "PreemptLowerPriority",
        pipelined: bool = False,
        nominated: str | None = None,
        node_affinity: tuple[tuple[NodeSelectorRequirement, ...], ...] = (),
    ) -> None:
        if request is None:
            request = ResourceList()
        s = _TASK_SLOTS
        s.namespace(self, namespace)
        s.name(self, name)
        s.podgroup(self, podgroup)
        s.request(self, request)
        s.priority(self, priority)
        s.priority_class(self, priority_class)
        s.volcano_preemptable(self, volcano_preemptable)
        s.quota_preemptible(self, quota_preemptible)
        s.quota_group(self, quota_group)
        s.status(self, status)
        s.node(self, node)
        s.node_selector(self, {} if node_selector is None else node_selector)
        s.tolerations(self, tolerations)
        s.labels(self, {} if labels is None else labels)
        s.task_role(self, task_role)
        s.creation_timestamp(self, creation_timestamp)
        s.start_timestamp(self, start_timestamp)
        s.preemption_policy(self, preemption_policy)
        s.pipelined(self, pipelined)
        s.nominated(self, nominated)
        s.node_affinity(self, node_affinity)
        s.uid(self, f"{namespace}/{name}")
        s.best_effort(self, request.is_zero())

    @property
    def preemptable(self) -> bool:
        """Volcano's reading of ``volcano.sh/preemptable``: true unless set to false."""
        return self.volcano_preemptable is not False

    def with_status(self, status: TaskStatus, node: str | None = None) -> TaskInfo:
        """A copy in ``status``, on ``node`` (``None`` keeps no node)."""
        return dataclasses.replace(self, status=status, node=node)

    def __hash__(self) -> int:
        return hash(self.uid)

    def evolve(self, **changes: Any) -> TaskInfo:
        """``dataclasses.replace(self, **changes)``, the same object field for field, at a fraction of its cost for
        the fields a session's outcome moves (status, node, start time, pipelined, nominated: ``_PLAIN_TASK``); other
        fields (a derived ``uid`` or ``best_effort``, a normalized mapping) go through ``dataclasses.replace``."""
        if not changes.keys() <= _PLAIN_TASK:
            return dataclasses.replace(self, **changes)
        new = TaskInfo(
            self.namespace,
            self.name,
            self.podgroup,
            self.request,
            self.priority,
            self.priority_class,
            self.volcano_preemptable,
            self.quota_preemptible,
            self.quota_group,
            self.status,
            self.node,
            self.node_selector,
            self.tolerations,
            self.labels,
            self.task_role,
            self.creation_timestamp,
            self.start_timestamp,
            self.preemption_policy,
            self.pipelined,
            self.nominated,
            self.node_affinity,
        )
        for name, value in changes.items():
            _TASK_COPY[name][1](new, value)
        return new


_Frozen = TypeVar("_Frozen")


def _slot_setters(cls: type) -> Any:
    """Each field's slot setter (its member descriptor's ``__set__``) as an attribute of one object."""
    return SimpleNamespace(**{f.name: getattr(cls, f.name).__set__ for f in dataclasses.fields(cls)})


def _slot_copy(cls: type) -> dict[str, tuple[Callable[[Any], Any], Callable[[Any, Any], None]]]:
    """Each field's slot getter and setter (its member descriptor's ``__get__`` and ``__set__``), by name."""
    out = {}
    for f in dataclasses.fields(cls):
        member = getattr(cls, f.name)
        out[f.name] = (member.__get__, member.__set__)
    return out


def _evolved(
    obj: _Frozen, copy: dict[str, tuple[Callable[[Any], Any], Callable[[Any, Any], None]]], changes: Mapping[str, Any]
) -> _Frozen:
    """A copy of the slotted frozen ``obj`` with ``changes`` set, every other field (derived ones too) as it was."""
    new = object.__new__(type(obj))
    for name, (get, put) in copy.items():
        put(new, changes[name] if name in changes else get(obj))
    return new


_TASK_SLOTS = _slot_setters(TaskInfo)
_TASK_COPY = _slot_copy(TaskInfo)
# the fields ``TaskInfo.__init__`` stores as given (no derived field reads them)
_PLAIN_TASK = frozenset(
    f.name
    for f in dataclasses.fields(TaskInfo)
    if f.init and f.name not in ("namespace", "name", "request", "node_selector", "labels")
)


def own_podgroup_name(pod_name: str) -> str:
    """The name of the podgroup a pod without one gets (Volcano names it ``podgroup-<pod uid>``)."""
    return f"podgroup-{pod_name}"


# -- podgroups -------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PodGroupCondition:
    type: str  # Unschedulable | Scheduled
    status: str = "True"
    reason: str = ""
    message: str = ""
    transition_id: str = ""
    last_transition_time: float | None = None


@dataclass(frozen=True, slots=True)
class PodGroupInfo:
    """A Volcano PodGroup: the gang of tasks that are scheduled together."""

    namespace: str
    name: str
    queue: str = DEFAULT_QUEUE
    min_member: int = 1
    min_task_member: Mapping[str, int] = field(default_factory=dict)
    min_resources: ResourceList | None = None
    priority: int = 0
    priority_class: str = ""
    phase: PodGroupPhase = PodGroupPhase.PENDING
    creation_timestamp: float = 0.0
    conditions: tuple[PodGroupCondition, ...] = ()
    # Fairway's requeue state (``actions.enqueue``): consecutive sessions that ended with the podgroup Inqueue and
    # nothing placed, how many times it was sent back to Pending for that, and until when it waits (epoch seconds)
    # before it may be admitted again.
    unplaced_sessions: int = 0
    requeues: int = 0
    backoff_until: float | None = None
    # Suspended by a person (a job action, as Kueue's and batch/v1's ``spec.suspend``): the session neither admits
    # nor places it, and it stays Pending with reason ``Suspended`` until it is resumed. It reserves nothing: one
    # read Inqueue (a manifest, a row written by a session that read it before the suspension) is Pending here.
    suspended: bool = False
    # who submitted it (``engine.userlimits``): the API token's user, or a Kubernetes annotation naming one
    # (``yunikorn.apache.org/user.info``, ``fairway.io/user``); "" reads as its namespace. ``user_groups``: that
    # user's groups (the Django user's, or the annotation's)
    user: str = ""
    user_groups: tuple[str, ...] = ()
    # Kueue's pod sets in Kueue's order, for a workload read from a kind of several (a JobSet, Kubeflow's training
    # jobs, an MPIJob: ``engine.manifests.kueuepodsets``), each the role of its pods: Kueue's flavor assigner gives
    # each its own flavors (``engine.flavors``); empty: one pod set of all its pods (a Job, a pod group, a PodGroup)
    pod_sets: tuple[str, ...] = ()
    key: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", f"{self.namespace}/{self.name}")
        if self.suspended and self.phase == PodGroupPhase.INQUEUE:
            object.__setattr__(self, "phase", PodGroupPhase.PENDING)

    def __hash__(self) -> int:
        return hash(self.key)

    def evolve(self, **changes: Any) -> PodGroupInfo:
        """``dataclasses.replace(self, **changes)``, the same object field for field (``__post_init__``'s rule for a
        suspended podgroup read Inqueue too), at a fraction of its cost; a new namespace or name goes through
        ``dataclasses.replace`` (the key is derived from them)."""
        if not changes.keys() <= _PLAIN_PODGROUP:
            return dataclasses.replace(self, **changes)
        new = _evolved(self, _PODGROUP_COPY, changes)
        if new.suspended and new.phase == PodGroupPhase.INQUEUE:
            _PODGROUP_COPY["phase"][1](new, PodGroupPhase.PENDING)
        return new


_PODGROUP_COPY = _slot_copy(PodGroupInfo)
_PLAIN_PODGROUP = frozenset(f.name for f in dataclasses.fields(PodGroupInfo) if f.init) - {"namespace", "name"}


# -- namespaces, priority classes, HDRF annotations ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NamespaceInfo:
    """A namespace: its fair-share weight, default queue and ResourceQuota hard limits.

    ``hard`` keys follow ResourceQuota: ``requests.cpu`` is stored as ``cpu`` (Kubernetes treats the two alike),
    other keys (``limits.memory``, ``pods``, ``count/jobs.batch``) as written; amounts are in the base unit of the
    underlying resource (``limits.memory`` in bytes). When several ResourceQuotas limit the same key, the lowest
    limit is kept, since Kubernetes enforces each of them.
    """

    name: str
    weight: int = 1
    queue: str | None = None  # scheduling.volcano.sh/queue-name annotation
    hard: ResourceList | None = None
    # the namespace's labels (``metadata.labels``), sorted (key, value) pairs: what Kueue's ``namespaceSelector``
    # matches (``engine.admission``); Kubernetes' own ``kubernetes.io/metadata.name`` is implied, never stored
    labels: tuple[tuple[str, str], ...] = ()

    def label_map(self) -> dict[str, str]:
        return dict(self.labels)


# a namespace recorded before ``labels``
setattr(NamespaceInfo, "__setstate__", _setstate_with_defaults)  # noqa: B010 (mypy: slotted, none declared)


@dataclass(frozen=True, slots=True)
class PriorityClassInfo:
    name: str
    value: int = 0
    global_default: bool = False
    preemption_policy: str = "PreemptLowerPriority"


@dataclass(frozen=True, slots=True)
class QueueHierarchy:
    """A queue's hierarchical-DRF annotations (``volcano.sh/hierarchy`` and ``volcano.sh/hierarchy-weights``).

    ``path`` starts at ``root`` (``("root", "eng", "prod")``); ``weights`` has one positive weight per level.
    """

    path: tuple[str, ...]
    weights: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class KueueName:
    """The Kueue object a queue was read from, when the queue's identity is not that object's name: a Cohort or
    ClusterQueue named like a built-in (``root``, ``default``), like another queue of the input, or not a queue name
    (a DNS-1123 subdomain with dots, or longer than 63). ``kind`` is ``Cohort`` or ``ClusterQueue``."""

    kind: str
    name: str


@dataclass(frozen=True, slots=True)
class KueuePreemption:
    """A Kueue ClusterQueue's ``spec.preemption`` (Kueue's defaults: every policy ``Never``), enforced by the
    ``kueuefair`` plugin: ``reclaim_within_cohort`` Never | LowerPriority | Any; ``borrow_within_cohort`` Never |
    LowerPriority, with ``max_priority_threshold`` (None: any priority below the preemptor's);
    ``within_cluster_queue`` Never | LowerPriority | LowerOrNewerEqualPriority."""

    reclaim_within_cohort: str = "Never"
    borrow_within_cohort: str = "Never"
    max_priority_threshold: int | None = None
    within_cluster_queue: str = "Never"


@dataclass(frozen=True, slots=True)
class ResourceFlavorSpec:
    """A Kueue ``ResourceFlavor``: the nodes it stands for (``node_labels``, all of which a node must carry; none:
    every node), the taints those nodes have (``node_taints``: a workload must tolerate them to be given the flavor)
    and the tolerations a workload given the flavor gets; ``topology_name``, Kueue's ``topologyName``, is kept for
    the export and shown, not used (topology-aware scheduling is not read)."""

    name: str
    node_labels: Mapping[str, str] = field(default_factory=dict)
    node_taints: tuple[Taint, ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    topology_name: str = ""


@dataclass(frozen=True, slots=True)
class FlavorGroup:
    """One of a ClusterQueue's ``resourceGroups`` whose resources have quota in several flavors: its covered
    ``resources`` and its ``flavors`` in the order Kueue tries them."""

    resources: tuple[str, ...]
    flavors: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FlavorFungibility:
    """A ClusterQueue's ``spec.flavorFungibility`` as Kueue reads it (v1beta2 names; ``Borrow`` and ``Preempt`` are
    read as ``MayStopSearch``): whether to stop at a flavor where the workload fits only by borrowing
    (``when_can_borrow``, default MayStopSearch) or only by preempting (``when_can_preempt``, default TryNextFlavor),
    and which of two such flavors is better (``preference``)."""

    when_can_borrow: str = "MayStopSearch"
    when_can_preempt: str = "TryNextFlavor"
    preference: str = "BorrowingOverPreemption"


@dataclass(frozen=True, slots=True)
class KueueFlavors:
    """Kueue's ResourceFlavors where some resource has quota in several of them (``engine.flavors``): such a
    resource is counted per flavor under the key ``<resource>@<flavor>`` in the queues' quotas, the nodes'
    allocatable (a node serves the flavor whose labels it carries) and the requests of the workloads given that
    flavor. ``resources``: those resources, each with its flavors in the order first met; ``groups``: each
    ClusterQueue's resource groups over them, by queue identity; ``fungibility``: the ClusterQueues that set one."""

    flavors: Mapping[str, ResourceFlavorSpec] = field(default_factory=dict)
    resources: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    groups: Mapping[str, tuple[FlavorGroup, ...]] = field(default_factory=dict)
    fungibility: Mapping[str, FlavorFungibility] = field(default_factory=dict)


# -- built-ins ---------------------------------------------------------------------------------------------------

# The built-in tree nodes carry the same values as the ones the Django side creates
# (quotas/migrations/_builtins.py), so that a snapshot built from manifests and one built from the database
# agree: root lends nothing and is not reclaimable; system and default are unlimited (MAX_AMOUNT, the largest
# amount a ResourceList accepts) for cpu and memory, system's min included since its quota is never shared.
BUILTIN_QUEUES: Mapping[str, QueueSpec] = {
    ROOT_QUEUE: QueueSpec(name=ROOT_QUEUE, parent=None, reclaimable=False),
    DEFAULT_QUEUE: QueueSpec(name=DEFAULT_QUEUE),
}

_UNLIMITED = ResourceList({"cpu": MAX_AMOUNT, "memory": MAX_AMOUNT})
BUILTIN_QUOTA_GROUPS: Mapping[str, QuotaGroupSpec] = {
    ROOT_GROUP: QuotaGroupSpec(name=ROOT_GROUP, parent=None, is_parent=True, allow_lent=False),
    SYSTEM_GROUP: QuotaGroupSpec(name=SYSTEM_GROUP, min=_UNLIMITED, max=_UNLIMITED, shared_weight=_UNLIMITED),
    DEFAULT_GROUP: QuotaGroupSpec(name=DEFAULT_GROUP, max=_UNLIMITED, shared_weight=_UNLIMITED),
}

# Kubernetes creates these two in every cluster.
BUILTIN_PRIORITY_CLASSES: Mapping[str, PriorityClassInfo] = {
    "system-cluster-critical": PriorityClassInfo("system-cluster-critical", 2_000_000_000),
    "system-node-critical": PriorityClassInfo("system-node-critical", 2_000_001_000),
}


def _with_builtins(given: Mapping[str, Any], builtins: Mapping[str, Any]) -> dict[str, Any] | None:
    """A copy of ``given`` with the missing built-ins added first, or None when none is missing."""
    if all(name in given for name in builtins):
        return None
    out = {name: spec for name, spec in builtins.items() if name not in given}
    out.update(given)
    return out


def _set_aside(nodes: Iterable[NodeInfo], bound: int) -> dict[str, str]:
    """``Snapshot.set_aside_nodes``."""
    out: dict[str, str] = {}
    kept: list[tuple[int, str, NodeInfo]] = []
    for node in nodes:
        if not node.schedulable:
            continue
        amounts = node.allocatable.raw
        over = node_amount_errors(amounts, bound)
        if over:
            out[node.name] = f"node {node.name} set aside: {over[0]}"
        else:
            kept.append((max(amounts.values(), default=0), node.name, node))
    if len(kept) * bound < MAX_AMOUNT:
        return out  # no total can reach MAX_AMOUNT
    total: dict[str, int] = {}
    for _, name, node in sorted(kept, key=lambda k: (k[0], k[1])):
        amounts = node.allocatable.raw
        full = sorted(r for r, a in amounts.items() if total.get(r, 0) + a >= MAX_AMOUNT)
        if full:
            out[name] = (
                f"node {name} set aside: with it the cluster's total {full[0]} would pass the most a cluster may hold "
                f"(more nodes than {ENV_VARS['max_nodes']})"
            )
            continue
        for r, a in amounts.items():
            total[r] = total.get(r, 0) + a
    return out


# -- the snapshot ------------------------------------------------------------------------------------------------

_T = TypeVar("_T")
Int64Matrix: TypeAlias = "npt.NDArray[np.int64]"

# Which fields each cached index depends on: a copy that changes none of them keeps the index.
_CACHE_DEPS: dict[str, frozenset[str]] = {
    "total_allocatable": frozenset({"nodes", "node_bound"}),
    "schedulable_nodes": frozenset({"nodes", "node_bound"}),
    "set_aside_nodes": frozenset({"nodes", "node_bound"}),
    "tasks_by_podgroup": frozenset({"tasks"}),
    "tasks_by_node": frozenset({"tasks"}),
    "node_used": frozenset({"tasks"}),
    "podgroups_by_queue": frozenset({"podgroups"}),
    "queue_children": frozenset({"queues"}),
    "quota_children": frozenset({"quota_groups"}),
    "namespace_quota_groups": frozenset({"quota_groups", "quota_namespaces"}),
    "task_quota_groups": frozenset({"tasks", "quota_groups", "quota_namespaces"}),
    "tasks_by_quota_group": frozenset({"tasks", "quota_groups", "quota_namespaces"}),
    "default_priority": frozenset({"priority_classes"}),
    "resource_names": frozenset({"nodes", "tasks"}),
    "allocatable_matrix": frozenset({"nodes", "tasks"}),
    "request_matrix": frozenset({"nodes", "tasks"}),
}


def _same_field(a: object, b: object) -> bool:
    return a is b or (type(a) is int and type(b) is int and a == b)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One cluster at one instant. Mappings are keyed by name (tasks by uid, podgroups by key)."""

    nodes: Mapping[str, NodeInfo] = field(default_factory=dict)
    tasks: Mapping[str, TaskInfo] = field(default_factory=dict)
    podgroups: Mapping[str, PodGroupInfo] = field(default_factory=dict)
    queues: Mapping[str, QueueSpec] = field(default_factory=dict)
    quota_groups: Mapping[str, QuotaGroupSpec] = field(default_factory=dict)
    namespaces: Mapping[str, NamespaceInfo] = field(default_factory=dict)
    priority_classes: Mapping[str, PriorityClassInfo] = field(default_factory=dict)
    policy: Policy = DEFAULT_POLICY
    # Koordinator's quota.scheduling.koordinator.sh/namespaces annotation: group -> namespaces whose pods it takes.
    quota_namespaces: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Volcano's hierarchical-DRF annotations, per queue that has them.
    queue_hierarchy: Mapping[str, QueueHierarchy] = field(default_factory=dict)
    # Kueue's names of the queues whose identity differs from them (``KueueName``), by queue identity
    kueue_names: Mapping[str, KueueName] = field(default_factory=dict)
    # Kueue's exact ``fairSharing.weight`` (a quantity: 0.75, 0) of the queues whose whole ``weight`` was scaled from
    # it (their sibling set has a fraction: 0.75 and 0.25 are weights 3 and 1) or that Kueue reads as 0, by identity
    kueue_weights: Mapping[str, Fraction] = field(default_factory=dict)
    # Kueue's ClusterQueue ``spec.preemption`` policies of the ClusterQueues that set one, by queue identity
    kueue_preemption: Mapping[str, KueuePreemption] = field(default_factory=dict)
    # Kueue's ResourceFlavors when some resource has quota in several (None: one flavor per resource, as before)
    kueue_flavors: KueueFlavors | None = None
    # Koordinator ElasticQuotaArgs found in a KubeSchedulerConfiguration (None when none was given).
    elastic_quota_args: ElasticQuotaArgs | None = None
    # admission levers beyond quota (Kueue's StrictFIFO, HoldAndDrain, namespaceSelector, admission fair sharing):
    # ``engine.admission``; all off by default
    admission: AdmissionLevers = field(default_factory=AdmissionLevers)
    # fairness over time (``engine.usage``): each tree node's decayed past usage, read by the store (None: none)
    past_usage: UsageHistory | None = None
    # what one node may offer of any resource (``Limits.max_node_amount``): a node above it is set aside
    node_bound: int = Limits.max_node_amount
    _cache: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name, builtins in (
            ("queues", BUILTIN_QUEUES),
            ("quota_groups", BUILTIN_QUOTA_GROUPS),
            ("priority_classes", BUILTIN_PRIORITY_CLASSES),
        ):
            completed = _with_builtins(getattr(self, name), builtins)
            if completed is not None:
                object.__setattr__(self, name, completed)

    # -- construction ---------------------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        *,
        nodes: Iterable[NodeInfo] = (),
        tasks: Iterable[TaskInfo] = (),
        podgroups: Iterable[PodGroupInfo] = (),
        queues: Iterable[QueueSpec] = (),
        quota_groups: Iterable[QuotaGroupSpec] = (),
        namespaces: Iterable[NamespaceInfo] = (),
        priority_classes: Iterable[PriorityClassInfo] = (),
        policy: Policy = DEFAULT_POLICY,
        quota_namespaces: Mapping[str, Iterable[str]] | None = None,
        queue_hierarchy: Mapping[str, QueueHierarchy] | None = None,
        elastic_quota_args: ElasticQuotaArgs | None = None,
        past_usage: UsageHistory | None = None,
        node_bound: int = Limits.max_node_amount,
    ) -> Snapshot:
        """Build a snapshot from sequences, keying each object by its name; a duplicate key is a ``ValueError``."""
        return cls(
            nodes=_index(nodes, lambda n: n.name, "node"),
            tasks=_index(tasks, lambda t: t.uid, "task"),
            podgroups=_index(podgroups, lambda p: p.key, "podgroup"),
            queues=_index(queues, lambda q: q.name, "queue"),
            quota_groups=_index(quota_groups, lambda g: g.name, "quota group"),
            namespaces=_index(namespaces, lambda n: n.name, "namespace"),
            priority_classes=_index(priority_classes, lambda p: p.name, "priority class"),
            policy=policy,
            quota_namespaces={k: tuple(v) for k, v in (quota_namespaces or {}).items()},
            queue_hierarchy=dict(queue_hierarchy or {}),
            elastic_quota_args=elastic_quota_args,
            past_usage=past_usage,
            node_bound=node_bound,
        )

    def replace(self, **changes: Any) -> Snapshot:
        """A copy with some fields replaced; cached indexes that do not depend on them are kept."""
        new = dataclasses.replace(self, **changes)
        changed = frozenset(changes)
        for key, value in self._cache.items():
            if not (_CACHE_DEPS.get(key, changed) & changed):
                new._cache[key] = value
        return new

    def keep_indexes_of(self, other: Snapshot) -> None:
        """Take ``other``'s cached indexes whose fields are the very same objects here (equal numbers), as ``replace``
        keeps them: a caller that builds each snapshot anew from the same unchanged mappings (a cluster kept in
        memory: the same nodes while no node changed) spares their recomputation."""
        mine = self._cache
        for key, value in other._cache.items():
            deps = _CACHE_DEPS.get(key)
            if deps is None or key in mine:
                continue
            if all(_same_field(getattr(self, name), getattr(other, name)) for name in deps):
                mine[key] = value

    def _merged(self, name: str, items: Iterable[Any], key: Callable[[Any], str]) -> Snapshot:
        current: dict[str, Any] = dict(getattr(self, name))
        for item in items:
            current[key(item)] = item
        return self.replace(**{name: current})

    def _removed(self, name: str, keys: Iterable[str]) -> Snapshot:
        drop = set(keys)
        current = {k: v for k, v in getattr(self, name).items() if k not in drop}
        return self.replace(**{name: current})

    def with_nodes(self, nodes: Iterable[NodeInfo]) -> Snapshot:
        """A copy with these nodes added or replaced (by name)."""
        return self._merged("nodes", nodes, lambda n: n.name)

    def without_nodes(self, names: Iterable[str]) -> Snapshot:
        return self._removed("nodes", names)

    def with_tasks(self, tasks: Iterable[TaskInfo]) -> Snapshot:
        """A copy with these tasks added or replaced (by uid)."""
        return self._merged("tasks", tasks, lambda t: t.uid)

    def without_tasks(self, uids: Iterable[str]) -> Snapshot:
        return self._removed("tasks", uids)

    def with_podgroups(self, podgroups: Iterable[PodGroupInfo]) -> Snapshot:
        return self._merged("podgroups", podgroups, lambda p: p.key)

    def without_podgroups(self, keys: Iterable[str]) -> Snapshot:
        return self._removed("podgroups", keys)

    def with_queues(self, queues: Iterable[QueueSpec]) -> Snapshot:
        return self._merged("queues", queues, lambda q: q.name)

    def without_queues(self, names: Iterable[str]) -> Snapshot:
        """A copy without these queues (the built-ins come back at their defaults)."""
        return self._removed("queues", names)

    def with_quota_groups(self, groups: Iterable[QuotaGroupSpec]) -> Snapshot:
        return self._merged("quota_groups", groups, lambda g: g.name)

    def without_quota_groups(self, names: Iterable[str]) -> Snapshot:
        return self._removed("quota_groups", names)

    def with_namespaces(self, namespaces: Iterable[NamespaceInfo]) -> Snapshot:
        return self._merged("namespaces", namespaces, lambda n: n.name)

    def with_priority_classes(self, classes: Iterable[PriorityClassInfo]) -> Snapshot:
        return self._merged("priority_classes", classes, lambda p: p.name)

    def with_policy(self, policy: Policy) -> Snapshot:
        return self.replace(policy=policy)

    # -- caching --------------------------------------------------------------------------------------------
    def _cached(self, key: str, compute: Callable[[], _T]) -> _T:
        try:
            value: _T = self._cache[key]
        except KeyError:
            value = compute()
            self._cache[key] = value
        return value

    # -- nodes ----------------------------------------------------------------------------------------------
    @property
    def schedulable_nodes(self) -> tuple[NodeInfo, ...]:
        """Nodes that are ready and not cordoned, but those set aside (``set_aside_nodes``)."""

        def compute() -> tuple[NodeInfo, ...]:
            aside = self.set_aside_nodes
            return tuple(n for n in self.nodes.values() if n.schedulable and n.name not in aside)

        return self._cached("schedulable_nodes", compute)

    @property
    def set_aside_nodes(self) -> Mapping[str, str]:
        """Ready, uncordoned nodes left out of the cluster's total, with the reason: an amount above ``node_bound``,
        or one that would bring the total to ``MAX_AMOUNT`` (only with more nodes than ``Limits.max_nodes``; the
        smallest nodes are counted first). The writers refuse or set aside such nodes before they reach a snapshot:
        this keeps one node's numbers from failing a session if one does."""
        return self._cached("set_aside_nodes", lambda: _set_aside(self.nodes.values(), self.node_bound))

    @property
    def total_allocatable(self) -> ResourceList:
        """Sum of the allocatable resources of ready, schedulable nodes (the cluster total the quota math shares)."""
        return self._cached(
            "total_allocatable", lambda: ResourceList.total(n.allocatable for n in self.schedulable_nodes)
        )

    @property
    def tasks_by_node(self) -> Mapping[str, tuple[TaskInfo, ...]]:
        """Tasks that have a node, per node name (any status, in task order)."""
        return self._cached("tasks_by_node", lambda: _group(self.tasks.values(), lambda t: t.node))

    @property
    def node_used(self) -> Mapping[str, ResourceList]:
        """Per node, the requests of the tasks holding resources on it (allocated or releasing)."""

        def compute() -> dict[str, ResourceList]:
            out: dict[str, ResourceList] = {}
            for node, tasks in self.tasks_by_node.items():
                used: dict[str, int] = {}
                for t in tasks:
                    if t.status in OCCUPYING_STATUSES:
                        for name, amount in t.request.items():
                            used[name] = used.get(name, 0) + amount
                out[node] = ResourceList(used)
            return out

        return self._cached("node_used", compute)

    # -- tasks and podgroups --------------------------------------------------------------------------------
    @property
    def tasks_by_podgroup(self) -> Mapping[str, tuple[TaskInfo, ...]]:
        """Tasks per podgroup key (a key may have no PodGroupInfo: such tasks are never scheduled)."""
        return self._cached("tasks_by_podgroup", lambda: _group(self.tasks.values(), lambda t: t.podgroup))

    def podgroup_tasks(self, key: str) -> tuple[TaskInfo, ...]:
        return self.tasks_by_podgroup.get(key, ())

    @property
    def podgroups_by_queue(self) -> Mapping[str, tuple[PodGroupInfo, ...]]:
        return self._cached("podgroups_by_queue", lambda: _group(self.podgroups.values(), lambda p: p.queue))

    # -- queues ---------------------------------------------------------------------------------------------
    @property
    def queue_children(self) -> Mapping[str, tuple[str, ...]]:
        """Child queue names per parent name, sorted."""
        return self._cached("queue_children", lambda: _children(self.queues.values()))

    # -- namespaces and priorities --------------------------------------------------------------------------
    def namespace(self, name: str) -> NamespaceInfo:
        """The namespace's info, or the defaults (weight 1, no queue, no hard limits) when it was never described."""
        info = self.namespaces.get(name)
        return info if info is not None else NamespaceInfo(name=name)

    @property
    def default_priority(self) -> int:
        """The value of the global-default PriorityClass (the highest if several), else 0."""

        def compute() -> int:
            values = [pc.value for pc in self.priority_classes.values() if pc.global_default]
            return max(values) if values else 0

        return self._cached("default_priority", compute)

    def priority_of_class(self, name: str | None) -> int:
        """A PriorityClass's value; an empty or unknown name reads as the global default (else 0)."""
        pc = self.priority_classes.get(name) if name else None
        return pc.value if pc is not None else self.default_priority

    # -- quota groups ---------------------------------------------------------------------------------------
    @property
    def quota_children(self) -> Mapping[str, tuple[str, ...]]:
        """Child quota group names per parent name, sorted."""
        return self._cached("quota_children", lambda: _children(self.quota_groups.values()))

    @property
    def namespace_quota_groups(self) -> Mapping[str, str]:
        """Namespace -> the quota group whose ``namespaces`` annotation lists it (first group by name)."""

        def compute() -> dict[str, str]:
            out: dict[str, str] = {}
            for group in sorted(self.quota_namespaces):
                if group not in self.quota_groups:
                    continue
                for ns in self.quota_namespaces[group]:
                    out.setdefault(ns, group)
            return out

        return self._cached("namespace_quota_groups", compute)

    def quota_group_of(self, task: TaskInfo) -> str:
        """The quota group a pod counts against, per Koordinator (koordinator.md §6).

        The ``quota.scheduling.koordinator.sh/name`` label when it names a known group (an unknown name falls to
        ``default``); else a group named like the pod's namespace; else a group whose ``namespaces`` annotation
        lists the namespace; else ``default``. (Koordinator looks for the namespace-named quota inside that
        namespace only; quota groups here are cluster-wide names, so the name alone decides.)
        """
        label = task.quota_group
        if label:
            return label if label in self.quota_groups else DEFAULT_GROUP
        ns = task.namespace
        if ns in self.quota_groups and ns != ROOT_GROUP:
            return ns
        return self.namespace_quota_groups.get(ns, DEFAULT_GROUP)

    @property
    def task_quota_groups(self) -> Mapping[str, str]:
        """Task uid -> quota group, for every task."""
        return self._cached("task_quota_groups", lambda: {uid: self.quota_group_of(t) for uid, t in self.tasks.items()})

    @property
    def tasks_by_quota_group(self) -> Mapping[str, tuple[TaskInfo, ...]]:
        mapping = self.task_quota_groups
        return self._cached("tasks_by_quota_group", lambda: _group(self.tasks.values(), lambda t: mapping[t.uid]))

    def effective_elastic_quota_args(self) -> ElasticQuotaArgs:
        """Koordinator defaults, overridden by a KubeSchedulerConfiguration's, overridden by the policy's plugin."""
        return self.policy.elastic_quota_args(self.elastic_quota_args)

    # -- numpy views for hot loops --------------------------------------------------------------------------
    @property
    def resource_names(self) -> tuple[str, ...]:
        """Every resource name that a node offers or a task requests, sorted: the columns of the matrices."""

        def compute() -> tuple[str, ...]:
            names: set[str] = set()
            for n in self.nodes.values():
                names.update(n.allocatable)
            for t in self.tasks.values():
                names.update(t.request)
            return tuple(sorted(names))

        return self._cached("resource_names", compute)

    def allocatable_matrix(self) -> tuple[tuple[str, ...], Int64Matrix]:
        """(node names, int64 matrix nodes x ``resource_names``) of allocatable amounts; read-only."""
        return self._cached(
            "allocatable_matrix", lambda: _matrix(self.nodes, lambda n: n.allocatable, self.resource_names)
        )

    def request_matrix(self) -> tuple[tuple[str, ...], Int64Matrix]:
        """(task uids, int64 matrix tasks x ``resource_names``) of requests; read-only."""
        return self._cached("request_matrix", lambda: _matrix(self.tasks, lambda t: t.request, self.resource_names))

    # -- checks ---------------------------------------------------------------------------------------------
    def problems(self) -> list[str]:
        """Dangling references worth a warning (the engine copes with each, as Volcano does)."""
        out: list[str] = []
        for t in self.tasks.values():
            if t.podgroup not in self.podgroups:
                out.append(f"Pod {t.uid}: PodGroup {t.podgroup} not found; the pod will not be scheduled")
            if t.node is not None and t.node not in self.nodes:
                out.append(f"Pod {t.uid}: node {t.node} not found")
        for pg in self.podgroups.values():
            if pg.queue not in self.queues:
                out.append(f"PodGroup {pg.key}: queue {pg.queue} not found; the podgroup will not be scheduled")
        for q in self.queues.values():
            if q.parent is not None and q.parent not in self.queues:
                out.append(f"Queue {q.name}: parent queue {q.parent} not found")
        for g in self.quota_groups.values():
            if g.parent is not None and g.parent not in self.quota_groups:
                out.append(f"ElasticQuota {g.name}: parent quota {g.parent} not found")
        return out


def _index(items: Iterable[_T], key: Callable[[_T], str], what: str) -> dict[str, _T]:
    out: dict[str, _T] = {}
    for item in items:
        k = key(item)
        if k in out:
            raise ValueError(f"duplicate {what} {k!r}")
        out[k] = item
    return out


def _group(items: Iterable[_T], key: Callable[[_T], str | None]) -> dict[str, tuple[_T, ...]]:
    lists: dict[str, list[_T]] = {}
    for item in items:
        k = key(item)
        if k is not None:
            lists.setdefault(k, []).append(item)
    return {k: tuple(v) for k, v in lists.items()}


def _children(specs: Iterable[QueueSpec | QuotaGroupSpec]) -> dict[str, tuple[str, ...]]:
    lists: dict[str, list[str]] = {}
    for spec in specs:
        if spec.parent is not None:
            lists.setdefault(spec.parent, []).append(spec.name)
    return {k: tuple(sorted(v)) for k, v in lists.items()}


def _matrix(
    objects: Mapping[str, _T], amounts: Callable[[_T], ResourceList], names: tuple[str, ...]
) -> tuple[tuple[str, ...], Int64Matrix]:
    import numpy as np

    column = {name: i for i, name in enumerate(names)}
    keys = tuple(objects)
    out = np.zeros((len(keys), len(names)), dtype=np.int64)
    for row, obj in enumerate(objects.values()):
        for name, amount in amounts(obj).items():
            if amount:
                out[row, column[name]] = amount
    out.flags.writeable = False
    return keys, out
