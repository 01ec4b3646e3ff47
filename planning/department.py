"""A department lead's teams side by side (issue 30, item 3): for every team below a team (``quotas.access.teams_below``),
per resource what it deserves now, uses, borrows and lends, with its waiting jobs, its recorded evictions and, when
fairness over time is on, its past-usage ratio. The page (``frontend.views.team``) and the API
(``GET /api/v1/teams/{name}/department/``) read the same lines.

Each team is counted in the tree its jobs are counted in (``quotas.access.team_scope``): its queues, or its quota
groups when it has no queue; its numbers are the sums over its topmost nodes of that tree (the engine's values, as
every page reads them: a queue's deserved and allocated, a quota group's runtime quota and used). Its waiting jobs
and evictions are those of the team page (the same scope), so the numbers agree with the team's own page.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from engine.limits import brief
from engine.resources import format_quantity, is_unlimited, resource_sort_key, unit_decimal, unit_name
from engine.usage import PastShare, node_key
from engine.vocabulary import WAITING_PHASES
from planning.values_api import cached_values
from quotas.access import may_read_team, team_scope, teams_below
from scheduling.evictions import of_team
from scheduling.models import Cluster, Pod, PodGroup

AMOUNTS = ("entitled", "used", "borrowed", "lent")


@dataclass(frozen=True)
class TeamLine:
    """One team of a department: ``kind`` is the tree its numbers come from (``queue`` or ``quota``), ``nodes`` its
    topmost nodes there; ``amounts``: resource -> {entitled, used, borrowed, lent} in base units (entitled: a queue's
    deserved, a quota group's runtime quota); ``past``: node -> what fairness over time did to it (empty when off)."""

    team: str
    kind: str
    nodes: tuple[str, ...]
    amounts: dict[str, dict[str, int]]
    waiting: int
    evictions: int
    past: dict[str, PastShare] = field(default_factory=dict)


def _parents(snapshot: Any, kind: str) -> dict[str, str | None]:
    specs = snapshot.queues if kind == "queue" else snapshot.quota_groups
    return {name: spec.parent for name, spec in specs.items()}


def _tops(names: set[str], parents: Mapping[str, str | None]) -> list[str]:
    """``names`` in the tree that are not below another of ``names`` (nothing counted twice), by name."""

    def below(name: str) -> bool:
        parent = parents.get(name)
        while parent is not None:
            if parent in names:
                return True
            parent = parents.get(parent)
        return False

    return sorted(n for n in names if n in parents and not below(n))


def _node_amounts(values: Any, kind: str, name: str) -> dict[str, Mapping[str, int]]:
    if kind == "queue":
        q = values.queues.get(name)
        got = (q.deserved, q.allocated, q.borrowed, q.lent) if q is not None else ({}, {}, {}, {})
    else:
        g = values.quotas.get(name)
        got = (g.runtime, g.used, g.borrowed, g.lent) if g is not None else ({}, {}, {}, {})
    return {key: dict(amounts or {}) for key, amounts in zip(AMOUNTS, got, strict=True)}


def _waiting(cluster: Cluster, kind: str, names: frozenset[str]) -> int:
    """The team's waiting jobs (Pending, Inqueue, Unknown): in its queues' subtrees, or with pods counted against
    its quota groups."""
    if not names:
        return 0
    jobs = PodGroup.objects.filter(cluster=cluster, phase__in=WAITING_PHASES)
    if kind == "queue":
        return jobs.filter(queue__name__in=names).count()
    pods = Pod.objects.filter(cluster=cluster, quota_group__name__in=names).values("podgroup_id")
    return jobs.filter(pk__in=pods).count()


def team_line(team: Group, cluster: Cluster, snapshot: Any, values: Any) -> TeamLine:
    """``team``'s line in ``cluster`` (its values now: ``snapshot`` and ``values``)."""
    scope = team_scope(team)
    kind = scope.kind
    linked = set((team.queues if kind == "queue" else team.quota_groups).values_list("name", flat=True))
    tops = _tops(linked, _parents(snapshot, kind))
    sums: dict[str, dict[str, int]] = {}
    for name in tops:
        for key, amounts in _node_amounts(values, kind, name).items():
            for resource, amount in amounts.items():
                if is_unlimited(amount) or resource == "pods":
                    continue
                row = sums.setdefault(resource, dict.fromkeys(AMOUNTS, 0))
                row[key] += amount
    shown = {r: sums[r] for r in sorted(sums, key=resource_sort_key) if any(sums[r][k] for k in AMOUNTS)}
    past = {n: values.past[node_key(kind, n)] for n in tops if node_key(kind, n) in values.past}
    return TeamLine(
        team=team.name,
        kind=kind,
        nodes=tuple(tops),
        amounts=shown,
        waiting=_waiting(cluster, kind, scope.names),
        evictions=of_team(cluster, scope).count(),
        past=past,
    )


def department(team: Group, cluster: Cluster, snapshot: Any, values: Any) -> list[TeamLine]:
    """The lines of the teams below ``team``, by team name (empty for a team with none below it)."""
    return [team_line(t, cluster, snapshot, values) for t in teams_below(team)]


# -- the API ---------------------------------------------------------------------------------------------------

NO_TEAM = "There is no team named {} whose department you may read: your own teams and the teams below them only."
FIELDS = {"entitled": "deserved", "used": "using", "borrowed": "borrowing", "lent": "lending"}


def line_json(line: TeamLine) -> dict[str, Any]:
    """A team's line for the API: amounts as Kubernetes quantities with a decimal in the resource's unit beside each
    (a fractional share of GPUs reads ``2.5``, never ``2500m``)."""
    return {
        "name": line.team,
        "tree": line.kind,
        "nodes": list(line.nodes),
        "waiting_jobs": line.waiting,
        "evictions": line.evictions,
        "resources": [
            {
                "resource": r,
                "unit": unit_name(r),
                **{FIELDS[k]: format_quantity(v, r) for k, v in amounts.items()},
                **{f"{FIELDS[k]}_decimal": unit_decimal(v, r) for k, v in amounts.items()},
            }
            for r, amounts in line.amounts.items()
        ],
        "past_usage": [
            {
                "node": node,
                "past_usage_ratio": share.to_dict()["past_usage_ratio"],
                "counted_ratio": share.to_dict()["counted_ratio"],
                "text": share.text(),
            }
            for node, share in line.past.items()
        ],
    }


class _ResourceSerializer(serializers.Serializer):
    resource = serializers.CharField()
    unit = serializers.CharField(help_text="The unit of the *_decimal fields: cores, GiB, GPUs, ...")
    deserved = serializers.CharField(help_text="A queue's deserved, a quota group's runtime quota (a quantity)")
    using = serializers.CharField(help_text="A queue's allocated, a quota group's used (a quantity)")
    borrowing = serializers.CharField(help_text="Above its guarantee or min, from its siblings (a quantity)")
    lending = serializers.CharField(help_text="Of its entitlement, used by its siblings now (a quantity)")
    deserved_decimal = serializers.CharField(allow_null=True)
    using_decimal = serializers.CharField(allow_null=True)
    borrowing_decimal = serializers.CharField(allow_null=True)
    lending_decimal = serializers.CharField(allow_null=True)


class _PastUsageSerializer(serializers.Serializer):
    node = serializers.CharField()
    past_usage_ratio = serializers.FloatField(allow_null=True, help_text="Used / deserved over the memory")
    counted_ratio = serializers.FloatField(help_text="The ratio the weights use (1 without a record, within 0.1..10)")
    text = serializers.CharField()


class _TeamLineSerializer(serializers.Serializer):
    name = serializers.CharField()
    tree = serializers.ChoiceField(choices=["queue", "quota"], help_text="The tree its numbers come from")
    nodes = serializers.ListField(child=serializers.CharField(), help_text="Its topmost nodes in that tree")
    waiting_jobs = serializers.IntegerField()
    evictions = serializers.IntegerField(help_text="The evictions of its jobs the scheduler still keeps")
    resources = _ResourceSerializer(many=True)
    past_usage = _PastUsageSerializer(many=True, help_text="Empty unless fairness over time is on for its tree")


class DepartmentSerializer(serializers.Serializer):
    team = serializers.CharField()
    cluster = serializers.CharField()
    teams = _TeamLineSerializer(many=True)


class DepartmentView(APIView):
    """The teams below a team (a department lead's teams) side by side: per resource what each deserves now, uses,
    borrows and lends, with its waiting jobs, evictions and, when fairness over time is on, its past usage. Admins,
    the team's members and the leads of a team above it may read it; anyone else gets a 404."""

    @extend_schema(
        tags=["teams"],
        parameters=[OpenApiParameter("cluster", str, required=False)],
        responses={200: DepartmentSerializer},
    )
    def get(self, request: Request, name: str, *args: Any, **kwargs: Any) -> Response:
        team = Group.objects.filter(name=name).first()
        if team is None or not may_read_team(request.user, team):
            raise NotFound(NO_TEAM.format(brief(name)))
        cluster_name = request.query_params.get("cluster") or settings.FAIRWAY["DEFAULT_CLUSTER"]
        cluster = Cluster.objects.filter(name=cluster_name).first()
        if cluster is None:
            raise serializers.ValidationError({"cluster": [f"cluster {brief(cluster_name)} does not exist"]})
        snapshot, values = cached_values(cluster.name)
        lines = department(team, cluster, snapshot, values)
        return Response({"team": team.name, "cluster": cluster.name, "teams": [line_json(x) for x in lines]})
