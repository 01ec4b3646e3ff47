"""``fairway audit``: the fairness audit of the API (``GET /api/v1/audit/``) as a terminal shows it, every amount in
people's units; admins only, as the API."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import Group
from django.utils import timezone

from scheduling.models import Pod, PodGroup, QuotaSample
from tests.api.test_audit import starving
from tests.cli.conftest import Run
from tests.frontend import builders as b


def _rows(out: str, title: str) -> list[list[str]]:
    """The rows of one section's table (after its header line), split on runs of two spaces."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    rows = []
    for line in lines[start + 2 :]:
        if not line.strip():
            break
        rows.append([c.strip() for c in line.split("  ") if c.strip()])
    return rows


def test_the_audit_names_the_starved_node_and_who_borrows_its_share(cli: Run) -> None:
    starving()
    now = timezone.now()
    PodGroup.objects.update(created=now - timedelta(seconds=120))  # submitted two minutes ago, running for one
    Pod.objects.filter(status="Running").update(started=now - timedelta(seconds=60))
    QuotaSample.objects.create(
        cluster=b.cluster(),
        time=timezone.now() - timedelta(hours=2),
        kind="quota",
        name="a",
        allocated={"cpu": 10_000},
        deserved={"cpu": 50_000},
    )
    code, out, err = cli("audit")
    assert (code, err) == (0, "")
    assert out.startswith("Fairness audit of the default cluster, over the last 7 d\n")
    starved = {(r[0], r[1]): r for r in _rows(out, "Starved while siblings borrow")}
    assert starved[("quota group", "a")] == [
        "quota group", "a", "cpu", "40 cores", "10 cores", "50 cores", "40 cores", "b (40 cores)"
    ]  # fmt: skip
    usage = {(r[0], r[1]): r for r in _rows(out, "Use against entitlement over the window")}
    assert usage[("quota group", "a")][3:5] == ["10 cores", "50 cores"]
    waits = {(r[0], r[1]): r for r in _rows(out, "Waits to start of the jobs submitted in the window")}
    # a-ns/small waited a minute; a-ns/waits has waited two so far
    assert waits[("queue", "qa")][2:] == ["1", "1 min", "1 min", "2 min", "1", "0", "0", "0"]
    assert waits[("quota group", "b")][2] == "1"
    # per submitter: no user is known, so each job counts for its namespace
    submitters = {r[0]: r for r in _rows(out, "Per submitter")}
    assert submitters["namespace a-ns"][1:6] == ["0.0", "1", "1 min", "1 min", "1"]
    assert "m " not in out and "(s)" not in out  # no milli-units, no "(s)"


def test_the_audit_window_and_cluster_are_passed_on(cli: Run) -> None:
    starving()
    code, out, _ = cli("audit", "--cluster", "default", "--days", "2")
    assert code == 0 and out.startswith("Fairness audit of cluster default, over the last 2 d\n")
    assert json.loads(cli("audit", "--days", "2", "-o", "json")[1])["window_days"] == 2
    code, out, err = cli("audit", "--cluster", "nowhere")
    assert (code, out) == (1, "")
    assert err == "error: cluster: cluster 'nowhere' does not exist\n"
    code, _, err = cli("audit", "--days", "40")
    assert code == 1 and err.startswith("error: days: ")
    code, out, err = cli("audit", "--team", "nowhere")
    assert (code, out, err) == (1, "", "error: team: no team is named 'nowhere'\n")


def test_a_lead_narrows_the_audit_to_one_team(cli: Run, make_user: Any) -> None:
    from security.tokens import create_token

    starving()
    b.team("team-a", queues=["qa"], groups=["a"])
    lead = make_user("alice")
    lead.groups.add(Group.objects.get(name="team-a"))
    code, out, err = cli("audit", "--team", "team-a", token=create_token(lead, "t")[1])
    assert (code, err) == (0, "")
    assert out.startswith("Fairness audit of the default cluster, the subtrees of team team-a, over the last 7 d\n")
    waits = _rows(out, "Waits to start of the jobs submitted in the window")
    assert {(r[0], r[1]) for r in waits} == {("queue", "qa"), ("quota group", "a")}
    code, out, err = cli("audit", "--team", "team-b", token=create_token(lead, "t2")[1])
    assert code == 1 and "you may read the audit of your own teams" in err


def test_the_audit_is_for_admins(cli: Run, make_user: Any) -> None:
    from security.tokens import create_token

    token = create_token(make_user("member"), "t")[1]
    code, out, err = cli("audit", token=token)
    assert (code, out) == (1, "")
    # (a user in no team; a team member reads its own subtrees' audit: tests/api/test_audit_scope.py)
    assert err == (
        "error: only admins and team members may read the fairness audit: a team member reads the audit of its own "
        "subtrees\n"
    )
