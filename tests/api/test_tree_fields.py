"""Every field of the table of each tree kind (``engine.treefields``) round-trips: API -> database row -> the store's
snapshot -> the engine's spec, and back out through the API, the what-if of the editor's staging and the exported
manifests; then the description itself (issue 27 item 2): blank by default, refused over 500 characters with a
sentence naming the field, nothing written."""

from __future__ import annotations

from typing import Any

import pytest

from engine import treefields
from engine.manifests.export import export_trees
from quotas.models import Queue, QuotaGroup
from scheduling import store
from scheduling.models import Cluster
from tests.conftest import error_attrs
from tests.unit.test_treefields import DEPT, PARENTS, SAMPLES, sample_api, sample_spec

pytestmark = pytest.mark.django_db

PATHS = {"queue": "queues", "quota_group": "quota-groups"}
MODELS: dict[str, Any] = {"queue": Queue, "quota_group": QuotaGroup}


def _create(admin_api: Any, kind: str) -> dict[str, Any]:
    if kind == "queue":
        assert admin_api.post("/api/v1/queues/", DEPT, format="json").status_code == 201
    body = {"name": "team", "parent": PARENTS[kind], **sample_api(kind)}
    r = admin_api.post(f"/api/v1/{PATHS[kind]}/", body, format="json")
    assert r.status_code == 201, r.json()
    return dict(r.json())


@pytest.mark.parametrize("kind", treefields.TABLES)
def test_every_field_round_trips_through_the_api_the_row_the_store_and_the_spec(admin_api: Any, kind: str) -> None:
    created = _create(admin_api, kind)
    table = treefields.TABLES[kind]  # type: ignore[index]
    assert {f.name for f in table} <= set(created)  # the API answers every field of the table
    expected = sample_spec(kind)
    row = MODELS[kind].objects.get(name="team")
    assert {name: getattr(row.to_spec(), name) for name in SAMPLES[kind]} == expected
    snap = store.load_snapshot(Cluster.objects.create(name="fields"))
    spec = snap.queues["team"] if kind == "queue" else snap.quota_groups["team"]
    assert {name: getattr(spec, name) for name in SAMPLES[kind]} == expected
    assert spec == row.to_spec()  # the store's read and the model's agree on every field, the others included
    again = admin_api.get(f"/api/v1/{PATHS[kind]}/team/").json()
    assert {name: again[name] for name in SAMPLES[kind]} == {name: created[name] for name in SAMPLES[kind]}
    # a PATCH of the same values changes nothing: the API reads back what it answers
    r = admin_api.patch(f"/api/v1/{PATHS[kind]}/team/", {n: again[n] for n in SAMPLES[kind]}, format="json")
    assert r.status_code == 200, r.json()
    assert MODELS[kind].objects.get(name="team").to_spec() == row.to_spec()


@pytest.mark.parametrize("kind", treefields.TABLES)
def test_the_annotated_fields_are_exported_from_the_database(admin_api: Any, kind: str) -> None:
    _create(admin_api, kind)
    snap = store.load_snapshot(Cluster.objects.create(name="fields"))
    docs = export_trees(snap, "volcano" if kind == "queue" else "koordinator")
    (team,) = [d for d in docs if d["metadata"]["name"] == "team"]
    annotated = {f.annotation: SAMPLES[kind][f.name][1] for f in treefields.TABLES[kind] if f.annotation}  # type: ignore[index]
    assert annotated and annotated.items() <= team["metadata"]["annotations"].items()


@pytest.mark.parametrize("kind", treefields.TABLES)
def test_the_description_is_blank_by_default_and_edited_like_the_name(admin_api: Any, kind: str) -> None:
    r = admin_api.post(f"/api/v1/{PATHS[kind]}/", {"name": "plain"}, format="json")
    assert r.status_code == 201 and r.json()["description"] == ""
    r = admin_api.patch(f"/api/v1/{PATHS[kind]}/plain/", {"description": "GPU pool of the vision team"}, format="json")
    assert r.status_code == 200 and r.json()["description"] == "GPU pool of the vision team"
    assert MODELS[kind].objects.get(name="plain").description == "GPU pool of the vision team"
    history = MODELS[kind].objects.get(name="plain").history.order_by("history_date")
    assert [h.description for h in history] == ["", "GPU pool of the vision team"]


@pytest.mark.parametrize(("kind", "what"), [("queue", "queue"), ("quota_group", "quota group")])
def test_a_description_over_500_characters_is_refused_naming_the_field(admin_api: Any, kind: str, what: str) -> None:
    r = admin_api.post(f"/api/v1/{PATHS[kind]}/", {"name": "long", "description": "x" * 501}, format="json")
    assert r.status_code == 400
    assert error_attrs(r) == {"description": f"{what} long: description is 501 characters long; it may be at most 500"}
    assert not MODELS[kind].objects.filter(name="long").exists()
    r = admin_api.post(f"/api/v1/{PATHS[kind]}/", {"name": "long", "description": "x" * 500}, format="json")
    assert r.status_code == 201
    r = admin_api.patch(f"/api/v1/{PATHS[kind]}/long/", {"description": "y" * 600}, format="json")
    assert r.status_code == 400 and "description" in error_attrs(r)
    assert MODELS[kind].objects.get(name="long").description == "x" * 500
