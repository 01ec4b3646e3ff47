"""Reservations visible on the pages: the presenters print what admitted jobs reserve and pipelined pods request
beside what is allocated, the usage bar stacks them, and the node and team pages show them with the reason whose
available amount they add up to."""

from __future__ import annotations

from typing import Any

import pytest

from engine.values import compute_values
from frontend import figures
from frontend.presenters import balances, details, trees
from scheduling.models import Cluster
from scheduling.store import load_snapshot
from tests.frontend import builders as b
from tests.frontend.reservations import GPU, MINUS, engineering


@pytest.fixture
def world(db: Any) -> dict[str, Any]:
    return engineering()


def _trees() -> tuple[trees.Tree, trees.Tree]:
    snap = load_snapshot(Cluster.objects.get(name="default"))
    values = compute_values(snap)
    return trees.queue_tree(snap, values), trees.quota_tree(snap, values)


def test_the_presenters_print_reserved_and_pipelined_apart(world: dict[str, Any]) -> None:
    queues, groups = _trees()
    q = queues.nodes["engineering"]
    assert q.used[GPU] == 12_000 and q.reserved[GPU] == 18_000 and q.reserved_jobs == 2 and q.reserving[GPU] == 2
    assert q.pipelined[GPU] == 3_000 and q.pipelined_pods == 1
    held = details.holding(q, GPU)
    assert held["reserved"] == "18 GPUs by 2 admitted jobs"
    assert held["pipelined"] == "3 GPUs in 1 pod"
    row = next(r for r in balances.resource_rows(queues, q, [GPU]) if r["resource"] == GPU)
    assert (row["used"], row["reserved"], row["pipelined"]) == (
        "12 GPUs",
        "18 GPUs by 2 admitted jobs",
        "3 GPUs in 1 pod",
    )
    g = groups.nodes["research"]
    assert details.holding(g, GPU)["reserved"] == "18 GPUs by 2 admitted jobs"
    assert details.holding(g, GPU)["pipelined"] == "3 GPUs in 1 pod"
    # nothing reserved, nothing printed
    assert details.holding(queues.nodes["default"], GPU) == {
        "reserved_amount": 0,
        "pipelined_amount": 0,
        "reserved_h": "",
        "pipelined_h": "",
        "pipelined_short": "",
        "reserved": "",
        "pipelined": "",
    }
    assert details.holding_note(queues.nodes["default"]) == ""
    assert details.holding_note(g) == (
        "Beside what is used: reserved by 2 admitted jobs not fully placed yet; "
        "1 pipelined pod waiting for resources being freed."
    )


def test_the_usage_bar_stacks_allocated_reserved_and_pipelined(world: dict[str, Any]) -> None:
    queues, _ = _trees()
    q = queues.nodes["engineering"]
    fig = figures.to_json(figures.resources_figure(q, [GPU], {GPU: 32_000}))
    bars = {t["name"]: t for t in fig["data"]}
    used, reserved, pipelined = bars["allocated"], bars["reserved by admitted jobs"], bars["pipelined pods"]
    assert used["x"] == [12.0]
    assert (reserved["base"], reserved["x"]) == ([12.0], [18.0])
    assert (pipelined["base"], pipelined["x"]) == ([30.0], [3.0])
    assert reserved["offsetgroup"] == pipelined["offsetgroup"] == used["offsetgroup"]
    assert "18 GPUs of nvidia.com/gpu reserved by 2 admitted jobs" in reserved["hovertemplate"]
    assert "3 GPUs of nvidia.com/gpu requested by 1 pipelined pod," in pipelined["hovertemplate"]
    assert pipelined["text"] == ["12 GPUs + 18 reserved + 3 pipelined"]
    # a legend names the three segments, with colours apart from the borrow and lend colours
    assert all(bars[n]["showlegend"] for n in ("allocated", "reserved by admitted jobs", "pipelined pods"))
    colours = {reserved["marker"]["color"], pipelined["marker"]["color"]}
    assert not colours & {figures.BORROWED, figures.LENT, figures.SERIES["used"]}
    assert reserved["marker"]["pattern"]["shape"] == "/"
    # the tree charts' hover text says it too
    hover = figures._hover(queues, q, GPU)
    assert "reserved: 18 GPUs by 2 admitted jobs" in hover and "pipelined: 3 GPUs in 1 pod" in hover


def test_node_and_team_pages_show_the_reservations_and_the_reason(world: dict[str, Any], client: Any) -> None:
    b.user("eng-lead", teams=["eng-team"])
    from tests.frontend.conftest import login

    page = login(client, "eng-lead").get("/queues/engineering/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "18 GPUs by 2 admitted jobs" in html and "3 GPUs in 1 pod" in html
    assert f"available 2 = 32 capability {MINUS} 12 allocated {MINUS} 18 reserved by 2 admitted jobs" in html
    group_page = client.get("/quotas/research/").content.decode()
    assert "18 GPUs by 2 admitted jobs" in group_page
    team = client.get("/team/eng-team/").content.decode()
    assert 'data-testid="queue-engineering-reserved-nvidia.com/gpu"' in team
    assert 'title="18 GPUs by 2 admitted jobs; pipelined: 3 GPUs in 1 pod">18 GPUs<' in team
    assert "reserved by 2 admitted jobs not fully placed yet; 1 pipelined pod waiting for resources being freed" in team
