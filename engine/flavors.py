"""Kueue's ResourceFlavors: several flavors per resource, and the flavor each workload is given.

A resource with quota in several flavors (``cpu`` in ``on-demand`` and ``spot``) is counted per flavor under the key
``<resource>@<flavor>`` (``engine.resources.split_flavor``; people read ``cpu (spot)``):

* the queues' quotas are per flavored key (the Kueue reader, ``engine.manifests.kueue``), so deserved, borrowing and
  lending limits, fair sharing and preemption work per flavor with the arithmetic they already have;
* a node offers its amount of such a resource in the flavored key of the flavor it stands for
  (``flavored_nodes``): the flavor whose ``nodeLabels`` it carries (the one with the most labels when several match,
  then the first met), or a flavor without labels; a node that matches none keeps the plain resource, which no
  workload given a flavor asks for;
* a pod already on a node asks for the flavored key of that node (``flavored_tasks``);
* a caller that keeps a cluster in memory between sessions passes a ``FlavorMemo``: the flavored object made for a
  plain one is kept and handed again while the plain object, the node's flavor and the assignment are the same, so
  a session on a flavored cluster opens on the engine's kept state (``engine.session.carry`` finds what changed by
  identity) instead of a full build;
* before each session, ``assign_flavors`` gives each workload that is not admitted yet one flavor per resource group
  of its ClusterQueue, as Kueue's flavor assigner (``pkg/scheduler/flavorassigner``) does: the flavors in the
  group's order; a flavor whose taints the pods do not tolerate, or whose labels their node selector excludes, is
  skipped; the first one where the workload fits in the ClusterQueue's own quota is taken at once; one where it fits
  only by borrowing stops the search unless ``whenCanBorrow: TryNextFlavor``; one where it fits only by preempting is
  tried with Kueue's preemption itself (its ``SimulatePreemption``: ``classical_targets``, or with fair sharing
  ``fair_targets``, on the quota as it stands): no victims, the flavor is passed over for any that fits or preempts;
  victims only in other ClusterQueues (reclaim) rank above some of its own (preempt); such a flavor stops the search
  only with ``whenCanPreempt: MayStopSearch``; otherwise the best one tried wins (fit, reclaim, preempt, then less
  borrowing; ``preference: PreemptionOverBorrowing`` puts less borrowing first); when none fits, it is held
  on the first flavor that matches (the group's first when none does) and waits. A workload of several pod sets
  (``PodGroupInfo.pod_sets``: a JobSet, Kubeflow's training jobs, an MPIJob) is given flavors pod set by pod set in
  Kueue's order, each pod set's own pods deciding which flavors match and each asking on top of what the pod sets
  before it were given (Kueue's ``assignmentUsage``), so its pod sets may land on different flavors; its mode is
  the worst of theirs. Its pods then ask for the flavored keys (each pod those of its pod set) and get the flavor's
  tolerations, so the session admits and places them on that flavor's quota and nodes. Workloads are taken by
  priority, then age. The first of each ClusterQueue is one of Kueue's scheduling cycle (``_Cycle``): all are
  given their flavors on the quota as the session opens, then admitted in Kueue's order (with Fair Sharing, its
  tournament) while they still fit, one that no longer does waiting for the next session, and one that needs a
  preemption without candidates keeping its ClusterQueue's quota from borrowers; after them, what a fitting one
  takes counts for the next ones.

Plain Python on the snapshot (no Django); the answers are exact integers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from engine.fairshare.drs import FairTree, FlavorResource, flavor_resource, kueue_tree
from engine.fairshare.kueue_preemption import (
    Candidate,
    CandidateIndex,
    classical_targets,
    fair_targets,
    find_candidates,
    hierarchical_advantage,
)
from engine.fairshare.kueuecycle import holding_tasks, pods_or_template, template_pods
from engine.fairshare.tournament import Head, Tournament
from engine.objects import (
    FlavorFungibility,
    FlavorGroup,
    KueueFlavors,
    KueuePreemption,
    NodeInfo,
    NodeSelectorRequirement,
    PodGroupInfo,
    ResourceFlavorSpec,
    Snapshot,
    TaskInfo,
    Toleration,
)
from engine.resources import FLAVOR_MARK, ResourceList, sorted_resources, split_flavor
from engine.session.plugins.kueuefair.arguments import KUEUEFAIR
from engine.vocabulary import PodGroupPhase, TaskStatus
from engine.wording import amount as words_of

__all__ = [
    "FlavorChoice",
    "FlavorMemo",
    "FlavorTry",
    "PodSetChoice",
    "admission_oracle",
    "assign_flavors",
    "flavor_of_request",
    "flavored",
    "flavored_nodes",
    "flavored_tasks",
    "flavors_sentence",
    "node_flavor",
    "unflavored",
    "with_kept_flavors",
]

_K = TypeVar("_K")
_V = TypeVar("_V")
_DONE = frozenset({TaskStatus.SUCCEEDED, TaskStatus.FAILED})
_HARD_EFFECTS = frozenset({"NoSchedule", "NoExecute"})

# Kueue's preemption modes, worst first (``granularMode.preemptionMode``): reclaiming from other ClusterQueues of the
# Cohort is better than preempting by priority within the ClusterQueue
_NO_FIT, _NO_CANDIDATES, _PREEMPT, _RECLAIM, _FIT = 0, 1, 2, 3, 4
_OUTCOME = {_NO_FIT: "does not fit", _NO_CANDIDATES: "would need a preemption its ClusterQueue may not make",
            _PREEMPT: "fits by preempting", _RECLAIM: "fits by reclaiming from other ClusterQueues",
            _FIT: "fits"}  # fmt: skip
_NEVER = KueuePreemption()


def flavored(resource: str, flavor: str) -> str:
    """The key of ``resource`` in ``flavor``: ``cpu@spot``."""
    return f"{resource}{FLAVOR_MARK}{flavor}"


def flavor_of_request(request: Mapping[str, int]) -> dict[str, str]:
    """The flavor each resource of a request is given, by resource (``{"cpu": "spot"}``; none when unflavored)."""
    out = {}
    for key in request:
        resource, flavor = split_flavor(key)
        if flavor:
            out[resource] = flavor
    return out


def flavors_sentence(flavors: Mapping[str, str], pod_sets: Mapping[str, Mapping[str, str]] | None = None) -> str:
    """A job's flavors for people, by flavor in the order first met over its resources in display order:
    ``spot for cpu, memory; a100 for nvidia.com/gpu`` ('' for none); for a workload whose pod sets were given
    different flavors (``pod_sets``: pod set -> resource -> flavor), pod set by pod set:
    ``pod set master: on-demand for cpu; pod set worker: spot for cpu``."""
    if pod_sets:
        return "; ".join(f"pod set {name}: {flavors_sentence(given)}" for name, given in pod_sets.items() if given)
    by_flavor: dict[str, list[str]] = {}
    for resource in sorted_resources(flavors):
        by_flavor.setdefault(flavors[resource], []).append(resource)
    return "; ".join(f"{flavor} for {', '.join(rs)}" for flavor, rs in by_flavor.items())


# -- nodes and the pods on them -----------------------------------------------------------------------------------
def node_flavor(node: NodeInfo, resource: str, flavors: KueueFlavors) -> str | None:
    """The flavor ``node`` offers ``resource`` in: among the resource's flavors, those whose labels the node carries
    all of; the one with the most labels, then the first met; None when none matches."""
    best: tuple[int, int] | None = None
    chosen = None
    for order, name in enumerate(flavors.resources.get(resource, ())):
        spec = flavors.flavors.get(name)
        labels = spec.node_labels if spec is not None else {}
        if spec is None or any(node.labels.get(k) != v for k, v in labels.items()):
            continue
        rank = (-len(labels), order)
        if best is None or rank < best:
            best, chosen = rank, name
    return chosen


def _node_keys(node: NodeInfo, flavors: KueueFlavors) -> dict[str, str]:
    """Each flavored resource of the snapshot the node offers, to its flavored key."""
    keys = {}
    for resource in flavors.resources:
        if resource in node.allocatable.raw:
            flavor = node_flavor(node, resource, flavors)
            if flavor is not None:
                keys[resource] = flavored(resource, flavor)
    return keys


def _renamed(amounts: Mapping[str, int], keys: Mapping[str, str]) -> ResourceList:
    out: dict[str, int] = {}
    for name, amount in amounts.items():
        key = keys.get(name, name)
        out[key] = out.get(key, 0) + amount
    return ResourceList(out)


class _Recall(Generic[_K, _V]):
    """The objects made by the last pass, by key: ``get`` hands the one made for the very same plain object (and an
    equal ``extra``) again, else makes it; ``done`` keeps only what this pass used."""

    __slots__ = ("new", "old")

    def __init__(self) -> None:
        self.old: dict[str, tuple[_K, object, _V]] = {}
        self.new: dict[str, tuple[_K, object, _V]] = {}

    def get(self, key: str, plain: _K, extra: Any, make: Callable[[_K, Any], _V]) -> _V:
        kept = self.old.get(key)
        if kept is not None and kept[0] is plain and (kept[1] is extra or kept[1] == extra):
            out = kept[2]
        else:
            out = make(plain, extra)
        self.new[key] = (plain, extra, out)
        return out

    def done(self) -> None:
        self.old, self.new = self.new, {}


class FlavorMemo:
    """The flavored objects of the last pass, for a caller that keeps a cluster in memory (``scheduling.feed.mirror``):
    a node, a pod on a node, a pod given its flavors and a podgroup with its flavored ``minResources`` are made once
    and handed again while their plain object (the same object: the mirror keeps one per unchanged row), the node's
    flavor and the flavors given are the same, so the engine's kept state (``engine.session.carry``, which finds what
    changed by identity) is brought up to date instead of rebuilt. Changed ``KueueFlavors`` (a ResourceFlavor, a
    queue's groups) forget everything. One pass at a time (the caller's lock); each function has its own."""

    __slots__ = ("_flavors", "given", "given_groups", "kept", "kept_groups", "nodes", "placed")

    def __init__(self) -> None:
        self._flavors: KueueFlavors | None = None
        self._empty()

    def _empty(self) -> None:
        self.nodes: _Recall[NodeInfo, tuple[NodeInfo, dict[str, str]]] = _Recall()
        self.placed: _Recall[TaskInfo, TaskInfo] = _Recall()  # pods on a node (``flavored_tasks``)
        self.kept: _Recall[TaskInfo, TaskInfo] = _Recall()  # admitted jobs' pods (``with_kept_flavors``)
        self.kept_groups: _Recall[PodGroupInfo, PodGroupInfo] = _Recall()
        self.given: _Recall[TaskInfo, TaskInfo] = _Recall()  # waiting jobs' pods (``assign_flavors``)
        self.given_groups: _Recall[PodGroupInfo, PodGroupInfo] = _Recall()

    def under(self, flavors: KueueFlavors) -> FlavorMemo:
        """This memo for ``flavors`` (emptied when they differ from the last ones)."""
        if self._flavors is not flavors and self._flavors != flavors:
            self._empty()
            self._flavors = flavors
        return self


def _memo(memo: FlavorMemo | None, flavors: KueueFlavors) -> FlavorMemo:
    return memo.under(flavors) if memo is not None else FlavorMemo()


def _flavored_node(node: NodeInfo, flavors: KueueFlavors) -> tuple[NodeInfo, dict[str, str]]:
    keys = _node_keys(node, flavors)
    return (dataclasses.replace(node, allocatable=_renamed(node.allocatable, keys)) if keys else node), keys


def _node_table(
    nodes: Mapping[str, NodeInfo], flavors: KueueFlavors, memo: FlavorMemo | None
) -> dict[str, tuple[NodeInfo, dict[str, str]]]:
    """Each node flavored, with its flavored keys (``_node_keys``), the memo's when the node is the same object."""
    recall = _memo(memo, flavors).nodes
    out = {name: recall.get(name, node, None, lambda n, _: _flavored_node(n, flavors)) for name, node in nodes.items()}
    recall.done()
    return out


def flavored_nodes(
    nodes: Mapping[str, NodeInfo],
    flavors: KueueFlavors,
    warnings: list[str] | None = None,
    memo: FlavorMemo | None = None,
) -> dict[str, NodeInfo]:
    """The nodes with their flavored resources under the flavored keys (``node_flavor``); into ``warnings``, per
    flavored resource, how many nodes offer it in none of its flavors (no workload given a flavor runs there).
    ``memo``: the same flavored object again for a node that is the same object as in its last pass."""
    out = {}
    unmatched: dict[str, int] = {}
    for name, (flavored_node, keys) in _node_table(nodes, flavors, memo).items():
        if warnings is not None:
            raw = nodes[name].allocatable.raw
            for resource in flavors.resources:
                if resource in raw and resource not in keys:
                    unmatched[resource] = unmatched.get(resource, 0) + 1
        out[name] = flavored_node
    for resource, names in sorted(flavors.resources.items()):
        bare = [f for f in names if f in flavors.flavors and not flavors.flavors[f].node_labels]
        if len(bare) > 1 and warnings is not None:
            warnings.append(
                f"flavors {', '.join(bare)} of {resource} have no nodeLabels: a node serves one flavor of a resource, "
                f"so the nodes that match no labelled flavor serve {bare[0]}, and a workload given "
                f"{' or '.join(bare[1:])} finds no node for its {resource} (give each flavor node labels)"
            )
    for resource, count in sorted(unmatched.items()):
        if warnings is not None:
            warnings.append(
                f"{count} node{'s' if count > 1 else ''} offer{'' if count > 1 else 's'} {resource} in none of its "
                f"flavors ({', '.join(flavors.resources[resource])}): no workload given one of them runs there "
                "(a node serves the flavor whose nodeLabels it carries)"
            )
    return out


def flavored_tasks(
    tasks: Mapping[str, TaskInfo],
    nodes: Mapping[str, NodeInfo],
    flavors: KueueFlavors,
    memo: FlavorMemo | None = None,
) -> dict[str, TaskInfo]:
    """The pods on a node asking for the flavored keys of that node (``nodes`` as read, before ``flavored_nodes``).
    ``memo``: the same flavored object again for a pod that is the same object on a node of the same flavors."""
    same: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}  # the nodes of the same flavors: one dict
    keys_of = {
        name: same.setdefault(tuple(keys.items()), keys)
        for name, (_, keys) in _node_table(nodes, flavors, memo).items()
        if keys
    }
    recall = _memo(memo, flavors).placed
    before, kept = recall.old, recall.new  # (``_Recall.get`` inlined: every placed pod of the cluster passes here)
    # one flavored request for the pods that share a request on nodes of the same flavors (the store shares them)
    shared: dict[tuple[int, int], ResourceList] = {}
    out = {}
    for uid, task in tasks.items():
        keys = keys_of.get(task.node) if task.node is not None else None
        if not keys:
            out[uid] = task
            continue
        was = before.get(uid)
        if was is not None and was[0] is task and (was[1] is keys or was[1] == keys):
            made = was[2]
        else:
            ident = (id(task.request), id(keys))
            request = shared.get(ident)
            if request is None:
                request = shared[ident] = _renamed(task.request, keys)
            made = dataclasses.replace(task, request=request)
        kept[uid] = (task, keys, made)
        out[uid] = made
    recall.done()
    return out


# -- the assignment -------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class FlavorTry:
    """One flavor the assigner looked at for a resource group: what it found (``outcome``) and why; ``pod_set``: the
    pod set it was tried for, in a workload of several ('' for a workload of one)."""

    flavor: str
    outcome: str
    reason: str = ""
    pod_set: str = ""


@dataclass(frozen=True, slots=True)
class PodSetChoice:
    """One pod set's flavors (resource -> flavor) in a workload of several, and the flavors it is held on."""

    name: str
    flavors: Mapping[str, str]
    held: tuple[str, ...] = ()


def _given_words(flavors: Mapping[str, str], held: tuple[str, ...]) -> str:
    by_flavor: dict[str, list[str]] = {}
    for resource, flavor in sorted(flavors.items()):
        by_flavor.setdefault(flavor, []).append(resource)
    return "; ".join(
        f"{'no flavor fits: held on ' if flavor in held else ''}flavor {flavor} for {', '.join(rs)}"
        for flavor, rs in by_flavor.items()
    )


def _tries_words(tries: tuple[FlavorTry, ...]) -> str:
    """The flavors tried, by pod set when they were tried for more than one."""
    by_set: dict[str, list[str]] = {}
    for t in tries:
        by_set.setdefault(t.pod_set, []).append(f"{t.flavor}: {t.outcome}" + (f" ({t.reason})" if t.reason else ""))
    if len(by_set) == 1:
        return "; ".join(next(iter(by_set.values())))
    return "; ".join(f"pod set {name}: " + "; ".join(said) for name, said in by_set.items())


@dataclass(frozen=True, slots=True)
class FlavorChoice:
    """A workload's flavors (resource -> flavor), the flavors tried, and the resource groups where no flavor fits
    or matches (``held``: the workload is held on the flavor that matched first, or on the group's first flavor when
    none matches, so that it waits as Kueue leaves it, the session saying what is missing). A workload of several
    pod sets whose pod sets were given different flavors has each one's in ``pod_sets`` (Kueue's order), and
    ``flavors`` holds, per resource, the flavor of the first pod set that asks for it."""

    flavors: Mapping[str, str]
    tries: tuple[FlavorTry, ...]
    held: tuple[str, ...] = ()
    pod_sets: tuple[PodSetChoice, ...] = ()

    def of_pod_set(self, name: str) -> Mapping[str, str]:
        """The flavors of the pods of pod set ``name`` (the workload's when its pod sets share them)."""
        for pod_set in self.pod_sets:
            if pod_set.name == name:
                return pod_set.flavors
        return self.flavors

    def sentence(self) -> str:
        """For people: ``flavor spot for cpu, memory (tried on-demand: does not fit (…); spot: fits)``; for pod sets
        given different flavors, each named: ``pod set launcher: flavor on-demand for cpu; pod set worker: …``."""
        if self.pod_sets:
            given = "; ".join(f"pod set {p.name}: {_given_words(p.flavors, p.held)}" for p in self.pod_sets)
        else:
            given = _given_words(self.flavors, self.held)
        tried = _tries_words(self.tries)
        return f"{given} (tried {tried})" if tried else given


@dataclass(frozen=True, slots=True)
class _Mode:
    preemption: int
    borrow: int


@dataclass(frozen=True, slots=True)
class _Pick:
    """A workload's flavors (``choice``), what it asks on them (``usage``), its worst mode over its resource groups
    (Kueue's representative mode, ``_NO_CANDIDATES`` for a preemption without candidates) and its borrowing level."""

    choice: FlavorChoice
    usage: Mapping[FlavorResource, int]
    mode: int
    borrow: int


def _affinity_matches(terms: tuple[tuple[NodeSelectorRequirement, ...], ...], labels: Mapping[str, str]) -> bool:
    """Kueue's ``flavorSelector``: the pod's required node affinity against a flavor's node labels, each term's
    expressions kept only for the keys the flavor labels (``matchFields`` never); a term left empty (or no term)
    matches every flavor."""
    kept = [tuple(e for e in term if e.key in labels and not e.match_field) for term in terms]
    if not kept or not all(kept):
        return True
    return any(all(e.matches(labels) for e in term) for term in kept)


def _preferred(a: _Mode, b: _Mode, fungibility: FlavorFungibility) -> bool:
    """Kueue's ``isPreferred``: is ``a`` a better assignment than ``b``?"""
    if a.preemption == _NO_FIT:
        return False
    if b.preemption == _NO_FIT:
        return True
    if (a.preemption == _NO_CANDIDATES) != (b.preemption == _NO_CANDIDATES):
        return a.preemption != _NO_CANDIDATES
    if fungibility.preference == "PreemptionOverBorrowing":
        if a.borrow != b.borrow:
            return a.borrow < b.borrow
        return a.preemption > b.preemption
    if a.preemption != b.preemption:
        return a.preemption > b.preemption
    return a.borrow < b.borrow


def _try_next(mode: _Mode, fungibility: FlavorFungibility) -> bool:
    """Kueue's ``shouldTryNextFlavor``."""
    if mode.preemption in (_NO_FIT, _NO_CANDIDATES):
        return True
    if mode.preemption in (_PREEMPT, _RECLAIM) and fungibility.when_can_preempt == "TryNextFlavor":
        return True
    return mode.borrow > 0 and fungibility.when_can_borrow == "TryNextFlavor"


def _asked(value: int, earlier: int, resource: str) -> str:
    """``3 cores of cpu asked``, with `` (1 core of it by the pod sets before)`` when the earlier pod sets asked some."""
    before = f" ({words_of(earlier, resource)} of it by the pod sets before)" if earlier else ""
    return f"{words_of(value, resource)} of {resource} asked{before}"


def _pod_sets(pg: PodGroupInfo, tasks: list[TaskInfo]) -> list[tuple[str, list[TaskInfo]]]:
    """The pod sets of ``pg``'s ``tasks`` in Kueue's order: for a workload of several (``pg.pod_sets``), the pods of
    each pod set by their role (a role not listed after them, as first met); else one pod set of them all."""
    if not pg.pod_sets:
        return [("", tasks)]
    by_role: dict[str, list[TaskInfo]] = {name: [] for name in pg.pod_sets}
    for task in tasks:
        by_role.setdefault(task.task_role, []).append(task)
    return [(name, members) for name, members in by_role.items() if members]


def _choice(sets: list[PodSetChoice], tries: tuple[FlavorTry, ...]) -> FlavorChoice:
    """The workload's choice from its pod sets' (each resource's flavor that of the first pod set asking it; each
    pod set named when they differ)."""
    if len(sets) == 1:
        return FlavorChoice(flavors=sets[0].flavors, tries=tries, held=sets[0].held)
    flavors: dict[str, str] = {}
    for pod_set in sets:
        for resource, flavor in pod_set.flavors.items():
            flavors.setdefault(resource, flavor)
    held = tuple(dict.fromkeys(f for pod_set in sets for f in pod_set.held))
    differ = any(flavors[r] != f for pod_set in sets for r, f in pod_set.flavors.items())
    return FlavorChoice(flavors=flavors, tries=tries, held=held, pod_sets=tuple(sets) if differ else ())


class _Assigner:
    indexed = True  # the preemptions simulated on the candidates indexed once (False: on the plain lists, as a check)

    def __init__(self, snapshot: Snapshot, flavors: KueueFlavors, plain: bool = False) -> None:
        self.snapshot = snapshot
        self.flavors = flavors
        usage: dict[str, dict[str, int]] = {}
        # by podgroup: what each admitted workload holds in flavored keys (``plain``: in every key, for the quota
        # of resources read in one flavor too: ``fit_mode``)
        held: dict[str, dict[str, int]] = {}
        for pg_key, pg, task in holding_tasks(snapshot):
            into = usage.setdefault(pg.queue, {})
            mine = held.setdefault(pg_key, {})
            for key, amount in task.request.raw.items():
                if plain or FLAVOR_MARK in key:
                    into[key] = into.get(key, 0) + amount
                    mine[key] = mine.get(key, 0) + amount
        self.tree: FairTree = kueue_tree(snapshot, usage)
        self.workloads = self._workloads(held)
        # each flavor-resource's candidates: a preemption for one takes only workloads that use it (Kueue's
        # ``frsNeedPreemption``), so each simulation looks at those alone
        # (made once for the pass, each list in Kueue's candidate order, so that no simulation sorts them again)
        self.using = CandidateIndex(self.workloads)
        policy = snapshot.policy
        self.fair = policy.plugin(KUEUEFAIR.name) is not None and policy.arguments_of(KUEUEFAIR).enable
        self._simulated: dict[tuple[object, ...], tuple[int, int]] = {}
        self._heights: dict[str, int] = {}

    def _workloads(self, held: Mapping[str, Mapping[str, int]]) -> list[Candidate]:
        """The admitted workloads as Kueue's preemption candidates: what each holds of its ClusterQueue's quota,
        its priority, and its creation as its admission (as the ``kueuefair`` plugin counts them)."""
        out = []
        for pg_key, amounts in sorted(held.items()):
            pg = self.snapshot.podgroups[pg_key]
            node = self.tree.nodes.get(pg.queue)
            if node is None or node.cohort:
                continue
            quota = self.tree.subtree[pg.queue]
            usage = {flavor_resource(k): v for k, v in amounts.items() if v and flavor_resource(k) in quota}
            if usage:
                out.append(
                    Candidate(pg_key, pg.queue, usage, pg.priority, pg.creation_timestamp, pg.creation_timestamp)
                )
        return out

    def _height(self, name: str) -> int:
        """Kueue's ``getNodeHeight``: 0 for a ClusterQueue, 1 for a Cohort of ClusterQueues only, else one more
        than its highest child Cohort."""
        known = self._heights.get(name)
        if known is None:
            tree = self.tree
            kids = tree.children.get(name, [])
            known = max([min(len(kids), 1), *(self._height(c) + 1 for c in kids if tree.nodes[c].cohort)])
            self._heights[name] = known
        return known

    def _borrow_level(self, queue: str, fr: FlavorResource, value: int) -> int:
        """How far up the tree the quota comes from, as Kueue's ``FindHeightOfLowestSubtreeThatFits`` measures it:
        0 within the ClusterQueue's own, else the height of the lowest Cohort on its path that holds it (of the top
        Cohort when none does)."""
        tree = self.tree
        path = tree.path_to_root(queue)
        if not path or tree.usage_of(queue).get(fr, 0) + value <= tree.subtree[queue].get(fr, 0):
            return 0
        for name in path:
            if tree.usage_of(name).get(fr, 0) + value <= tree.subtree[name].get(fr, 0):
                return self._height(name)
        return self._height(path[-1])

    def _mode(self, pg: PodGroupInfo, fr: FlavorResource, value: int, earlier: int = 0) -> tuple[_Mode, str]:
        """Kueue's ``fitsResourceQuota`` for ``value`` of ``fr`` asked by ``pg`` (``earlier`` of it by the pod sets
        before the one tried), with the reason when it does not simply fit."""
        queue = pg.queue
        tree = self.tree
        resource = fr[1]
        most = tree.potential_available(queue, fr)
        if value > most:
            asked = _asked(value, earlier, resource)
            return _Mode(_NO_FIT, 0), f"{asked}, at most {words_of(most, resource)}"
        available = tree.available(queue, fr)
        if value <= available:  # (the sentences only for what does not simply fit: most workloads fit)
            return _Mode(_FIT, self._borrow_level(queue, fr, value)), ""
        asked = _asked(value, earlier, resource)
        reason = f"{asked}, {words_of(max(available, 0), resource)} unused"
        # a preemption may make room when the ClusterQueue's own nominal quota holds the request, or a subtree below
        # the top of its tree does (a hierarchical advantage), or it may preempt while borrowing (borrowWithinCohort,
        # or fair sharing with reclaimWithinCohort)
        policy = self.snapshot.kueue_preemption.get(queue, _NEVER)
        nominal = tree.nodes[queue].nominal.get(fr, 0)
        borrowing = policy.borrow_within_cohort != "Never" or (self.fair and policy.reclaim_within_cohort != "Never")
        if value > nominal and not borrowing and not hierarchical_advantage(tree, queue, {fr: value}):
            return _Mode(_NO_FIT, 0), reason
        # Kueue's preemption oracle: the preemption itself, tried on the quota as it stands
        kind, level = self._simulate(pg, fr, value, policy)
        return _Mode(kind, level), reason

    def _simulate(self, pg: PodGroupInfo, fr: FlavorResource, value: int, policy: KueuePreemption) -> tuple[int, int]:
        """Kueue's ``SimulatePreemption``: the workloads its preemption (fair or classical) would take for ``value``
        of ``fr`` in ``pg``'s ClusterQueue; none: no candidates (with the borrowing level as it stands); some of the
        ClusterQueue's own: preempt, else reclaim, with the borrowing level once they are gone. Kept until a
        workload given a flavor adds its usage (``add``)."""
        tree, queue = self.tree, pg.queue
        created = pg.creation_timestamp
        # the creation counts only for LowerOrNewerEqualPriority: workloads of one priority share the answer
        newer = "LowerOrNewerEqualPriority" in (policy.within_cluster_queue, policy.reclaim_within_cohort)
        key = (queue, fr, value, pg.priority, created if newer else None)
        known = self._simulated.get(key)
        if known is not None:
            return known
        request = {fr: value}
        admitted, indexed = self.using.of(fr), self.indexed
        if self.fair:
            candidates = find_candidates(tree, queue, request, admitted, policy, pg.priority, created, indexed)
            strategies = self.snapshot.policy.arguments_of(KUEUEFAIR).strategies
            targets, fits = fair_targets(tree, queue, request, candidates, strategies)
            targets = targets if fits else []
        else:
            grouped = self.using.grouped(fr) if indexed else None
            targets = classical_targets(tree, queue, request, admitted, policy, pg.priority, created, grouped=grouped)
        if not targets:
            answer = (_NO_CANDIDATES, self._borrow_level(queue, fr, value))
        else:
            for c in targets:
                tree.add_usage(c.queue, c.usage, -1)
            level = self._borrow_level(queue, fr, value)
            for c in targets:
                tree.add_usage(c.queue, c.usage)
            answer = (_PREEMPT if any(c.queue == queue for c in targets) else _RECLAIM, level)
        self._simulated[key] = answer
        return answer

    @staticmethod
    def _matches(spec: ResourceFlavorSpec, tasks: Iterable[TaskInfo]) -> str:
        """Why the pods cannot have the flavor (an untolerated taint, a node selector its labels exclude), or ''."""
        for task in tasks:
            tolerations = (*task.tolerations, *spec.tolerations)
            for taint in spec.node_taints:
                if taint.effect in _HARD_EFFECTS and not any(t.tolerates(taint) for t in tolerations):
                    shown = (
                        f"{taint.key}={taint.value}:{taint.effect}" if taint.value else f"{taint.key}:{taint.effect}"
                    )
                    return f"untolerated taint {shown}"
            for key, value in task.node_selector.items():
                if key in spec.node_labels and spec.node_labels[key] != value:
                    return f"node selector {key}={value} excludes it"
            if task.node_affinity and not _affinity_matches(task.node_affinity, spec.node_labels):
                return "required node affinity excludes it"
        return ""

    def pick(
        self, pg: PodGroupInfo, tasks: list[TaskInfo], groups: tuple[FlavorGroup, ...], count: bool = True
    ) -> _Pick:
        """``pg``'s flavors on the quota as it stands, pod set by pod set in Kueue's order (``_pod_sets``), each
        asking on top of what the pod sets before it were given (Kueue's ``assignmentUsage``); ``count``: what it
        takes when it simply fits is added at once (a workload of a later cycle), else the caller adds it
        (``cycle``)."""
        fungibility = self.flavors.fungibility.get(pg.queue, FlavorFungibility())
        tries: list[FlavorTry] = []
        usage: dict[FlavorResource, int] = {}
        modes: list[_Mode] = []
        sets = [
            self._pod_set(pg, name, members, groups, fungibility, (tries, usage, modes))
            for name, members in _pod_sets(pg, tasks)
        ]
        out = _Pick(
            _choice(sets, tuple(tries)),
            usage,
            min((m.preemption for m in modes), default=_FIT),
            max((m.borrow for m in modes), default=0),
        )
        if count and out.mode == _FIT:
            self.add(pg.queue, usage)
        return out

    def _pod_set(
        self,
        pg: PodGroupInfo,
        name: str,
        tasks: list[TaskInfo],
        groups: tuple[FlavorGroup, ...],
        fungibility: FlavorFungibility,
        into: tuple[list[FlavorTry], dict[FlavorResource, int], list[_Mode]],
    ) -> PodSetChoice:
        """One pod set's flavor per resource group; the flavors tried, what it asks on its flavors (added to the
        earlier pod sets') and its modes appended to ``into``."""
        tries, usage, modes = into
        request: dict[str, int] = {}
        for task in tasks:
            for key, amount in task.request.raw.items():
                base = split_flavor(key)[0]
                request[base] = request.get(base, 0) + amount
        chosen: dict[str, str] = {}
        held: list[str] = []
        for group in groups:
            asked = {r: request[r] for r in group.resources if request.get(r)}
            if not asked or not group.flavors:
                continue
            best = self._group(pg, tasks, group, asked, fungibility, (tries, usage, name))
            fits = best is not None and best[0].preemption != _NO_FIT
            flavor = best[1] if best is not None and fits else ((best and best[2]) or group.flavors[0])
            if not fits:
                held.append(flavor)
            for resource in group.resources:
                chosen[resource] = flavor
            modes.append(best[0] if best is not None and fits else _Mode(_NO_FIT, 0))
            for resource, amount in asked.items():
                usage[(flavor, resource)] = usage.get((flavor, resource), 0) + amount
        return PodSetChoice(name, chosen, tuple(held))

    def _group(
        self,
        pg: PodGroupInfo,
        tasks: list[TaskInfo],
        group: FlavorGroup,
        asked: Mapping[str, int],
        fungibility: FlavorFungibility,
        pod_set: tuple[list[FlavorTry], Mapping[FlavorResource, int], str],
    ) -> tuple[_Mode, str, str | None] | None:
        """The best flavor of one resource group for ``asked`` by the pods ``tasks`` of one pod set (its mode, its
        name, the first flavor that matches), each flavor asked on top of what the earlier pod sets of the workload
        were given there (``pod_set``: the tries to append to, those earlier amounts, the pod set's name); None when
        no flavor of the group is a ResourceFlavor that matches."""
        tries, before, set_name = pod_set
        best: tuple[_Mode, str] | None = None
        first_match = None
        for name in group.flavors:
            spec = self.flavors.flavors.get(name)
            if spec is None:
                tries.append(FlavorTry(name, "is not a ResourceFlavor of the input", pod_set=set_name))
                continue
            refusal = self._matches(spec, tasks)
            if refusal:
                tries.append(FlavorTry(name, "does not match", refusal, set_name))
                continue
            first_match = first_match or name
            worst, why = _Mode(_FIT, 0), ""
            for resource, amount in asked.items():
                earlier = before.get((name, resource), 0)
                mode, reason = self._mode(pg, (name, resource), earlier + amount, earlier)
                if _preferred(worst, mode, fungibility):
                    worst, why = mode, reason
                if worst.preemption == _NO_FIT:
                    break
            outcome = _OUTCOME[worst.preemption]
            if worst.preemption == _FIT and worst.borrow:
                outcome = "fits by borrowing"
            tries.append(FlavorTry(name, outcome, why, set_name))
            if not _try_next(worst, fungibility):
                best = (worst, name)
                break
            if best is None or _preferred(worst, best[0], fungibility):
                best = (worst, name)
        return None if best is None else (best[0], best[1], first_match)

    def fit_mode(self, pg: PodGroupInfo, tasks: list[TaskInfo]) -> tuple[bool, str]:
        """Whether ``tasks`` of ``pg`` may be admitted on the quota as it stands, as Kueue's scheduler asks of an
        assignment (``getInitialAssignments``): they fit, or they fit by a preemption that finds workloads to
        preempt; with what was found, for people. The resources of its ClusterQueue's flavored resource groups are
        asked through their flavors (``pick``), the others (read in one flavor) each on its quota (the assigner
        made with ``plain``); the worst answer is the workload's (Kueue's representative mode)."""
        groups = self.flavors.groups.get(pg.queue, ())
        worst, fungibility = _Mode(_FIT, 0), FlavorFungibility()
        if groups:
            pick = self.pick(pg, tasks, groups, count=False)
            worst = _Mode(pick.mode, pick.borrow)
        grouped = {r for group in groups for r in group.resources}
        request: dict[FlavorResource, int] = {}
        for task in tasks:
            for key, amount in task.request.raw.items():
                fr = flavor_resource(key)
                if fr[1] not in grouped:
                    request[fr] = request.get(fr, 0) + amount
        quota = self.tree.subtree.get(pg.queue, {})
        for fr, amount in sorted(request.items()):
            if amount and fr in quota:
                mode, _ = self._mode(pg, fr, amount)
                if _preferred(worst, mode, fungibility):
                    worst = mode
        return worst.preemption >= _PREEMPT, _OUTCOME[worst.preemption]

    def add(self, queue: str, amounts: Mapping[FlavorResource, int], sign: int = 1) -> None:
        """``amounts`` added to (``sign=-1``: taken from) ``queue``'s usage; the preemptions simulated counted the
        quota as it was."""
        if amounts:
            self.tree.add_usage(queue, amounts, sign)
            self._simulated.clear()

    def still_fits(self, queue: str, usage: Mapping[FlavorResource, int]) -> bool:
        """Whether ``usage`` fits ``queue``'s available quota now (Kueue's ``Fits`` at admission in the cycle)."""
        return all(amount <= self.tree.available(queue, fr) for fr, amount in usage.items())

    def to_reserve(self, queue: str, pick: _Pick) -> dict[FlavorResource, int]:
        """Kueue's ``quotaResourcesToReserve`` for a workload that needs a preemption without candidates: borrowing,
        what it asks within its borrowing limit; else what it asks within its ClusterQueue's unused nominal quota."""
        node = self.tree.nodes[queue]
        used = self.tree.usage_of(queue)
        out = {}
        for fr, amount in pick.usage.items():
            if pick.borrow > 0:
                limit = node.borrowing_limit.get(fr)
                room = amount if limit is None else self.tree.subtree[queue].get(fr, 0) + limit - used.get(fr, 0)
            else:
                room = node.nominal.get(fr, 0) - used.get(fr, 0)
            if min(amount, room) > 0:
                out[fr] = min(amount, room)
        return out

    def unsure_reclaimer(self, queue: str) -> str | None:
        """``queue``'s ``reclaimWithinCohort`` when it cannot always reclaim what it lends (anything but Any), or
        None (Kueue's ``CanAlwaysReclaim``)."""
        policy = self.snapshot.kueue_preemption.get(queue, _NEVER).reclaim_within_cohort
        return None if policy == "Any" else policy


def _given(task: TaskInfo, chosen: Mapping[str, str], flavors: KueueFlavors) -> TaskInfo:
    """``task`` asking for its resources in the chosen flavors, with those flavors' tolerations (a flavor it had
    before gives its tolerations back)."""
    before = set(flavor_of_request(task.request).values())
    dropped = {t for f in before if f in flavors.flavors for t in flavors.flavors[f].tolerations}
    tolerations: list[Toleration] = [t for t in task.tolerations if t not in dropped]
    request: dict[str, int] = {}
    for key, amount in task.request.raw.items():
        base = split_flavor(key)[0]
        new = flavored(base, chosen[base]) if base in chosen else base
        request[new] = request.get(new, 0) + amount
    for flavor in dict.fromkeys(chosen.values()):
        for t in flavors.flavors[flavor].tolerations if flavor in flavors.flavors else ():
            if t not in tolerations:
                tolerations.append(t)
    return dataclasses.replace(task, request=ResourceList(request), tolerations=tuple(tolerations))


def _given_group(pg: PodGroupInfo, chosen: Mapping[str, str]) -> PodGroupInfo:
    """``pg`` with its ``minResources`` in the chosen flavors (any flavor it had before dropped)."""
    assert pg.min_resources is not None
    keys = {r: flavored(r, f) for r, f in chosen.items()}
    plain = {split_flavor(k)[0] if FLAVOR_MARK in k else k: v for k, v in pg.min_resources.items()}
    return dataclasses.replace(pg, min_resources=_renamed(plain, keys))


# per flavors given (resource -> flavor, as sorted items), what the pods given them ask for (plain keys, sorted items)
_Parts = tuple[tuple[tuple[tuple[str, str], ...], tuple[tuple[str, int], ...]], ...]


def _by_flavors(
    tasks: Iterable[TaskInfo], by_role: Mapping[str, Mapping[str, str]], otherwise: Mapping[str, str]
) -> _Parts:
    """What the pods ask for in their plain keys, summed per the flavors each is given (its role's in ``by_role``,
    else ``otherwise``)."""
    sums: dict[tuple[tuple[str, str], ...], dict[str, int]] = {}
    for task in tasks:
        into = sums.setdefault(tuple(sorted(by_role.get(task.task_role, otherwise).items())), {})
        for key, amount in task.request.raw.items():
            base = split_flavor(key)[0]
            into[base] = into.get(base, 0) + amount
    return tuple((chosen, tuple(sorted(amounts.items()))) for chosen, amounts in sums.items())


def _given_podgroup(
    recall: _Recall[PodGroupInfo, PodGroupInfo], pg: PodGroupInfo, tasks: Iterable[TaskInfo], choice: FlavorChoice
) -> PodGroupInfo:
    """``pg`` with its ``minResources`` in the chosen flavors: for pod sets given different flavors, each pod set's
    part (what its pods ask for) in its own flavors, what its pods do not account for in the workload's."""
    if not choice.pod_sets:
        return recall.get(pg.key, pg, choice.flavors, _given_group)
    parts = _by_flavors(tasks, {p.name: p.flavors for p in choice.pod_sets}, choice.flavors)
    return recall.get(pg.key, pg, (tuple(sorted(choice.flavors.items())), parts), _split_group)


def _split_group(pg: PodGroupInfo, extra: tuple[tuple[tuple[str, str], ...], _Parts]) -> PodGroupInfo:
    assert pg.min_resources is not None
    chosen, parts = extra
    plain = {split_flavor(k)[0] if FLAVOR_MARK in k else k: v for k, v in pg.min_resources.items()}
    out: dict[str, int] = {}
    for given, amounts in parts:
        keys = {r: flavored(r, f) for r, f in given}
        for resource, amount in amounts:
            take = min(amount, plain.get(resource, 0))
            if take > 0:
                key = keys.get(resource, resource)
                out[key] = out.get(key, 0) + take
                plain[resource] -= take
    rest = {r: v for r, v in plain.items() if v > 0}
    for key, amount in _renamed(rest, {r: flavored(r, f) for r, f in chosen}).items():
        out[key] = out.get(key, 0) + amount
    return dataclasses.replace(pg, min_resources=ResourceList(out))


_Work = list[tuple[PodGroupInfo, list[TaskInfo]]]


class _Cycle:
    """Kueue's scheduling cycle over the heads of the ClusterQueues (``pkg/scheduler/scheduler.go``, ``schedule``):
    each head is given its flavors on the quota as the session opens (``nominate``), then taken in Kueue's order
    (less borrowing first, then higher priority, then older: ``makeClassicalIterator``; with Fair Sharing, one at a
    time by Kueue's tournament over the Cohort tree, ``engine.fairshare.tournament``): one that simply fits is admitted if it still fits what the heads before it took, else
    it waits for the next session (``Workload no longer fits after processing another workload``); one that needs
    a preemption without candidates, in a ClusterQueue whose ``reclaimWithinCohort`` is not Any, keeps the quota it
    asks of its own (``reserveCapacityForUnreclaimablePreempt``), so that no other ClusterQueue borrows it in the
    cycle; only in its first session (no ``Unschedulable`` condition yet): Kueue then sets it aside as inadmissible,
    and the next cycle admits the borrower (it comes back when its Cohort changes, which is not followed here). The workloads after the heads are given their flavors one after another on what the cycle left (Kueue's
    next cycles); a head that waits keeps the later workloads of its ClusterQueue waiting behind it."""

    def __init__(self, assigner: _Assigner) -> None:
        self.assigner = assigner
        self.picks: dict[str, _Pick] = {}
        self.waits: dict[str, str] = {}  # podgroup key -> why it waits this session
        self.reserved: list[tuple[str, dict[FlavorResource, int], str, str]] = []  # queue, amounts, job, policy
        self.admitted: list[str] = []
        self.stopped: dict[str, str] = {}  # ClusterQueue -> its head that waits

    def heads(self, work: _Work, groups: Mapping[str, tuple[FlavorGroup, ...]]) -> None:
        assigner = self.assigner
        firsts: dict[str, tuple[PodGroupInfo, list[TaskInfo]]] = {}
        for pg, tasks in work:
            firsts.setdefault(pg.queue, (pg, tasks))
        for pg, tasks in firsts.values():
            self.picks[pg.key] = assigner.pick(pg, tasks, groups[pg.queue], count=False)
        if assigner.fair:
            self._fair_heads([pg for pg, _ in firsts.values()])
            return
        order = sorted(
            firsts.values(),
            key=lambda e: (self.picks[e[0].key].borrow, -e[0].priority, e[0].creation_timestamp, e[0].key),
        )
        for pg, _ in order:
            self._admit(pg, self.picks[pg.key])

    def _fair_heads(self, firsts: list[PodGroupInfo]) -> None:
        """With Kueue's Fair Sharing: the heads taken one at a time by the tournament (``next_head``), each on the
        usage the heads before it added (the shares computed again), as ``fairSharingIterator.pop``; what a head
        asks counts in its shares only when some flavor holds it (Kueue's assignment usage)."""
        tree = self.assigner.tree
        pgs = {pg.key: pg for pg in firsts}
        left: dict[str, Head] = {}
        for pg in firsts:
            if pg.queue in tree.nodes:
                pick = self.picks[pg.key]
                usage = {} if pick.mode == _NO_FIT else pick.usage
                left[pg.queue] = Head(pg.key, pg.queue, usage, pg.priority, pg.creation_timestamp)
        tournament = Tournament(tree, left)
        while tournament:
            head = tournament.pop()
            version = tree.version
            self._admit(pgs[head.key], self.picks[head.key])
            if tree.version != version:  # it took its quota, or kept some (``_admit``)
                tournament.changed(head.queue)
        for pg in firsts:  # (every ClusterQueue is in the tree; one that is not has no share and comes last)
            if pg.queue not in tree.nodes:
                self._admit(pg, self.picks[pg.key])

    def _admit(self, pg: PodGroupInfo, pick: _Pick) -> None:
        assigner, queue = self.assigner, pg.queue
        if pick.mode == _FIT:
            if assigner.still_fits(queue, pick.usage):
                assigner.add(queue, pick.usage)
                self.admitted.append(pg.key)
            else:
                self._wait(pg, pick)
        elif (
            pick.mode == _NO_CANDIDATES
            and (policy := assigner.unsure_reclaimer(queue)) is not None
            and not any(c.type == "Unschedulable" for c in pg.conditions)
        ):
            amounts = assigner.to_reserve(queue, pick)
            if amounts:
                assigner.add(queue, amounts)
                self.reserved.append((queue, amounts, pg.key, policy))

    def _wait(self, pg: PodGroupInfo, pick: _Pick) -> None:
        kept = self._kept_from(pg, pick)
        if kept:
            why = kept
        else:
            before = ", ".join(self.admitted)
            why = (
                f"Kueue's scheduling cycle: its flavors were chosen on the quota as the session opened, and it no "
                f"longer fits once {before} took theirs; it is tried again next session"
            )
        self.waits[pg.key] = why
        self.stopped[pg.queue] = pg.key

    def _kept_from(self, pg: PodGroupInfo, pick: _Pick) -> str:
        """Why ``pg`` waits when it would fit but for the quota kept by ClusterQueues unsure to reclaim it, else ''."""
        if not self.reserved:
            return ""
        assigner = self.assigner
        for queue, amounts, _, _ in self.reserved:
            assigner.add(queue, amounts, -1)
        try:
            fits = assigner.still_fits(pg.queue, pick.usage)
        finally:
            for queue, amounts, _, _ in self.reserved:
                assigner.add(queue, amounts)
        if not fits:
            return ""
        kept = "; ".join(
            f"{queue} keeps {', '.join(f'{words_of(v, r)} of {r} ({f})' for (f, r), v in sorted(amounts.items()))} "
            f"for {job}, which needs a preemption with no candidates, and its reclaimWithinCohort ({policy}) could not "
            "be sure to take it back"
            for queue, amounts, job, policy in self.reserved
        )
        return f"Kueue's scheduling cycle: {kept}; it is tried again next session"

    def later(self, pg: PodGroupInfo, tasks: list[TaskInfo], groups: tuple[FlavorGroup, ...]) -> _Pick:
        """A workload after its ClusterQueue's head, on what the cycle and the workloads before it left."""
        head = self.stopped.get(pg.queue)
        if head is not None:
            pick = self.assigner.pick(pg, tasks, groups, count=False)
            self.waits[pg.key] = f"Kueue's scheduling cycle: it waits behind {head}, the first job of its ClusterQueue"
            return pick
        pick = self.assigner.pick(pg, tasks, groups)
        if pick.mode == _NO_FIT and (kept := self._kept_from(pg, pick)):
            self.waits[pg.key] = kept
        return pick


def admission_oracle(snapshot: Snapshot) -> Callable[[PodGroupInfo, list[TaskInfo]], tuple[bool, str]]:
    """Kueue's question of an assignment on the quota as ``snapshot`` stands (``_Assigner.fit_mode``): may these
    pods of this workload be admitted, by fitting or by a preemption that finds workloads to preempt, and what was
    found. Every ClusterQueue's quota counts, flavored or read in one flavor (``engine.partial`` sizes Kueue's
    partial admission with it)."""
    return _Assigner(snapshot, snapshot.kueue_flavors or KueueFlavors(), plain=True).fit_mode


def assign_flavors(snapshot: Snapshot, memo: FlavorMemo | None = None) -> tuple[Snapshot, dict[str, FlavorChoice]]:
    """Each waiting workload of a ClusterQueue with flavored resource groups given its flavors (see the module
    docstring and ``_Cycle``), and the choice made for each, by podgroup key. A workload is waiting while its
    podgroup is Pending and none of its pods is on a node; the others keep theirs. Those Kueue's cycle leaves waiting
    are named in the snapshot's admission levers (``cycle_waits``), so the session does not admit them. Without
    flavors, the snapshot as it is. ``memo``: the same objects again for a pod or podgroup that is the same object
    given the same flavors as in its last pass."""
    flavors = snapshot.kueue_flavors
    if flavors is None or not flavors.groups:
        return snapshot, {}
    kept = _memo(memo, flavors)
    pods, groups = kept.given, kept.given_groups
    by_podgroup = snapshot.tasks_by_podgroup
    short = dict(snapshot.admission.pod_group_waits)  # Kueue pod groups short of pods: no workload, no flavor yet
    waiting = [
        pg
        for key, pg in snapshot.podgroups.items()
        if pg.queue in flavors.groups
        and pg.phase == PodGroupPhase.PENDING
        and key not in short
        and not any(t.node is not None for t in by_podgroup.get(key, ()))
    ]
    waiting.sort(key=lambda pg: (-pg.priority, pg.creation_timestamp, pg.key))
    templates = dict(snapshot.admission.templates)  # suspended, without pods: their templates' pods stand for them
    work = [(pg, tasks) for pg in waiting if (tasks := pods_or_template(pg, by_podgroup.get(pg.key, ()), templates))]
    cycle = _Cycle(_Assigner(snapshot, flavors))
    cycle.heads(work, flavors.groups)
    choices: dict[str, FlavorChoice] = {}
    changed: list[TaskInfo] = []
    podgroups: list[PodGroupInfo] = []
    for pg, tasks in work:
        pick = cycle.picks.get(pg.key) or cycle.later(pg, tasks, flavors.groups[pg.queue])
        choice = pick.choice
        if not choice.flavors and not choice.tries:
            continue  # it asks for no resource of its ClusterQueue's flavored groups
        choices[pg.key] = choice
        templated = pg.key in templates and tasks[0] is template_pods(templates[pg.key])[0]
        if templated:
            pass  # its templates' pods, not the snapshot's (the pods, once made, keep the flavors)
        elif choice.pod_sets:
            changed.extend(
                pods.get(t.uid, t, choice.of_pod_set(t.task_role), lambda t, c: _given(t, c, flavors)) for t in tasks
            )
        else:
            chosen = choice.flavors
            changed.extend(pods.get(t.uid, t, chosen, lambda t, c: _given(t, c, flavors)) for t in tasks)
        if pg.min_resources is not None:
            podgroups.append(_given_podgroup(groups, pg, tasks if templated else by_podgroup.get(pg.key, ()), choice))
    pods.done()
    groups.done()
    out = snapshot.with_tasks(changed) if changed else snapshot
    out = out.with_podgroups(podgroups) if podgroups else out
    waits = {k: v for k, v in cycle.waits.items() if k in choices}
    if waits or out.admission.cycle_waits:
        out = out.replace(admission=dataclasses.replace(out.admission, cycle_waits=waits))
    return out, choices


def _kept_group(pg: PodGroupInfo, chosen: Mapping[str, str]) -> PodGroupInfo:
    assert pg.min_resources is not None
    keys = {r: flavored(r, f) for r, f in chosen.items()}
    return dataclasses.replace(pg, min_resources=_renamed(pg.min_resources, keys))


def _kept_by_pod_set(
    pg: PodGroupInfo,
    placed: list[TaskInfo],
    chosen: Mapping[str, str],
    flavors: KueueFlavors,
    stored: Mapping[str, Mapping[str, str]],
) -> dict[str, dict[str, str]]:
    """For a workload of several pod sets, each pod set's kept flavors, by role: the job's (``chosen``) with those
    kept for the pod set (``stored``: pod set -> resource -> flavor) over them, and those of the pod set's own pods on
    nodes over these (none for a pod set with neither, nor for a workload of one)."""
    if not pg.pod_sets:
        return {}
    out: dict[str, dict[str, str]] = {}
    for role, given in stored.items():
        if role in pg.pod_sets:
            out[role] = {**chosen, **{r: f for r, f in given.items() if f in flavors.resources.get(r, ())}}
    for task in placed:
        mine = out.setdefault(task.task_role, dict(chosen))
        mine.update((r, f) for r, f in flavor_of_request(task.request).items() if f in flavors.resources.get(r, ()))
    return out


def with_kept_flavors(
    snapshot: Snapshot,
    stored: Mapping[str, Mapping[str, str]],
    memo: FlavorMemo | None = None,
    pod_sets: Mapping[str, Mapping[str, Mapping[str, str]]] | None = None,
) -> Snapshot:
    """``snapshot`` with the pods not on a node of each admitted job (its podgroup past Pending, or with a pod on a
    node) asking for the flavors it was given, for a store whose pods keep their plain requests (the dashboard's): a
    job keeps its flavors until it ends, as in ``fairway simulate``, where its pods keep the flavored keys. A job's
    flavors are those of its pods on nodes (``flavored_tasks``), then ``stored`` (by podgroup key, resource ->
    flavor: the assignment kept with it); a flavor the snapshot does not have for a resource is left out. Waiting jobs
    are left to ``assign_flavors``. ``memo``: the same objects again for a pod or podgroup that is the same object
    given the same flavors as in its last pass. ``pod_sets``: for a workload whose pod sets were given different
    flavors, each pod set's (by podgroup key, pod set, resource -> flavor), which its pods not on a node ask for and
    its minimum resources, while it has no pod, keep (split by its pod sets' templates, ``AdmissionLevers.templates``).
    """
    flavors = snapshot.kueue_flavors
    if flavors is None:
        return snapshot
    pod_sets = pod_sets or {}
    kept = _memo(memo, flavors)
    pods, groups = kept.kept, kept.kept_groups
    changed: list[TaskInfo] = []
    podgroups: list[PodGroupInfo] = []
    for key, tasks in snapshot.tasks_by_podgroup.items():
        pg = snapshot.podgroups.get(key)
        if pg is None or (pg.min_resources is None and all(t.node is not None or t.status in _DONE for t in tasks)):
            continue  # (nothing of it to give flavors to: most running jobs)
        placed = [t for t in tasks if t.node is not None]
        if pg.phase == PodGroupPhase.PENDING and not placed:
            continue
        chosen = dict(stored.get(key, {}))
        for task in placed:
            chosen.update(flavor_of_request(task.request))
        chosen = {r: f for r, f in chosen.items() if f in flavors.resources.get(r, ())}
        if not chosen:
            continue
        of_role = _kept_by_pod_set(pg, placed, chosen, flavors, pod_sets.get(key, {}))
        for task in tasks:
            mine = of_role.get(task.task_role, chosen)
            if task.node is None and task.status not in _DONE and any(r in mine for r in task.request.raw):
                changed.append(pods.get(task.uid, task, mine, lambda t, c: _given(t, c, flavors)))
        if pg.min_resources is not None and any(r in chosen for r in pg.min_resources.raw):
            if any(m != chosen for m in of_role.values()):
                parts = _by_flavors(tasks, of_role, chosen)
                podgroups.append(groups.get(key, pg, (tuple(sorted(chosen.items())), parts), _split_group))
            else:
                podgroups.append(groups.get(key, pg, chosen, _kept_group))
    podgroups.extend(_kept_without_pods(snapshot, stored, flavors, groups, pod_sets))
    pods.done()
    groups.done()
    out = snapshot.with_tasks(changed) if changed else snapshot
    return out.with_podgroups(podgroups) if podgroups else out


def _kept_without_pods(
    snapshot: Snapshot,
    stored: Mapping[str, Mapping[str, str]],
    flavors: KueueFlavors,
    groups: _Recall[PodGroupInfo, PodGroupInfo],
    pod_sets: Mapping[str, Mapping[str, Mapping[str, str]]],
) -> Iterator[PodGroupInfo]:
    """The admitted podgroups with no pod yet (a suspended Kueue Job or workload admitted from its templates, whose
    controller makes its pods once resumed) with their minimum resources in their stored flavors: a workload's whose
    pod sets were given different ones (``pod_sets``) each pod set's part (its template's) in its own."""
    by_podgroup = snapshot.tasks_by_podgroup
    templates = dict(snapshot.admission.templates)
    for key, given in stored.items():
        pg = snapshot.podgroups.get(key)
        if pg is None or pg.phase == PodGroupPhase.PENDING or pg.min_resources is None or key in by_podgroup:
            continue
        chosen = {r: f for r, f in given.items() if f in flavors.resources.get(r, ())}
        if not any(r in chosen for r in pg.min_resources.raw):
            continue
        of_role = _kept_by_pod_set(pg, [], chosen, flavors, pod_sets.get(key, {}))
        if key in templates and any(m != chosen for m in of_role.values()):
            parts = _by_flavors(template_pods(templates[key]), of_role, chosen)
            yield groups.get(key, pg, (tuple(sorted(chosen.items())), parts), _split_group)
        else:
            yield groups.get(key, pg, chosen, _kept_group)


def _summed(amounts: Mapping[str, int]) -> ResourceList:
    out: dict[str, int] = {}
    for key, amount in amounts.items():
        base = split_flavor(key)[0]
        out[base] = out.get(base, 0) + amount
    return ResourceList(out)


def unflavored(snapshot: Snapshot) -> Snapshot:
    """``snapshot`` with one flavor per resource again, for a store that keeps one (the dashboard's trees): each
    flavored amount added into its resource's (quota, limits, nodes, requests), the flavors dropped."""
    if snapshot.kueue_flavors is None:
        return snapshot
    queues = {
        name: dataclasses.replace(
            q,
            deserved=_summed(q.deserved),
            capability=_summed(q.capability),
            guarantee=_summed(q.guarantee),
            borrowing_limit=_summed(q.borrowing_limit),
            lending_limit=_summed(q.lending_limit),
        )
        for name, q in snapshot.queues.items()
    }
    nodes = {name: dataclasses.replace(n, allocatable=_summed(n.allocatable)) for name, n in snapshot.nodes.items()}
    tasks = {uid: dataclasses.replace(t, request=_summed(t.request)) for uid, t in snapshot.tasks.items()}
    podgroups = {
        key: pg if pg.min_resources is None else dataclasses.replace(pg, min_resources=_summed(pg.min_resources))
        for key, pg in snapshot.podgroups.items()
    }
    return snapshot.replace(queues=queues, nodes=nodes, tasks=tasks, podgroups=podgroups, kueue_flavors=None)
