"""Computed values through the API: the tree nodes' values now, explanations, what-if and simulate.

All of it runs the engine on a snapshot of the persisted state (``planning.valuecache``; the what-if through
``planning.whatif``) or of posted manifests, and writes nothing.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from controlplane.middleware import request_started
from core.api import rule_errors_to_validation_error
from core.errors import Busy
from engine.changes import ProposalError
from engine.flavors import assign_flavors
from engine.limits import ENV_VARS, Deadline
from engine.manifests import ManifestError, load_manifests
from engine.manifests.kueuefair import is_kueue_configuration_text
from engine.policy.policy import Policy, PolicyError
from engine.session import run
from engine.simulate import SimulationError, simulate
from engine.usage import QUEUE, QUOTA, node_key
from engine.values import QuotaValues
from planning import slots, whatif, whatif_access
from quotas.permissions import AdminOrTeamSubmits
from scheduling.models import Cluster

log = logging.getLogger(__name__)


def _cluster_name(request: Request, data: Any = None) -> str | None:
    name = (data or {}).get("cluster") if isinstance(data, dict) else None
    return str(name or request.query_params.get("cluster") or "") or None


def cached_values(cluster: str | None = None) -> tuple[Any, QuotaValues]:
    """The snapshot and values of ``cluster`` (default: the default cluster) now, reused while the database is
    unchanged (``planning.valuecache``); raises ``Cluster.DoesNotExist``."""
    return whatif.state_of(whatif.cluster_named(cluster))


def _placed_per_podgroup(snapshot: Any, result: Any) -> dict[str, int]:
    placed: dict[str, int] = {}
    for binding in result.bindings:
        task = snapshot.tasks.get(binding.task)
        if task is not None:
            placed[task.podgroup] = placed.get(task.podgroup, 0) + 1
    return placed


@contextmanager
def heavy_work(request: Request | None = None) -> Iterator[Deadline]:
    """A simulate or what-if computation: at most ``FAIRWAY_MAX_CONCURRENT_SIMULATIONS`` at once in the whole
    deployment (``planning.slots``: Redis or PostgreSQL count them; one more is refused at once with 503 and
    ``Retry-After``, so that the rest of the API stays responsive), each within ``FAIRWAY_REQUEST_BUDGET_SECONDS``
    counted from when the request came in (``RequestLimitsMiddleware`` stamps it): reading and parsing the body, the
    tree rules and the engine all spend it. The deadline it yields is checked between those phases, inside the rules'
    loops and between sessions and podgroups, and stops the work with 422 once spent: nothing runs on after the
    answer."""
    limits = settings.FAIRWAY_LIMITS
    try:
        with slots.slot() as taken:
            if not taken:
                raise Busy()
            started = request_started(request) if request is not None else None
            yield Deadline(limits.request_budget_seconds, ENV_VARS["request_budget_seconds"], started=started)
    except slots.SlotsUnavailable as exc:
        log.warning("simulation slots: %s", exc)
        raise Busy(
            "The server cannot count its running simulations at the moment (its Redis or database is unreachable); "
            "retry in a few seconds."
        ) from exc


def session_impact(
    before: Any, after: Any, checkpoint: Callable[[], None] | None = None, cluster: Cluster | None = None
) -> dict[str, Any]:
    """What one session would do before and after the proposal: podgroups whose outcome changes, new evictions.

    ``checkpoint`` is called between podgroups; without one, the two sessions get a budget of their own
    (``FAIRWAY_REQUEST_BUDGET_SECONDS``), so that no caller (the what-if page included) runs them unbounded.
    ``cluster``: the cluster the snapshots are of; its LocalQueues' kept usage then orders the jobs of a ClusterQueue
    with Admission Fair Sharing in both sessions, as in its live sessions (``whatif.with_kept_usage``)."""

    if checkpoint is None:
        deadline = Deadline(settings.FAIRWAY_LIMITS.request_budget_seconds, ENV_VARS["request_budget_seconds"])
        deadline.progress = "in the sessions before and after the proposal"
        checkpoint = deadline.check
    now = time.time()
    if cluster is not None:
        before, after = whatif.with_kept_usage(cluster, before, now), whatif.with_kept_usage(cluster, after, now)
    # Kueue's ResourceFlavors: the waiting jobs given their flavors first, as the live session gives them
    before, after = assign_flavors(before)[0], assign_flavors(after)[0]
    rb = run.run_session(before, now=now, checkpoint=checkpoint)
    ra = run.run_session(after, now=now, checkpoint=checkpoint)
    pb, pa = _placed_per_podgroup(before, rb), _placed_per_podgroup(after, ra)
    changed: dict[str, Any] = {}
    for key in sorted(set(rb.podgroups) | set(ra.podgroups)):
        b, a = rb.podgroups.get(key), ra.podgroups.get(key)
        same = b is not None and a is not None and (b.phase, b.reason) == (a.phase, a.reason)
        if same and pb.get(key, 0) == pa.get(key, 0):
            continue
        changed[key] = {
            "before": {"phase": b.phase if b else None, "reason": b.reason if b else None, "placed": pb.get(key, 0)},
            "after": {
                "phase": a.phase if a else None,
                "reason": a.reason if a else None,
                "message": a.message if a else None,
                "placed": pa.get(key, 0),
            },
        }
    before_evicted = {e.task for e in rb.evictions}
    evictions = [
        {"task": e.task, "action": e.action, "message": e.message} for e in ra.evictions if e.task not in before_evicted
    ]
    return {"podgroups": changed, "evictions": evictions}


class WhatIfSerializer(serializers.Serializer):
    cluster = serializers.CharField(required=False, help_text="Cluster name (default: the default cluster).")
    changes = serializers.ListField(
        child=serializers.DictField(),
        allow_empty=False,
        max_length=200,
        help_text="Proposed changes, applied in order (see the what-if page of the docs, docs/whatif.md).",
    )
    session = serializers.BooleanField(
        default=False, help_text="Also run one scheduling session before and after and report the impact."
    )


class WhatIfView(APIView):
    """Apply proposed changes to the current state in memory and compare every tree node before and after.

    Team members propose changes only inside their subtrees and get only the nodes they may read
    (``planning.whatif_access``)."""

    permission_classes = [AdminOrTeamSubmits]

    @extend_schema(
        request=WhatIfSerializer,
        responses=inline_serializer(
            "WhatIfResult",
            {
                "before": serializers.DictField(),
                "after": serializers.DictField(),
                "diff": serializers.DictField(),
                "impact": serializers.DictField(allow_null=True),
            },
        ),
    )
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        scope = whatif_access.scope_of(request.user)  # None: an admin, who proposes anything and sees all
        with heavy_work(request) as deadline:
            deadline.progress = "while reading the request"
            body = WhatIfSerializer(data=request.data)
            body.is_valid(raise_exception=True)
            deadline.check()
            deadline.progress = "while reading the cluster"
            try:
                cluster = whatif.cluster_named(_cluster_name(request, request.data))
                before_snap, before = whatif.state_of(cluster)
            except Cluster.DoesNotExist:
                raise serializers.ValidationError({"cluster": ["cluster does not exist"]}) from None
            deadline.progress = "checking the proposed changes"
            deadline.check()
            try:
                changes = body.validated_data["changes"]
                created = whatif_access.check_changes(before_snap, changes, scope) if scope is not None else set()
                outcome = whatif.evaluate(before_snap, before, changes, deadline=deadline)
            except ProposalError as exc:
                raise rule_errors_to_validation_error(exc.errors) from exc
            after_snap = outcome.after
            result = outcome.comparison()
            deadline.progress = "in the sessions before and after the proposal"
            deadline.check()
            result["impact"] = (
                session_impact(before_snap, after_snap, deadline.check, cluster)
                if body.validated_data["session"]
                else None
            )
        if scope is not None:
            result = whatif_access.filter_result(result, scope, before_snap, after_snap, created)
        return Response(result)


class SimulateSerializer(serializers.Serializer):
    # Sizes are checked in bytes below (not as a schema maxLength, which clients would try to fill).
    manifests = serializers.CharField(
        help_text="Kubernetes YAML (multi-document or kind: List), at most FAIRWAY_MAX_MANIFEST_BYTES in UTF-8."
    )
    policy = serializers.CharField(
        required=False, allow_blank=True, help_text="Volcano scheduler configuration (the same size limit)."
    )
    sessions = serializers.IntegerField(default=1, min_value=1, max_value=settings.FAIRWAY_LIMITS.max_sessions)
    recycle = serializers.BooleanField(default=False)

    def validate_manifests(self, value: str) -> str:
        return _within_manifest_size(value)

    def validate_policy(self, value: str) -> str:
        return _within_manifest_size(value)


def _within_manifest_size(value: str) -> str:
    limit = settings.FAIRWAY_LIMITS.max_manifest_bytes
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise serializers.ValidationError(
            f"{size} bytes in UTF-8, more than {limit} ({ENV_VARS['max_manifest_bytes']})", code="max_length"
        )
    return value


class SimulateView(APIView):
    """``fairway simulate`` over HTTP: a manifest snapshot in, the simulate document out."""

    permission_classes = [AdminOrTeamSubmits]

    @extend_schema(
        request=SimulateSerializer,
        responses=inline_serializer(
            "SimulateResult",
            {
                "document": serializers.DictField(),
                "warnings": serializers.ListField(child=serializers.CharField()),
                "notes": serializers.ListField(child=serializers.CharField()),
            },
        ),
    )
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:

        limits = settings.FAIRWAY_LIMITS
        try:
            with heavy_work(request) as deadline:
                deadline.progress = "while reading the request"
                body = SimulateSerializer(data=request.data)
                body.is_valid(raise_exception=True)
                data = body.validated_data
                deadline.check()
                deadline.progress = "while reading the manifests"
                sources = [("manifests", data["manifests"])]
                policy_text = data.get("policy") or ""
                if policy_text and is_kueue_configuration_text(policy_text, limits.max_yaml_depth):
                    # a Kueue Configuration as the policy: read with the manifests (``engine.manifests.kueuefair``)
                    sources, policy_text = [*sources, ("policy", policy_text)], ""
                loaded = load_manifests(sources, limits=limits, checkpoint=deadline.check)
                policy = Policy.from_yaml(policy_text, max_depth=limits.max_yaml_depth) if policy_text else None
                result = simulate(
                    loaded.snapshot,
                    policy=policy,
                    sessions=data["sessions"],
                    recycle=data["recycle"],
                    origins=loaded.origins,
                    limits=limits,
                    deadline=deadline,
                )
        except PolicyError as exc:
            raise serializers.ValidationError({"policy": [str(exc)]}) from exc
        except (ManifestError, SimulationError) as exc:
            raise serializers.ValidationError({"manifests": [str(exc)]}) from exc
        return Response(
            {"document": result.document, "warnings": [*loaded.warnings, *result.warnings], "notes": result.notes},
            status=status.HTTP_200_OK,
        )


def explain_queue(values: QuotaValues, name: str) -> list[dict[str, Any]]:
    steps = [dataclasses.asdict(step) for step in values.queues.explain(name).steps]
    past = values.past.get(node_key(QUEUE, name))
    if past is not None:  # fairness over time: how the past usage moved the queue's weight, with its numbers
        ratio = None if past.ratio is None else round(float(past.ratio), 4)
        steps.append(
            {
                "quantity": "pastUsage",
                "resource": None,
                "value": ratio,
                "rule": "past.usage",
                "round": 0,
                "detail": past.text(),
            }
        )
    share = values.fair_shares.get(name)
    if share is not None:  # Kueue's Fair Sharing: the dominant resource share, as Kueue's status gives it
        steps.append(
            {
                "quantity": "fairSharing",
                "resource": share.resource or None,
                "value": share.rounded(),
                "rule": "kueue.dominantResourceShare",
                "round": 0,
                "detail": share.explain(),
            }
        )
    return steps


def explain_group(values: QuotaValues, name: str) -> dict[str, Any]:
    explained = values.quotas.explain(name)
    past = values.past.get(node_key(QUOTA, name))
    if past is not None:  # fairness over time: how the past usage moved the group's shared weight
        explained = {**explained, "past_usage": past.to_dict()}
    return explained


EXPLAIN_PARAMS = [OpenApiParameter("cluster", str, description="Cluster name (default: the default cluster).")]
