"""``fairway node list|show``: each node's state and amounts in people's units (cores, GiB, whole GPUs), with what
its pods take (allocated: running or leaving; reserved: placed, not running yet), as the nodes pages say it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.cli.conftest import Run
from tests.support import factories as f

GPU = "nvidia.com/gpu"


@pytest.fixture
def gpu_nodes(cli: Run) -> None:
    """gpu-1 (64 cores, 256Gi, 8 GPUs) runs a 40-core / 4-GPU pod, holds one leaving (2 cores) and one bound, not
    started (8 cores, 1 GPU); gpu-2 is cordoned; cpu-3 is NotReady; a Pending pod counts nowhere."""
    from django.utils import timezone

    cluster = f.ClusterFactory(name="default")
    gpu1 = f.NodeFactory(cluster=cluster, name="gpu-1", allocatable={"cpu": "64", "memory": "256Gi", GPU: "8"})
    f.NodeFactory(cluster=cluster, name="gpu-2", allocatable={"cpu": "64", GPU: "8"}, unschedulable=True, pool="a100")
    f.NodeFactory(cluster=cluster, name="cpu-3", allocatable={"cpu": "32"}, ready=False, not_ready_since=timezone.now())
    for name, status, request in (
        ("train-0", "Running", {"cpu": "40", "memory": "160Gi", GPU: "4"}),
        ("leaving-0", "Releasing", {"cpu": "2"}),
        ("bound-0", "Bound", {"cpu": "8", GPU: "1"}),
    ):
        f.PodFactory(cluster=cluster, name=name, status=status, request=request, node=gpu1)
    f.PodFactory(cluster=cluster, name="waiting-0", status="Pending", request={"cpu": "16"})


def fields(out: str) -> dict[str, str]:
    """The ``Label: value`` lines of a detail view."""
    return {k.strip(): v.strip() for k, sep, v in (line.partition(":") for line in out.splitlines()) if sep}


def test_node_show_words_every_amount(cli: Run, gpu_nodes: None) -> None:
    code, out, err = cli("node", "show", "gpu-1")
    assert (code, err) == (0, "")
    assert fields(out)["State"] == "Ready" and fields(out)["Cluster"] == "default"
    rows = [line.split() for line in out.splitlines() if line.startswith(("cpu ", "memory ", GPU))]
    assert rows[0] == ["cpu", "64", "cores", "42", "cores", "8", "cores", "14", "cores"]
    assert rows[1][:5] + rows[1][-2:] == ["memory", "256", "GiB", "160", "GiB", "96", "GiB"]  # none reserved
    assert rows[2] == [GPU, "8", "GPUs", "4", "GPUs", "1", "GPU", "3", "GPUs"]
    assert "Allocatable  Allocated  Reserved  Free" in out


def test_node_show_says_why_a_node_offers_nothing_now(cli: Run, gpu_nodes: None) -> None:
    out = cli("node", "show", "cpu-3")[1]
    assert fields(out)["State"] == "NotReady" and "NotReady since" in fields(out)
    assert fields(cli("node", "show", "gpu-2")[1])["State"] == "cordoned"


def test_node_list_has_state_and_amounts_for_people(cli: Run, gpu_nodes: None) -> None:
    code, out, _ = cli("node", "list")
    assert code == 0
    lines = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert out.splitlines()[0].split() == ["Name", "Cluster", "State", "Pool", "Allocatable", "Allocated", "Reserved"]
    assert "Ready" in lines["gpu-1"] and f"cpu=42,memory=160Gi,{GPU}=4" in lines["gpu-1"]
    assert f"cpu=8,{GPU}=1" in lines["gpu-1"]
    assert "cordoned" in lines["gpu-2"] and "a100" in lines["gpu-2"]
    assert "NotReady" in lines["cpu-3"]
    assert [line.split()[0] for line in cli("node", "list", "--state", "cordoned")[1].splitlines()[1:]] == ["gpu-2"]
    assert cli("node", "list", "--cluster", "elsewhere")[1] == "No nodes found\n"


def test_node_list_as_json_keeps_the_api_quantities(cli: Run, gpu_nodes: None) -> None:
    import json

    nodes = {n["name"]: n for n in json.loads(cli("node", "list", "-o", "json")[1])}
    assert nodes["gpu-1"]["allocated"] == {"cpu": "42", "memory": "160Gi", GPU: "4"}
    assert nodes["gpu-1"]["reserved"] == {"cpu": "8", GPU: "1"}
    assert nodes["gpu-2"]["allocated"] == {}


def test_an_unknown_node_is_one_line(cli: Run, gpu_nodes: None) -> None:
    assert cli("node", "show", "nope") == (1, "", 'error: node "nope" not found\n')


def test_a_team_member_reads_every_pod_s_share_of_a_node(cli: Run, gpu_nodes: None, make_user: Any) -> None:
    """The node's allocated counts every pod on it, not only those the reader may list."""
    from security.tokens import create_token

    f.TeamFactory(name="nlp", queues=["default"])
    token = create_token(make_user("member", groups=("nlp",)), "t")[1]
    code, out, _ = cli("node", "show", "gpu-1", token=token)
    assert code == 0 and "42 cores" in out
