"""``GET /api/v1/export/?format=volcano|koordinator|kueue``: the trees as the peers' manifests
(``engine.manifests.export``).

Admins only: an export is the whole organisation (every queue, quota group and namespace). YAML by default (one
multi-document text, ready for ``kubectl apply -f``), or a JSON list of the documents with ``output=json``. What the
format cannot express (``export_notes``; Kueue's) heads the YAML as comments, and comes with either output as the
``Fairway-Export-Notes`` header (a JSON list), which ``fairway export`` prints as warnings.
"""

from __future__ import annotations

import json
from typing import Any

import yaml
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from engine.limits import brief
from engine.manifests.export import FORMATS, export_notes, export_trees
from planning.values_api import cached_values
from quotas.access import is_admin
from scheduling.models import Cluster

OUTPUTS = ("yaml", "json")
NOTES_HEADER = "Fairway-Export-Notes"


class AdminsOnly(BasePermission):
    message = "Only admins may export the trees: an export holds every queue, quota group and namespace."

    def has_permission(self, request: Request, view: Any) -> bool:
        return bool(request.user and request.user.is_authenticated and is_admin(request.user))


class ExportQuerySerializer(serializers.Serializer):
    format = serializers.ChoiceField(
        choices=sorted(FORMATS),
        help_text="volcano: Queues and Namespaces; koordinator: ElasticQuotas; kueue: ClusterQueues, Cohorts, LocalQueues",
    )
    output = serializers.ChoiceField(choices=OUTPUTS, default="yaml", required=False)
    cluster = serializers.CharField(required=False, help_text="Whose view of the trees (default: the default cluster)")


class _FormatIsOurs(DefaultContentNegotiation):
    """Content negotiation by the Accept header only: ``?format=`` names the manifests' format here, not one of DRF's
    renderers (which would answer 404 to ``format=volcano``)."""

    class settings:  # stands in for DRF's api_settings, read as ``self.settings``
        URL_FORMAT_OVERRIDE = None


class ExportView(APIView):
    """The queue tree as Volcano Queues (with their namespaces) or Kueue's objects, or the quota trees as Koordinator
    ElasticQuotas."""

    permission_classes = [AdminsOnly]
    content_negotiation_class = _FormatIsOurs

    @extend_schema(
        tags=["export"],
        parameters=[
            OpenApiParameter("format", str, enum=sorted(FORMATS), required=True),
            OpenApiParameter("output", str, enum=list(OUTPUTS), required=False),
            OpenApiParameter("cluster", str, required=False),
        ],
        responses={
            (200, "application/yaml"): OpenApiTypes.STR,
            (200, "application/json"): OpenApiTypes.ANY,
        },
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Any:
        query = ExportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        name = query.validated_data.get("cluster")
        try:
            snapshot, _ = cached_values(name)
        except Cluster.DoesNotExist:
            raise serializers.ValidationError({"cluster": [f"cluster {brief(name or '')} does not exist"]}) from None
        fmt = query.validated_data["format"]
        docs = export_trees(snapshot, fmt)
        notes = export_notes(snapshot, fmt)
        response: HttpResponse
        if query.validated_data["output"] == "json":
            response = Response(docs)
        else:
            text = yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=False) if docs else ""
            response = HttpResponse(notes_header(fmt, notes) + text, content_type="application/yaml; charset=utf-8")
        return _with_warnings(response, notes)


def notes_header(fmt: str, notes: list[str]) -> str:
    """What ``fmt`` cannot express, as YAML comment lines heading the manifests (empty without notes)."""
    if not notes:
        return ""
    lines = [f"# Not expressible as {fmt} manifests ({len(notes)}):", *(f"# - {note}" for note in notes)]
    return "\n".join(lines) + "\n"


def _with_warnings(response: HttpResponse, notes: list[str]) -> HttpResponse:
    """The notes as the ``Fairway-Export-Notes`` header: a JSON list, in ASCII (a header is Latin-1)."""
    if notes:
        response[NOTES_HEADER] = json.dumps(notes)
    return response
