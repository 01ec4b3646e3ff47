"""No dead ends (issue 30 item 7): the built-in nodes' history pages, and a missing page that explains itself."""

from __future__ import annotations

from typing import Any

import pytest

from quotas.models import Queue, QuotaGroup


@pytest.mark.parametrize(
    ("path", "name"),
    [("queues", "root"), ("queues", "default"), ("quotas", "root"), ("quotas", "system"), ("quotas", "default")],
)
def test_the_history_of_a_built_in_node_is_a_page(admin_client: Any, path: str, name: str) -> None:
    model = Queue if path == "queues" else QuotaGroup
    model.history.filter(name=name).delete()  # as the data migration leaves them: created without a record
    response = admin_client.get(f"/history/{path}/{name}/")
    assert response.status_code == 200
    text = response.content.decode()
    assert (
        f"No change to the built-in {'queue' if path == 'queues' else 'quota group'} {name} has been recorded" in text
    )
    assert f'href="/{path}/{name}/"' in text  # back to the node


def test_the_history_of_a_built_in_node_lists_its_changes_once_it_has_some(admin_client: Any) -> None:
    Queue.history.filter(name="default").delete()
    queue = Queue.objects.get(name="default")
    queue.weight = 3
    queue.save()
    rows = admin_client.get("/history/queues/default/").context["rows"]
    assert [r["what"] for r in rows] == ["changed"]


def test_a_node_never_recorded_is_still_not_found(admin_client: Any) -> None:
    response = admin_client.get("/history/queues/nowhere/")
    assert response.status_code == 404


def test_a_job_of_which_nothing_is_recorded_gets_a_page_that_explains(client: Any, lending: None) -> None:
    """A link to a garbage-collected job whose removal record is gone too: a 404 that names the cluster, says the
    job may have finished and been removed, and links its namespace's jobs, the user's team and its evictions."""
    from tests.frontend.conftest import login

    response = login(client, "lead-x").get("/jobs/x-ns/gone-long-ago/")
    assert response.status_code == 404
    text = response.content.decode()
    assert "The cluster <strong>default</strong> has no job x-ns/gone-long-ago" in text
    assert "may have finished and been removed (garbage-collected) more than 7 d ago" in text
    assert 'href="/jobs/?namespace=x-ns"' in text
    assert 'href="/team/x-team/"' in text
    assert "fairway eviction list --job x-ns/gone-long-ago --cluster default" in text


def test_the_missing_job_page_points_to_the_cluster_that_has_it(admin_client: Any, lending: None) -> None:
    from scheduling.models import Cluster, PodGroup

    other = Cluster.objects.create(name="other")
    PodGroup.objects.filter(name="train").update(cluster=other)
    text = admin_client.get("/jobs/x-ns/train/?cluster=default").content.decode()
    assert 'href="/jobs/x-ns/train/?cluster=other">the cluster other</a>' in text


@pytest.mark.parametrize(
    ("path", "sentence"),
    [
        ("/queues/nowhere/", "There is no queue named nowhere, or it is in a part of the trees your teams cannot see."),
        ("/quotas/nowhere/", "There is no quota group named nowhere"),
        ("/nodes/nowhere/", "The cluster default has no node named nowhere: it may have been removed"),
        ("/trees/nowhere/", "There is no tree named nowhere: the trees are queues and quotas."),
        ("/team/nowhere/", "There is no team named nowhere whose page you may read."),
        ("/history/nowhere/x/", "There is no history of nowhere"),
        ("/edit/queues/nowhere/", "There is no queue named nowhere"),
        ("/edit/quotas/nowhere/", "There is no quota group named nowhere"),
        ("/edit/delete/queues/nowhere/", "There is no queue named nowhere"),
        ("/edit/queues/xq/open/", "This address opens or closes a queue when its page&#x27;s Open or Close button"),
        ("/whatif/apply/", "This address acts when the What-if page&#x27;s Apply button sends it"),
        ("/no/such/page/", "There is no page at <code>/no/such/page/</code>"),
    ],
)
def test_every_not_found_page_says_what_was_not_found(
    admin_client: Any, lending: None, path: str, sentence: str
) -> None:
    response = admin_client.get(path)
    assert response.status_code == 404
    text = response.content.decode()
    assert sentence in text
    assert 'href="/history/"' in text  # somewhere to go on from
    assert "Resolver404" not in text and "matches the given query" not in text


def test_the_api_docs_pages_name_no_other_host(admin_client: Any) -> None:
    """ReDoc without Google's web fonts, Swagger UI without its validator badge (validator.swagger.io, which it asks
    for whenever the schema's address is not a loopback one), both with a policy that keeps the browser here."""
    redoc = admin_client.get("/api/redoc/")
    swagger = admin_client.get("/api/docs/")
    assert redoc.status_code == swagger.status_code == 200
    assert "fonts.googleapis" not in redoc.content.decode() and "redoc_offline.js" in redoc.content.decode()
    assert '"validatorUrl": null' in swagger.content.decode()
    for response in (redoc, swagger):
        assert "default-src 'self'" in response["Content-Security-Policy"]
