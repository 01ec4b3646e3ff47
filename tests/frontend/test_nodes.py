"""The nodes pages: what allocated and reserved mean, search, state filter, sorting, pagination, two queries per
table whatever the number of nodes, and what a team member sees."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from frontend.presenters import nodes as presenter
from scheduling.models import Cluster, Node, Pod, PodGroup
from tests.frontend import builders as b
from tests.frontend.conftest import login


def _pod(name: str, status: str, node: str | None, cpu: str = "2", job: str = "train") -> Pod:
    pg = PodGroup.objects.get(name=job)
    return Pod.objects.create(
        cluster=pg.cluster,
        namespace=pg.namespace,
        name=name,
        podgroup=pg,
        request=b.rl({"cpu": cpu, "memory": "1Gi"}),
        status=status,
        node=Node.objects.get(name=node) if node else None,
        quota_group=pg.pods.first().quota_group,  # type: ignore[union-attr]
    )


def test_allocated_is_running_and_releasing_reserved_is_bound_or_pipelined(lending: None) -> None:
    b.node("n2", cpu="16", memory="64Gi")
    _pod("bound", "Bound", "n2", "2")
    _pod("binding", "Binding", "n2", "1")
    _pod("pipelined", "Pipelined", "n2", "3")
    _pod("leaving", "Releasing", "n2", "4")
    _pod("running", "Running", "n2", "5")
    _pod("done", "Succeeded", "n2", "7")
    _pod("waiting", "Pending", None, "9")
    n2 = next(n for n in presenter.read(Cluster.objects.get(name="default")) if n.name == "n2")
    assert n2.allocated["cpu"] == 9_000  # running 5 + releasing 4
    assert n2.reserved["cpu"] == 6_000  # bound 2 + binding 1 + pipelined 3
    assert (n2.pods, n2.running, n2.waiting) == (5, 1, 3)
    assert n2.queues == {"xq"} and n2.quota_groups == {"x"}
    cell = presenter.cells(n2, ["cpu"])[0]
    assert (cell["allocated_n"], cell["allocatable"], cell["reserved"], cell["free"]) == (
        "9",
        "16 cores",
        "6 cores",
        "1 core",
    )


def test_the_nodes_page_shows_each_node_with_its_numbers(admin_client: Any, lending: None) -> None:
    Node.objects.filter(name="n1").update(
        last_heartbeat=timezone.now() - timedelta(seconds=30),
        taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}],
    )
    response = admin_client.get("/nodes/")
    assert response.status_code == 200
    html = response.content.decode()
    row = html[html.index('data-testid="node-n1"') :]
    row = row[: row.index("</tr>")]
    assert "Ready" in row and re.search(r">3\d seconds ago<", row) and 'title="20' in row, row  # exact on hover
    assert "90 of 100 cores" in row  # train 8 x 10 + serve 1 x 10
    assert "gpu=true:NoSchedule" in row
    assert 'href="/queues/xq/"' in row and 'href="/quotas/y/"' in row
    assert "1 node · 1 Ready" in html
    assert 'aria-current="page">Nodes</a>' in html


def test_search_state_filter_sorting_and_pages(admin_client: Any, lending: None) -> None:
    for i in range(60):
        b.node(f"w-{i:02d}", cpu="8", memory="32Gi")
    Node.objects.filter(name="w-07").update(ready=False)
    Node.objects.filter(name="w-08").update(unschedulable=True)
    page1 = admin_client.get("/nodes/").context
    assert page1["matching"] == 61 and len(page1["rows"]) == 50 and page1["page"].has_next()
    page2 = admin_client.get("/nodes/?page=2").context
    assert [r["name"] for r in page2["rows"]] == [f"w-{i:02d}" for i in range(49, 60)]
    assert [r["name"] for r in admin_client.get("/nodes/?sort=-name").context["rows"][:2]] == ["w-59", "w-58"]
    assert admin_client.get("/nodes/?sort=cpu").context["rows"][0]["name"] == "n1"  # the fullest first
    assert [r["name"] for r in admin_client.get("/nodes/?sort=state").context["rows"][:2]] == ["w-07", "w-08"]
    assert [r["name"] for r in admin_client.get("/nodes/?state=notready").context["rows"]] == ["w-07"]
    assert [r["name"] for r in admin_client.get("/nodes/?state=cordoned").context["rows"]] == ["w-08"]
    assert [r["name"] for r in admin_client.get("/nodes/?q=w-1").context["rows"]] == [f"w-{i}" for i in range(10, 20)]
    by_queue = admin_client.get("/nodes/?q=yq")
    assert [r["name"] for r in by_queue.context["rows"]] == ["n1"] and "1 node matches." in by_queue.content.decode()
    assert admin_client.get("/nodes/?sort=bogus&state=bogus&page=x").status_code == 200


def test_the_nodes_list_reads_the_same_number_of_queries_for_10_and_300_nodes(admin_client: Any, lending: None) -> None:
    def count() -> int:
        admin_client.get("/nodes/")  # the session and the user are read the same way each time
        with CaptureQueriesContext(connection) as ctx:
            assert admin_client.get("/nodes/").status_code == 200
        return len(ctx.captured_queries)

    cluster = Cluster.objects.get(name="default")
    Node.objects.bulk_create(Node(cluster=cluster, name=f"a-{i}", allocatable={"cpu": 8000}) for i in range(10))
    small = count()
    Node.objects.bulk_create(Node(cluster=cluster, name=f"b-{i}", allocatable={"cpu": 8000}) for i in range(290))
    pg = PodGroup.objects.get(name="serve")
    Pod.objects.bulk_create(
        Pod(
            cluster=cluster,
            namespace=pg.namespace,
            name=f"p-{i}",
            podgroup=pg,
            request={"cpu": 100},
            status="Running",
            node=node,
        )
        for i, node in enumerate(Node.objects.filter(name__startswith="b-"))
    )
    assert count() == small
    # nodes and the pods on them: one query each; the rest is the session, the user and the cluster
    with CaptureQueriesContext(connection) as ctx:
        admin_client.get("/nodes/")
    tables = [
        q["sql"]
        for q in ctx.captured_queries
        if 'FROM "scheduling_node"' in q["sql"] or 'FROM "scheduling_pod"' in q["sql"]
    ]
    assert len(tables) == 2, tables


def test_a_team_member_sees_every_node_but_only_their_pods(client: Any, lending: None) -> None:
    login(client, "lead-y")
    html = client.get("/nodes/").content.decode()
    row = html[html.index('data-testid="node-n1"') :]
    row = row[: row.index("</tr>")]
    assert 'href="/queues/yq/"' in row and "xq" in row and 'href="/queues/xq/"' not in row  # named, not linked
    detail = client.get("/nodes/n1/")
    assert detail.status_code == 200
    assert [p["name"] for p in detail.context["pods"]] == ["serve-0"]
    assert detail.context["other_pods"] == 8 and "and 8 pods of other teams." in detail.content.decode()
    admin = b.user("root-admin", staff=True)
    client.force_login(admin)
    assert len(client.get("/nodes/n1/").context["pods"]) == 9


def test_node_page_404_and_login(client: Any, admin_client: Any, lending: None) -> None:
    assert admin_client.get("/nodes/nope/").status_code == 404
    html = admin_client.get("/nodes/n1/").content.decode()
    assert "Node n1" in html and "9 pods" in html and "90 cores" in html
    client.logout()
    assert client.get("/nodes/").status_code == 302


@pytest.mark.parametrize("count,text", [(1, "1 node"), (2, "2 nodes")])
def test_the_head_counts_nodes_in_words(admin_client: Any, lending: None, count: int, text: str) -> None:
    if count == 2:
        b.node("n2", cpu="4", memory="8Gi")
    assert f"{text} ·" in admin_client.get("/nodes/").content.decode()
