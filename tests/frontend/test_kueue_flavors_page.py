"""Kueue's ResourceFlavors on the dashboard (issue 28 item 7): after a live session on the stored trees, the job page
says which flavor the job was given and why, and the queue's page and the tree page show its quota and usage per
flavor (``cpu (spot)``) in cores and GiB."""

from __future__ import annotations

from typing import Any

import pytest

from tests.scheduling.test_kueue_flavors_live import TEXT, _import

pytestmark = pytest.mark.django_db


@pytest.fixture
def flavored(db: Any) -> Any:
    from engine.manifests.kueue import KUEUE_POLICY
    from quotas import services
    from scheduling import sessions
    from scheduling.models import Cluster

    services.ensure_builtins()
    cluster = Cluster.objects.create(
        name="kfl", source="kubernetes", tree_source="kubernetes", scheduler_policy=KUEUE_POLICY.to_yaml()
    )
    _import(cluster, TEXT)
    sessions.run_scheduling_session(cluster)
    return cluster


def test_the_job_page_shows_the_flavor_and_why(admin_client: Any, flavored: Any) -> None:
    page = admin_client.get("/jobs/team-a/podgroup-big/?cluster=kfl").content.decode()
    assert '<p data-testid="job-flavor"><strong>Flavor:</strong> spot for cpu, memory' in page
    assert (
        "Kueue's flavor assignment: flavor spot for cpu, memory (tried on-demand: would need a preemption its ClusterQueue may not make "
        "(3 cores of cpu asked, 2 cores unused); spot: fits)"
    ) in page
    # the governing path shows the tree nodes' quota in the job's flavor
    assert '<span class="muted">cpu (spot)</span> allocated 3 cores · deserved 8 cores · capability 8 cores' in page
    small = admin_client.get("/jobs/team-a/podgroup-small/").content.decode()
    assert "<strong>Flavor:</strong> on-demand for cpu, memory" in small
    huge = admin_client.get("/jobs/team-a/podgroup-huge/").content.decode()  # waits: no flavor fits
    assert (
        "Kueue's flavor assignment: no flavor fits: held on flavor on-demand for cpu, memory (tried on-demand: " in huge
    )


def test_the_tree_pages_show_quota_and_usage_per_flavor(admin_client: Any, flavored: Any) -> None:
    page = admin_client.get("/queues/team-a/?cluster=kfl").content.decode()
    # one row per flavor, in cores: spot's 8 deserved with 3 in use (the big job), on-demand's 4 with 4 in use
    assert '<th scope="row">cpu (spot)</th>' in page
    assert '<td class="num" data-testid="entitled-cpu@spot">8 cores</td><td class="num">3 cores</td>' in page
    assert '<td class="num" data-testid="entitled-cpu@on-demand">4 cores</td><td class="num">4 cores</td>' in page
    assert '<td class="num" data-testid="entitled-memory@spot">32 GiB</td>' in page
    assert "4 cores (on-demand), 3 cores (spot)" in page  # the namespaces' amounts side by side say their flavor
    trees = admin_client.get("/trees/queues/?cluster=kfl&resource=cpu@spot").content.decode()
    assert '<option value="cpu@spot" selected>cpu (spot)</option>' in trees
    assert '<option value="cpu@on-demand" >cpu (on-demand)</option>' in trees
    with open("/tmp/flavordb_trees.html", "w") as fh:
        fh.write(trees)


def test_why_says_which_flavor_and_why_in_the_api_and_the_cli(admin_client: Any, flavored: Any, capsys: Any) -> None:
    from controlplane.cli.job import print_job, print_why
    from scheduling.models import PodGroup

    pg = PodGroup.objects.get(name="podgroup-big")
    why = admin_client.get(f"/api/v1/podgroups/{pg.pk}/why/").json()
    assert why["flavors"] == {"cpu": "spot", "memory": "spot"}
    assert why["flavors_text"] == "spot for cpu, memory"
    assert why["flavor_assignment"].startswith("flavor spot for cpu, memory (tried on-demand: would need a preemption")
    print_why({"why": why})
    out = capsys.readouterr().out
    assert "\nFlavor: spot for cpu, memory\n  Why: flavor spot for cpu, memory (tried on-demand: " in out
    job = admin_client.get(f"/api/v1/podgroups/{pg.pk}/").json()
    assert job["flavors"] == {"cpu": "spot", "memory": "spot"}
    print_job({"job": job, "pods": [], "evictions": []})
    assert "spot for cpu, memory" in capsys.readouterr().out


def test_the_editor_shows_and_keeps_the_quota_per_flavor(admin_client: Any, db: Any) -> None:
    import json

    from engine.resources import ResourceList
    from quotas import services
    from quotas.models import Queue
    from tests.frontend.test_editor import errors_of, queue_form

    services.ensure_builtins()
    for name in ("on-demand", "spot"):
        services.save_resource_flavor(None, {"name": name, "node_labels": {"type": name}})
    groups = {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": ["on-demand", "spot"]}]}
    services.save_queue(
        None, {"name": "nlp", "deserved": ResourceList({"cpu@on-demand": 4_000, "cpu@spot": 8_000}), "kueue": groups}
    )
    page = admin_client.get("/edit/queues/nlp/")
    html = page.content.decode()
    assert "cpu (spot) <span" in html and "cpu (on-demand) <span" in html  # a row per flavor, in cores
    form = page.context["form"]
    assert form["deserved__cpu@spot"].initial == "8"
    data = queue_form(
        "nlp", Queue.objects.get(name="nlp").version, **{"deserved_cpu@on-demand": "4", "deserved_cpu@spot": "6"}
    )
    saved = admin_client.post("/edit/queues/nlp/", {**data, "kueue": json.dumps(groups)})
    assert saved.status_code == 302, errors_of(saved)
    queue = Queue.objects.get(name="nlp")
    assert queue.deserved == {"cpu@on-demand": 4_000, "cpu@spot": 6_000} and queue.kueue == groups
    data = queue_form("nlp", Queue.objects.get(name="nlp").version, **{"deserved_cpu@on-demand": "4"})
    added = {"extra_resource": "cpu@gold", "deserved____new__": "6", "kueue": json.dumps(groups)}
    refused = admin_client.post("/edit/queues/nlp/", {**data, **added})
    assert refused.status_code == 400
    assert errors_of(refused) == {  # (the editor shows a new resource's rule errors above the form)
        "__all__": ["queue nlp: deserved.cpu@gold: no ResourceFlavor 'gold': create it first (resource-flavors)"]
    }
    assert Queue.objects.get(name="nlp").deserved == {"cpu@on-demand": 4_000, "cpu@spot": 6_000}


def test_the_other_pages_read_the_flavors_as_people_do(admin_client: Any, flavored: Any) -> None:
    overview = admin_client.get("/overview/?cluster=kfl").content.decode()
    assert '<th scope="row">cpu (spot)</th>' in overview  # capacity per flavor
    for url in ("/trees/quotas/", "/nodes/", "/nodes/spot-1/", "/jobs/", "/edit/", "/whatif/"):
        page = admin_client.get(url)
        assert page.status_code == 200, url
        assert "cpu@spot</th>" not in page.content.decode(), url


def test_the_export_endpoint_writes_the_stored_flavors(admin_client: Any, flavored: Any) -> None:
    docs = admin_client.get("/api/v1/export/?format=kueue&output=json&cluster=kfl").json()
    flavors = {d["metadata"]["name"]: d["spec"] for d in docs if d["kind"] == "ResourceFlavor"}
    assert flavors["spot"]["nodeLabels"] == {"type": "spot"} and flavors["spot"]["topologyName"] == "default"
    [cq] = [d for d in docs if d["kind"] == "ClusterQueue" and d["metadata"]["name"] == "team-a"]
    assert [f["name"] for f in cq["spec"]["resourceGroups"][-1]["flavors"]] == ["on-demand", "spot"]
