"""Numbers people read side by side agree, and counts read in the right number (issue 30, item 1): the what-if's
"229 → 243 cores ▲ +14.4", "Discarded 1 staged change(s)", the explanation's shared weight in bytes, the editor's
"4 problems" over five messages (tests/frontend/test_all_errors_at_once.py) and "1 round(s)"."""

from __future__ import annotations

from typing import Any

import pytest

from engine.fairshare.elastic import _explain_text
from engine.resources import MAX_AMOUNT
from frontend.presenters import units, whatif
from tests.frontend.test_editor_units import org, rendered  # noqa: F401  # the editor's fixture and form reader


def rows(before: dict[str, int], after: dict[str, int]) -> list[dict[str, Any]]:
    values = lambda rl: {"queues": {"nlp": {"deserved": rl}}}  # noqa: E731
    return whatif.diff_rows(values(before), values(after), {"queues": {"nlp": {"deserved": {}}}})


def test_before_after_and_change_are_rounded_alike() -> None:
    (row,) = rows({"cpu": 228_600}, {"cpu": 243_000})
    assert (row["before"], row["after"], row["delta"]) == ("228.6 cores", "243 cores", "+14.4 cores")
    (row,) = rows({"cpu": 228_600}, {"cpu": 228_850})
    assert (row["before"], row["after"], row["delta"]) == ("228.6 cores", "228.85 cores", "+0.25 cores")


def test_a_change_from_unlimited_has_no_amount_of_change() -> None:
    (row,) = rows({"cpu": MAX_AMOUNT}, {"cpu": 64_000})
    assert (row["before"], row["after"], row["delta"]) == ("unlimited", "64 cores", "")


def test_human_reads_one_in_the_singular_from_the_engines_nouns() -> None:
    assert units.human(1000, "cpu") == "1 core" and units.human(1000, "nvidia.com/gpu") == "1 GPU"
    assert units.human(2000, "nvidia.com/gpu") == "2 GPUs" and units.human(2**30, "memory") == "1 GiB"
    assert units.unit_of("example.com/fpga") == (1000.0, "fpga")


def test_discarding_one_staged_change_says_one_change(admin_client: Any, org: None) -> None:  # noqa: F811
    data = rendered(admin_client, "/edit/queues/nlp/")
    staged = admin_client.post("/edit/queues/nlp/", {**data, "weight": "3", "action": "stage"})
    assert staged.status_code == 302
    page = admin_client.post("/whatif/discard/", follow=True).content.decode()
    assert "Discarded 1 staged change." in page and "(s)" not in page


@pytest.mark.parametrize(("rounds", "said"), [(1, "in 1 round of sharing"), (2, "in 2 rounds of sharing")])
def test_an_explanation_counts_its_rounds_in_words(rounds: int, said: str) -> None:
    e = {
        "floor": 0,
        "limited_request": 8000,
        "min_scaled": False,
        "state": "hungry",
        "rounds": [{"share": 1000}] * rounds,
        "split_unit": 1,
        "bound_by": "request",
        "runtime": 8000,
    }
    assert said in _explain_text("cpu", e, exempt=False)
