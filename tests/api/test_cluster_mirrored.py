"""A cluster mirrored from Kubernetes (``source=kubernetes``) is read-only for people: every write of its nodes,
podgroups and pods through the API — admins', team members', node agents' — is a 409 with a sentence and writes
nothing, while the adapter's mirror still writes them (``scheduling.ownership``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from scheduling.models import Cluster, Node, Pod, PodGroup
from tests.kube.conftest import node as kube_node
from tests.kube.conftest import pod as kube_pod
from tests.kube.conftest import podgroup as kube_podgroup
from tests.support.factories import TeamFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def prod(admin_api: Any) -> Cluster:
    """Cluster ``prod`` mirrored from Kubernetes, with node ``k1``, podgroup ``nlp/train`` and pod ``nlp/real-0``
    written by the adapter's mirror; team ``nlp`` owns leaf queue ``nlp`` and namespace ``nlp``; cluster ``default``
    is fed by agents."""
    from quotas import services
    from quotas.models import Namespace
    from scheduling.kube.mirror_in import mirror

    services.ensure_builtins()
    services.save_queue(None, {"name": "nlp", "weight": 1})
    Namespace.objects.create(name="nlp", default_queue_id=_queue_id("nlp"))
    Cluster.objects.get_or_create(name="default")
    cluster = Cluster.objects.create(name="prod", source="kubernetes", scheduler_name="fairway")
    report = mirror(
        cluster,
        [kube_node("k1"), kube_podgroup("nlp", "train", "nlp"), kube_pod("nlp", "real-0", group="train")],
        timezone.now(),
    )
    assert not report.problems, report.problems
    assert Pod.objects.filter(cluster=cluster, name="real-0").exists()
    return cluster


def _queue_id(name: str) -> int:
    from quotas.models import Queue

    return Queue.objects.get(name=name).pk


def _member(api: Any) -> Any:
    return api(UserFactory(username="nlp-member", teams=[TeamFactory(name="team-nlp", queues=["nlp"]).name]))


def _refused(response: Any, sentence: str) -> None:
    assert response.status_code == 409, (response.status_code, response.content[:500])
    error = response.json()["errors"][0]
    assert error["code"] == "cluster_mirrored_from_kubernetes"
    assert error["detail"] == sentence


def _counts() -> tuple[int, int, int]:
    return Node.objects.count(), PodGroup.objects.count(), Pod.objects.count()


def test_people_create_nothing_in_a_mirrored_cluster(prod: Cluster, admin_api: Any, api: Any) -> None:
    """The probe: a team member's pod ``nlp/phantom-0`` in the mirrored cluster was bound by the next session."""
    from scheduling import tasks

    before = _counts()
    for client in (admin_api, _member(api)):
        _refused(
            client.post("/api/v1/pods/", {"cluster": "prod", "namespace": "nlp", "name": "phantom-0"}, format="json"),
            "cluster prod is mirrored from Kubernetes: create pods there with kubectl; Fairway only reads them",
        )
        _refused(
            client.post("/api/v1/podgroups/", {"cluster": "prod", "namespace": "nlp", "name": "pg"}, format="json"),
            "cluster prod is mirrored from Kubernetes: create podgroups there with kubectl; Fairway only reads them",
        )
    _refused(
        admin_api.post("/api/v1/nodes/", {"cluster": "prod", "name": "n9"}, format="json"),
        "cluster prod is mirrored from Kubernetes: create its nodes there (kubelet, kubectl); Fairway only reads them",
    )
    assert _counts() == before
    tasks.run_session(prod.pk)
    assert not Pod.objects.filter(name="phantom-0").exists()
    # the same writes in the agents' cluster are the API's as before
    r = admin_api.post("/api/v1/pods/", {"namespace": "nlp", "name": "phantom-0"}, format="json")
    assert r.status_code == 201 and r.json()["cluster"] == "default"


def test_people_change_and_delete_nothing_in_a_mirrored_cluster(prod: Cluster, admin_api: Any) -> None:
    pod = Pod.objects.get(cluster=prod, name="real-0")
    pg = PodGroup.objects.get(cluster=prod, name="train")
    before = (pod.priority, pg.min_member, Node.objects.get(cluster=prod).unschedulable)
    _refused(
        admin_api.patch(f"/api/v1/pods/{pod.pk}/", {"priority": 5}, format="json"),
        "cluster prod is mirrored from Kubernetes: change pods there with kubectl; Fairway only reads them",
    )
    _refused(
        admin_api.delete(f"/api/v1/pods/{pod.pk}/"),
        "cluster prod is mirrored from Kubernetes: delete pods there with kubectl; Fairway only reads them",
    )
    _refused(
        admin_api.patch(f"/api/v1/podgroups/{pg.pk}/", {"min_member": 3}, format="json"),
        "cluster prod is mirrored from Kubernetes: change podgroups there with kubectl; Fairway only reads them",
    )
    _refused(
        admin_api.delete(f"/api/v1/podgroups/{pg.pk}/"),
        "cluster prod is mirrored from Kubernetes: delete podgroups there with kubectl; Fairway only reads them",
    )
    _refused(
        admin_api.patch("/api/v1/nodes/k1/?cluster=prod", {"unschedulable": True}, format="json"),
        "cluster prod is mirrored from Kubernetes: change its nodes there (kubelet, kubectl); Fairway only reads them",
    )
    _refused(
        admin_api.delete("/api/v1/nodes/k1/?cluster=prod"),
        "cluster prod is mirrored from Kubernetes: delete its nodes there (kubelet, kubectl); Fairway only reads them",
    )
    pod.refresh_from_db()
    pg.refresh_from_db()
    assert (pod.priority, pg.min_member, Node.objects.get(cluster=prod).unschedulable) == before


def test_no_agent_reports_for_a_mirrored_cluster(prod: Cluster, admin_api: Any) -> None:
    node = Node.objects.get(cluster=prod)
    pod = Pod.objects.get(cluster=prod, name="real-0")
    Pod.objects.filter(pk=pod.pk).update(status="Bound", node=node)
    beat = node.last_heartbeat
    _refused(
        admin_api.post("/api/v1/nodes/k1/heartbeat/?cluster=prod", {}, format="json"),
        "cluster prod is mirrored from Kubernetes: its nodes report to its API server (kubelet); Fairway only reads "
        "them",
    )
    pods_sentence = "cluster prod is mirrored from Kubernetes: its pods' status comes from its API server (kubelet); " \
        "Fairway only reads it"  # fmt: skip
    _refused(admin_api.post(f"/api/v1/pods/{pod.pk}/status/", {"status": "Running"}, format="json"), pods_sentence)
    _refused(admin_api.post(f"/api/v1/pods/{pod.pk}/gone/"), pods_sentence)
    assert Pod.objects.get(pk=pod.pk).status == "Bound" and Node.objects.get(pk=node.pk).last_heartbeat == beat


def test_the_adapter_still_writes_the_mirrored_cluster(prod: Cluster, admin_api: Any) -> None:
    from scheduling.kube.mirror_in import mirror

    admin_api.post("/api/v1/pods/", {"cluster": "prod", "namespace": "nlp", "name": "phantom-0"}, format="json")
    objects = [
        kube_node("k1", cpu="16"),
        kube_node("k2"),
        kube_podgroup("nlp", "train", "nlp", min_member=2),
        kube_pod("nlp", "real-0", group="train"),
        kube_pod("nlp", "real-1", group="train"),
    ]
    report = mirror(prod, objects, timezone.now() + timedelta(seconds=1))
    assert not report.problems, report.problems
    assert set(Node.objects.filter(cluster=prod).values_list("name", flat=True)) == {"k1", "k2"}
    assert Node.objects.get(cluster=prod, name="k1").allocatable["cpu"] == 16_000
    assert set(Pod.objects.filter(cluster=prod).values_list("name", flat=True)) == {"real-0", "real-1"}
    assert PodGroup.objects.get(cluster=prod, name="train").min_member == 2
    assert mirror(prod, [kube_node("k2")], timezone.now() + timedelta(seconds=2)).deleted
    assert not Pod.objects.filter(cluster=prod).exists() and Node.objects.filter(cluster=prod).count() == 1


def test_a_forced_queue_delete_does_not_delete_a_mirrored_clusters_jobs(prod: Cluster, admin_api: Any) -> None:
    r = admin_api.delete("/api/v1/queues/nlp/?force=true")
    assert r.status_code == 400, r.json()
    error = r.json()["errors"][0]
    assert error["attr"] == "force"
    assert error["detail"] == (
        "queue nlp holds podgroups of cluster prod, which is mirrored from Kubernetes: delete them there with kubectl; "
        "Fairway only reads them"
    )
    assert PodGroup.objects.filter(cluster=prod).exists()


def test_the_admin_shows_a_mirrored_clusters_rows_read_only(prod: Cluster, client: Any) -> None:
    from django.contrib.auth import get_user_model

    from quotas.models import Namespace
    from tests.support.html_forms import form_data

    client.force_login(get_user_model().objects.create_superuser("root-admin", password="pw-root-admin"))
    pod = Pod.objects.get(cluster=prod, name="real-0")
    page = client.get(f"/admin/scheduling/pod/{pod.pk}/change/")
    html = page.content.decode()
    assert page.status_code == 200 and 'name="_save"' not in html
    # (the admin's messages begin with a capital)
    assert "Cluster prod is mirrored from Kubernetes: change pods there with kubectl; Fairway only reads them" in html
    assert client.post(f"/admin/scheduling/pod/{pod.pk}/change/", {"task_name": "x"}).status_code == 403
    assert client.post(f"/admin/scheduling/pod/{pod.pk}/delete/", {"post": "yes"}).status_code == 403
    node = Node.objects.get(cluster=prod)
    assert client.post(f"/admin/scheduling/node/{node.pk}/delete/", {"post": "yes"}).status_code == 403

    # a new row into the mirrored cluster: refused at its cluster field
    add = form_data(client.get("/admin/scheduling/pod/add/").content.decode(), "pod_form")
    ns = Namespace.objects.get(name="nlp")
    r = client.post(
        "/admin/scheduling/pod/add/",
        {**add, "cluster": str(prod.pk), "namespace": str(ns.pk), "name": "phantom-0", "_save": "Save"},
    )
    assert r.status_code == 200
    assert "cluster prod is mirrored from Kubernetes: create pods there with kubectl; Fairway only reads them" in (
        r.content.decode()
    )
    assert not Pod.objects.filter(name="phantom-0").exists()

    # a bulk delete that includes a mirrored row is refused, with the sentence on its confirmation page
    mine = Pod.objects.create(cluster=Cluster.objects.get(name="default"), namespace=ns, name="mine-0")
    selected = {"action": "delete_selected", "_selected_action": [str(pod.pk), str(mine.pk)]}
    page = client.post("/admin/scheduling/pod/", selected)
    assert page.status_code == 200
    assert "Cluster prod is mirrored from Kubernetes: delete pods there with kubectl; Fairway only reads them" in (
        page.content.decode()
    )
    assert client.post("/admin/scheduling/pod/", {**selected, "post": "yes"}).status_code == 403
    assert Pod.objects.filter(pk__in=[pod.pk, mine.pk]).count() == 2
