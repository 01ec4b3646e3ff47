"""The addresses the pages link a tree node to."""

from __future__ import annotations

from django.urls import reverse

from frontend.presenters import trees


def node_url(kind: str, name: str) -> str:
    """The page of a queue (``kind`` "queue") or a quota group."""
    return reverse("frontend:queue" if kind == "queue" else "frontend:quota", args=[name])


def node_urls(tree: trees.Tree) -> dict[str, str]:
    """The page of every node of ``tree`` (one ``reverse`` for the whole tree)."""
    prefix = reverse("frontend:queue" if tree.kind == "queue" else "frontend:quota", args=["__name__"])
    return {n: prefix.replace("__name__", n) for n in tree.nodes}


def job_url(namespace: str, name: str) -> str:
    """The page of the job (podgroup) ``namespace/name``."""
    return reverse("frontend:job", args=[namespace, name])
