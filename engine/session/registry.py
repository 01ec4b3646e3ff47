"""The plugin classes a policy can name, each registered by its folder's ``plugin.py`` (Volcano's
``framework.RegisterPluginBuilder``, called from ``plugins/factory.go``). The framework reads ``PLUGINS`` and imports
no plugin; whoever builds sessions calls ``load`` first (``engine.session.run`` does), which imports every plugin
``engine.session.plugins.NAMES`` names.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, TypeVar

from engine.session.plugins import NAMES

if TYPE_CHECKING:
    from engine.session.framework import Plugin

__all__ = ["PLUGINS", "load", "register"]

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


def load() -> dict[str, type[Plugin]]:
    """Import every plugin's class (each registers itself); returns the registry, complete."""
    for name in NAMES:
        importlib.import_module(f"engine.session.plugins.{name}.plugin")
    return PLUGINS
