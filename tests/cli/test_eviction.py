"""``fairway eviction list`` against a live server: a team's evictions for people (times, job, pod, node, what
happened and why), the filters, ``--json``, a removed job, and a lead asking for another team's."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from tests.cli.conftest import Run


@pytest.fixture
def evicted(world: None) -> None:
    """nlp/big (2 pods) and vision/train (1 pod); big-0 reclaimed a minute ago on cpu-01, train-0 preempted three
    hours ago on cpu-02."""
    from quotas.models import Namespace
    from scheduling.models import Eviction, Pod, PodGroup
    from scheduling.serializers import default_cluster

    cluster = default_cluster()
    now = timezone.now()
    for ns, job, pods, node, action, message, ago in (
        ("nlp", "big", 2, "cpu-01", "reclaim", "queue nlp holds 40 cores, above its deserved 16", timedelta(minutes=1)),
        ("vision", "train", 1, "cpu-02", "preempt", "a job of priority 9 needed the room", timedelta(hours=3)),
    ):
        namespace = Namespace.objects.get(name=ns)
        pg = PodGroup.objects.create(cluster=cluster, namespace=namespace, name=job, queue=namespace.default_queue)
        for i in range(pods):
            Pod.objects.create(
                cluster=cluster, namespace=namespace, name=f"{job}-{i}", podgroup=pg, quota_group=namespace.quota_group
            )
        Eviction.objects.create(
            cluster=cluster,
            pod=pg.pods.get(name=f"{job}-0"),
            pod_uid=f"{ns}/{job}-0",
            namespace=ns,
            node=node,
            action=action,
            message=message,
            created=now - ago,
        )


def test_a_teams_evictions_for_people(cli: Run, evicted: None) -> None:
    code, out, err = cli("eviction", "list", "--team", "nlp")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == ["When", "(UTC)", "Job", "Pod", "Node", "What", "happened", "Why"]
    assert "nlp/big" in lines[1] and "big-0" in lines[1] and "cpu-01" in lines[1] and "reclaimed" in lines[1]
    assert "queue nlp holds 40 cores, above its deserved 16" in lines[1] and " ago)" in lines[1]
    assert "train" not in out
    assert lines[-1] == "1 eviction."


def test_the_filters_and_the_newest_first(cli: Run, evicted: None) -> None:
    _, out, _ = cli("eviction", "list")
    assert out.index("big-0") < out.index("train-0") and out.splitlines()[-1] == "2 evictions."
    _, out, _ = cli("eviction", "list", "--since", "1h")
    assert "big-0" in out and "train-0" not in out
    _, out, _ = cli("eviction", "list", "--until", "1h", "--action", "preempt")
    assert "train-0" in out and "big-0" not in out
    _, out, _ = cli("eviction", "list", "--job", "vision/train")
    assert "train-0" in out and "big-0" not in out
    _, out, _ = cli("eviction", "list", "--limit", "1")
    assert out.splitlines()[-1] == "The newest 1 of 2 evictions; --limit 0 lists all of them."
    _, out, _ = cli("eviction", "list", "--namespace", "analytics")
    assert out == "No evictions found\n"


def test_json_is_the_apis_evictions(cli: Run, evicted: None) -> None:
    code, out, _ = cli("eviction", "list", "--team", "nlp", "--json")
    rows = json.loads(out)
    assert code == 0 and [(r["pod"], r["job"], r["queue"], r["quota_group"]) for r in rows] == [
        ("nlp/big-0", "big", "nlp", "nlp")
    ]
    assert json.loads(cli("eviction", "list", "--team", "nlp", "-o", "json")[1]) == rows


def test_evictions_of_a_removed_job_stay_listed(cli: Run, evicted: None) -> None:
    from scheduling import evictions
    from scheduling.models import PodGroup, RemovalCause

    removed_at = timezone.now()
    evictions.remove_podgroups(PodGroup.objects.filter(name="big"), removed_at, RemovalCause.DELETED, "a test")
    _, out, _ = cli("eviction", "list", "--team", "nlp", "--removed")
    assert f"nlp/big (removed {removed_at:%m-%d %H:%M})" in out and "big-0" in out
    _, out, _ = cli("eviction", "list", "--not-removed")
    assert "train-0" in out and "big-0" not in out


def test_a_lead_gets_its_teams_evictions_and_not_another_teams(cli: Run, evicted: None) -> None:
    from security.tokens import create_token

    token = create_token(get_user_model().objects.get(username="nlp-lead"), "test")[1]
    code, out, _ = cli("eviction", "list", "--team", "nlp", token=token)
    assert code == 0 and "big-0" in out
    code, out, err = cli("eviction", "list", "--team", "vision", token=token)
    assert code == 1 and out == ""
    assert err == "error: team: 'vision' is not one of your teams: you may list the evictions of your own teams only\n"
    code, out, _ = cli("eviction", "list", token=token)
    assert code == 0 and "big-0" in out and "train-0" not in out


def test_usage_errors(cli: Run, evicted: None) -> None:
    code, _, err = cli("eviction", "list", "--since", "yesterday")
    assert code == 2 and "--since: expected a span back from now (30m, 2h, 7d) or a moment" in err
    code, _, err = cli("eviction", "list", "--limit", "-1")
    assert code == 2 and "--limit: expected 0 (all) or more, got -1" in err


def test_evictions_of_several_clusters_say_each_ones_cluster_and_session(cli: Run, evicted: None) -> None:
    """A list spanning clusters names each row's cluster and session (``fairway replay session ID --explain`` needs
    one or the other: the replay's default cluster is not where a lab's eviction happened); one cluster's, neither."""
    from scheduling.models import Cluster, Eviction

    lab = Cluster.objects.create(name="lab")
    Eviction.objects.create(
        cluster=lab, pod_uid="nlp/lab-0", namespace="nlp", node="lab-01", action="preempt", created=timezone.now()
    )
    _, out, _ = cli("eviction", "list")
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["Cluster", "Session", "When", "(UTC)"]
    assert lines[1].split()[:2] == ["lab", "-"]  # no session: as a recycling pass writes none
    _, out, _ = cli("eviction", "list", "--cluster", "lab")
    assert out.splitlines()[0].split()[:2] == ["When", "(UTC)"]
