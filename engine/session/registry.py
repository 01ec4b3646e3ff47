"""The plugins a policy can name, each registered by its own module (Volcano's ``framework.RegisterPluginBuilder``,
called from ``plugins/factory.go``).

A plugin module decorates its class with ``@register``; ``engine.session.plugins`` imports every plugin module, so
adding a plugin is one new module plus its import line there. The framework reads this registry and imports no
plugin: whoever builds sessions imports ``engine.session.plugins`` first (``engine.session.run`` does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from engine.session.framework import Plugin

__all__ = ["PLUGINS", "register"]

PLUGINS: dict[str, type[Plugin]] = {}

P = TypeVar("P", bound="type[Plugin]")


def register(cls: P) -> P:
    """Make ``cls`` the plugin a policy names ``cls.name``; a second class under one name is a programming error."""
    name = cls.name
    if not name:
        raise ValueError(f"{cls.__name__} has no name")
    known = PLUGINS.get(name)
    if known is not None and known is not cls:
        raise ValueError(f"plugin {name!r} is registered twice ({known.__name__} and {cls.__name__})")
    PLUGINS[name] = cls
    return cls
