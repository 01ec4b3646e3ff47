"""Kueue's scheduling cycle with Fair Sharing on where no resource has several flavors (``pkg/scheduler/scheduler.go``
and ``fair_sharing_iterator.go`` at the pinned commit ff69552): which waiting workloads the cycle leaves waiting this
session. (With several flavors of a resource, ``engine.flavors._Cycle`` runs the cycle with the flavor assigner.)

* The **heads**: each ClusterQueue's first waiting workload (higher priority, then older; a workload waits while its
  podgroup is Pending and none of its pods is on a node), on the ClusterQueues' usage as the session opens (what the
  admitted podgroups' pods ask).
* Each head either **fits** (what it asks within what its ClusterQueue may take now, Kueue's ``available``), or could
  fit by preempting (within its ClusterQueue's potential available, and within its nominal quota unless it has a
  hierarchical advantage or may preempt while borrowing: Kueue's ``Preempt`` mode, what it asks counted in its
  shares), or does not fit (nothing counted).
* The heads are taken one at a time by Kueue's tournament (``engine.fairshare.tournament.next_head``); a head that
  fits is admitted when it still fits what the heads before it took, else it **waits** for the next session, and the
  later workloads of its ClusterQueue wait behind it. A head that would preempt is left to the session (its
  preemption is the session's; it takes no quota in the cycle here).
* The **later** workloads (by priority, then age, over all ClusterQueues; Kueue's next cycles) are counted one after
  another on what the heads left, as the flavor assigner counts them; one that does not fit is left to the session
  (which may preempt for it), as there.

Plain Python on the snapshot; exact integers.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from engine.fairshare.drs import FairTree, FlavorResource, flavor_resource, kueue_tree
from engine.fairshare.kueue_preemption import hierarchical_advantage
from engine.fairshare.tournament import Head, Tournament
from engine.objects import KueuePreemption, PodGroupInfo, Snapshot, TaskInfo
from engine.vocabulary import PodGroupPhase, TaskStatus

__all__ = ["fair_cycle_waits", "holding_tasks", "pods_or_template", "template_pods"]

_DONE = frozenset({TaskStatus.SUCCEEDED, TaskStatus.FAILED})
_NEVER = KueuePreemption()
_AGAIN = "it is tried again next session"


def holding_tasks(snapshot: Snapshot) -> Iterator[tuple[str, PodGroupInfo, TaskInfo]]:
    """The pods whose requests count as their ClusterQueue's usage, with their podgroup's key and podgroup: the
    unfinished pods of admitted podgroups (Inqueue or Running) and any unfinished pod on a node; and for an admitted
    podgroup with no pod at all yet (a Kueue Job resumed on its admission, whose controller is making them), a pod
    asking for its minimum resources: Kueue counts an admitted workload's quota whether or not its pods exist."""
    by_podgroup = snapshot.tasks_by_podgroup
    for key, members in by_podgroup.items():
        pg = snapshot.podgroups.get(key)
        if pg is None:
            continue
        admitted = pg.phase in (PodGroupPhase.INQUEUE, PodGroupPhase.RUNNING)
        for task in members:
            if task.status not in _DONE and (admitted or task.node is not None):
                yield key, pg, task
    for key, pg in snapshot.podgroups.items():
        if pg.phase == PodGroupPhase.INQUEUE and pg.min_resources is not None and key not in by_podgroup:
            yield key, pg, TaskInfo(pg.namespace, f"{pg.name}-admitted", key, request=pg.min_resources)


def pods_or_template(
    pg: PodGroupInfo, tasks: Iterable[TaskInfo], templates: Mapping[str, TaskInfo | tuple[TaskInfo, ...]]
) -> list[TaskInfo]:
    """A waiting workload's pods as Kueue's flavor assigner and scheduling cycle read them: its unfinished ``tasks``;
    for a suspended one with none, the pods its templates stand for (``templates``: ``AdmissionLevers.templates``):
    a Job's one pod asking for the whole Job, a workload's one per pod set asking for the whole pod set."""
    unfinished = [t for t in tasks if t.status not in _DONE]
    if unfinished or pg.key not in templates:
        return unfinished
    return template_pods(templates[pg.key])


def template_pods(template: TaskInfo | tuple[TaskInfo, ...]) -> list[TaskInfo]:
    """The pods an entry of ``AdmissionLevers.templates`` stands for: a Job's template pod, or a workload's pod sets'."""
    return list(template) if isinstance(template, tuple) else [template]


def _usage(snapshot: Snapshot) -> dict[str, dict[str, int]]:
    """Each queue's usage: the requests of its holding pods (``holding_tasks``)."""
    usage: dict[str, dict[str, int]] = {}
    for _key, pg, task in holding_tasks(snapshot):
        into = usage.setdefault(pg.queue, {})
        for r, v in task.request.raw.items():
            into[r] = into.get(r, 0) + v
    return usage


def _waiting(snapshot: Snapshot, tree: FairTree) -> list[tuple[PodGroupInfo, dict[FlavorResource, int]]]:
    """The waiting podgroups of the tree's ClusterQueues in Kueue's order (higher priority, older, key), each with
    what it asks of its ClusterQueue's quota."""
    out = []
    by_podgroup = snapshot.tasks_by_podgroup
    short = dict(snapshot.admission.pod_group_waits)  # Kueue pod groups short of pods: no workload yet
    templates = dict(snapshot.admission.templates)  # suspended Jobs without pods: their template's
    for pg in sorted(snapshot.podgroups.values(), key=lambda p: (-p.priority, p.creation_timestamp, p.key)):
        node = tree.nodes.get(pg.queue)
        if node is None or node.cohort or pg.phase != PodGroupPhase.PENDING or pg.suspended or pg.key in short:
            continue
        tasks: tuple[TaskInfo, ...] = by_podgroup.get(pg.key, ())
        if any(t.node is not None for t in tasks):
            continue
        asked: dict[FlavorResource, int] = {}
        for task in pods_or_template(pg, tasks, templates):
            for r, v in task.request.raw.items():
                fr = flavor_resource(r)
                if v and fr in tree.subtree[pg.queue]:
                    asked[fr] = asked.get(fr, 0) + v
        if asked:
            out.append((pg, asked))
    return out


def _counted(tree: FairTree, queue: str, asked: Mapping[FlavorResource, int], policy: KueuePreemption) -> bool:
    """Whether a head that does not fit now is in Kueue's ``Preempt`` mode (what it asks counts in its shares): within
    the ClusterQueue's potential available, and within its nominal quota unless a hierarchical advantage or a
    preemption while borrowing (``borrowWithinCohort``, or Fair Sharing with ``reclaimWithinCohort``) lets it go on."""
    if any(v > tree.potential_available(queue, fr) for fr, v in asked.items()):
        return False
    if policy.borrow_within_cohort != "Never" or policy.reclaim_within_cohort != "Never":
        return True
    nominal = tree.nodes[queue].nominal
    return all(v <= nominal.get(fr, 0) for fr, v in asked.items()) or hierarchical_advantage(tree, queue, asked)


def _fits(tree: FairTree, queue: str, asked: Mapping[FlavorResource, int]) -> bool:
    return all(v <= tree.available(queue, fr) for fr, v in asked.items())


def _all_fit(tree: FairTree, heads: list[Head]) -> bool:
    """Whether the heads all fit together (each taken in turn); if so their usage stays added, else the tree is as it
    was. Usage only takes room away, so heads that fit together fit in any order."""
    done: list[Head] = []
    for head in heads:
        if not _fits(tree, head.queue, head.usage):
            for back in done:
                tree.add_usage(back.queue, back.usage, -1)
            return False
        tree.add_usage(head.queue, head.usage)
        done.append(head)
    return True


def fair_cycle_waits(snapshot: Snapshot) -> dict[str, str]:
    """The podgroups Kueue's cycle (Fair Sharing on, one flavor per resource) leaves waiting this session, by key,
    with why (see the module docstring)."""
    tree = kueue_tree(snapshot, _usage(snapshot))
    waiting = _waiting(snapshot, tree)
    heads: dict[str, Head] = {}
    fitting: set[str] = set()
    for pg, asked in waiting:
        if pg.queue in heads:
            continue
        if _fits(tree, pg.queue, asked):
            fitting.add(pg.key)
        elif not _counted(tree, pg.queue, asked, snapshot.kueue_preemption.get(pg.queue, _NEVER)):
            asked = {}
        heads[pg.queue] = Head(pg.key, pg.queue, asked, pg.priority, pg.creation_timestamp)
    waits: dict[str, str] = {}
    admitted: list[str] = []
    stopped: dict[str, str] = {}
    contended = not _all_fit(tree, [h for h in heads.values() if h.key in fitting])
    # (all fit together: they fit in any order, none waits, their usage is counted)
    tournament = Tournament(tree, heads if contended else {})
    while tournament:
        head = tournament.pop()
        if head.key not in fitting:
            continue
        if _fits(tree, head.queue, head.usage):
            tree.add_usage(head.queue, head.usage)
            tournament.changed(head.queue)
            admitted.append(head.key)
        else:
            waits[head.key] = (
                f"Kueue's scheduling cycle: it fitted the quota as the session opened, and no longer fits once "
                f"{', '.join(admitted)} took theirs; {_AGAIN}"
            )
            stopped[head.queue] = head.key
    for pg, asked in waiting:
        if heads[pg.queue].key == pg.key:
            continue
        if pg.queue in stopped:
            waits[pg.key] = (
                f"Kueue's scheduling cycle: it waits behind {stopped[pg.queue]}, the first job of its ClusterQueue"
            )
        elif _fits(tree, pg.queue, asked):
            tree.add_usage(pg.queue, asked)
    return waits
