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


# The layout components of plotly.js's core (src/core.js) and the figure attributes that call on each.
COMPONENT_ATTRIBUTES = {
    "annotations": {"annotations"},
    "annotations3d": {"scene"},
    "selections": {"selections"},
    "shapes": {"shapes"},
    "images": {"images"},
    "updatemenus": {"updatemenus"},
    "sliders": {"sliders"},
    "rangeslider": {"rangeslider"},
    "rangeselector": {"rangeselector"},
    "grid": {"grid"},
    "errorbars": {"error_x", "error_y"},
    "colorscale": {"colorscale", "coloraxis"},
    "colorbar": {"colorbar"},
    "legend": {"legend", "showlegend"},
    "fx": {"hovermode", "hovertemplate"},
    "modebar": {"modebar"},
}


def keys_of(value: object) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys_of(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys_of(v)}
    return set()


def test_no_figure_uses_a_component_the_bundle_leaves_out() -> None:
    """tools/plotly/core.js registers only some of plotly.js's layout components; plotly.js ignores an attribute
    of one that is not registered without a word (an update menu or error bars would silently not be drawn)."""
    core = (ROOT / "tools/plotly/core.js").read_text()
    registered = set(re.findall(r"require\('plotly\.js/src/components/(\w+)'\)", core))
    assert registered >= {"annotations", "shapes", "legend", "fx", "modebar", "colorbar"}
    left_out = set(COMPONENT_ATTRIBUTES) - registered
    assert left_out, "core.js registers every component: use plotly.js/lib/core instead"
    used = {k for fig in every_figure() for k in keys_of(fig)}
    assert {c: used & COMPONENT_ATTRIBUTES[c] for c in left_out if used & COMPONENT_ATTRIBUTES[c]} == {}


def test_the_bundles_module_factories_are_compiled_while_it_downloads() -> None:
    """build.mjs puts each CommonJS module factory of esbuild's output in parentheses (V8 compiles those on the
    streaming thread, not on the main thread when the bundle runs): none is left bare."""
    found = finders.find(BUNDLE)
    assert found
    code = Path(found).read_text(encoding="utf-8")
    helper = re.search(
        r"var ([\w$]+)=\(\w,\w\)=>\(\)=>\{try\{return \w\|\|\w\(\(\w=\{exports:\{\}\}\)\.exports,\w\)", code
    )
    assert helper, "esbuild's CommonJS helper is not in the bundle"
    name = re.escape(helper[1])
    params = r"(?:\(\w*(?:,\w+)?\)|\w+)=>"  # (e,t)=>, (e)=>, ()=>, e=>
    wrapped = re.findall(rf"[^\w$.]{name}\(\({params}", code)
    bare = re.findall(rf"[^\w$.]{name}\({params}", code)
    assert len(wrapped) > 100 and bare == []
