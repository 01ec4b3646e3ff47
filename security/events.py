"""Signal receivers that write logins, login failures, lockouts and admin changes to the security log."""

from __future__ import annotations

from typing import Any

from axes.signals import user_locked_out
from django.contrib.admin.models import LogEntry
from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed
from django.db.models.signals import post_save
from django.dispatch import receiver

from security.log import security_event


@receiver(user_logged_in, dispatch_uid="fairway-security-login")
def _logged_in(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    security_event("login", request, user=user.get_username())


@receiver(user_logged_out, dispatch_uid="fairway-security-logout")
def _logged_out(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    security_event("logout", request, user=user.get_username() if user is not None else "-")


@receiver(user_login_failed, dispatch_uid="fairway-security-login-failed")
def _login_failed(sender: Any, credentials: dict[str, Any], request: Any = None, **kwargs: Any) -> None:
    # Django has already replaced the password in ``credentials`` by stars; only the username is kept
    security_event("login_failed", request, user=credentials.get("username", "-"))


@receiver(user_locked_out, dispatch_uid="fairway-security-lockout")
def _locked_out(sender: Any, request: Any, username: str | None, ip_address: str | None, **kwargs: Any) -> None:
    security_event("lockout", request, user=username or "-")


@receiver(post_save, sender=LogEntry, dispatch_uid="fairway-security-admin-change")
def _admin_change(sender: Any, instance: LogEntry, created: bool, **kwargs: Any) -> None:
    if not created:
        return
    action = {1: "added", 2: "changed", 3: "deleted"}.get(instance.action_flag, str(instance.action_flag))
    security_event(
        "admin_change",
        user=instance.user.get_username(),
        action=action,
        model=f"{instance.content_type.app_label}.{instance.content_type.model}" if instance.content_type else "-",
        object_id=instance.object_id or "-",
        object=instance.object_repr,
        change=instance.get_change_message() or "-",
    )
