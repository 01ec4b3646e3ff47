"""Every plugin a policy can name and how each reads its own arguments (Volcano: each plugin's ``New`` parses
its ``framework.Arguments``).

One module per plugin that takes arguments declares its reader with ``base.declare``; ``plain`` declares the
plugins that take none. ``engine.session.policy`` derives ``KNOWN_PLUGINS`` from ``PLUGIN_ARGUMENTS`` and asks
each reader once when a policy is read, so a bad value is reported then. Nothing here imports the session, so
the policy module can read its default policy while it is being imported. A new plugin adds its module here
(or a name in ``plain``) as well as its plugin module; ``tests/unit/test_plugin_registry.py`` checks the two
lists agree.

The import order below is the order of a policy's argument warnings.
"""

from __future__ import annotations

# isort: off
from engine.session.arguments import overcommit  # noqa: F401  (each module declares its plugin)
from engine.session.arguments import capacity  # noqa: F401
from engine.session.arguments import nodeorder  # noqa: F401
from engine.session.arguments import binpack  # noqa: F401
from engine.session.arguments import elasticquota  # noqa: F401
from engine.session.arguments import proportion  # noqa: F401
from engine.session.arguments import plain  # noqa: F401

# isort: on
from engine.session.arguments.base import PLUGIN_ARGUMENTS, PolicyError

__all__ = ["PLUGIN_ARGUMENTS", "PolicyError"]
