"""Django admin for the trees; every form runs the same rules as the API (``quotas.services.check_*``)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db import transaction
from django.http import HttpRequest
from simple_history.admin import SimpleHistoryAdmin

from engine import rules
from quotas import services
from quotas.models import Namespace, Queue, QuotaGroup


def _apply_rule_errors(form: forms.ModelForm, errors: list[rules.FieldError]) -> None:
    for err in errors:
        field = err.field.split(".", 1)[0]
        form.add_error(field if field in form.fields else None, err.message)


class QueueAdminForm(forms.ModelForm):
    class Meta:
        model = Queue
        fields = "__all__"

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        payload = {k: v for k, v in data.items() if k in (*services.QUEUE_FIELDS, "name")}
        payload["parent"] = data["parent"].name if data.get("parent") else None
        try:
            services.check_queue(self.instance if self.instance.pk else None, payload)
        except rules.RuleViolation as exc:
            _apply_rule_errors(self, exc.errors)
        return data


class QuotaGroupAdminForm(forms.ModelForm):
    class Meta:
        model = QuotaGroup
        fields = "__all__"

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        payload = {k: v for k, v in data.items() if k in (*services.GROUP_FIELDS, "name")}
        payload["parent"] = data["parent"].name if data.get("parent") else None
        try:
            spec = services.check_quota_group(self.instance if self.instance.pk else None, payload)
        except rules.RuleViolation as exc:
            _apply_rule_errors(self, exc.errors)
        else:
            data["shared_weight"], data["tree_id"] = spec.shared_weight, spec.tree_id
            self.instance.shared_weight, self.instance.tree_id = spec.shared_weight, spec.tree_id
        return data


class _TreeWriteLockMixin:
    """Admin saves take the tree write lock before the change form reads the row, as every other tree writer does
    (``quotas.services.lock_tree_writes``): the form's rule check sees the tree the save changes, and the save never
    replaces a version it did not read (the admin form has no version field: it overwrites what it showed, not a
    change made while it was saving)."""

    def changeform_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        if request.method != "POST":
            return super().changeform_view(request, *args, **kwargs)  # type: ignore[misc]
        with transaction.atomic():
            services.lock_tree_writes()
            return super().changeform_view(request, *args, **kwargs)  # type: ignore[misc]


class _ProtectedDeleteMixin:
    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        try:
            self.delete_with_rules(obj)  # type: ignore[attr-defined]
        except rules.RuleViolation as exc:
            for err in exc.errors:
                messages.error(request, err.message)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        for obj in queryset:
            self.delete_model(request, obj)


@admin.register(Queue)
class QueueAdmin(_TreeWriteLockMixin, _ProtectedDeleteMixin, SimpleHistoryAdmin):
    form = QueueAdminForm
    list_display = ("name", "parent", "weight", "state", "priority", "reclaimable")
    list_filter = ("state", "reclaimable")
    search_fields = ("name",)
    readonly_fields = ("state", "closed_by_parent", "version", "created", "updated")
    filter_horizontal = ("teams",)

    @staticmethod
    def delete_with_rules(obj: Queue) -> None:
        services.delete_queue(obj)


@admin.register(QuotaGroup)
class QuotaGroupAdmin(_TreeWriteLockMixin, _ProtectedDeleteMixin, SimpleHistoryAdmin):
    form = QuotaGroupAdminForm
    list_display = ("name", "parent", "is_parent", "allow_lent", "tree_id")
    list_filter = ("is_parent", "allow_lent", "tree_id")
    search_fields = ("name",)
    readonly_fields = ("version", "created", "updated")
    filter_horizontal = ("teams",)

    @staticmethod
    def delete_with_rules(obj: QuotaGroup) -> None:
        services.delete_quota_group(obj)


@admin.register(Namespace)
class NamespaceAdmin(_TreeWriteLockMixin, SimpleHistoryAdmin):
    list_display = ("name", "weight", "default_queue", "quota_group")
    search_fields = ("name",)
    readonly_fields = ("version", "created", "updated")
