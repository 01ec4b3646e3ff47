"""The deserved of every queue under the capacity policy, flat or hierarchical (Volcano ``plugins/capacity``): the
values a queue's book (``engine.fairshare.capacity.CapacityResult``) then gates and orders with. The rule, in words,
with its caps and Kueue's lending limits: ``docs/rules/hierarchical-deserved.md``; ``GET /api/v1/queues/{name}/
explain/`` lists the steps (each value's ``trace``).

* Flat: ``deserved = max(min(spec.deserved, realCapability), guarantee)``, ``realCapability = (total - sum of all
  guarantees)+ + own guarantee``, capped by capability.
* Hierarchical: top down, for the children of each node, ``deserved = max(spec.deserved, guarantee)`` and
  ``realCapability = min((node.realCapability - sum of the children's withheld)+ + own withheld, capability)``; root's
  deserved and guarantee are the sums over its children; a child leaving a resource out of its capability inherits
  its parent's; what a subtree keeps by lending limits (``withheld``) never reaches an ancestor.
* A broken tree (a cycle, a missing parent, a job in an inner queue, children over their parent) is listed in
  ``problems`` and refuses every gate.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence

from engine.amounts import STANDARD_RESOURCES, add_into, raw
from engine.fairshare.capacity import CapacityResult
from engine.fairshare.queues import (
    JobSummary,
    JobUsage,
    QueueAccount,
    apply_jobs,
    cap_by_borrowing,
    collect_resources,
    fmt,
    index_specs,
    note_kept_off,
    reserve_of,
    set_flat_limits,
    set_keep,
    total_reserve,
    unknown_queue_warnings,
)
from engine.objects import ROOT_QUEUE, QueueSpec
from engine.resources import UNLIMITED, ResourceList, is_unlimited

__all__ = ["compute_capacity"]


def _flat_deserved(st: QueueAccount) -> None:
    """``max(min(spec.deserved, realCapability), guarantee)``, keeping the keys the spec and guarantee name."""
    rc = st.real_capability
    deserved: dict[str, int] = {}
    for r, v in raw(st.spec.deserved).items():
        limit = rc.get(r, UNLIMITED)
        st.trace.append(("deserved", r, v, "des.spec", 0, (v,)))
        if v > limit:
            v = limit
            st.trace.append(("deserved", r, v, "des.capped", 0, (limit,)))
        deserved[r] = v
    _raise_to_guarantee(st, deserved)
    st.deserved = deserved


def _raise_to_guarantee(st: QueueAccount, deserved: dict[str, int], *, trace: bool = True) -> None:
    for r, g in st.guarantee.items():
        if r not in deserved or g > deserved[r]:
            if trace and g > deserved.get(r, 0):
                st.trace.append(("deserved", r, g, "des.raised", 0, (g,)))
            deserved[r] = max(g, deserved.get(r, 0))


def compute_capacity(
    queues: Sequence[QueueSpec],
    jobs: Sequence[JobUsage] | JobSummary,
    total: ResourceList,
    *,
    hierarchy: bool = False,
    ancestor_reclaim_level: int = 0,
) -> CapacityResult:
    """Compute every queue's capability, realCapability, deserved and share under Volcano's capacity policy.

    ``ancestor_reclaim_level`` is the plugin argument ``ancestorReclaimLevel`` (hierarchy only; < 0 means 0).
    ``jobs`` may be a ``summarize_jobs`` summary, to sum the jobs once for several what-ifs.
    """
    specs = index_specs(queues)
    warnings: list[str] = []
    if hierarchy and ROOT_QUEUE not in specs:
        specs[ROOT_QUEUE] = QueueSpec(name=ROOT_QUEUE, parent=None, reclaimable=False)
        warnings.append("no root queue given: an unlimited root was assumed")
    states = {name: QueueAccount(spec=spec, guarantee=dict(raw(spec.guarantee))) for name, spec in specs.items()}
    summary = apply_jobs(jobs, states)
    warnings.extend(unknown_queue_warnings(summary, states))
    resources = collect_resources(total, specs.values(), states.values())
    total_raw = raw(total)

    if not hierarchy:
        return _flat_capacity(specs, states, total_raw, resources, warnings)

    problems = _build_tree(states)
    _check_jobs_in_leaves(states, summary, problems)
    _roll_up(states)
    problems.extend(_derive_tree_values(states, resources))
    result = CapacityResult(
        states,
        total_raw,
        resources,
        hierarchy=True,
        ancestor_reclaim_level=ancestor_reclaim_level,
        problems=problems,
        warnings=warnings,
    )
    for st in states.values():
        result._update_share(st)
    return result


def _flat_capacity(
    specs: Mapping[str, QueueSpec],
    states: dict[str, QueueAccount],
    total_raw: Mapping[str, int],
    resources: tuple[str, ...],
    warnings: list[str],
) -> CapacityResult:
    """The values outside a hierarchy: each queue's limits against the guarantees of all queues (or, when some
    queue has a lending or borrowing limit, against the reserves nobody else may take), and its deserved from its
    spec."""
    nominals: dict[str, dict[str, int]] = {}
    for st in states.values():
        if st.spec.lending_limit or st.spec.borrowing_limit:
            nominal = dict(raw(st.spec.deserved))
            _raise_to_guarantee(st, nominal, trace=False)
            nominals[st.name] = nominal
            set_keep(st, nominal)
    kept = any(st.keep for st in states.values())
    total_guarantee: dict[str, int] = {}
    if kept:
        total_guarantee = total_reserve(states.values())
    else:
        for spec in specs.values():
            add_into(total_guarantee, spec.guarantee)
    if kept:
        note_kept_off(states.values())
    for st in states.values():
        set_flat_limits(st, total_raw, total_guarantee, resources, nominals.get(st.name), kept=kept)
        _flat_deserved(st)
    result = CapacityResult(states, total_raw, resources, hierarchy=False, warnings=warnings)
    for st in states.values():
        result._update_share(st)
    return result


def _build_tree(states: dict[str, QueueAccount]) -> list[str]:
    """Link parents and children; queues on a cycle or under a missing parent are detached and reported."""
    problems: list[str] = []
    parent_of: dict[str, str] = {}
    for name, st in states.items():
        if name != ROOT_QUEUE:
            parent_of[name] = st.spec.parent or ROOT_QUEUE
    status: dict[str, bool] = {ROOT_QUEUE: True}
    for name in sorted(parent_of):
        path: list[str] = []
        on_path: set[str] = set()
        cur = name
        ok = True
        while cur not in status:
            if cur in on_path:
                problems.append(f"cycle detected in queue hierarchy for queue {cur}")
                ok = False
                break
            on_path.add(cur)
            path.append(cur)
            parent = parent_of[cur]
            if parent not in states:
                problems.append(f"the queue {cur} has invalid parent queue {parent}")
                ok = False
                break
            cur = parent
        else:
            ok = status[cur]
        for q in path:
            status[q] = ok
    for name in sorted(parent_of):
        if status.get(name):
            st = states[name]
            st.parent = parent_of[name]
            states[st.parent].children.append(name)
    for st in states.values():
        st.children.sort()
        st.participating = status.get(st.name, False)
    # ancestors, root first
    queue: deque[str] = deque([ROOT_QUEUE])
    while queue:
        node = states[queue.popleft()]
        for child in node.children:
            states[child].ancestors = (*node.ancestors, node.name)
            queue.append(child)
    return problems


def _check_jobs_in_leaves(states: dict[str, QueueAccount], summary: JobSummary, problems: list[str]) -> None:
    """One problem per inner queue holding jobs, naming its first job (by namespace/name, not input order)."""
    for queue, totals in sorted(summary.totals.items()):
        st = states.get(queue)
        if st is not None and st.children:
            namespace, name = totals.first_job
            label = f"job {namespace}/{name}" if name else f"a job of namespace {namespace}"
            problems.append(f"the queue {queue} of {label} is not a leaf queue")


def _bfs(states: dict[str, QueueAccount]) -> list[QueueAccount]:
    order: list[QueueAccount] = []
    queue: deque[str] = deque([ROOT_QUEUE])
    while queue:
        node = states[queue.popleft()]
        order.append(node)
        queue.extend(node.children)
    return order


def _roll_up(states: dict[str, QueueAccount]) -> None:
    """Add every queue's totals to its parent, deepest first, so each node holds its subtree's sums."""
    for st in reversed(_bfs(states)):
        if st.parent is None:
            continue
        parent = states[st.parent]
        add_into(parent.allocated, st.allocated)
        add_into(parent.request, st.request)
        add_into(parent.inqueue, st.inqueue)
        add_into(parent.elastic, st.elastic)
        add_into(parent.reserving, st.reserving)
        parent.reserved_jobs += st.reserved_jobs
        add_into(parent.pipelined, st.pipelined)
        parent.pipelined_pods += st.pipelined_pods


def _no_capability(amount: int | None, resource: str) -> bool:
    """A capability entry that limits nothing: left out, or cpu/memory <= 0 (Volcano reads those as unset)."""
    return amount is None or (resource in STANDARD_RESOURCES and amount <= 0)


def _derive_tree_values(states: dict[str, QueueAccount], resources: tuple[str, ...]) -> list[str]:
    """Capability, deserved, guarantee and real capability of every queue, top-down from the root (detached
    queues get their own values); returns the problems found on the way, in words.

    Three passes: deserved and capability top-down; then, bottom-up, what the lending limits in each subtree keep
    from every queue outside it (``withheld``, Kueue's rule: a cohort's pool takes from each child only what the
    child may lend, so what a queue keeps never reaches any ancestor); then real capability top-down, each child's
    less its siblings' subtree reserves."""
    problems: list[str] = []
    _root_values(states[ROOT_QUEUE], resources)
    order = _bfs(states)
    sums: dict[str, tuple[dict[str, int], dict[str, int]]] = {}
    for node in order:
        kids = [states[c] for c in node.children]
        if not kids:
            continue
        sum_deserved, sum_guarantee = sums[node.name] = _children_limits(node, kids, resources, problems)
        if node.name == ROOT_QUEUE:
            node.guarantee = dict(sum_guarantee)
            node.deserved = dict(sum_deserved)
            for r, v in sorted(sum_guarantee.items()):
                node.trace.append(("guarantee", r, v, "g.sum", 0, ()))
            for r, v in sorted(sum_deserved.items()):
                node.trace.append(("deserved", r, v, "des.sum", 0, ()))
    _withhold(order, states)
    for node in order:
        kids = [states[c] for c in node.children]
        if not kids:
            continue
        sum_deserved, sum_guarantee = sums[node.name]
        kept = any(child.keep or child.withheld for child in kids)
        sum_reserve = total_reserve(kids) if kept else sum_guarantee
        if kept:
            note_kept_off(kids)
        for child in kids:
            _real_capability(node, child, sum_reserve, resources, kept=kept)
        for label, own, summed in (
            ("deserved", node.deserved, sum_deserved),
            ("guarantee", node.guarantee, sum_guarantee),
        ):
            for r in sorted(summed):
                if own.get(r, 0) < summed[r]:
                    problems.append(
                        f"sum of queue {node.name}'s children's {label} {r} {fmt(summed[r], r)} exceeds its "
                        f"{label} {fmt(own.get(r, 0), r)}"
                    )
    _detached_values(states, resources)
    return problems


def _withhold(order: list[QueueAccount], states: Mapping[str, QueueAccount]) -> None:
    """Deepest first: each queue's lending-limit reserve ``keep = (deserved - lendingLimit)+`` (its deserved is the
    nominal amount of its whole subtree) and its subtree's ``withheld = max(keep, sum of the children's withheld)``
    per resource (Kueue: ``localQuota = max(0, subtreeQuota - lendingLimit)`` with ``subtreeQuota`` already less what
    the children keep; the root keeps nothing: nothing lies outside it)."""
    for node in reversed(order):
        if node.spec.lending_limit and node.name != ROOT_QUEUE:
            set_keep(node, node.deserved)
        below: dict[str, int] = {}
        for c in node.children:
            add_into(below, states[c].withheld)
        if node.name == ROOT_QUEUE or not below:
            continue
        for r, v in below.items():
            if v > node.withheld.get(r, 0):
                node.withheld[r] = v


def _root_values(root: QueueAccount, resources: tuple[str, ...]) -> None:
    """The root's capability and real capability: its spec where set. Volcano reads an empty root capability as
    infinite but a root capability naming only cpu as memory 0, which blocks everything; here every resource the
    root leaves out (or cpu/memory <= 0) is unlimited."""
    root_cap = raw(root.spec.capability)
    cap: dict[str, int] = {}
    for r in resources:
        v = root_cap.get(r)
        if _no_capability(v, r):
            cap[r] = UNLIMITED
            root.trace.append(("capability", r, UNLIMITED, "cap.root", 0, ()))
        else:
            assert v is not None
            cap[r] = v
            root.trace.append(("capability", r, v, "cap.spec", 0, ()))
    root.capability = cap
    root.real_capability = dict(cap)
    for r in resources:
        root.trace.append(("realCapability", r, cap[r], "rc.root", 0, ()))


def _children_limits(
    node: QueueAccount, kids: list[QueueAccount], resources: tuple[str, ...], problems: list[str]
) -> tuple[dict[str, int], dict[str, int]]:
    """Each child's deserved (raised to its guarantee) and capability (its own, else the parent's); returns the
    sums of the children's deserved and guarantees."""
    sum_guarantee: dict[str, int] = {}
    sum_deserved: dict[str, int] = {}
    for child in kids:
        deserved: dict[str, int] = {}
        for r, v in raw(child.spec.deserved).items():
            deserved[r] = v
            child.trace.append(("deserved", r, v, "des.spec", 0, (v,)))
        _raise_to_guarantee(child, deserved)
        child.deserved = deserved
        add_into(sum_deserved, deserved)
        add_into(sum_guarantee, child.guarantee)
        spec_cap = raw(child.spec.capability)
        child_cap: dict[str, int] = {}
        for r in resources:
            own = spec_cap.get(r)
            if _no_capability(own, r):
                child_cap[r] = node.capability[r]
                child.trace.append(("capability", r, child_cap[r], "cap.inherit", 0, (node.name,)))
                continue
            assert own is not None
            child_cap[r] = own
            child.trace.append(("capability", r, own, "cap.spec", 0, ()))
            if own > node.capability[r]:
                problems.append(
                    f"queue {child.name} capability {r} {fmt(own, r)} exceeds its parent {node.name}'s "
                    f"{fmt(node.capability[r], r)}"
                )
        child.capability = child_cap
    return sum_deserved, sum_guarantee


def _real_capability(
    node: QueueAccount,
    child: QueueAccount,
    sum_guarantee: Mapping[str, int],
    resources: tuple[str, ...],
    *,
    kept: bool = False,
) -> None:
    """A child's real capability: what its parent's real capability leaves beyond its siblings' guarantees, plus
    its own guarantee, at most its capability (Volcano's capacity plugin). With lending limits among the siblings
    (``kept``), a sibling's lending-limit reserve counts where it is above its guarantee (``reserve_of``); with a
    borrowing limit, the result is at most ``deserved + borrowingLimit``."""
    rc: dict[str, int] = {}
    rule = "rc.tree.kept" if kept else "rc.tree"
    borrowing = bool(child.spec.borrowing_limit)
    for r in resources:
        parent_rc = node.real_capability[r]
        sg = sum_guarantee.get(r, 0)
        g = reserve_of(child, r)
        base = max(0, parent_rc - sg) + g
        if is_unlimited(base):
            base = UNLIMITED
        value = min(base, child.capability[r])
        child.trace.append(("realCapability", r, base, rule, 0, (node.name, parent_rc, sg, g)))
        if value < base:
            child.trace.append(("realCapability", r, value, "rc.capability", 0, (child.capability[r],)))
        if borrowing:
            value = cap_by_borrowing(child, r, value, child.deserved)
        if value == base and node.kept_off.get(r, 0) > 0 and not is_unlimited(base):
            # the parent's room was cut by reserves kept outside it (a cousin's): so is the child's, unless its own
            # capability or borrowing limit binds
            child.kept_off[r] = child.kept_off.get(r, 0) + node.kept_off[r]
        rc[r] = value
    child.real_capability = rc


def _detached_values(states: dict[str, QueueAccount], resources: tuple[str, ...]) -> None:
    """Queues detached from the tree (a cycle or a missing parent): their own capability, nothing derived."""
    for st in states.values():
        if st.participating or st.name == ROOT_QUEUE:
            continue
        spec_cap = raw(st.spec.capability)
        st.capability = {r: UNLIMITED if _no_capability(spec_cap.get(r), r) else spec_cap[r] for r in resources}
        st.real_capability = dict(st.capability)
        for r in resources:
            st.trace.append(("realCapability", r, st.real_capability[r], "rc.detached", 0, ()))
        deserved = dict(raw(st.spec.deserved))
        _raise_to_guarantee(st, deserved)
        st.deserved = deserved
