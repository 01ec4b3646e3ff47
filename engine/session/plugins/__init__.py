"""The plugins Fairway's engine provides (one module per plugin). Importing this package registers them all in
``engine.session.registry``: a new plugin is a new module here plus its line below."""

from __future__ import annotations

from engine.session.plugins import (  # noqa: F401  (each import registers its plugin)
    binpack,
    capacity,
    conformance,
    drf,
    elasticquota,
    gang,
    nodeorder,
    overcommit,
    predicates,
    priority,
    proportion,
)
from engine.session.registry import PLUGINS

__all__ = ["PLUGINS"]
