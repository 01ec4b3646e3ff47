"""The two steps of OpenID Connect sign-in (mozilla-django-oidc's views): ``/oidc/authenticate/`` sends the browser
to the provider with a fresh state, nonce and PKCE challenge; ``/oidc/callback/`` takes the provider's answer, and
either signs the user in or returns to the login page with the reason (and a ``login_failed`` security event).
Both answer 404 while sign-in with OpenID Connect is off."""

from __future__ import annotations

import logging
from typing import Any

import requests
from django.contrib import messages
from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.generic import View
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from identity import provider
from identity.backends import SignInRefused
from security.log import security_event

logger = logging.getLogger(__name__)
OFF = "Sign-in with OpenID Connect is not configured here (FAIRWAY_OIDC_CLIENT_ID)."


def _refuse(request: HttpRequest, reason: str) -> HttpResponse:
    security_event("login_failed", request, user="-", via="oidc", reason=reason)
    messages.error(request, f"Sign-in with {provider.provider_name()} failed: {reason}.")
    return redirect("login")


class SignIn(OIDCAuthenticationRequestView):
    def __init__(self, **kwargs: Any) -> None:
        View.__init__(self, **kwargs)  # the endpoints are read per request (mozilla-django-oidc reads them here)

    @staticmethod
    def get_settings(attr: str, *args: Any) -> Any:
        return provider.setting(attr, *args)

    def get(self, request: HttpRequest) -> HttpResponse:
        if not provider.enabled():
            raise Http404(OFF)
        try:
            self.OIDC_OP_AUTH_ENDPOINT = provider.endpoints().authorization
        except provider.ProviderError as exc:
            return _refuse(request, str(exc))
        self.OIDC_RP_CLIENT_ID = provider.setting("OIDC_RP_CLIENT_ID")
        return super().get(request)


class Callback(OIDCAuthenticationCallbackView):
    @staticmethod
    def get_settings(attr: str, *args: Any) -> Any:
        return provider.setting(attr, *args)

    def get(self, request: HttpRequest) -> HttpResponse:
        if not provider.enabled():
            raise Http404(OFF)
        if request.GET.get("error"):
            detail = request.GET.get("error_description") or request.GET["error"]
            states = request.session.get("oidc_states", {})
            if states.pop(request.GET.get("state", ""), None) is not None:  # an answer is used once
                request.session["oidc_states"] = states
            return _refuse(request, f"the identity provider answered {detail!r}")
        state = request.GET.get("state")
        if not state or not request.GET.get("code"):
            return _refuse(request, "the identity provider's answer has no code or no state")
        if state not in request.session.get("oidc_states", {}):
            return _refuse(
                request, "this answer is not for a sign-in started in this browser, or it was already used; start again"
            )
        try:
            return super().get(request)
        except SignInRefused as exc:
            return _refuse(request, str(exc))
        except SuspiciousOperation as exc:
            return _refuse(request, f"the identity provider's answer was refused ({exc})")
        except provider.ProviderError as exc:
            return _refuse(request, str(exc))
        except requests.RequestException as exc:
            logger.warning("OpenID Connect callback: the provider could not be asked: %s", exc)
            return _refuse(request, f"the identity provider could not be asked ({type(exc).__name__})")

    def login_failure(self) -> HttpResponse:
        user = getattr(self, "user", None)
        if user is not None and not user.is_active:
            return _refuse(self.request, f"the account {user.get_username()} is disabled here")
        return _refuse(self.request, "the identity provider's answer did not sign anybody in")
