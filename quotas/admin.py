"""Django admin for the trees; every form runs the same rules as the API (``quotas.services.check_*``), and names are
refused, not trimmed, when whitespace surrounds them (``core.names``)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest
from simple_history.admin import SimpleHistoryAdmin

from core import tree_owner
from core.names import UntrimmedNamesAdmin
from engine import rules, treefields
from engine.kueuepolicy import parse_kueue_policy
from engine.userlimits import user_limits_from_stored
from quotas import services
from quotas.forms import UserLimitsFormField
from quotas.models import LocalQueue, Namespace, Queue, QuotaGroup, ResourceFlavor


def _apply_rule_errors(form: forms.ModelForm, errors: list[rules.FieldError]) -> None:
    for err in errors:
        field = err.field.split(".", 1)[0]
        form.add_error(field if field in form.fields else None, err.message)


class _VersionedAdminForm(forms.ModelForm):
    """A change form carries the version of the row it was read at (``read_version``, hidden) and is refused, with
    nothing written, when the row moved since: the rule of the editor and the staged what-if
    (``quotas.services.check_versions``), checked under the tree write lock the admin's saves take
    (``_TreeWriteLockMixin``), so the version compared is the one the save replaces."""

    kind: services.WriteKind

    read_version = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=0)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None:
            # the row's version now (not the instance's: a history revert's instance is an old copy without one)
            current = type(self.instance).objects.filter(pk=self.instance.pk).values_list("version", flat=True)
            self.fields["read_version"].initial = current.first()

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.instance.pk is None:
            return data
        read = data.get("read_version")
        if read is None:
            self.add_error(None, "This form was sent without the version it was read at; reload the page.")
            return data
        try:
            services.check_versions([services.Write(self.kind, self.instance.name, read)])
        except services.StaleWrite as exc:
            self.add_error(
                None,
                f"{exc}: it changed since this form was opened, so nothing was saved. Reload the page to see the "
                "change, then make yours again.",
            )
            return data
        self.instance.version = read  # the save's compare-and-swap replaces the version this form was read at
        return data


def _limits_as_spec(payload: dict[str, Any]) -> None:
    """The admin's per-user limits (kept in the stored form by ``UserLimitsFormField``) as the rules read them."""
    if "user_limits" in payload:
        payload["user_limits"] = user_limits_from_stored(payload["user_limits"])


class QueueAdminForm(_VersionedAdminForm):
    kind = "queue"
    user_limits = UserLimitsFormField(required=False, help_text=treefields.USER_LIMITS_HELP)

    class Meta:
        model = Queue
        fields = "__all__"

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors or "parent" not in self.fields:  # read-only tree fields (a cluster owns the trees)
            return data
        payload = {k: v for k, v in data.items() if k in (*services.QUEUE_FIELDS, "name")}
        payload["parent"] = data["parent"].name if data.get("parent") else None
        _limits_as_spec(payload)
        try:
            services.check_queue(self.instance if self.instance.pk else None, payload)
        except rules.RuleViolation as exc:
            _apply_rule_errors(self, exc.errors)
            return data
        if data.get("kueue") is not None:  # Kueue's levers, kept normalized as every other writer keeps them
            data["kueue"] = parse_kueue_policy(data["kueue"])[0]
        return data


class QuotaGroupAdminForm(_VersionedAdminForm):
    kind = "quota_group"
    user_limits = UserLimitsFormField(required=False, help_text=treefields.USER_LIMITS_HELP)

    class Meta:
        model = QuotaGroup
        fields = "__all__"

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors or "parent" not in self.fields:  # read-only tree fields (a cluster owns the trees)
            return data
        payload = {k: v for k, v in data.items() if k in (*services.GROUP_FIELDS, "name")}
        payload["parent"] = data["parent"].name if data.get("parent") else None
        _limits_as_spec(payload)
        try:
            spec = services.check_quota_group(self.instance if self.instance.pk else None, payload)
        except rules.RuleViolation as exc:
            _apply_rule_errors(self, exc.errors)
        else:
            data["shared_weight"], data["tree_id"] = spec.shared_weight, spec.tree_id
            self.instance.shared_weight, self.instance.tree_id = spec.shared_weight, spec.tree_id
        return data


class NamespaceAdminForm(_VersionedAdminForm):
    kind = "namespace"

    class Meta:
        model = Namespace
        fields = "__all__"


class ResourceFlavorAdminForm(_VersionedAdminForm):
    """A ResourceFlavor checked as the API checks it (``services.check_resource_flavor``), each problem at its field."""

    kind = "resource_flavor"

    class Meta:
        model = ResourceFlavor
        fields = "__all__"

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        instance = self.instance if self.instance.pk is not None else None
        try:
            services.check_resource_flavor(instance, data)
        except rules.RuleViolation as exc:
            _apply_rule_errors(self, exc.errors)
        return data


class LocalQueueAdminForm(forms.ModelForm):
    """A LocalQueue checked as the API checks it (``services.check_local_queue``), each problem at its field; a form
    read at an older version than the row's is refused with nothing written, as the other tree forms are."""

    read_version = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=0)

    class Meta:
        model = LocalQueue
        fields = "__all__"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None:
            current = LocalQueue.objects.filter(pk=self.instance.pk).values_list("version", flat=True)
            self.fields["read_version"].initial = current.first()

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        instance = self.instance if self.instance.pk is not None else None
        if instance is not None:
            current = LocalQueue.objects.filter(pk=instance.pk).values_list("version", flat=True).first()
            if data.get("read_version") != current:
                self.add_error(
                    None,
                    f"LocalQueue {instance} changed since this form was opened, so nothing was saved. Reload the "
                    "page to see the change, then make yours again.",
                )
                return data
            self.instance.version = current
        if self.errors:
            return data
        try:
            values = services.check_local_queue(instance, data)
        except rules.RuleViolation as exc:
            _apply_rule_errors(self, exc.errors)
        else:
            data["weight"] = values["weight"]  # as every writer keeps it ("500m" is "0.5")
        return data


class _TreeWriteLockMixin:
    """Admin saves take the tree write lock before the change form reads the row, as every other tree writer does
    (``quotas.services.lock_tree_writes``): the form's rule check sees the tree the save changes, and the version the
    form was read at (``_VersionedAdminForm``) is compared with the one the save replaces."""

    def changeform_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        if request.method != "POST":
            return super().changeform_view(request, *args, **kwargs)  # type: ignore[misc]
        with transaction.atomic():
            services.lock_tree_writes()
            return super().changeform_view(request, *args, **kwargs)  # type: ignore[misc]


class _OwnedByClusterMixin:
    """While a Kubernetes cluster owns the trees (``core.tree_owner``) nothing of them is added, deleted or
    changed here; only the teams linked to a queue or a quota group and a queue's job priority range
    (``max_priority``, ``allow_non_preemptible``: Fairway's own, not the cluster's) stay editable. The owner is read
    once per request."""

    def _owner(self, request: HttpRequest) -> str | None:
        if not hasattr(request, "_fairway_trees_owner"):
            request._fairway_trees_owner = tree_owner.owner()  # type: ignore[attr-defined]
        return request._fairway_trees_owner  # type: ignore[no-any-return]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self._owner(request) is None and super().has_add_permission(request)  # type: ignore[misc]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._owner(request) is None and super().has_delete_permission(request, obj)  # type: ignore[misc]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if self._owner(request) is not None and not self._editable_while_owned():
            return False
        return super().has_change_permission(request, obj)  # type: ignore[misc,no-any-return]

    def _editable_while_owned(self) -> bool:
        return any(f.name == "teams" for f in self.model._meta.many_to_many)  # type: ignore[attr-defined]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = super().get_readonly_fields(request, obj)  # type: ignore[misc]
        if self._owner(request) is None:
            return fields
        # the queues' job priority range is Fairway's admission policy, not the cluster's tree: editable too
        policy = services.QUEUE_POLICY_FIELDS
        tree = [f.name for f in self.model._meta.fields if f.editable and f.name not in (*fields, *policy)]  # type: ignore[attr-defined]
        return (*fields, *tree)

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        owner = self._owner(request)
        if owner is not None:
            messages.info(
                request,
                f"{tree_owner.editing_sentence(owner)} Only the teams linked to a queue or a quota group change here.",
            )
        return super().changelist_view(request, extra_context)  # type: ignore[misc]

    def revert_disabled(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._owner(request) is not None or super().revert_disabled(request, obj)  # type: ignore[misc,no-any-return]

    def history_form_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        """Reverting to an old version would write every field of it."""
        owner = self._owner(request)
        if owner is not None and request.method == "POST":
            raise PermissionDenied(tree_owner.editing_sentence(owner))
        return super().history_form_view(request, *args, **kwargs)  # type: ignore[misc]


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
class QueueAdmin(
    UntrimmedNamesAdmin, _OwnedByClusterMixin, _TreeWriteLockMixin, _ProtectedDeleteMixin, SimpleHistoryAdmin
):
    form = QueueAdminForm
    list_display = ("name", "parent", "weight", "state", "priority", "reclaimable", "min_runtime")
    list_filter = ("state", "reclaimable")
    search_fields = ("name",)
    readonly_fields = ("state", "closed_by_parent", "version", "created", "updated")
    filter_horizontal = ("teams",)

    @staticmethod
    def delete_with_rules(obj: Queue) -> None:
        services.delete_queue(obj)


@admin.register(QuotaGroup)
class QuotaGroupAdmin(
    UntrimmedNamesAdmin, _OwnedByClusterMixin, _TreeWriteLockMixin, _ProtectedDeleteMixin, SimpleHistoryAdmin
):
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
class NamespaceAdmin(UntrimmedNamesAdmin, _OwnedByClusterMixin, _TreeWriteLockMixin, SimpleHistoryAdmin):
    form = NamespaceAdminForm
    list_display = ("name", "weight", "default_queue", "quota_group")
    search_fields = ("name",)
    readonly_fields = ("version", "created", "updated")


@admin.register(ResourceFlavor)
class ResourceFlavorAdmin(
    UntrimmedNamesAdmin, _OwnedByClusterMixin, _TreeWriteLockMixin, _ProtectedDeleteMixin, SimpleHistoryAdmin
):
    """Kueue's ResourceFlavors: a queue's quota in one is under the flavored key of its resource lists (cpu@spot)."""

    form = ResourceFlavorAdminForm
    list_display = ("name", "node_labels", "node_taints", "topology_name")
    search_fields = ("name",)
    readonly_fields = ("version", "created", "updated")

    @staticmethod
    def delete_with_rules(obj: ResourceFlavor) -> None:
        services.delete_resource_flavor(obj)


@admin.register(LocalQueue)
class LocalQueueAdmin(UntrimmedNamesAdmin, _OwnedByClusterMixin, _TreeWriteLockMixin, SimpleHistoryAdmin):
    """Kueue's LocalQueues: a namespace's names for leaf queues (a job's kueue.x-k8s.io/queue-name label), each with
    its fairSharing.weight."""

    form = LocalQueueAdminForm
    list_display = ("name", "namespace", "queue", "weight")
    list_filter = ("namespace",)
    search_fields = ("name", "namespace__name", "queue__name")
    readonly_fields = ("version", "created", "updated")
