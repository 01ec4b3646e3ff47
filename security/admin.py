"""API tokens and the security log in the admin. Tokens are listed (never their keys: only the prefix is kept) and
revoked by deleting them; they are created on the dashboard's Tokens page or with ``manage.py create_token``, where
the key is shown once. The security log's rows are read only."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from security.models import ApiToken, SecurityEvent
from security.tokens import revoke_token


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "user", "prefix", "read_only", "created", "last_used", "expires")
    list_filter = ("read_only",)
    search_fields = ("name", "prefix", "user__username")
    readonly_fields = ("user", "name", "prefix", "read_only", "created", "last_used", "expires")
    exclude = ("digest",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def delete_model(self, request: HttpRequest, obj: ApiToken) -> None:
        revoke_token(obj, request=request)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        for token in queryset.select_related("user"):
            revoke_token(token, request=request)


@admin.register(SecurityEvent)
class SecurityEventAdmin(admin.ModelAdmin):
    """The security log's rows: read only (they are records), deleted by the retention (docs/security.md)."""

    list_display = ("time", "kind", "outcome", "actor", "remote_address", "target")
    list_filter = ("kind", "outcome")
    search_fields = ("actor", "target", "remote_address")
    date_hierarchy = "time"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
