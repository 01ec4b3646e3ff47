"""The admin's /team/: one summary card per team (deserved or runtime, using, borrowing, lending, waiting jobs),
each linking to the team's page."""

from __future__ import annotations

from typing import Any

from tests.frontend import builders as b
from tests.frontend.conftest import login


def test_one_card_per_team_with_its_numbers(admin_client: Any, lending: None) -> None:
    response = admin_client.get("/team/")
    assert response.status_code == 200
    cards = {c["name"]: c for c in response.context["cards"]}
    assert list(cards) == ["x-team", "y-team"]
    x = cards["x-team"]
    assert [blk["kind"] for blk in x["blocks"]] == ["queue", "quota"]
    quota = x["blocks"][1]
    cpu = next(r for r in quota["rows"] if r["resource"] == "cpu")
    assert (cpu["entitled"], cpu["used"], cpu["borrowed"], cpu["lent"]) == ("90 cores", "80 cores", "30 cores", "")
    y_cpu = next(r for r in cards["y-team"]["blocks"][1]["rows"] if r["resource"] == "cpu")
    assert y_cpu["lent"] == "30 cores" and y_cpu["borrowed"] == ""
    assert x["waiting"] == 1 and cards["y-team"]["waiting"] == 0  # x-ns/eval waits
    html = response.content.decode()
    assert html.count('class="card team-card"') == 2
    assert 'href="/team/x-team/"' in html and "1 waiting job<" in html and "0 waiting jobs<" in html
    assert "▲ 30 cores" in html and "▼ 30 cores" in html


def test_a_team_owning_a_parent_and_its_child_is_counted_once(admin_client: Any, lending: None) -> None:
    b.queue("dept")
    b.queue("sub", parent="dept")
    b.team("x-team", queues=["dept", "sub"])
    x = next(c for c in admin_client.get("/team/").context["cards"] if c["name"] == "x-team")
    assert [n["name"] for n in x["blocks"][0]["nodes"]] == ["dept", "xq"]


def test_a_member_of_several_teams_gets_their_cards_only(client: Any, lending: None) -> None:
    b.user("both", teams=["x-team", "y-team"])
    response = login(client, "both").get("/team/")
    assert [c["name"] for c in response.context["cards"]] == ["x-team", "y-team"]
    b.team("z-team", queues=["xq"])
    assert [c["name"] for c in client.get("/team/").context["cards"]] == ["x-team", "y-team"]
