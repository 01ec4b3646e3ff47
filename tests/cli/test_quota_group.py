"""``fairway quota-group`` and ``fairway namespace weight`` against a live server."""

from __future__ import annotations

import json

from quotas.models import Namespace, QuotaGroup
from tests.cli.conftest import Run


def test_quota_group_lifecycle(cli: Run) -> None:
    code, out, err = cli(
        "quota-group", "create", "-n", "research", "--is-parent", "true", "--min", "cpu=32,memory=128Gi",
        "--max", "cpu=64,memory=256Gi",
    )  # fmt: skip
    assert (code, out) == (0, "quota group research created\n"), err
    code, out, err = cli(
        "quota-group", "create", "-n", "nlp", "-p", "research", "--min", "cpu=8,nvidia.com/gpu=0",
        "--max", "cpu=16", "--shared-weight", "cpu=2", "--allow-lent", "false", "--namespaces", "nlp,nlp-dev",
    )  # fmt: skip
    assert code == 1 and "nvidia.com/gpu" in err  # a resource no node offers is refused, field named
    assert err.startswith('error: quota group "nlp": min.nvidia.com/gpu:'), err
    code, out, err = cli(
        "quota-group", "create", "-n", "nlp", "-p", "research", "--min", "cpu=8", "--max", "cpu=16",
        "--shared-weight", "cpu=2", "--allow-lent", "false", "--namespaces", "nlp,nlp-dev",
    )  # fmt: skip
    assert code == 0, err
    nlp = QuotaGroup.objects.get(name="nlp")
    assert (nlp.parent.name, nlp.allow_lent) == ("research", False)
    assert sorted(Namespace.objects.filter(quota_group=nlp).values_list("name", flat=True)) == ["nlp", "nlp-dev"]

    code, out, _ = cli("quota-group", "view", "nlp")
    assert code == 0
    assert "Parent:           research" in out and "Min:              cpu=8" in out
    assert "Allow lent:       false" in out and "Namespaces:       nlp, nlp-dev" in out
    code, out, _ = cli("quota-group", "list")
    header, *rows = out.splitlines()
    assert header.split()[:2] == ["Name", "Parent"]
    assert any(r.split()[:3] == ["nlp", "research", "no"] for r in rows)
    assert any(r.split()[0] == "default" and "unlimited" in r for r in rows)  # null max reads "unlimited"

    code, out, err = cli("quota-group", "update", "nlp", "--max", "cpu=24", "--allow-lent", "true")
    assert (code, out) == (0, "quota group nlp updated: allow_lent, max\n"), err
    nlp.refresh_from_db()
    assert (nlp.allow_lent, nlp.max["cpu"]) == (True, 24000)
    assert cli("quota-group", "update", "nlp")[0] == 2  # nothing to change
    code, _, err = cli("quota-group", "update", "nlp", "--min", "cpu=40")
    assert code == 1 and err.startswith('error: quota group "nlp": ') and "min" in err

    code, out, _ = cli("quota-group", "tree")
    assert code == 0 and any(line.strip().endswith("nlp") or "── nlp" in line for line in out.splitlines())
    assert "min=cpu=8" in out
    code, out, _ = cli("-o", "json", "quota-group", "tree")
    assert {g["name"] for g in json.loads(out)} >= {"root"}

    code, _, err = cli("quota-group", "delete", "research")
    assert code == 1 and err.startswith('error: quota group "research": ')  # it has children
    assert cli("quota-group", "delete", "nlp") == (0, "quota group nlp deleted\n", "")
    code, _, err = cli("quota-group", "view", "nlp")
    assert (code, err) == (1, 'error: quota group "nlp" not found\n')


def test_namespace_weight_view_and_set(cli: Run, world: None) -> None:
    assert cli("namespace", "weight", "nlp") == (0, "namespace nlp: weight 1\n", "")
    assert cli("namespace", "weight", "nlp", "3") == (0, "namespace nlp: weight 1 -> 3\n", "")
    assert Namespace.objects.get(name="nlp").weight == 3
    code, out, _ = cli("namespace", "weight", "nlp", "-o", "json")
    assert json.loads(out)["weight"] == 3
    code, _, err = cli("namespace", "weight", "nlp", "0")
    assert code == 1 and err.startswith('error: namespace "nlp": weight:')
    assert cli("namespace", "weight", "ghost") == (1, "", 'error: namespace "ghost" not found\n')
    assert cli("namespace", "weight", "nlp", "three")[0] == 2


def test_namespace_labels_view_set_and_remove(cli: Run, world: None) -> None:
    assert cli("namespace", "labels", "nlp") == (0, "namespace nlp: labels none\n", "")
    code, out, err = cli("namespace", "labels", "nlp", "team=nlp", "tier=gold")
    assert (code, out) == (0, "namespace nlp: labels none -> team=nlp, tier=gold\n"), err
    assert Namespace.objects.get(name="nlp").labels == {"team": "nlp", "tier": "gold"}
    assert cli("namespace", "labels", "nlp", "tier-") == (
        0,
        "namespace nlp: labels team=nlp, tier=gold -> team=nlp\n",
        "",
    )
    code, _, err = cli("namespace", "labels", "nlp", "bad key=x")
    assert code == 1 and err.startswith(
        "error: namespace \"nlp\": labels: labels.bad key: 'bad key' is not a label key"
    )
    assert cli("namespace", "labels", "nlp", "tier-")[0:2] == (2, "")  # not set: nothing to remove
    assert cli("namespace", "labels", "nlp", "team")[0] == 2  # neither KEY=VALUE nor KEY-
    assert Namespace.objects.get(name="nlp").labels == {"team": "nlp"}  # nothing written by the refusals
    code, out, _ = cli("namespace", "labels", "nlp", "-o", "json")
    assert json.loads(out)["labels"] == {"team": "nlp"}


def test_namespace_local_queues_lists_kueues_local_queues(cli: Run, world: None) -> None:
    from django.utils import timezone

    from quotas import services
    from quotas.models import LocalQueue
    from scheduling.models import Cluster, LocalQueueUsage

    assert cli("namespace", "local-queues") == (0, "No LocalQueues found\n", "")
    services.save_local_queue(None, {"namespace": "nlp", "name": "research", "queue": "nlp", "weight": "750m"})
    services.save_local_queue(None, {"namespace": "vision", "name": "lq", "queue": "vision"})
    cluster, _ = Cluster.objects.get_or_create(name="default")
    LocalQueueUsage.objects.create(
        cluster=cluster,
        local_queue=LocalQueue.objects.get(name="research"),
        consumed={"cpu": 2500},
        penalty={"cpu": 500},
        sampled=timezone.now(),
    )
    code, out, err = cli("namespace", "local-queues")
    assert code == 0, err
    assert out.splitlines() == [
        "NAMESPACE  NAME      QUEUE   WEIGHT  USAGE",
        "nlp        research  nlp     0.75    default: cpu=3",
        "vision     lq        vision  1       -",
    ]
    code, out, _ = cli("namespace", "local-queues", "vision", "-o", "json")
    assert [(q["namespace"], q["name"], q["weight"]) for q in json.loads(out)] == [("vision", "lq", "1")]
    assert cli("namespace", "local-queues", "ghost") == (0, "No LocalQueues in namespace ghost\n", "")
