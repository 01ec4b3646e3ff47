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
