"""``/api/v1/replays/``: start a replay of a cluster's last days with proposed changes, list and read them, cancel
one (``planning.replay`` does the work; ``docs/replay.md``). Permissions as the what-if's: a team member proposes
changes only inside its subtrees, reads its own runs, and in their results only its teams."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from planning import replay
from planning.models import ReplayRun
from quotas.permissions import AdminOrTeamSubmits


class NotActiveError(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_code = "not_active"


class ReplayRunSerializer(serializers.ModelSerializer):
    cluster = serializers.SlugRelatedField(slug_field="name", read_only=True)
    requester = serializers.SlugRelatedField(slug_field="username", read_only=True)
    # a plain string in the schema: another "state" enum would collide with its name
    state = serializers.CharField(read_only=True, help_text="queued, running, done, failed or cancelled.")
    progress = serializers.FloatField(
        read_only=True, help_text="The fraction of virtual time replayed, over the baseline and the proposal (0 to 1)."
    )
    url = serializers.SerializerMethodField(help_text="The run's page in the dashboard.")

    class Meta:
        model = ReplayRun
        fields = [
            "id",
            "cluster",
            "window",
            "since",
            "until",
            "changes",
            "summary",
            "change_request",
            "requester",
            "state",
            "progress",
            "phase",
            "created",
            "started",
            "finished",
            "error",
            "url",
        ]
        read_only_fields = fields

    def get_url(self, obj: ReplayRun) -> str:
        return reverse("frontend:replay", args=[obj.pk])


class ReplayRunDetailSerializer(ReplayRunSerializer):
    result = serializers.SerializerMethodField(
        help_text="Once done: the replay's document (baseline, proposal, differences; docs/replay.md), without the "
        "per-job part; only the teams you may read."
    )

    class Meta(ReplayRunSerializer.Meta):
        fields = [*ReplayRunSerializer.Meta.fields, "result"]
        read_only_fields = fields

    def get_result(self, obj: ReplayRun) -> dict[str, Any] | None:
        return replay.visible_result(obj, self.context["request"].user)


class StartSerializer(serializers.Serializer):
    changes = serializers.ListField(
        child=serializers.DictField(),
        allow_empty=False,
        max_length=200,
        help_text="Proposed changes in the what-if change language (docs/whatif.md), applied to the tree at the "
        "window's start.",
    )
    cluster = serializers.CharField(required=False, help_text="Cluster name (default: the default cluster).")
    window = serializers.CharField(
        default="7d", help_text="The span replayed, back from now: 6h, 1d, 7d (at most FAIRWAY_REPLAY_MAX_WINDOW_DAYS)."
    )


class ReplayViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Replays of a cluster's last days with proposed changes: the baseline and the proposal on the real engine in
    virtual time, run by the replay worker (a queue of its own); poll a run for its progress."""

    queryset = ReplayRun.objects.all()
    serializer_class = ReplayRunSerializer
    permission_classes = [AdminOrTeamSubmits]
    lookup_value_regex = r"\d+"

    def get_queryset(self) -> QuerySet[ReplayRun]:
        return replay.runs_for(self.request.user)

    def get_serializer_class(self) -> type[serializers.BaseSerializer]:
        return ReplayRunDetailSerializer if self.action in ("retrieve", "cancel", "create") else ReplayRunSerializer

    @extend_schema(request=StartSerializer, responses={201: ReplayRunDetailSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Start a replay: checked as a what-if (team members only inside their subtrees), then queued."""
        body = StartSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            run = replay.start(request.user, data["changes"], window=data["window"], cluster=data.get("cluster"))
        except replay.Refused as exc:
            raise serializers.ValidationError(exc.errors) from exc
        return Response(self.get_serializer(run).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: ReplayRunDetailSerializer})
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Cancel a queued or running replay (it stops before its next session); 409 when it had already ended."""
        run = self.get_object()
        if not replay.cancel(run, request.user):
            raise NotActiveError(
                f"replay {run.pk} is {run.state} already; only a queued or running one can be cancelled"
            )
        return Response(self.get_serializer(run).data)
