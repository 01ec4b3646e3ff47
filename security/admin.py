"""API tokens in the admin: listed (never their keys: only the prefix is kept), revoked by deleting them. They are
created on the dashboard's Tokens page or with ``manage.py create_token``, where the key is shown once."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from security.models import ApiToken
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
