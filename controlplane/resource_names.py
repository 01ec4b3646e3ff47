"""The resource names the control plane knows: the standard Kubernetes ones plus every name some node offers.

The rule is pure (``engine.resources.ResourceNames``). Which names the nodes offer is a fact of the app that keeps
the nodes: it registers a provider here when it is ready (``scheduling.apps``), so that the trees' forms and
fields check names without importing that app. Nodes introduce names: their ``allocatable`` may carry any
syntactically valid name, every other resource list only known ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from engine.resources import ResourceNames, is_standard_resource

_offered_names: Callable[[], set[str]] | None = None


def register(offered_names: Callable[[], set[str]]) -> None:
    """Make ``offered_names`` (every resource name some node offers, across all clusters) the source of the
    known names; a later registration replaces an earlier one."""
    global _offered_names
    _offered_names = offered_names


def known_resource_names() -> ResourceNames:
    """The known names now (one call of the registered provider)."""
    if _offered_names is None:
        raise RuntimeError("no provider of offered resource names is registered (is the scheduling app installed?)")
    return ResourceNames(_offered_names())


def check_known(names: Iterable[str], field: str) -> None:
    """Raise ``QuantityError`` at ``field.<name>`` for the first name no node offers and no standard resource is;
    asks the provider only when some name is not a standard one."""
    names = list(names)
    if all(is_standard_resource(n) for n in names):
        return
    known_resource_names().check(names, field)
