"""``fairway cluster list|delete``, and the refusals of item 5 as the command line shows them: one line each."""

from __future__ import annotations

from django.utils import timezone

from scheduling.models import Cluster, PodGroup
from tests.cli.conftest import Run
from tests.kube.conftest import pod as kube_pod
from tests.kube.conftest import podgroup as kube_podgroup
from tests.scheduling.conftest import build_world


def test_a_cluster_with_nodes_is_deleted_only_with_force(cli: Run) -> None:
    build_world("c1")
    code, out, _ = cli("cluster", "list")
    assert code == 0 and "c1" in out and "Source" in out
    code, out, err = cli("cluster", "delete", "c1")
    assert code == 1 and out == ""
    assert err.splitlines() == [
        'error: cluster "c1": cluster c1 holds 3 nodes, 1 podgroup and 3 pods, which would be deleted with it (and '
        "every record of its sessions); to delete them with it, confirm with force (DELETE "
        "/api/v1/clusters/c1/?force=true, or fairway cluster delete c1 --force)"
    ]
    assert Cluster.objects.filter(name="c1").exists()
    code, out, err = cli("cluster", "delete", "c1", "--force")
    assert (code, out, err) == (0, "cluster c1 deleted\n", "")
    assert not Cluster.objects.filter(name="c1").exists()
    assert cli("cluster", "delete", "c1")[2] == 'error: cluster "c1" not found\n'


def test_a_forced_queue_delete_leaves_a_mirrored_clusters_jobs_in_one_line(cli: Run) -> None:
    from scheduling.kube.mirror_in import mirror

    build_world("c1")  # queue team-a, namespace ns-a
    prod = Cluster.objects.create(name="prod", source="kubernetes", scheduler_name="fairway")
    objects = [kube_podgroup("ns-a", "train", "team-a"), kube_pod("ns-a", "p-0", group="train")]
    report = mirror(prod, objects, timezone.now())
    assert not report.problems, report.problems
    code, _, err = cli("queue", "delete", "team-a", "--force")
    assert code == 1
    assert err.splitlines() == [
        'error: queue "team-a": force: queue team-a holds podgroups of cluster prod, which is mirrored from '
        "Kubernetes: delete them there with kubectl; Fairway only reads them"
    ]
    assert PodGroup.objects.filter(cluster=prod, name="train").exists()


def test_cluster_show_has_its_settings_and_its_nodes_totals_in_people_s_units(cli: Run) -> None:
    from tests.support import factories as f

    cluster = f.ClusterFactory(name="gpu", description="the A100 pool", node_heartbeat_timeout=90)
    f.NodeFactory(cluster=cluster, name="g1", allocatable={"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8"})
    f.NodeFactory(cluster=cluster, name="g2", allocatable={"cpu": "64", "nvidia.com/gpu": "8"}, unschedulable=True)
    pod = f.PodFactory(cluster=cluster, name="p", status="Running", request={"cpu": "30", "nvidia.com/gpu": "3"})
    pod.node = cluster.nodes.get(name="g1")
    pod.save()
    code, out, err = cli("cluster", "show", "gpu")
    assert (code, err) == (0, "")
    lines = {k.strip(): v.strip() for k, sep, v in (line.partition(":") for line in out.splitlines()) if sep}
    assert lines["Description"] == "the A100 pool"
    assert lines["Node heartbeat timeout"] == "1 min 30 s"
    assert lines["Nodes"] == "2 nodes (1 Ready, 1 cordoned)"
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.startswith(("cpu ", "nvidia"))}
    assert rows["cpu"] == ["128", "cores", "30", "cores", "0", "cores", "98", "cores"]
    assert rows["nvidia.com/gpu"] == ["16", "GPUs", "3", "GPUs", "0", "GPUs", "13", "GPUs"]
    assert cli("cluster", "show", "nope")[2] == 'error: cluster "nope" not found\n'
