"""``fairway job suspend|resume|requeue|delete|yaml`` against a live server."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from tests.cli.conftest import Run


@pytest.fixture
def job(world: None) -> int:
    """nlp/train: two pods, one Running on a node, one Pending."""
    from engine.resources import ResourceList
    from quotas.models import Namespace
    from scheduling.models import Node, Pod, PodGroup
    from scheduling.serializers import default_cluster

    cluster = default_cluster()
    ns = Namespace.objects.get(name="nlp")
    pg = PodGroup.objects.create(cluster=cluster, namespace=ns, name="train", queue=ns.default_queue, phase="Running")
    node = Node.objects.filter(cluster=cluster).order_by("name").first()
    request = ResourceList.parse({"cpu": "1"})
    Pod.objects.create(cluster=cluster, namespace=ns, name="train-0", podgroup=pg, request=request, node=node,
                       status="Running")  # fmt: skip
    Pod.objects.create(cluster=cluster, namespace=ns, name="train-1", podgroup=pg, request=request)
    return pg.pk


def test_suspend_resume_requeue(cli: Run, job: int) -> None:
    from scheduling.models import PodGroup

    code, out, err = cli("job", "suspend", "train", "--namespace", "nlp")
    assert code == 0, err
    assert out.startswith("job nlp/train: suspended by ops: not admitted and none of its pods placed")
    assert "1 pod holding a node released (1 queued again as Pending)" in out
    assert PodGroup.objects.get(pk=job).suspended_by == "ops"
    code, out, err = cli("job", "suspend", "nlp/train")
    assert code == 1 and "is suspended already (by ops at" in err
    code, out, err = cli("job", "resume", "nlp/train", "-o", "json")
    assert code == 0, err
    assert json.loads(out)["action"] == "resume" and PodGroup.objects.get(pk=job).suspended_at is None
    code, out, err = cli("job", "resume", "nlp/train")
    assert (code, out) == (1, "") and "job nlp/train is not suspended, so there is nothing to resume" in err
    assert cli("job", "requeue", "nlp/train")[0] == 1  # Pending, nothing placed: waiting already
    assert cli("job", "suspend", "nlp/train", "--namespace", "vision")[0] == 2  # two namespaces named


def test_delete_asks_and_yaml_prints_manifests(cli: Run, job: int, monkeypatch: Any) -> None:
    from scheduling.models import PodGroup, RemovedJob

    code, out, err = cli("job", "yaml", "nlp/train")
    assert code == 0, err
    docs = list(yaml.safe_load_all(out))
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == [("PodGroup", "train"), ("Pod", "train-0"),
                                                                  ("Pod", "train-1")]  # fmt: skip
    # without a terminal and without --yes, nothing is deleted
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    code, out, err = cli("job", "delete", "nlp/train")
    assert code == 2 and "needs confirmation: pass --yes" in err and PodGroup.objects.filter(pk=job).exists()
    code, out, err = cli("job", "delete", "nlp/train", "--yes")
    assert code == 0, err
    assert out == "job nlp/train: job nlp/train deleted by ops\n"
    assert RemovedJob.objects.get(name="train").reason == "deleted by ops (job action)"
    assert cli("job", "delete", "nlp/train", "--yes") == (1, "", 'error: job "nlp/train" not found\n')


def test_another_team_cannot_act(cli: Run, job: int, make_user: Any) -> None:
    from security.tokens import create_token

    vision = create_token(make_user("vis", groups=("vision",)), "t")[1]
    code, _, err = cli("job", "suspend", "nlp/train", token=vision)
    assert code == 1 and 'job "nlp/train" not found' in err
