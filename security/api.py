"""``GET /api/v1/security-events/``: the security log's rows, newest first, for admins only (read only; the rows are
written by ``security.log.security_event`` and deleted by the retention). Filters: ``kind``, ``outcome``, ``actor``,
``target`` (exact), ``since`` and ``until`` (ISO 8601 moments)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import django_filters
from django import forms
from rest_framework import permissions, serializers, viewsets
from rest_framework.request import Request

from security.choices import SecurityEventKind, SecurityOutcome
from security.models import SecurityEvent


class AdminsOnly(permissions.BasePermission):
    message = "Only admins may read the security log."

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        return bool(user and user.is_authenticated and user.is_staff)


class MomentField(forms.DateTimeField):
    """An ISO 8601 moment (``2026-03-01T12:00:00Z``; a date alone is its midnight UTC), in UTC: a moment that has no
    UTC equivalent (an offset past the calendar's ends) is a 400, not a database error."""

    input_formats = ["iso-8601"]

    def to_python(self, value: Any) -> Any:
        moment = super().to_python(value)
        if moment is None:
            return None
        try:
            return moment.astimezone(dt.UTC) if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
        except OverflowError:
            raise forms.ValidationError("this moment has no UTC equivalent", code="invalid") from None


class MomentFilter(django_filters.DateTimeFilter):
    field_class = MomentField


class SecurityEventFilterSet(django_filters.FilterSet):
    kind = django_filters.ChoiceFilter(choices=SecurityEventKind.choices)
    outcome = django_filters.ChoiceFilter(choices=SecurityOutcome.choices)
    actor = django_filters.CharFilter(help_text="A username, or 'anonymous'.")
    target = django_filters.CharFilter(help_text="Exactly the event's target (a username, a path, ...).")
    since = MomentFilter(field_name="time", lookup_expr="gte", label="At or after (ISO 8601)")
    until = MomentFilter(field_name="time", lookup_expr="lt", label="Before (ISO 8601)")

    class Meta:
        model = SecurityEvent
        fields = ["kind", "outcome", "actor", "target", "since", "until"]


class SecurityEventSerializer(serializers.ModelSerializer):
    class Meta:
        model = SecurityEvent
        fields = ["id", "time", "kind", "outcome", "actor", "remote_address", "target", "detail"]
        read_only_fields = fields


class SecurityEventViewSet(viewsets.ReadOnlyModelViewSet):
    """The security log: logins, failures, lockouts, tokens made, refused and revoked, admin changes. Admins only."""

    queryset = SecurityEvent.objects.all()
    serializer_class = SecurityEventSerializer
    permission_classes = [AdminsOnly]
    filterset_class = SecurityEventFilterSet
    ordering_fields = ["time"]
    ordering = ["-time", "-id"]
    search_fields = ["actor", "target", "detail"]
