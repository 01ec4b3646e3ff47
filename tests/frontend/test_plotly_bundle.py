"""The dashboard's partial plotly.js bundle (frontend/static/frontend/vendor/plotly-fairway.min.js, built by
``make plotly`` from tools/plotly): the pages load it, it is the plotly.js the pinned plotly package ships, and it
registers every trace type the figures draw (plotly.js silently draws an unregistered type as a scatter)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from django.contrib.staticfiles import finders
from plotly.offline import get_plotlyjs_version

from tests.frontend.test_figures import every_figure

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = "frontend/vendor/plotly-fairway.min.js"
BANNER = re.compile(r"^/\* plotly\.js v(?P<version>[\w.-]+) partial bundle; traces: (?P<traces>[\w, ]+)\. ")


def banner() -> re.Match[str]:
    found = finders.find(BUNDLE)
    assert found, f"{BUNDLE} is not among the static files"
    with open(found, encoding="utf-8") as f:
        match = BANNER.match(f.readline())
    assert match, "the bundle's first line is not build.mjs's banner: rebuild it with make plotly"
    return match


def test_the_chart_pages_load_the_partial_bundle() -> None:
    head = (ROOT / "frontend/templates/frontend/charts_head.html").read_text()
    assert f"{{% static '{BUNDLE}' %}}" in head and "plotly.min.js" not in head


def test_the_bundle_is_the_plotly_js_of_the_pinned_plotly_package() -> None:
    pinned = json.loads((ROOT / "tools/plotly/package.json").read_text())["devDependencies"]["plotly.js"]
    assert banner()["version"] == pinned == get_plotlyjs_version()


def test_the_bundle_registers_exactly_the_traces_its_entry_lists() -> None:
    entry = (ROOT / "tools/plotly/index.js").read_text()
    listed = sorted(set(re.findall(r"require\('plotly\.js/lib/(\w+)'\)", entry)) - {"core"})
    assert banner()["traces"].split(", ") == listed


def test_every_trace_type_the_figures_draw_is_in_the_bundle() -> None:
    drawn = {trace.get("type", "scatter") for fig in every_figure() for trace in fig["data"]}
    assert drawn >= {"sunburst", "icicle", "bar", "scatter"}
    assert drawn <= set(banner()["traces"].split(", "))
