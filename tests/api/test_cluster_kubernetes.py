"""/api/v1/clusters/: the Kubernetes adapter's settings. ``source``, ``scheduler_name`` and ``tree_source`` are read
and written by admins with the model's rules (errors name the field); ``kubeconfig`` holds credentials: it is
written and never returned (``kubeconfig_set`` says whether one is stored), by no GET of the API."""

from __future__ import annotations

import re
from typing import Any

import pytest

from scheduling.models import Cluster
from tests.conftest import error_attrs

pytestmark = pytest.mark.django_db

SECRET = "s3cr3t-t0ken-of-the-adapter"
KUBECONFIG = f"""apiVersion: v1
kind: Config
clusters: [{{name: east, cluster: {{server: "https://127.0.0.1:6443"}}}}]
users: [{{name: fairway, user: {{token: {SECRET}}}}}]
contexts: [{{name: east, context: {{cluster: east, user: fairway}}}}]
current-context: east
"""


def create(api: Any, **body: Any) -> Any:
    return api.post("/api/v1/clusters/", {"name": "east", **body}, format="json")


def test_an_admin_sets_the_adapter_up_and_reads_it_back_without_the_kubeconfig(admin_api: Any) -> None:
    r = create(admin_api, source="kubernetes", scheduler_name="batch.example.com", kubeconfig=KUBECONFIG)
    assert r.status_code == 201, r.json()
    body = r.json()
    assert "kubeconfig" not in body and SECRET not in r.content.decode()
    assert (body["source"], body["scheduler_name"], body["tree_source"], body["kubeconfig_set"]) == (
        "kubernetes",
        "batch.example.com",
        "fairway",
        True,
    )
    assert Cluster.objects.get(name="east").read_kubeconfig() == KUBECONFIG
    r = admin_api.patch("/api/v1/clusters/east/", {"tree_source": "kubernetes"}, format="json")
    assert r.status_code == 200, r.json()
    assert r.json()["tree_source"] == "kubernetes" and "kubeconfig" not in r.json()
    assert Cluster.objects.get(name="east").owns_trees
    assert admin_api.post("/api/v1/queues/", {"name": "fresh"}, format="json").status_code == 409
    r = admin_api.patch("/api/v1/clusters/east/", {"kubeconfig": ""}, format="json")  # back to in-cluster
    assert r.status_code == 200 and r.json()["kubeconfig_set"] is False
    plain = create(admin_api, name="west").json()
    assert (plain["source"], plain["scheduler_name"], plain["tree_source"], plain["kubeconfig_set"]) == (
        "agent",
        "fairway",
        "fairway",
        False,
    )


@pytest.mark.parametrize(
    ("body", "attr", "words"),
    [
        ({"tree_source": "kubernetes"}, "tree_source", "only a cluster with source=kubernetes"),
        ({"source": "kubernetes", "tree_source": "cluster"}, "tree_source", "not a valid choice"),
        ({"source": "docker"}, "source", "not a valid choice"),
        ({"scheduler_name": "Fairway_Scheduler"}, "scheduler_name", "scheduler name"),
        ({"scheduler_name": ""}, "scheduler_name", "blank"),
        ({"kubeconfig": "clusters: [\n  {name: east, token: " + SECRET}, "kubeconfig", "not valid YAML (line"),
        ({"kubeconfig": f"- {SECRET}\n"}, "kubeconfig", "must be a YAML mapping"),
        ({"kubeconfig": KUBECONFIG.replace("current-context: east", "")}, "kubeconfig", "no current-context"),
        (
            {"kubeconfig": KUBECONFIG.replace("current-context: east", "current-context: west")},
            "kubeconfig",
            "current-context 'west' is not one of its contexts",
        ),
    ],
)
def test_invalid_settings_are_refused_naming_the_field(admin_api: Any, body: dict, attr: str, words: str) -> None:
    r = create(admin_api, **body)
    assert r.status_code == 400, r.json()
    errors = error_attrs(r)
    assert attr in errors and words in errors[attr], errors
    assert SECRET not in r.content.decode()  # a kubeconfig is never quoted back, not even in an error
    assert not Cluster.objects.filter(name="east").exists()


def test_only_one_cluster_owns_the_trees_and_only_while_it_is_mirrored(admin_api: Any) -> None:
    assert create(admin_api, source="kubernetes", tree_source="kubernetes").status_code == 201
    r = admin_api.post(
        "/api/v1/clusters/", {"name": "west", "source": "kubernetes", "tree_source": "kubernetes"}, format="json"
    )
    assert r.status_code == 400 and "cluster east already owns the trees" in error_attrs(r)["tree_source"]
    r = admin_api.patch("/api/v1/clusters/east/", {"source": "agent"}, format="json")
    assert r.status_code == 400 and "only a cluster with source=kubernetes" in error_attrs(r)["source"]
    r = admin_api.patch("/api/v1/clusters/east/", {"source": "agent", "tree_source": "fairway"}, format="json")
    assert r.status_code == 200, r.json()
    assert create(admin_api, name="west", source="kubernetes", tree_source="kubernetes").status_code == 201
    r = admin_api.patch("/api/v1/clusters/west/", {"description": "the new owner"}, format="json")
    assert r.status_code == 200  # a change that leaves the owner as it is


def test_team_members_read_the_settings_and_write_none(admin_api: Any, api: Any, make_user: Any) -> None:
    from tests.frontend import builders as b

    create(admin_api, source="kubernetes", kubeconfig=KUBECONFIG)
    b.queue("team-q")
    b.team("some-team", queues=["team-q"])
    member = api(make_user("reader", groups=("some-team",)))
    r = member.get("/api/v1/clusters/east/")
    assert r.status_code == 200, r.content
    assert r.json()["source"] == "kubernetes" and "kubeconfig" not in r.json() and SECRET not in r.content.decode()
    assert member.patch("/api/v1/clusters/east/", {"kubeconfig": ""}, format="json").status_code == 403
    assert Cluster.objects.get(name="east").read_kubeconfig() == KUBECONFIG


def _get_operations(schema: dict[str, Any]) -> list[str]:
    return [path for path, item in schema["paths"].items() if "get" in item]


def test_the_kubeconfig_appears_in_no_get_response_of_the_api(admin_api: Any) -> None:
    """Every GET operation of the schema, its path parameters filled with the cluster's name (most of those answer
    404, which is fine: the point is what any answer carries), with and without ``?cluster=``."""
    create(admin_api, source="kubernetes", kubeconfig=KUBECONFIG)
    schema = admin_api.get("/api/schema/?format=json").json()
    paths = _get_operations(schema)
    assert "/api/v1/clusters/{name}/" in paths
    answered = 0
    for template in paths:
        path = re.sub(r"\{[^}]+\}", "east", template)
        for query in ("", "?cluster=east"):
            r = admin_api.get(path + query)
            assert r.status_code < 500, (path, r.status_code)
            text = r.content.decode(errors="replace")
            assert SECRET not in text and "current-context" not in text, path
            answered += r.status_code == 200
    assert answered > 20
    listing = admin_api.get("/api/v1/clusters/").json()
    rows = listing["results"] if isinstance(listing, dict) else listing
    assert [c["kubeconfig_set"] for c in rows if c["name"] == "east"] == [True]
    options = admin_api.options("/api/v1/clusters/east/")
    assert SECRET not in options.content.decode()


def test_the_schema_says_the_kubeconfig_is_write_only(admin_api: Any) -> None:
    components = admin_api.get("/api/schema/?format=json").json()["components"]["schemas"]
    assert "kubeconfig" not in components["Cluster"]["properties"]  # the response's shape
    assert components["Cluster"]["properties"]["kubeconfig_set"]["readOnly"] is True
    for request in ("ClusterRequest", "PatchedClusterRequest"):
        field = components[request]["properties"]["kubeconfig"]
        assert field["writeOnly"] is True and "never returned" in field["description"], field
    for name in ("source", "scheduler_name", "tree_source"):
        assert name in components["Cluster"]["properties"] and name in components["ClusterRequest"]["properties"]
