"""Every read command of ``fairway``, as an admin and as a team lead, on the (small) demo after two sessions, prints
amounts as people read them: no sentinel, no bare base-unit number, no "base units", no "(s)", no milli-GPU, no
approximation written as a quantity (issue 30, item 1; ``tests/support/amount_checks.py``). Tables only: ``-o
json|yaml`` print the API's machine form on purpose."""

from __future__ import annotations

from io import StringIO
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management import call_command

from quotas.models import Namespace, Queue, QuotaGroup
from scheduling import sessions
from scheduling.models import Cluster, Node, PodGroup
from scheduling.serializers import default_cluster
from security.tokens import create_token
from tests.cli.conftest import Run
from tests.support.amount_checks import problems

SOME = 6  # objects of each kind read one by one


def read_commands() -> list[tuple[str, ...]]:
    """Every command that only reads, with the demo's objects as arguments."""
    commands: list[tuple[str, ...]] = [
        ("queue", "list"),
        ("queue", "tree"),
        ("quota-group", "list"),
        ("quota-group", "tree"),
        ("job", "list"),
        ("eviction", "list"),
        ("cluster", "list"),
        ("cluster", "view", "default"),
        ("node", "list"),
        ("audit",),
    ]
    commands += [("queue", "view", q) for q in Queue.objects.order_by("name").values_list("name", flat=True)[:SOME]]
    commands += [
        ("quota-group", "view", g) for g in QuotaGroup.objects.order_by("name").values_list("name", flat=True)[:SOME]
    ]
    commands += [
        ("namespace", "weight", n) for n in Namespace.objects.order_by("name").values_list("name", flat=True)[:3]
    ]
    commands += [("node", "view", n) for n in Node.objects.order_by("-name").values_list("name", flat=True)[:3]]
    jobs = PodGroup.objects.order_by("phase", "name").values_list("namespace__name", "name")
    for ns, name in list(jobs)[: SOME * 2]:
        commands += [("job", "view", f"{ns}/{name}"), ("job", "why", f"{ns}/{name}")]
    return commands


def test_no_command_prints_a_base_unit_or_a_sentinel(cli: Run) -> None:
    default_cluster()  # a transactional test's flush took the migrations' default cluster with it
    call_command("load_demo", stdout=StringIO())
    cluster = Cluster.objects.get(name="default")
    sessions.run_scheduling_session(cluster)
    sessions.run_scheduling_session(cluster)
    lead = get_user_model().objects.filter(username__endswith="-lead").order_by("username").first()
    assert lead is not None
    lead_token = create_token(lead, "crawl")[1]
    found: list[str] = []
    ran = 0
    for who, token in (("admin", None), (lead.username, lead_token)):
        for command in read_commands():
            code, out, err = cli(*command) if token is None else cli(*command, token=token)
            if who == "admin":
                assert code == 0, (command, err)
            ran += code == 0
            found += problems(out + err, f"{who}: fairway {' '.join(command)}")
    assert ran > 40
    assert found == []


def test_the_checks_see_the_cli_probe(capsys: Any) -> None:
    """The issue's CLI probe: an approximate memory amount printed as ``≈1400.195Gi``; it now reads
    ``≈1400.195 GiB`` (``engine.resources.format_amount``), which the check passes."""
    from controlplane.cli.output import fmt_resources

    shown = fmt_resources({"memory": str(1400 * 2**30 + 209715200 + 12345)})
    assert shown.startswith("memory=≈1400.195 GiB"), shown
    assert problems(shown, "cli") == []
    assert problems("memory=≈1400.195Gi", "cli") != []
