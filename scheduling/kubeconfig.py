"""What a kubeconfig must hold for the Kubernetes adapter to load it, checked where one is written (the API's
cluster serializer and the cluster's admin form). Kept apart from the serializers so that the admin, loaded in every
process at start-up, does not import the REST framework with it."""

from __future__ import annotations

from collections.abc import Mapping

import yaml

KUBECONFIG_MAX_CHARS = 131_072  # a kubeconfig with a few embedded certificates is some kilobytes


def kubeconfig_problem(text: str) -> str:
    """Why ``text`` is not a kubeconfig the adapter can load, or "" (blank is fine: the in-cluster service account).
    Only where the problem is, never the text (it holds credentials)."""
    if not text.strip():
        return ""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        return f"the kubeconfig is not valid YAML{where}"
    if not isinstance(data, Mapping):
        return "the kubeconfig must be a YAML mapping (apiVersion: v1, kind: Config, clusters, users, contexts)"
    for key in ("clusters", "contexts"):
        items = data.get(key)
        if not isinstance(items, list) or not items:
            return f"the kubeconfig has no {key}: it needs at least one"
    contexts = {str(c.get("name")) for c in data["contexts"] if isinstance(c, Mapping)}
    current = data.get("current-context")
    if not current:
        return "the kubeconfig has no current-context: the adapter connects with it"
    if str(current) not in contexts:
        return f"the kubeconfig's current-context {str(current)[:63]!r} is not one of its contexts"
    return ""
