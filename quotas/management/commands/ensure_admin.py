"""Create the demo admin (once) and print its credentials and API token.

Only the token's hash is in the database; for ``make run`` the key is kept beside the password, in
``var/admin-token`` (mode 0600), and a new token is made when that one is missing, revoked or expired."""

from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from security.tokens import TokenRefused, create_token, find_token


class Command(BaseCommand):
    help = "Create the admin user if missing (password kept in var/admin-password) and print how to log in."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--username", default="admin")

    def handle(self, *args: Any, username: str, **options: Any) -> None:
        User = get_user_model()
        password_file = settings.VAR_DIR / "admin-password"
        user = User.objects.filter(username=username).first()
        if user is None:
            password = secrets.token_urlsafe(12)
            user = User.objects.create_superuser(username=username, email="", password=password)
            password_file.write_text(password)
            password_file.chmod(0o600)
            kept = password
        else:
            kept = self._kept_password(user, password_file)
        password = kept or (
            f"(set before; {password_file} does not hold it: `manage.py changepassword {username}` sets a new one)"
        )
        key = self._token(user, settings.VAR_DIR / "admin-token")
        self.stdout.write(
            self.style.SUCCESS("Admin login: ")
            + f"username {username}  password {password}\n"
            + self.style.SUCCESS("API token:   ")
            + f"{key}   (export FAIRWAY_TOKEN={key})"
        )

    @staticmethod
    def _kept_password(user: Any, password_file: Any) -> str | None:
        """The password kept in ``password_file`` when it is still the user's (another database, or a password
        changed since, makes it stale: printing it would send the admin to a login that fails)."""
        if not password_file.exists():
            return None
        kept = password_file.read_text().strip()
        return kept if kept and user.check_password(kept) else None

    @staticmethod
    def _token(user: Any, token_file: Any) -> str:
        """The key in ``token_file`` while it is a live token of ``user``, else a new one written there."""
        if token_file.exists():
            try:
                if find_token(token_file.read_text().strip()).user_id == user.pk:
                    return token_file.read_text().strip()
            except TokenRefused:
                pass
        _, key = create_token(user, "make run")
        token_file.write_text(key)
        token_file.chmod(0o600)
        return key
