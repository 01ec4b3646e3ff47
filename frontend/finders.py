"""A static files finder that serves plotly.js from the installed ``plotly`` wheel (no CDN, no vendored copy):
``{% static 'frontend/vendor/plotly.min.js' %}`` is ``plotly/package_data/plotly.min.js`` of the pinned plotly."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

PLOTLY_PATH = "frontend/vendor/plotly.min.js"


def plotly_js() -> Path:
    """The plotly.min.js file shipped with the installed plotly package."""
    import plotly

    return Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"


class PlotlyFinder(BaseFinder):
    """Finds ``frontend/vendor/plotly.min.js`` in the plotly package (for runserver, the live server of the
    tests and collectstatic)."""

    def check(self, **kwargs: Any) -> list[Any]:
        return []

    def find(self, path: str, find_all: bool = False, **kwargs: Any) -> Any:
        find_all = find_all or bool(kwargs.get("all"))
        if path == PLOTLY_PATH and plotly_js().exists():
            return [str(plotly_js())] if find_all else str(plotly_js())
        return [] if find_all else None

    def list(self, ignore_patterns: Any) -> Iterator[tuple[str, FileSystemStorage]]:
        source = plotly_js()
        if source.exists():
            storage = FileSystemStorage(location=str(source.parent))
            storage.prefix = str(Path(PLOTLY_PATH).parent)  # type: ignore[attr-defined]
            yield source.name, storage
