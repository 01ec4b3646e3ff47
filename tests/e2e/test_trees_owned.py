"""The editor of trees a Kubernetes cluster owns, in a real headless chromium: an admin whose editor page was open
before the cluster took the trees saves a weight and is told, without a 500, where the trees are edited now; the
editor, a node's form and the node's page then offer nothing to change (screenshots tests/artifacts/owned-*.png)."""

from __future__ import annotations

from typing import Any

import pytest

from quotas.models import Namespace
from scheduling.models import Cluster
from tests.e2e.conftest import login, shot
from tests.frontend import builders as b

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SENTENCE = (
    "The trees are owned by cluster east: edit its Volcano Queues / Koordinator ElasticQuotas in Kubernetes; "
    "Fairway mirrors them."
)


def test_an_admin_is_told_the_cluster_owns_the_trees(site: str, page: Any) -> None:
    b.node("n1", cpu="64", memory="256Gi")
    b.queue("research", deserved={"cpu": "32"})
    b.queue("nlp", "research", deserved={"cpu": "8"})
    b.namespace("nlp-ns", 2, queue_name="nlp")
    b.user("boss", staff=True)
    login(page, site, "boss", b.PASSWORD)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{site}/edit/")
    assert page.locator("#trees-owned").count() == 0
    # the cluster takes the trees while the page is open: its Save button is refused with the sentence
    Cluster.objects.create(name="east", source="kubernetes", tree_source="kubernetes")
    page.get_by_role("spinbutton", name="Weight of nlp-ns").fill("5")
    with page.expect_navigation() as nav:
        page.get_by_role("button", name="Save the weight of nlp-ns").click()
    assert nav.value.status == 409
    assert page.locator("#trees-owned").inner_text() == SENTENCE
    assert page.get_by_role("heading", name="Nothing was changed").is_visible()
    assert Namespace.objects.get(name="nlp-ns").weight == 2
    shot(page, "owned-refused")
    page.goto(f"{site}/edit/")
    assert page.locator("#trees-owned").inner_text() == SENTENCE
    assert page.locator("form[method=post][action^='/edit/']").count() == 0
    assert page.get_by_role("link", name="New queue").count() == 0
    assert page.get_by_role("link", name="Edit queue nlp").count() == 0
    assert page.locator('[data-testid="ns-weight-nlp-ns"]').inner_text() == "2"
    wrap = page.locator("section.card .table-wrap").first
    assert wrap.evaluate("el => el.scrollWidth <= el.clientWidth + 1")  # the read-only tables fit 1280 px
    shot(page, "owned-editor")
    page.goto(f"{site}/edit/queues/nlp/")
    assert page.locator("#trees-owned").inner_text() == SENTENCE
    posted = page.locator("form[method=post]:not([action='/accounts/logout/']) :is(input, select, textarea)")
    assert posted.count() == 0  # no field of a form that would write (the log-out button aside)
    page.goto(f"{site}/queues/nlp/")
    page.wait_for_load_state()
    assert page.locator("#trees-owned").inner_text() == SENTENCE
    assert page.locator("#edit-link").count() == 0
    assert page.get_by_role("button", name="Close queue").count() == 0
    shot(page, "owned-queue-page")
    refused = "console: Failed to load resource: the server responded with a status of 409 (Conflict)"
    assert page.problems == [refused]  # the refused save's own answer, and nothing else
