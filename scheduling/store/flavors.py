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

from engine.flavors import FlavorChoice, flavor_of_request
from engine.objects import Snapshot
from scheduling.choices import PodGroupPhase
from scheduling.models import Cluster, PodGroup

__all__ = ["job_flavors", "kept_flavors", "record_flavors"]


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


def record_flavors(cluster: Cluster, snapshot: Snapshot, choices: Mapping[str, FlavorChoice]) -> int:
    """Write each podgroup row's flavors and, for one the assignment looked at, its sentence (the snapshot is the one
    the session ran on, its waiting jobs given their flavors); returns how many rows changed."""
    given = job_flavors(snapshot)
    changed = []
    rows = (
        PodGroup.objects.filter(cluster=cluster)
        .exclude(phase=PodGroupPhase.COMPLETED)  # out of the snapshot: keeps what it ran with
        .values_list("pk", "namespace__name", "name", "flavors", "flavor_assignment")
    )  # (tuples, not model instances: every session of a flavored cluster reads them all)
    for pk, namespace, name, was, said in rows:
        key = f"{namespace}/{name}"
        if key not in snapshot.podgroups:
            continue
        flavors = given.get(key)
        sentence = choices[key].sentence() if key in choices else said
        if flavors is None and key not in choices:
            sentence = None
        if (was, said) != (flavors, sentence):
            changed.append(PodGroup(pk=pk, flavors=flavors, flavor_assignment=sentence))
    if changed:
        PodGroup.objects.bulk_update(changed, ["flavors", "flavor_assignment"], batch_size=1000)
    return len(changed)


def kept_flavors(cluster: Cluster) -> dict[str, dict[str, str]]:
    """The flavors kept with each of the cluster's podgroups that is not Completed, by key (one query)."""
    rows = (
        PodGroup.objects.filter(cluster=cluster, flavors__isnull=False)
        .exclude(phase=PodGroupPhase.COMPLETED)
        .values_list("namespace__name", "name", "flavors")
    )
    return {f"{ns}/{name}": dict(flavors) for ns, name, flavors in rows if isinstance(flavors, dict)}
