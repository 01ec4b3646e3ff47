"""How the test sets the provider's users and Fairway's client while it runs: two JSON endpoints, for the holder of
the seed token ``tests.support.oidc_server`` puts in the provider's environment (``PROVIDER_SEED_TOKEN``) only.

An HTTP call to the running provider costs a few milliseconds; a management command in a process of its own cost
about two seconds (a Python and a Django start-up) per user the tests made."""

from __future__ import annotations

import hmac
import json
import os
from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import Group, User
from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from oauth2_provider.models import Application


def _seed_view(body: Callable[[dict[str, Any]], None]) -> Callable[[HttpRequest], HttpResponse]:
    """A POST endpoint that reads a JSON object, for the seed token's holder (403 otherwise), in one transaction."""

    @csrf_exempt
    @require_POST
    def view(request: HttpRequest) -> HttpResponse:
        given = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if not hmac.compare_digest(given.encode(), os.environ["PROVIDER_SEED_TOKEN"].encode()):
            return JsonResponse({"detail": "the seed token is missing or wrong"}, status=403)
        try:
            data = json.loads(request.body)
            with transaction.atomic():
                body(data)
        except (ValueError, KeyError, TypeError) as e:
            return JsonResponse({"detail": f"{type(e).__name__}: {e}"}, status=400)
        return JsonResponse({"ok": True})

    return view


def _user(data: dict[str, Any]) -> None:
    """Creates or updates a user with exactly the given groups (``[]``: none)."""
    user, _ = User.objects.get_or_create(username=data["username"])
    user.set_password(data["password"])
    user.email = data.get("email", "")
    user.save()
    user.groups.set([Group.objects.get_or_create(name=name)[0] for name in data.get("groups", [])])


def _client(data: dict[str, Any]) -> None:
    """Registers (or replaces) a confidential client: authorization code, RS256, no consent page."""
    Application.objects.filter(client_id=data["client_id"]).delete()
    Application.objects.create(
        name="Fairway",
        client_id=data["client_id"],
        client_secret=data["secret"],
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=data["redirect_uri"],
        algorithm=Application.RS256_ALGORITHM,
        skip_authorization=True,
    )


user = _seed_view(_user)
client = _seed_view(_client)
