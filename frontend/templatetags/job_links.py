"""``{{ key|job_url }}``: the job page of a podgroup key (``namespace/name``), for pages whose rows carry only the
key (the what-if impact)."""

from __future__ import annotations

from django import template

from frontend.presenters.links import job_url as url_of

register = template.Library()


@register.filter
def job_url(key: str) -> str:
    namespace, _, name = str(key).partition("/")
    return url_of(namespace, name) if namespace and name else ""
