"""The signed-in user's API tokens: list (name, prefix, created, last used, expires, scope), create (the key is shown
once, on the answer to the form), revoke. Any signed-in user, for its own tokens only."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from security.models import ApiToken
from security.tokens import create_token, revoke_token


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="What the token is for (a script, a CI job, a node agent).")
    expires_in_days = forms.IntegerField(label="Expires in (days)", min_value=1)
    read_only = forms.BooleanField(required=False, label="Read-only (GET only: it cannot change anything)")

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        limit = settings.FAIRWAY["TOKEN_MAX_LIFETIME_DAYS"]  # checked by create_token, which says so at the field
        field = self.fields["expires_in_days"]
        field.widget.attrs["max"] = limit
        field.initial = min(settings.FAIRWAY["TOKEN_LIFETIME_DAYS"], limit)
        field.help_text = f"At most {limit} days."


@login_required
def tokens(request: HttpRequest) -> HttpResponse:
    new_key = ""
    form = TokenForm()
    if request.method == "POST":
        form = TokenForm(request.POST)
        if form.is_valid():
            try:
                _, new_key = create_token(
                    request.user,
                    form.cleaned_data["name"],
                    days=form.cleaned_data["expires_in_days"],
                    read_only=form.cleaned_data["read_only"],
                    request=request,
                )
            except ValidationError as exc:
                for field, errors in exc.message_dict.items():
                    for error in errors:
                        form.add_error(field if field in form.fields else None, error)
            else:
                form = TokenForm()
    context = {
        "nav": "tokens",
        "tokens": ApiToken.objects.filter(user=request.user).order_by("-created", "-id"),
        "form": form,
        "new_key": new_key,
    }
    response = render(request, "frontend/tokens.html", context, status=400 if form.errors else 200)
    response["Cache-Control"] = "no-store"  # the page may hold a key shown once
    return response


@login_required
@require_POST
def revoke(request: HttpRequest, pk: int) -> HttpResponse:
    token = ApiToken.objects.filter(user=request.user, pk=pk).select_related("user").first()
    if token is None:
        raise Http404("You have no such API token: it may have been revoked and removed already.")
    name, prefix = token.name, token.prefix
    revoke_token(token, request=request)
    messages.success(request, f"Token {name} ({prefix}…) revoked: requests bearing it are refused from now on.")
    return redirect("frontend:tokens")
