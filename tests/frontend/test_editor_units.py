"""The editor's resource matrix reads a bare number in its row's unit (issue 30: a bare ``600`` under "memory GiB"
was saved as 600 bytes, and the group then showed "Max 0 GiB"); a unit written out is read as written; GPUs are
whole; a cell that does not read is refused with a message naming the node and the cell, and nothing is written."""

from __future__ import annotations

from typing import Any

import pytest

from quotas.models import Queue, QuotaGroup
from tests.frontend import builders as b
from tests.support.html_forms import form_data

GIB = 2**30
GPU = "nvidia.com/gpu"


@pytest.fixture
def org(db: Any) -> None:
    b.node("n1", cpu="64", memory="1024Gi", **{GPU: "8"})
    b.queue("research", deserved={"cpu": "32", "memory": "800Gi", GPU: "8"})
    b.queue("nlp", "research", deserved={"cpu": "8"})
    b.group("dept", is_parent=True, min={"cpu": "32", "memory": "800Gi"}, max={"cpu": "64", "memory": "1000Gi"})
    b.group("team-a", "dept", min={"cpu": "8"}, max={"cpu": "16"})


def rendered(client: Any, url: str) -> dict[str, Any]:
    """The edit form as the browser would send it back unchanged (Save pressed)."""
    data = form_data(client.get(url).content.decode(), "node-form")
    return {**data, "action": "save"}


def errors_of(response: Any) -> dict[str, list[str]]:
    return {k: [str(e) for e in v] for k, v in response.context["form"].errors.items()}


def test_a_bare_number_under_memory_is_gib_and_the_group_shows_it(admin_client: Any, org: None) -> None:
    data = rendered(admin_client, "/edit/quotas/team-a/")
    response = admin_client.post("/edit/quotas/team-a/", {**data, "max__memory": "600", "min__memory": "1.5"})
    assert response.status_code == 302, errors_of(response)
    group = QuotaGroup.objects.get(name="team-a")
    assert group.max["memory"] == 600 * GIB and group.min["memory"] == 3 * GIB // 2
    page = admin_client.get("/quotas/team-a/").content.decode()
    assert "600 GiB" in page and "Max 0 GiB" not in page


@pytest.mark.parametrize(
    ("cell", "typed", "resource", "saved"),
    [
        ("deserved__cpu", "2", "cpu", 2000),  # cores
        ("deserved__cpu", "500m", "cpu", 500),  # millicores, written out
        ("deserved__cpu", "2 cores", "cpu", 2000),
        ("deserved__memory", "600Mi", "memory", 600 * 2**20),  # a unit written out is read as written
        ("deserved__memory", "600 GiB", "memory", 600 * GIB),
        ("deserved__memory", "512MiB", "memory", 512 * 2**20),
        ("deserved__memory", "2G", "memory", 2 * 10**9),
        ("deserved__memory", "1001 bytes", "memory", 1001),
        (f"deserved__{GPU}", "4", GPU, 4000),  # whole GPUs
    ],
)
def test_cells_read_in_their_rows_unit_or_the_unit_written(
    admin_client: Any, org: None, cell: str, typed: str, resource: str, saved: int
) -> None:
    data = rendered(admin_client, "/edit/queues/nlp/")
    response = admin_client.post("/edit/queues/nlp/", {**data, cell: typed})
    assert response.status_code == 302, errors_of(response)
    assert Queue.objects.get(name="nlp").deserved[resource] == saved


@pytest.mark.parametrize(
    ("cell", "typed", "expected"),
    [
        (f"deserved__{GPU}", "0.5", f"queue nlp, deserved {GPU}: '0.5' is not a whole number of GPUs"),
        (f"deserved__{GPU}", "500m", f"queue nlp, deserved {GPU}: '500m' is not a whole number of GPUs"),
        ("deserved__memory", "lots", "queue nlp, deserved memory: 'lots' is not an amount: write a number of GiB"),
        ("guarantee__cpu", "12x", "queue nlp, guarantee cpu: '12x' is not an amount: write a number of cores"),
        # the bound in the row's unit (it was "at most 4611686018427387904 base units")
        ("deserved__memory", "1e40", "queue nlp, deserved memory: '1e40' is too large (at most 4 EiB)"),
        ("deserved__cpu", "1e40", "queue nlp, deserved cpu: '1e40' is too large (at most about 4.6e15 cores)"),
    ],
)
def test_a_fractional_gpu_or_an_unreadable_cell_is_refused_naming_the_cell(
    admin_client: Any, org: None, cell: str, typed: str, expected: str
) -> None:
    data = rendered(admin_client, "/edit/queues/nlp/")
    response = admin_client.post("/edit/queues/nlp/", {**data, cell: typed, "weight": "7"})
    assert response.status_code == 400
    shown = errors_of(response)[cell]
    assert shown[0].startswith(expected), shown
    assert expected.replace("'", "&#x27;") in response.content.decode()
    assert "Not saved: 1 problem." in response.content.decode()
    nlp = Queue.objects.get(name="nlp")
    assert (nlp.version, nlp.weight) == (1, 1)  # nothing written


def test_a_new_nodes_cell_names_the_new_node(admin_client: Any, org: None) -> None:
    data = rendered(admin_client, "/edit/new/queue/")
    response = admin_client.post(
        "/edit/new/queue/", {**data, "name": "speech", "parent": "research", "deserved__memory": "1..5"}
    )
    assert response.status_code == 400
    assert errors_of(response)["deserved__memory"][0].startswith(
        "queue speech, deserved memory: '1..5' is not an amount"
    )
    assert not Queue.objects.filter(name="speech").exists()


def test_saving_a_form_unchanged_keeps_every_amount(admin_client: Any, org: None) -> None:
    """What a cell shows reads back exactly: odd byte counts and a fractional GPU set through the API stay as they
    were (a cell left as read may hold a fraction of a GPU; a changed one may not)."""
    odd = {"cpu": 2500, "memory": 2400128783, GPU: 1500}
    Queue.objects.filter(name="nlp").update(deserved=odd)
    data = rendered(admin_client, "/edit/queues/nlp/")
    assert (data["deserved__cpu"], data["deserved__memory"], data[f"deserved__{GPU}"]) == (
        "2.5",
        "2400128783 bytes",
        "1.5",
    )
    response = admin_client.post("/edit/queues/nlp/", {**data, "weight": "3"})
    assert response.status_code == 302, errors_of(response)
    nlp = Queue.objects.get(name="nlp")
    assert dict(nlp.deserved) == odd and nlp.weight == 3


def test_the_matrix_names_each_rows_unit(admin_client: Any, org: None) -> None:
    form = admin_client.get("/edit/queues/nlp/").context["form"]
    units = {row["resource"]: row["unit"] for row in form.matrix() if not row["is_new"]}
    assert (units["cpu"], units["memory"], units[GPU]) == ("cores", "GiB", "GPUs")
    assert form["deserved__memory"].label == "Deserved of memory (GiB)"
