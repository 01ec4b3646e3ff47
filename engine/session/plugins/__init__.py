"""The plugins Fairway's engine provides, one folder each (Volcano keeps one package per plugin), named here.

A plugin's folder holds ``plugin.py``, its class, decorated with ``engine.session.registry.register``, and, when the
plugin takes arguments, ``arguments.py``, the reader of its arguments, which imports nothing of the session:
``engine.policy`` reads every plugin's arguments when it reads a policy, and the session imports the policy. So this
module imports the readers (their order is the order of a policy's argument warnings) but no plugin class:
``engine.session.registry.load`` imports those, once a session is to be built (``engine.session.run``). A new plugin
is a new folder plus its name in ``NAMES`` (and its reader's import line below when it takes arguments);
``tests/unit/test_plugin_registry.py`` checks both.
"""

from __future__ import annotations

from engine.policy.arguments import PLUGIN_ARGUMENTS, declare

# isort: off
from engine.session.plugins.overcommit import arguments as _overcommit  # noqa: F401  (each declares its reader)
from engine.session.plugins.capacity import arguments as _capacity  # noqa: F401
from engine.session.plugins.nodeorder import arguments as _nodeorder  # noqa: F401
from engine.session.plugins.binpack import arguments as _binpack  # noqa: F401
from engine.session.plugins.elasticquota import arguments as _elasticquota  # noqa: F401
from engine.session.plugins.proportion import arguments as _proportion  # noqa: F401
from engine.session.plugins.kueuefair import arguments as _kueuefair  # noqa: F401

# isort: on

__all__ = ["NAMES"]

# Every plugin a policy may name, each the name of its folder.
NAMES: tuple[str, ...] = (
    "overcommit",
    "capacity",
    "nodeorder",
    "binpack",
    "elasticquota",
    "proportion",
    "priority",
    "gang",
    "conformance",
    "drf",
    "predicates",
    "kueuefair",
)
for _name in NAMES:
    if _name not in PLUGIN_ARGUMENTS:
        declare(_name)  # it takes no arguments: its switches are all it reads
