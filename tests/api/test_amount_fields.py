"""The API's machine form of amounts (issue 30, item 1): beside the old base-unit fields, which stay and are marked
deprecated in the OpenAPI schema, a blocker carries its amounts as Kubernetes quantities (``requested_quantity:
{"nvidia.com/gpu": "4"}``, not ``requested: 4000``) and the audit its averages as decimals in the resource's unit
(``47.976`` GPUs, not ``47976m``)."""

from __future__ import annotations

from typing import Any

import pytest

from engine.audit import Audit, IdleGuarantee, UsageShare
from planning.audit import as_json
from scheduling.models import PodGroup
from tests.frontend import builders as b

pytestmark = pytest.mark.django_db

GPU = "nvidia.com/gpu"
BLOCKER = {"kind": "queue", "name": "nlp", "resource": GPU, "requested": 4000, "available": 2000, "limit": "deserved"}


@pytest.fixture
def waiting_job() -> PodGroup:
    b.node("g1", cpu="32", memory="128Gi", **{GPU: "8"})
    b.queue("nlp", deserved={"cpu": "8", GPU: "2"})
    pg = b.job("nlp-ns", "train", "nlp", 1, {"cpu": "1", GPU: "4"}, reason="NotEnoughResources")
    PodGroup.objects.filter(pk=pg.pk).update(blocker=BLOCKER)
    return pg


def test_why_gives_the_blockers_amounts_as_quantities(admin_api: Any, waiting_job: PodGroup) -> None:
    why = admin_api.get(f"/api/v1/podgroups/{waiting_job.pk}/why/").json()
    blocker = why["blocker"]
    assert blocker["requested_quantity"] == {GPU: "4"} and blocker["available_quantity"] == {GPU: "2"}
    assert (blocker["requested"], blocker["available"]) == (4000, 2000)  # kept for the clients that read them


def test_a_podgroup_and_its_history_give_them_too(admin_api: Any, waiting_job: PodGroup) -> None:
    row = admin_api.get(f"/api/v1/podgroups/{waiting_job.pk}/").json()
    assert row["blocker"]["requested_quantity"] == {GPU: "4"}
    listed = admin_api.get("/api/v1/podgroups/").json()["results"]
    assert [r["blocker"]["requested_quantity"] for r in listed] == [{GPU: "4"}]


def test_a_blocker_without_amounts_has_null_quantities(admin_api: Any, waiting_job: PodGroup) -> None:
    PodGroup.objects.filter(pk=waiting_job.pk).update(blocker={"kind": "gang", "name": "train", "resource": None})
    blocker = admin_api.get(f"/api/v1/podgroups/{waiting_job.pk}/why/").json()["blocker"]
    assert blocker["requested_quantity"] is None and blocker["available_quantity"] is None


def test_the_audits_averages_are_decimals_in_the_resources_unit() -> None:
    result = Audit(
        window=7 * 86400.0,
        starved=(),
        lending=(),
        idle=(IdleGuarantee("quota", "vision", GPU, guaranteed=64000, average=47976, peak=52000, covered=3600.0),),
        usage=(UsageShare("quota", "vision", "memory", average=3 * 2**29, entitled=2400128783, covered=3600.0),),
    )
    out = as_json(result)
    idle, usage = out["idle_guarantees"][0], out["usage_over_time"][0]
    assert (idle["average_used_decimal"], idle["unit"], idle["average_used"]) == ("47.976", "GPUs", "47976m")
    assert (usage["average_used_decimal"], usage["average_entitled_decimal"], usage["unit"]) == ("1.5", "2.235", "GiB")


def test_the_schema_marks_the_old_fields_deprecated(admin_api: Any) -> None:
    schema = admin_api.get("/api/schema/", {"format": "json"}).json()["components"]["schemas"]
    blocker = schema["Blocker"]["properties"]
    assert blocker["requested"].get("deprecated") and blocker["available"].get("deprecated")
    assert not blocker["requested_quantity"].get("deprecated")
    assert schema["PodGroup"]["properties"]["blocker"]["allOf"][0]["$ref"].endswith("/Blocker")
    why = schema["Why"]["properties"]["blocker"]
    assert why["allOf"][0]["$ref"].endswith("/Blocker")
    idle = next(
        v
        for k, v in schema.items()
        if "average_used_decimal" in v.get("properties", {}) and "peak_used" in v["properties"]
    )
    assert idle["properties"]["average_used"].get("deprecated") and not idle["properties"]["average_used_decimal"].get(
        "deprecated"
    )
