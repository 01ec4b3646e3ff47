"""Create an API token for a user and print it (once: only its hash is kept)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from security.tokens import create_token


class Command(BaseCommand):
    help = "Create an API token for USERNAME and print it (it is shown this once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="created with manage.py", help="what the token is for")
        parser.add_argument(
            "--days", type=int, default=None, help="lifetime in days (default FAIRWAY_TOKEN_LIFETIME_DAYS)"
        )
        parser.add_argument("--read-only", action="store_true", help="the token may only read (GET, HEAD, OPTIONS)")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"user {options['username']} does not exist")
        try:
            token, key = create_token(user, options["name"], days=options["days"], read_only=options["read_only"])
        except ValidationError as exc:
            raise CommandError(
                "; ".join(
                    f"--{f.replace('expires_in_days', 'days')}: {m}" for f, ms in exc.message_dict.items() for m in ms
                )
            ) from None
        self.stderr.write(f"token {token.prefix}… of {user.username}, {token.scope}, expires {token.expires:%Y-%m-%d}")
        self.stdout.write(key)
