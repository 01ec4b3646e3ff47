"""Trees that stay readable: unlimited nodes sized by what they claim (not the cluster they could take), deep
branches collapsed with a zoom into any subtree, the title following the chosen size, "Find a node" highlighting
the match on the chart."""

from __future__ import annotations

from typing import Any

import pytest

from frontend import figures
from frontend.presenters.trees import MIN_SHARE, Tree, sizes
from tests.frontend import builders as b
from tests.frontend.deep_tree import BRANCH, LEAF, six_level_branch
from tests.frontend.test_figures import make_tree, node


def test_an_unlimited_node_is_sized_by_what_it_deserves_and_uses_not_by_the_cluster() -> None:
    spec: dict[str, tuple[str | None, int | None]] = {
        "root": (None, None),
        "a": ("root", 60),
        "default": ("root", None),
    }
    tree = make_tree(spec, total=100)
    s = sizes(tree, "cpu")
    # default deserves and uses nothing: a sliver, not a third of the ring (it used to get the cluster, 100)
    assert s["default"] / s["root"] == pytest.approx(MIN_SHARE / (1 + MIN_SHARE) * 100 / 100, rel=0.05)
    assert s["default"] < 0.05 * s["root"] and s["a"] > 0.5 * s["root"]
    nodes = dict(tree.nodes)
    nodes["default"] = node("default", "root", entitled={"cpu": 20}, used={"cpu": 30})
    busy = Tree("quota", nodes, tree.order, tree.roots, tree.total)
    t = sizes(busy, "cpu")
    assert t["default"] / t["a"] == pytest.approx(30 / 60)  # sized by what it uses (30), a by its capability (60)
    # the other sizes are untouched: sized by used, an idle unlimited node has no sector
    assert sizes(tree, "cpu", "used")["default"] == 0


def test_deep_branches_are_collapsed_and_zoomable(settings: Any, admin_client: Any) -> None:
    six_level_branch(settings)
    page = admin_client.get("/trees/queues/")
    trace = page.context["figures"]["tree"]["data"][0]
    assert page.context["levels"] == 7  # root and six levels
    assert trace["maxdepth"] == figures.MAX_LEVELS
    meta = page.context["figures"]["tree"]["layout"]["meta"]
    assert meta["zoom"]["natural-language-processing"] == "?root=natural-language-processing"
    assert "root" not in meta["zoom"] and LEAF not in meta["zoom"]  # the centre opens, a leaf opens
    values = dict(zip(trace["ids"], trace["values"], strict=True))
    # the default queue (unlimited, nothing deserved, idle) keeps a sliver of the ring, not a third
    assert values["default"] < 0.05 * values["root"]
    assert values["research"] > 10 * values["default"]
    # zoomed into a subtree: only it, every level below it drawn, a breadcrumb back up
    zoomed = admin_client.get(f"/trees/queues/?root={BRANCH[2]}&style=icicle")
    ztrace = zoomed.context["figures"]["tree"]["data"][0]
    assert ztrace["ids"][0] == BRANCH[2] and "research" not in ztrace["ids"]
    assert zoomed.context["figures"]["tree"]["layout"]["meta"]["up"] == f"?style=icicle&root={BRANCH[1]}"
    html = zoomed.content.decode()
    assert [c["name"] for c in zoomed.context["crumbs"]] == ["whole tree", "root", BRANCH[0], BRANCH[1]]
    assert 'id="tree-up"' in html
    assert {r["name"] for r in zoomed.context["rows"]} == {*BRANCH[2:], "sibling-at-level-six"}
    # an unknown root shows the whole tree
    assert admin_client.get("/trees/queues/?root=nope").context["root"] is None


@pytest.mark.parametrize(("size", "title"), [("cap", "Capability"), ("entitled", "Deserved"), ("used", "Allocated")])
def test_the_chart_title_follows_the_chosen_size(admin_client: Any, size: str, title: str) -> None:
    b.seed000_table2()
    html = admin_client.get(f"/trees/queues/?size={size}").content.decode()
    assert f'<h2 id="fig-title">{title} of cpu, coloured by borrowed vs lent</h2>' in html
    quota = admin_client.get("/trees/quotas/?size=used").content.decode()
    assert '<h2 id="fig-title">Used of cpu' in quota


def test_find_a_node_highlights_the_match_on_the_chart(settings: Any, admin_client: Any) -> None:
    six_level_branch(settings)
    page = admin_client.get("/trees/queues/?q=platform")
    fig = page.context["figures"]["tree"]
    trace = fig["data"][0]
    assert fig["layout"]["meta"]["highlight"] == ["platform", "platform-batch"]
    width = dict(zip(trace["ids"], trace["marker"]["line"]["width"], strict=True))
    colour = dict(zip(trace["ids"], trace["marker"]["line"]["color"], strict=True))
    assert width["platform"] == width["platform-batch"] == 4 and colour["platform"] == figures.HIGHLIGHT
    assert width["root"] == 2 and width["research"] == 1  # the path to a match, and a node off it
    assert "2 nodes matching “platform” outlined in blue" in page.content.decode()
    # one match deeper than the chart draws: the chart starts at its parent, so the match is drawn
    deep = admin_client.get("/trees/queues/?q=very-long-name")
    assert deep.context["root"] == BRANCH[-2]
    assert deep.context["figures"]["tree"]["layout"]["meta"]["highlight"] == [LEAF]
