"""Names with whitespace around them (``"nlp "``) are refused, never trimmed, wherever people type them: the API
(``core.fields.ObjectNameField`` keeps the name as sent and the name rules refuse it), the Django admin's forms
(``UntrimmedNamesAdmin``) and the hierarchy editor's (``untrimmed``). One rule decides and words the refusal,
``engine.rules.name_whitespace_error``; Django's form fields would otherwise strip the name silently into another
one (``"nlp "`` into ``nlp``, beside an existing ``nlp``)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.deconstruct import deconstructible

from engine import rules

# The names of each model people type in the admin: field -> whether it is a DNS subdomain (else a DNS label), as the
# API's rules check them (queues, namespaces, clusters and pools are labels; the rest subdomains).
NAME_FIELDS: dict[str, dict[str, bool]] = {
    "quotas.queue": {"name": False},
    "quotas.quotagroup": {"name": True},
    "quotas.namespace": {"name": False},
    "quotas.localqueue": {"name": True},
    "scheduling.cluster": {"name": False},
    "scheduling.node": {"name": True, "pool": False},
    "scheduling.nodeagentbinding": {"node": True, "pool": False},
    "scheduling.podgroup": {"name": True},
    "scheduling.pod": {"name": True},
}


@deconstructible
class NameWhitespaceValidator:
    """Refuses a name that starts or ends with whitespace, with the rule's sentence naming the field (``what``)."""

    def __init__(self, what: str = "name", subdomain: bool = False) -> None:
        self.what, self.subdomain = what, subdomain

    def __call__(self, value: Any) -> None:
        error = rules.name_whitespace_error(value, what=self.what, subdomain=self.subdomain)
        if error is not None:
            raise ValidationError(error.message, code=error.code)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NameWhitespaceValidator) and (self.what, self.subdomain) == (
            other.what,
            other.subdomain,
        )

    def __hash__(self) -> int:
        return hash((self.what, self.subdomain))


def untrimmed(field: forms.Field, what: str, *, subdomain: bool = False) -> forms.Field:
    """The form field keeps what was typed and refuses whitespace around it (in place; returns the field)."""
    if isinstance(field, forms.CharField):
        field.strip = False
    if not any(isinstance(v, NameWhitespaceValidator) for v in field.validators):
        field.validators.append(NameWhitespaceValidator(what, subdomain))
    return field


class UntrimmedNamesAdmin:
    """A ``ModelAdmin`` mixin: the model's name fields (``NAME_FIELDS``) are not stripped in its forms, and a name
    with whitespace around it is refused at its field (``"queue name 'nlp ' starts or ends with whitespace; …"``)."""

    def formfield_for_dbfield(self, db_field: Any, request: Any, **kwargs: Any) -> Any:
        field = super().formfield_for_dbfield(db_field, request, **kwargs)  # type: ignore[misc]
        names = NAME_FIELDS.get(db_field.model._meta.label_lower, {})
        if field is not None and db_field.name in names:
            what = f"{db_field.model._meta.verbose_name} {db_field.verbose_name}"
            untrimmed(field, what, subdomain=names[db_field.name])
        return field
