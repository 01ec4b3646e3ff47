"""``fairway request`` against a live server: a lead files a request from a file and sees its what-if, the
department lead lists what waits for it and approves, the tree changes; reject needs a comment; refusals exit 1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core import mail

from tests.changerequests.conftest import NLP_PLUS_4, org
from tests.cli.conftest import Run


@pytest.fixture
def tokens(cli: Run) -> dict[str, str]:
    from security.tokens import create_token

    people = org()
    return {name: create_token(user, "test")[1] for name, user in people.items()}


def test_file_list_approve(cli: Run, tokens: dict[str, str], tmp_path: Path) -> None:
    from quotas.models import Queue

    path = tmp_path / "more-gpus.yaml"
    path.write_text(yaml.safe_dump(NLP_PLUS_4))
    code, out, err = cli("request", "create", "-f", str(path), "--reason", "interns", token=tokens["nlp-lead"])
    assert (code, err) == (0, ""), err
    pk = out.split("#", 1)[1].split(":", 1)[0]
    assert f"#{pk}: queue nlp: guarantee; quota group nlp: min" in out and ["Status:", "open"] in [
        line.split() for line in out.splitlines()
    ]
    lines = [line.split() for line in out.splitlines()]
    assert ["queue", "nlp", "guarantee", "nvidia.com/gpu", "2", "nvidia.com/gpu", "6"] in lines
    assert any(line[:3] == ["queue", "nlp", "guarantee"] and len(line) == 3 + 4 for line in lines)
    assert len(mail.outbox) == 1

    code, out, _ = cli("request", "list", "--to-review", token=tokens["research-lead"])
    assert code == 0 and f"#{pk}" in out and out.strip().endswith("1 request.")
    code, out, _ = cli("request", "list", "--to-review", token=tokens["vision-lead"])
    assert (code, out.strip()) == (0, "No change requests.")

    code, _, err = cli("request", "approve", pk, token=tokens["nlp-lead"])
    assert code == 1 and f"change request #{pk}:" in err and "never the requester" in err
    code, out, err = cli("request", "approve", pk, "--comment", "ok", token=tokens["research-lead"])
    assert (code, err) == (0, ""), err
    lines = [line.split() for line in out.splitlines()]
    assert ["Status:", "applied"] in lines and ["Decided", "by:", "research-lead"] in lines
    assert int(Queue.objects.get(name="nlp").guarantee["nvidia.com/gpu"]) == 6000


def test_reject_needs_a_comment_and_json_output(cli: Run, tokens: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('[{"op": "update", "kind": "queue", "name": "nlp", "spec": {"weight": 3}}]')
    code, out, _ = cli("-o", "json", "request", "create", "-f", str(path), token=tokens["nlp-lead"])
    assert code == 0 and json.loads(out)["status"] == "open"
    pk = str(json.loads(out)["id"])
    code, _, err = cli("request", "reject", pk, token=tokens["research-lead"])
    assert code == 2 and "--comment" in err
    code, out, err = cli("request", "reject", pk, "--comment", "not now", token=tokens["research-lead"])
    assert code == 0 and "rejected" in out and "not now" in out
    code, out, _ = cli("request", "list", "--status", "rejected", token=tokens["nlp-lead"])
    assert f"#{pk}" in out and "rejected" in out


def test_a_change_outside_the_subtree_is_refused(cli: Run, tokens: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump([{"op": "update", "kind": "queue", "name": "vision", "spec": {"weight": 3}}]))
    code, _, err = cli("request", "create", "-f", str(path), token=tokens["nlp-lead"])
    assert code == 1 and "changes.0.name: queue vision is not in your team's subtree" in err


def test_show_of_an_unknown_request(cli: Run, tokens: dict[str, Any]) -> None:
    code, _, err = cli("request", "show", "99", token=tokens["nlp-lead"])
    assert (code, err.strip()) == (1, "error: change request #99 not found")


def test_a_loan_from_the_command_line(cli: Run, tokens: dict[str, str]) -> None:
    from quotas.models import Queue

    args = ("request", "loan", "--from", "vision", "--to", "nlp", "--amount", "nvidia.com/gpu=2", "--for", "3d")
    code, out, err = cli(*args, token=tokens["nlp-lead"])
    assert (code, err) == (0, ""), err
    assert "loan: queue nlp borrows 2 GPUs of guarantee from vision for 3 days" in out
    pk = out.split("#", 1)[1].split(":", 1)[0]
    code, out, err = cli("request", "approve", pk, token=tokens["vision-lead"])
    assert (code, err) == (0, ""), err
    assert "Lent until" in out and int(Queue.objects.get(name="nlp").guarantee["nvidia.com/gpu"]) == 4000
    code, _, err = cli("request", "loan", "--from", "vision", "--to", "nlp", "--amount", "gpus", "--for", "1d",
                       token=tokens["nlp-lead"])  # fmt: skip
    assert code == 2 and "RESOURCE=QUANTITY" in err
    code, _, err = cli(*args[:-1], "soon", token=tokens["nlp-lead"])
    assert code == 1 and "loan.duration: duration must be a length such as 3d" in err


def test_show_of_an_applied_request_says_what_it_did(cli: Run, tokens: dict[str, str]) -> None:
    """Applied three days ago: nlp's job submitted before waited 20 min, the one since 1 min."""
    from datetime import timedelta

    from tests.changerequests.test_effect import _applied, _job

    req = _applied(3)
    _job("slow", "nlp", "nlp", timedelta(days=4), 1200)
    _job("fast", "nlp", "nlp", timedelta(days=1), 60)
    code, out, err = cli("request", "show", str(req.pk), token=tokens["nlp-lead"])
    assert (code, err) == (0, ""), err
    assert "Since it was applied: the waits to start of the jobs submitted in the 3 d before and the 3 d since" in out
    rows = [line.split() for line in out.split("Since it was applied", 1)[1].splitlines()[2:]]
    assert ["queue", "nlp", "1", "20", "min", "20", "min", "1", "1", "min", "1", "min", "0"] in rows
    code, out, _ = cli("request", "show", str(req.pk), "-o", "json", token=tokens["nlp-lead"])
    assert code == 0 and json.loads(out)["status"] == "applied"  # the request as the API has it
