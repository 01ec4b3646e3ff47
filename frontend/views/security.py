"""The security log (admins only): logins, failures, lockouts, tokens made, refused and revoked, admin changes, newest
first, filtered as ``GET /api/v1/security-events/`` filters them (the same filter set), fifty to a page. The
hierarchy editor's changes are not repeated here: they are on the History page (django-simple-history)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from quotas.access import is_admin
from security.api import SecurityEventFilterSet
from security.choices import SecurityEventKind, SecurityOutcome
from security.models import SecurityEvent

PER_PAGE = 50
FILTERS = ("kind", "outcome", "actor", "since")


@login_required
def security_log(request: HttpRequest) -> HttpResponse:
    if not is_admin(request.user):
        why = "Only admins can read the security log. Your own API tokens are on the Tokens page."
        return render(request, "frontend/forbidden.html", {"why": why}, status=403)
    params = {key: request.GET.get(key, "").strip() for key in FILTERS}
    asked = {k: v for k, v in params.items() if v}
    filters = SecurityEventFilterSet(asked, queryset=SecurityEvent.objects.all())
    valid = filters.is_valid()
    events = filters.qs if valid else SecurityEvent.objects.none()
    page = Paginator(events.order_by("-time", "-id"), PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "nav": "security",
        "page": page,
        "params": params,
        "errors": {} if valid else {k: " ".join(str(e) for e in v) for k, v in filters.errors.items()},
        "kinds": SecurityEventKind.choices,
        "outcomes": SecurityOutcome.choices,
        "filtered": bool(asked),
        "query": urlencode(asked),
        "retention_days": settings.FAIRWAY["SECURITY_EVENT_RETENTION_DAYS"],
    }
    return render(request, "frontend/security.html", context, status=200 if valid else 400)
