"""Telling people about change requests: a mail to its approvers when one is filed, to its requester when it is
decided (Django's mail backends: ``EMAIL_URL``; the console in ``make run``), and the optional webhook
(``FAIRWAY_CHANGE_REQUEST_WEBHOOK_URL``: a JSON POST per event). A failed mail or webhook is logged and never fails
the request; both run after the request's transaction has committed."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.urls import reverse

log = logging.getLogger(__name__)


def link(request: Any) -> str:
    """The request's page, absolute when ``FAIRWAY_PUBLIC_URL`` says where the dashboard is."""
    path = reverse("frontend:change-request", args=[request.pk])
    base = str(settings.FAIRWAY.get("PUBLIC_URL") or "").rstrip("/")
    return f"{base}{path}"


def _mail(subject: str, body: str, to: Sequence[str]) -> None:
    to = sorted({a for a in to if a})
    if not to:
        return
    try:
        send_mail(subject, body, None, to)
    except Exception:  # any backend failure: the request stands, the log says who was not told
        log.exception("change request mail %r to %s not sent", subject, ", ".join(to))


def payload(event: str, request: Any) -> dict[str, Any]:
    return {
        "event": event,
        "id": request.pk,
        "status": request.status,
        "summary": request.summary,
        "requester": request.requester.get_username() if request.requester else None,
        "reviewer": request.reviewer.get_username() if request.reviewer else None,
        "comment": request.comment,
        "outcome": request.outcome,
        "cluster": request.cluster,
        "changes": request.changes,
        "url": link(request),
    }


def webhook(event: str, request: Any) -> None:
    """POST the event to the configured webhook, if any; failures are logged."""
    url = str(settings.FAIRWAY.get("CHANGE_REQUEST_WEBHOOK_URL") or "")
    if not url:
        return
    import requests

    try:
        response = requests.post(
            url, json=payload(event, request), timeout=float(settings.FAIRWAY["CHANGE_REQUEST_WEBHOOK_TIMEOUT_SECONDS"])
        )
        response.raise_for_status()
    except requests.RequestException as exc:
        log.warning("change request webhook %s for #%s failed: %s", event, request.pk, exc)


def filed(request: Any, reviewers: Sequence[Any]) -> None:
    who = request.requester.get_username() if request.requester else "somebody"
    body = (
        f"{who} asks for a change of the trees:\n\n  {request.summary}\n\n"
        + (f"Why: {request.reason}\n\n" if request.reason else "")
        + f"Review it (its what-if, then approve or reject): {link(request)}\n"
    )
    _mail(f"[Fairway] Change request #{request.pk} from {who}", body, [u.email for u in reviewers])
    webhook("filed", request)


def decided(request: Any) -> None:
    who = request.reviewer.get_username() if request.reviewer else "somebody"
    body = f"Your change request #{request.pk} ({request.summary}) is {request.get_status_display()} by {who}.\n\n"
    if request.comment:
        body += f"Comment: {request.comment}\n\n"
    if request.outcome:
        body += f"{request.outcome}\n\n"
    body += f"{link(request)}\n"
    if request.requester is not None and request.reviewer_id != request.requester_id:
        _mail(f"[Fairway] Change request #{request.pk} {request.get_status_display()}", body, [request.requester.email])
    webhook(request.status, request)


def returned(request: Any) -> None:
    """A loan went back at its end: its requester is told."""
    body = f"The loan of change request #{request.pk} ({request.summary}) ended and was returned.\n\n{link(request)}\n"
    if request.requester is not None:
        _mail(f"[Fairway] Loan #{request.pk} returned", body, [request.requester.email])
    webhook("returned", request)


def loan_stuck(request: Any, approvers: Sequence[Any]) -> None:
    """A loan past its end could not be returned: its requester and approvers are told why (once per reason)."""
    body = f"Change request #{request.pk} ({request.summary}):\n\n{request.return_problem}\n\n{link(request)}\n"
    to = [u.email for u in approvers] + ([request.requester.email] if request.requester is not None else [])
    _mail(f"[Fairway] Loan #{request.pk} is not returned yet", body, to)
    webhook("return_refused", request)
