"""Kueue's classical and fair-sharing preemption choosing one victim set from the preemptor's own ClusterQueue and its
Cohort's in the live session (issue 28 item 8): the rows of Kueue's preemption table that need such a mixed set
(``tests/cli/test_kueue_preemption_sessions.py`` builds their manifests), imported by the Kubernetes adapter into a
cluster that owns its trees, evict in one Celery session (``run_scheduling_session``) exactly the set Kueue
preempts, as ``fairway simulate`` does."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from django.utils import timezone

from engine.manifests.kueue import KUEUE_POLICY
from engine.manifests.kueueconfig import KUEUE_CONFIG_KEY
from tests.cli.test_kueue_fair_preemption_sessions import LIVE as FAIR_LIVE
from tests.cli.test_kueue_fair_preemption_sessions import manifests as fair_manifests
from tests.cli.test_kueue_preemption_sessions import ROWS, k8s, manifests

pytestmark = pytest.mark.django_db

# the rows whose set holds workloads of the preemptor's ClusterQueue and of another one
MIXED = [
    "preempt from all ClusterQueues in cohort",
    "preempt from all ClusterQueues in cohort-lend",
    "allow preemption from other cluster queues if target cq is not exhausted for the requested resource",
    "use BorrowWithinCohort; preempt from CQ and from other CQs with workloads below threshold",
    "preempt in cohort and own CQ",
    "preempt hierarchical candidates and inside CQ",
]


def test_the_mixed_rows_are_the_table_s_mixed_sets() -> None:
    """Every row named here needs victims of both kinds, and no other row of the table does."""
    mixed = {
        name
        for name, spec in ROWS.items()
        if {w.queue for w in spec.admitted if w.name in spec.want} - {spec.queue}
        and any(w.queue == spec.queue for w in spec.admitted if w.name in spec.want)
    }
    assert mixed == set(MIXED)


@pytest.mark.parametrize("name", MIXED)
def test_a_mixed_victim_set_in_the_live_session(db: Any, name: str) -> None:
    from quotas import services
    from scheduling import sessions
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import Cluster, Eviction, Pod

    services.ensure_builtins()
    cluster = Cluster.objects.create(
        name="kv", source="kubernetes", tree_source="kubernetes", scheduler_policy=KUEUE_POLICY.to_yaml()
    )
    spec = ROWS[name]
    docs = [d for d in yaml.safe_load_all(manifests(spec)) if d]
    report = mirror(cluster, docs, timezone.now())
    assert not report.problems, report.problems
    sessions.run_scheduling_session(cluster)
    evicted = set(Eviction.objects.filter(pod__cluster=cluster).values_list("pod__name", flat=True))
    assert evicted == {k8s(w) for w in spec.want}
    incoming = Pod.objects.get(cluster=cluster, name="incoming")
    assert incoming.node is not None  # placed where the set ran (pipelined until the victims are gone)


# Kueue's fair sharing: the rows of its TestFairPreemptions whose set mixes the preemptor's own workloads and another
# ClusterQueue's, and Fairway's row where the higher share is the target rather than the preemptor's own lower
# priority, with their workloads admitted one second apart in name order, as the adapter dates them
# (``tests/cli/test_kueue_fair_preemption_sessions.py``'s ``LIVE`` builds their manifests, the Configuration first).


@pytest.mark.parametrize("name", sorted(FAIR_LIVE))
def test_a_fair_sharing_victim_set_in_the_live_session(db: Any, name: str) -> None:
    from quotas import services
    from scheduling import sessions
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import Cluster, Eviction, Pod

    services.ensure_builtins()
    spec = FAIR_LIVE[name]
    configuration, *docs = [d for d in yaml.safe_load_all(fair_manifests(spec)) if d]
    assert configuration["kind"] == "Configuration"
    # as the adapter finds it in a cluster: Kueue's ConfigMap
    docs.append(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "kueue-manager-config", "namespace": "kueue-system"},
            "data": {KUEUE_CONFIG_KEY: yaml.safe_dump(configuration)},
        }
    )
    cluster = Cluster.objects.create(
        name="kf", source="kubernetes", tree_source="kubernetes", scheduler_policy=KUEUE_POLICY.to_yaml()
    )
    report = mirror(cluster, docs, timezone.now())
    assert cluster.kueue_config is not None and cluster.kueue_config.fair_sharing == configuration["fairSharing"]
    assert not report.problems, report.problems
    sessions.run_scheduling_session(cluster)
    evicted = set(Eviction.objects.filter(pod__cluster=cluster).values_list("pod__name", flat=True))
    assert evicted == {k8s(w) for w in spec["want"]}
    incoming = Pod.objects.get(cluster=cluster, name="incoming")
    assert incoming.node is not None
