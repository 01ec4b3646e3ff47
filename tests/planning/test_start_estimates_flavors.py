"""Start estimates on a cluster whose Kueue queues have quota per ResourceFlavor (issue 28 item 7): the forward replay
gives the waiting jobs their flavors as the live session does, so a job that fits a flavor now is estimated to start
at once, not "never" (its plain request, which no flavored node offers)."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from planning import estimates, valuecache
from scheduling.models import PodGroup
from tests.scheduling.test_kueue_flavors_live import TEXT, _import

pytestmark = pytest.mark.django_db


def test_a_job_that_fits_a_flavor_now_is_estimated_to_start_at_once(settings: Any) -> None:
    from engine.manifests.kueue import KUEUE_POLICY
    from quotas import services
    from scheduling.models import Cluster

    settings.FAIRWAY = {
        **settings.FAIRWAY,
        "START_ESTIMATE_DRAWS": 1,
        "START_ESTIMATE_JOBS_PER_QUEUE": 4,
        "START_ESTIMATE_PAGE_BUDGET_SECONDS": 30.0,
        "START_ESTIMATE_WORKER_WAIT_SECONDS": 0.0,
    }
    valuecache.clear()
    services.ensure_builtins()
    cluster = Cluster.objects.create(
        name="kfl", source="kubernetes", tree_source="kubernetes", scheduler_policy=KUEUE_POLICY.to_yaml()
    )
    _import(cluster, TEXT)  # no session yet: big and small wait, huge fits no flavor
    now = timezone.now()
    estimates.refresh(cluster, now=now)
    big = estimates.estimate_of(PodGroup.objects.get(name="podgroup-big"), now)
    assert big is not None and big["state"] != "never", big
    huge = estimates.estimate_of(PodGroup.objects.get(name="podgroup-huge"), now)
    assert huge is not None and huge["state"] == "never", huge
