"""``fairway queue`` and ``fairway quota-group`` set and clear borrowing and lending limits, show them (``unlimited``
when none) and report the rules' messages naming the field."""

from __future__ import annotations

import json

from quotas.models import Queue, QuotaGroup
from tests.cli.conftest import Run


def test_queue_limits_through_the_cli(cli: Run) -> None:
    code, out, err = cli(
        "queue",
        "create",
        "-n",
        "team",
        "--deserved",
        "cpu=12",
        "--borrowing-limit",
        "cpu=2",
        "--lending-limit",
        "cpu=1",
    )
    assert code == 0, err
    spec = Queue.objects.get(name="team").to_spec()
    assert (spec.borrowing_limit.to_dict(), spec.lending_limit.to_dict()) == ({"cpu": 2000}, {"cpu": 1000})
    code, out, _ = cli("queue", "view", "team")
    assert "Borrowing limit: cpu=2" in out and "Lending limit:   cpu=1" in out
    code, out, err = cli("queue", "operate", "-n", "team", "-a", "update", "--lending-limit", "")
    assert code == 0, err
    assert Queue.objects.get(name="team").lending_limit is None
    code, out, _ = cli("queue", "view", "team")
    assert "Lending limit:   unlimited" in out
    code, out, err = cli("queue", "operate", "-n", "team", "-a", "update", "--lending-limit", "cpu=13")
    assert code != 0
    assert "lending_limit.cpu" in err and "lending limit cpu 13 must be <= deserved cpu 12" in err


def test_quota_group_limits_through_the_cli(cli: Run) -> None:
    code, _, err = cli(
        "quota-group", "create", "-n", "g", "--min", "cpu=4", "--max", "cpu=16", "--lending-limit", "cpu=0"
    )
    assert code == 0, err
    code, out, _ = cli("quota-group", "get", "g", "-o", "json")
    assert json.loads(out)["lending_limit"] == {"cpu": "0"} and json.loads(out)["borrowing_limit"] is None
    assert cli("quota-group", "update", "g", "--borrowing-limit", "cpu=2")[0] == 0
    assert QuotaGroup.objects.get(name="g").borrowing_limit.to_dict() == {"cpu": 2000}
    code, out, _ = cli("quota-group", "view", "g")
    assert "Borrowing limit:" in out and "cpu=2" in out
