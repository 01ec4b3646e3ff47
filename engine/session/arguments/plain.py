"""The plugins that take no arguments: a policy may name them, and their switches are all they read."""

from __future__ import annotations

from engine.session.arguments.base import declare

for _name in ("priority", "gang", "conformance", "drf", "predicates"):
    declare(_name)
