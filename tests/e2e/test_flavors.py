"""Kueue's ResourceFlavors in a real headless chromium (issue 28 item 7): after a live session on Kueue objects the
adapter stored, the job page says which flavor the job was given and why, and the queue's page has a row per flavor
(screenshots in tests/artifacts/)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import login, shot
from tests.frontend import builders as b
from tests.scheduling.test_kueue_flavors_live import TEXT, _import

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_an_admin_reads_the_flavor_of_a_job_and_the_quota_per_flavor(site: str, page: Any) -> None:
    from engine.manifests.kueue import KUEUE_POLICY
    from scheduling import sessions
    from scheduling.models import Cluster

    cluster = Cluster.objects.create(
        name="kfl", source="kubernetes", tree_source="kubernetes", scheduler_policy=KUEUE_POLICY.to_yaml()
    )
    _import(cluster, TEXT)
    sessions.run_scheduling_session(cluster)
    b.user("boss", staff=True)
    login(page, site, "boss", b.PASSWORD)
    page.goto(f"{site}/jobs/team-a/podgroup-big/?cluster=kfl")
    flavor = page.get_by_test_id("job-flavor")
    assert flavor.is_visible()
    assert flavor.inner_text().startswith("Flavor: spot for cpu, memory (Kueue's flavor assignment: flavor spot")
    shot(page, "job-flavor")
    page.goto(f"{site}/queues/team-a/?cluster=kfl")
    rows = page.locator("th[scope=row]").all_inner_texts()
    assert {"cpu (on-demand)", "cpu (spot)", "memory (on-demand)", "memory (spot)"} <= set(rows)
    shot(page, "queue-flavors")
    assert not page.problems, page.problems
