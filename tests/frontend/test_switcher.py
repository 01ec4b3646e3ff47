"""The cluster switcher: hidden with one cluster; with two, ``?cluster=`` picks one, the session keeps it, and every
page that shows cluster state (overview, trees, node pages, team, nodes) shows the chosen cluster."""

from __future__ import annotations

from typing import Any

from scheduling.models import Cluster, Node
from tests.frontend import builders as b
from tests.frontend.conftest import login


def _second() -> Cluster:
    other = Cluster.objects.create(name="west")
    Node.objects.create(cluster=other, name="west-1", allocatable=b.rl({"cpu": "32", "memory": "128Gi"}))
    return other


def test_one_cluster_shows_no_switcher(admin_client: Any, lending: None) -> None:
    html = admin_client.get("/overview/").content.decode()
    assert "cluster-switch" not in html and 'name="cluster"' not in html


def test_the_chosen_cluster_is_kept_and_used_by_every_page(admin_client: Any, lending: None) -> None:
    _second()
    first = admin_client.get("/overview/")
    assert first.context["cluster"].name == "default"
    html = first.content.decode()
    assert 'class="cluster-switch"' in html
    assert '<option value="west" >west</option>' in html and '<option value="default" selected>' in html
    assert admin_client.get("/overview/?cluster=west").context["cluster"].name == "west"
    # kept in the session: the next pages show west without the parameter
    for path in (
        "/overview/",
        "/trees/queues/",
        "/trees/quotas/",
        "/queues/xq/",
        "/quotas/x/",
        "/nodes/",
        "/team/x-team/",
    ):
        response = admin_client.get(path)
        assert response.status_code == 200, path
        assert response.context["cluster"].name == "west", path
        assert '<option value="west" selected>' in response.content.decode(), path
    nodes = admin_client.get("/nodes/").context
    assert [r["name"] for r in nodes["rows"]] == ["west-1"]
    assert admin_client.get("/nodes/n1/").status_code == 404  # n1 is default's
    assert admin_client.get("/nodes/west-1/").status_code == 200
    # an unknown name changes nothing; switching back works the same way
    assert admin_client.get("/overview/?cluster=nowhere").context["cluster"].name == "west"
    assert admin_client.get("/nodes/?cluster=default").context["cluster"].name == "default"
    assert admin_client.get("/overview/").context["cluster"].name == "default"


def test_each_session_keeps_its_own_choice(client: Any, admin_client: Any, lending: None) -> None:
    _second()
    admin_client.get("/overview/?cluster=west")
    login(client, "lead-x")
    assert client.get("/team/x-team/").context["cluster"].name == "default"
    assert client.get("/team/x-team/?cluster=west").context["cluster"].name == "west"
    assert client.get("/nodes/").context["cluster"].name == "west"


def test_without_the_default_cluster_the_first_one_is_shown(admin_client: Any, db: Any) -> None:
    from quotas import services

    services.ensure_builtins()
    Cluster.objects.filter(name="default").delete()
    _second()
    assert admin_client.get("/nodes/").context["cluster"].name == "west"
