"""The flavors a live session gave the jobs (Kueue's ResourceFlavors, ``engine.flavors``), kept on their podgroup
rows: ``PodGroup.flavors`` (resource -> flavor) and ``PodGroup.flavor_assignment`` (the sentence of what the
assignment tried), which the job page, ``why`` and the API show.

A waiting job is given its flavors afresh before each session (``engine.flavors.assign_flavors``, as ``fairway
simulate`` does); an admitted job keeps its flavors (``kept_flavors`` gives them back to the session, whose pods are
read with their plain requests: ``engine.flavors.with_kept_flavors``), those of its pods on nodes first. A job
without pods (a suspended Kueue Job admitted from its template) keeps those of its minimum resources, which its pods
ask for once its controller has made them. Only the rows whose values changed are written, in the session's
transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from engine.flavors import FlavorChoice, flavor_of_request
from engine.objects import Snapshot
from scheduling.choices import PodGroupPhase
from scheduling.models import Cluster, PodGroup

__all__ = ["KeptFlavors", "job_flavors", "kept_flavors", "pod_set_flavors", "record_flavors"]


def job_flavors(snapshot: Snapshot) -> dict[str, dict[str, str]]:
    """Each podgroup's flavors, by key, from what its pods ask for (``cpu@spot``: ``{"cpu": "spot"}``), or for one
    without pods (a suspended Kueue Job given flavors from its template) from its minimum resources; a podgroup given
    none is left out."""
    out: dict[str, dict[str, str]] = {}
    by_podgroup = snapshot.tasks_by_podgroup
    for key, tasks in by_podgroup.items():
        given: dict[str, str] = {}
        for task in tasks:
            given.update(flavor_of_request(task.request))
        if given:
            out[key] = dict(sorted(given.items()))
    for key, pg in snapshot.podgroups.items():
        if key not in by_podgroup and pg.min_resources is not None and (given := flavor_of_request(pg.min_resources)):
            out[key] = dict(sorted(given.items()))
    return out


def pod_set_flavors(
    snapshot: Snapshot, choices: Mapping[str, FlavorChoice], kept: Mapping[str, Mapping[str, Mapping[str, str]]]
) -> dict[str, dict[str, dict[str, str]]]:
    """For each workload of several pod sets whose pod sets were given different flavors, each pod set's, by key: from
    what its pods ask for (their role is their pod set), or for one without pods from the assignment's choice this
    session (``choices``), else as ``kept`` (the rows' ``pod_set_flavors``): a workload admitted from its templates
    keeps them until its pods exist."""
    out: dict[str, dict[str, dict[str, str]]] = {}
    by_podgroup = snapshot.tasks_by_podgroup
    for key, pg in snapshot.podgroups.items():
        if len(pg.pod_sets) < 2:
            continue
        by_role: dict[str, dict[str, str]] = {}
        for task in by_podgroup.get(key, ()):
            by_role.setdefault(task.task_role, {}).update(flavor_of_request(task.request))
        if not by_role and key in choices:
            by_role = {p.name: dict(p.flavors) for p in choices[key].pod_sets}
        elif not by_role and key in kept:
            by_role = {role: dict(given) for role, given in kept[key].items()}
        given = {role: dict(sorted(f.items())) for role, f in sorted(by_role.items()) if f}
        if len({tuple(f.items()) for f in given.values()}) > 1:
            out[key] = given
    return out


def record_flavors(cluster: Cluster, snapshot: Snapshot, choices: Mapping[str, FlavorChoice]) -> int:
    """Write each podgroup row's flavors (and its pod sets' when they differ: ``pod_set_flavors``) and, for one the
    assignment looked at, its sentence (the snapshot is the one the session ran on, its waiting jobs given their
    flavors); returns how many rows changed."""
    given = job_flavors(snapshot)
    rows = list(
        PodGroup.objects.filter(cluster=cluster)
        .exclude(phase=PodGroupPhase.COMPLETED)  # out of the snapshot: keeps what it ran with
        .values_list("pk", "namespace__name", "name", "flavors", "pod_set_flavors", "flavor_assignment")
    )  # (tuples, not model instances: every session of a flavored cluster reads them all)
    kept = {f"{ns}/{name}": sets for _, ns, name, _, sets, _ in rows if isinstance(sets, dict)}
    by_pod_set = pod_set_flavors(snapshot, choices, kept)
    changed = []
    for pk, namespace, name, was, sets_were, said in rows:
        key = f"{namespace}/{name}"
        if key not in snapshot.podgroups:
            continue
        flavors = given.get(key)
        choice = choices.get(key)
        if choice is not None and choice.pod_sets and key not in snapshot.tasks_by_podgroup:
            flavors = dict(sorted(choice.flavors.items()))  # (its minimum resources hold each pod set's)
        elif key in by_pod_set and key not in snapshot.tasks_by_podgroup and isinstance(was, dict):
            flavors = was  # admitted from its templates: the workload's, as given
        sentence = choice.sentence() if choice is not None else said
        if flavors is None and choice is None:
            sentence = None
        sets = by_pod_set.get(key)
        if (was, sets_were, said) != (flavors, sets, sentence):
            changed.append(PodGroup(pk=pk, flavors=flavors, pod_set_flavors=sets, flavor_assignment=sentence))
    if changed:
        PodGroup.objects.bulk_update(changed, ["flavors", "pod_set_flavors", "flavor_assignment"], batch_size=1000)
    return len(changed)


class KeptFlavors(NamedTuple):
    """What the rows keep of the flavors given (``kept_flavors``): each podgroup's (key -> resource -> flavor), and
    for a workload whose pod sets were given different ones each pod set's (key -> pod set -> resource -> flavor)."""

    flavors: dict[str, dict[str, str]]
    pod_sets: dict[str, dict[str, dict[str, str]]]


def kept_flavors(cluster: Cluster) -> KeptFlavors:
    """The flavors kept with each of the cluster's podgroups that is not Completed, by key (one query)."""
    rows = (
        PodGroup.objects.filter(cluster=cluster, flavors__isnull=False)
        .exclude(phase=PodGroupPhase.COMPLETED)
        .values_list("namespace__name", "name", "flavors", "pod_set_flavors")
    )
    flavors: dict[str, dict[str, str]] = {}
    pod_sets: dict[str, dict[str, dict[str, str]]] = {}
    for ns, name, given, sets in rows:
        key = f"{ns}/{name}"
        if isinstance(given, dict):
            flavors[key] = dict(given)
        if isinstance(sets, dict):
            pod_sets[key] = {str(role): dict(f) for role, f in sets.items() if isinstance(f, dict)}
    return KeptFlavors(flavors, pod_sets)
