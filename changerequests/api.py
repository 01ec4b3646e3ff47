"""``/api/v1/change-requests/``: file, list, read, approve, reject and withdraw change requests
(``changerequests.services`` does the work)."""

from __future__ import annotations

from typing import Any

import django_filters
from django.db.models import QuerySet
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from changerequests import loans, services
from changerequests.choices import RequestStatus
from changerequests.effect import effect as request_effect
from changerequests.effect import reader as effect_reader
from changerequests.models import ChangeRequest
from core.api import rule_errors_to_validation_error
from engine.resources import format_quantity
from engine.waits import NodeWaits
from quotas.permissions import AdminOrTeamSubmits


class NotOpenError(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_code = "not_open"


class ChangeRequestSerializer(serializers.ModelSerializer):
    # a plain string in the schema: another "status" enum (the pods') would collide with its name
    status = serializers.CharField(
        read_only=True, help_text="open, applied, rejected, withdrawn, stale or returned (a loan after its end)."
    )
    requester = serializers.SlugRelatedField(slug_field="username", read_only=True)
    reviewer = serializers.SlugRelatedField(slug_field="username", read_only=True)
    whatif = serializers.SerializerMethodField(
        help_text="requested: per change, each field before and after, for people; values: the computed values that "
        "change, per queue and quota group, before and after (Kubernetes quantities; only the nodes you may read)."
    )
    versions = serializers.JSONField(
        source="base", read_only=True, help_text="Per node the request edits: its version when the request was filed."
    )
    may_review = serializers.SerializerMethodField(help_text="Whether you may approve or reject it.")
    url = serializers.SerializerMethodField(help_text="The request's page in the dashboard.")
    loan = serializers.SerializerMethodField(
        help_text="A loan's terms (null for other requests): kind, from, to, field, amounts (Kubernetes quantities), "
        "duration_seconds, and the sentence people read."
    )

    class Meta:
        model = ChangeRequest
        fields = [
            "id",
            "status",
            "summary",
            "reason",
            "requester",
            "cluster",
            "changes",
            "versions",
            "trees_revision",
            "whatif",
            "needs_room",
            "reviewer",
            "comment",
            "outcome",
            "created",
            "decided",
            "loan",
            "loan_until",
            "returned",
            "return_problem",
            "may_review",
            "url",
        ]
        read_only_fields = fields

    def get_whatif(self, obj: ChangeRequest) -> dict[str, Any]:
        return services.visible_whatif(self.context["request"].user, obj.whatif)

    def get_loan(self, obj: ChangeRequest) -> dict[str, Any] | None:
        if obj.loan is None:
            return None
        loan = loans.Loan.from_json(obj.loan)
        return {
            "kind": loan.kind,
            "from": loan.lender,
            "to": loan.borrower,
            "field": loan.field,
            "amounts": {r: format_quantity(v, r) for r, v in sorted(loan.amounts.items())},
            "duration_seconds": loan.seconds,
            "text": loan.summary(),
        }

    def get_may_review(self, obj: ChangeRequest) -> bool:
        return obj.is_open and services.may_review(self.context["request"].user, obj)

    def get_url(self, obj: ChangeRequest) -> str:
        from changerequests.notify import link

        return link(obj)


class FileSerializer(serializers.Serializer):
    changes = serializers.ListField(
        child=serializers.DictField(),
        allow_empty=False,
        max_length=services.MAX_CHANGES,
        help_text="The changes, in the what-if change language: update a queue or quota group in your subtree, or "
        "create a child queue or quota group there (docs/change-requests.md). Either changes or loan.",
        required=False,
    )
    loan = serializers.DictField(
        required=False,
        help_text='A loan instead of changes: {"kind": "queue" | "quota_group", "from": <sibling>, "to": <your node>, '
        '"field": "guarantee" | "deserved" | "min", "amounts": {"nvidia.com/gpu": "2"}, "duration": "3d"}; lent at '
        "approval, returned at its end (docs/change-requests.md#loans).",
    )
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=4000)
    cluster = serializers.CharField(required=False, help_text="The cluster of the what-if (default: the default).")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("changes" in attrs) == ("loan" in attrs):
            raise serializers.ValidationError({"changes": "give either changes or a loan (one of the two)"})
        return attrs


class DecisionSerializer(serializers.Serializer):
    comment = serializers.CharField(required=False, allow_blank=True, default="", max_length=4000)


class ApproveSerializer(DecisionSerializer):
    changes = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        allow_empty=False,
        max_length=services.MAX_CHANGES,
        help_text="Approve an amended list instead of the request's (e.g. with the room made for it elsewhere in "
        "your subtree); every change must be one you may approve.",
    )


class RejectSerializer(DecisionSerializer):
    comment = serializers.CharField(max_length=4000, help_text="Why (required).")


class _EffectWaitsSerializer(serializers.Serializer):
    jobs_started = serializers.IntegerField()
    jobs_waiting = serializers.IntegerField(help_text="Not started by the end of the span")
    wait_p50_seconds = serializers.FloatField(allow_null=True)
    wait_p95_seconds = serializers.FloatField(allow_null=True)
    wait_max_seconds = serializers.FloatField(allow_null=True, help_text="A job still waiting counts its wait so far")


class _NodeEffectSerializer(serializers.Serializer):
    tree = serializers.ChoiceField(choices=["queue", "quota"], help_text="queue, or quota (a quota group)")
    name = serializers.CharField()
    before = _EffectWaitsSerializer(help_text="The jobs submitted in the span before it was applied")
    since = _EffectWaitsSerializer(help_text="The jobs submitted in the span since")


class EffectSerializer(serializers.Serializer):
    applied = serializers.DateTimeField(allow_null=True, help_text="When it was applied (null: never)")
    span_seconds = serializers.FloatField(
        help_text="The span compared each way: the time since it was applied, at most 7 days"
    )
    nodes = _NodeEffectSerializer(
        many=True, help_text="Each queue and quota group its changes name that you may read (subtrees included)"
    )


def _waits(w: NodeWaits | None) -> dict[str, Any]:
    def seconds(value: float | None) -> float | None:
        return None if value is None else round(value, 1)

    if w is None:
        return {
            "jobs_started": 0,
            "jobs_waiting": 0,
            "wait_p50_seconds": None,
            "wait_p95_seconds": None,
            "wait_max_seconds": None,
        }
    return {
        "jobs_started": w.started,
        "jobs_waiting": w.waiting,
        "wait_p50_seconds": seconds(w.p50),
        "wait_p95_seconds": seconds(w.p95),
        "wait_max_seconds": seconds(w.longest),
    }


class ChangeRequestFilterSet(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=RequestStatus.choices)
    mine = django_filters.BooleanFilter(method="filter_mine", help_text="Only the requests you filed.")
    to_review = django_filters.BooleanFilter(
        method="filter_to_review", help_text="Only the open requests you may approve or reject."
    )

    class Meta:
        model = ChangeRequest
        fields = ["status", "mine", "to_review", "cluster"]

    def filter_mine(self, qs: QuerySet[ChangeRequest], name: str, value: bool | None) -> QuerySet[ChangeRequest]:
        user = self.request.user  # type: ignore[union-attr]
        return qs.filter(requester=user) if value else qs.exclude(requester=user) if value is False else qs

    def filter_to_review(self, qs: QuerySet[ChangeRequest], name: str, value: bool | None) -> QuerySet[ChangeRequest]:
        if value is None:
            return qs
        chosen = services.to_review(self.request.user, qs)  # type: ignore[union-attr]
        return chosen if value else qs.exclude(pk__in=chosen.values("pk"))


def _invalid(exc: services.RequestInvalid) -> exceptions.ValidationError:
    return rule_errors_to_validation_error(exc.errors)


@extend_schema(tags=["change-requests"])
class ChangeRequestViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Change requests: a team lead proposes a change of its own subtree with its what-if; its department lead or
    an admin approves (which applies it) or rejects it; the requester may withdraw it."""

    queryset = ChangeRequest.objects.all()
    serializer_class = ChangeRequestSerializer
    filterset_class = ChangeRequestFilterSet
    permission_classes = [AdminOrTeamSubmits]
    lookup_value_regex = r"\d+"  # /change-requests/abc/ is a 404, not a failed lookup
    ordering_fields = ["created", "decided", "id"]

    def get_queryset(self) -> QuerySet[ChangeRequest]:
        return services.readable_by(self.request.user).order_by("-created", "-id")

    def _answer(self, obj: ChangeRequest, code: int = status.HTTP_200_OK) -> Response:
        return Response(self.get_serializer(obj).data, status=code)

    @extend_schema(request=FileSerializer, responses={201: ChangeRequestSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """File a request; its approvers are told (mail, webhook)."""
        body = FileSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            if "loan" in data:
                obj = services.file_loan(request.user, data["loan"], reason=data["reason"], cluster=data.get("cluster"))
            else:
                obj = services.file_request(
                    request.user, data["changes"], reason=data["reason"], cluster=data.get("cluster")
                )
        except services.RequestInvalid as exc:
            raise _invalid(exc) from exc
        return self._answer(obj, status.HTTP_201_CREATED)

    def _decide(self, request: Request, serializer: type[serializers.Serializer], decide: Any) -> Response:
        obj = self.get_object()  # 404 for a request the user may not read
        body = serializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            decided = decide(obj.pk, request.user, **body.validated_data)
        except services.RequestInvalid as exc:
            raise _invalid(exc) from exc
        except services.NotAllowed as exc:
            raise exceptions.PermissionDenied(str(exc)) from exc
        except services.NotOpen as exc:
            raise NotOpenError(str(exc)) from exc
        return self._answer(decided)

    @extend_schema(request=ApproveSerializer, responses=ChangeRequestSerializer)
    @action(detail=True, methods=["post"])
    def approve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Approve and apply the request in one transaction (``stale`` instead, writing nothing, when the tree moved
        so that it no longer applies as asked). 400 when its changes do not pass the rules (it stays open)."""
        return self._decide(request, ApproveSerializer, services.approve)

    @extend_schema(request=RejectSerializer, responses=ChangeRequestSerializer)
    @action(detail=True, methods=["post"])
    def reject(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Reject the request with a comment."""
        return self._decide(request, RejectSerializer, services.reject)

    @extend_schema(request=DecisionSerializer, responses=ChangeRequestSerializer)
    @action(detail=True, methods=["post"])
    def withdraw(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Withdraw your own request."""
        return self._decide(request, DecisionSerializer, services.withdraw)

    @extend_schema(responses=EffectSerializer)
    @action(detail=True, methods=["get"])
    def effect(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """What an applied request did: for each queue and quota group it changed, the waits of the jobs submitted in
        the days before it was applied against as many days since (at most 7 each way). A request never applied
        answers ``applied: null`` and no nodes."""
        obj = self.get_object()
        found = request_effect(obj, effect_reader(request.user), timezone.now())
        if found is None:
            applied = obj.decided if obj.status in (RequestStatus.APPLIED, RequestStatus.RETURNED) else None
            return Response(EffectSerializer({"applied": applied, "span_seconds": 0.0, "nodes": []}).data)
        return Response(
            EffectSerializer(
                {
                    "applied": found.applied,
                    "span_seconds": round(found.span.total_seconds(), 1),
                    "nodes": [
                        {"tree": n.tree, "name": n.name, "before": _waits(n.before), "since": _waits(n.since)}
                        for n in found.nodes
                    ],
                }
            ).data
        )
