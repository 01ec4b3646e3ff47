"""Create the demo admin (once) and print its credentials and API token."""

from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from rest_framework.authtoken.models import Token


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
        password = password_file.read_text().strip() if password_file.exists() else "(set before; unchanged)"
        token, _ = Token.objects.get_or_create(user=user)
        self.stdout.write(
            self.style.SUCCESS("Admin login: ")
            + f"username {username}  password {password}\n"
            + self.style.SUCCESS("API token:   ")
            + f"{token.key}   (export FAIRWAY_TOKEN={token.key})"
        )
