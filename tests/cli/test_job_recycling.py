"""``fairway job why`` warns before recycling takes the job's pods (issue 26 item 4), with the sentence the pages
show (``scheduling.recycle_outlook``)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import time_machine

from tests.cli.conftest import Run


def test_job_why_prints_the_recycling_warning(cli: Run, transactional_db: Any) -> None:
    from scheduling import tasks
    from scheduling.models import Pod, PodGroup
    from tests.scheduling.test_recycle import T0, _overused_world

    world = _overused_world()
    pg = world.podgroups["ns-a/pg-a"]
    PodGroup.objects.filter(pk=pg.pk).update(phase="Running")
    Pod.objects.filter(cluster=world.cluster, name__in=["a-0", "a-2"]).update(podgroup=pg)
    with time_machine.travel(T0, tick=False) as clock:
        assert tasks.recycle(world.cluster.pk) == "ran"  # records qa over at T0
        clock.shift(timedelta(seconds=20))
        code, out, err = cli("job", "why", "ns-a/pg-a", "--cluster", "c1")
        assert (code, err) == (0, "")
        assert (
            "Warning: 2 pods will be recycled in about 1 min 40 s unless usage falls to 12 cores (1 of them this "
            "job's): quota group qa uses 20 cores, above its runtime 12 cores, for 20 s (delayEvictTime 2 min)."
        ) in out
        code, out, _ = cli("job", "why", "ns-a/pg-a", "--cluster", "c1", "-o", "json")
        assert code == 0
        [warning] = json.loads(out)["why"]["recycling"]
        assert (warning["pods"], warning["job_pods"], warning["victims"]) == (2, 1, ["ns-a/a-0"])
        # once usage is within the runtime, nothing is said
        Pod.objects.filter(cluster=world.cluster, name__in=["a-0", "a-1"]).update(status="Succeeded")
        code, out, _ = cli("job", "why", "ns-a/pg-a", "--cluster", "c1")
        assert code == 0 and "will be recycled" not in out
