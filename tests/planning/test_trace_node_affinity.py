"""A trace exported from the dashboard's history keeps each role's required node affinity (``Pod.node_affinity``),
so a replay places those pods as the live sessions did."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from engine.replay import read_trace, trace_lines
from planning.trace import build_trace
from scheduling.models import Pod
from tests.scheduling.conftest import build_world

pytestmark = pytest.mark.django_db

IN_B = [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]


def test_the_exported_roles_keep_their_affinity(db: Any) -> None:
    world = build_world()
    Pod.objects.filter(pk=world.pods["ns-a/a-0"].pk).update(node_affinity=IN_B)  # one of the job's two pods
    trace = build_trace(world.cluster, timezone.now() - timedelta(hours=1))
    job = next(j for j in trace.jobs if j.name == "pg-a")
    roles = sorted((r.pods, [[e.key for e in t] for t in r.node_affinity]) for r in job.roles)
    assert roles == [(1, []), (1, [["zone"]])]  # the pods differ in their placement: two roles
    lines = list(trace_lines(trace))
    assert json.loads(lines[0])["version"] == 3
    assert read_trace(lines).jobs == trace.jobs
