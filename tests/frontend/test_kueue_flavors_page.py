"""Kueue's ResourceFlavors on the dashboard (issue 28 item 7): after a live session on the stored trees, the job page
says which flavor the job was given and why, and the queue's page and the tree page show its quota and usage per
flavor (``cpu (spot)``) in cores and GiB."""

from __future__ import annotations

from typing import Any

import pytest

from tests.scheduling.test_kueue_flavors_live import TEXT, _import

pytestmark = pytest.mark.django_db


@pytest.fixture
def flavored(db: Any) -> Any:
    from engine.manifests.kueue import KUEUE_POLICY
    from quotas import services
    from scheduling import sessions
    from scheduling.models import Cluster

    services.ensure_builtins()
    cluster = Cluster.objects.create(
        name="kfl", source="kubernetes", tree_source="kubernetes", scheduler_policy=KUEUE_POLICY.to_yaml()
    )
    _import(cluster, TEXT)
    sessions.run_scheduling_session(cluster)
    return cluster


def test_the_job_page_shows_the_flavor_and_why(admin_client: Any, flavored: Any) -> None:
    page = admin_client.get("/jobs/team-a/podgroup-big/?cluster=kfl").content.decode()
    assert '<p data-testid="job-flavor"><strong>Flavor:</strong> spot for cpu, memory' in page
    assert (
        "why: flavor spot for cpu, memory (tried on-demand: would need a preemption its ClusterQueue may not make "
        "(3 cores of cpu asked, 2 cores unused); spot: fits)"
    ) in page
    small = admin_client.get("/jobs/team-a/podgroup-small/").content.decode()
    assert "<strong>Flavor:</strong> on-demand for cpu, memory" in small


def test_the_tree_pages_show_quota_and_usage_per_flavor(admin_client: Any, flavored: Any) -> None:
    page = admin_client.get("/queues/team-a/?cluster=kfl").content.decode()
    # one row per flavor, in cores: spot's 8 deserved with 3 in use (the big job), on-demand's 4 with 4 in use
    assert '<th scope="row">cpu (spot)</th>' in page
    assert '<td class="num" data-testid="entitled-cpu@spot">8 cores</td><td class="num">3 cores</td>' in page
    assert '<td class="num" data-testid="entitled-cpu@on-demand">4 cores</td><td class="num">4 cores</td>' in page
    assert '<td class="num" data-testid="entitled-memory@spot">32 GiB</td>' in page
    trees = admin_client.get("/trees/queues/?cluster=kfl&resource=cpu@spot").content.decode()
    assert '<option value="cpu@spot" selected>cpu (spot)</option>' in trees
    assert '<option value="cpu@on-demand" >cpu (on-demand)</option>' in trees
    with open("/tmp/flavordb_trees.html", "w") as fh:
        fh.write(trees)
