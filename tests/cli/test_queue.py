"""``fairway queue`` against a live server, with a token, as automation uses it; the global flags and the errors."""

from __future__ import annotations

import json
from typing import Any

import yaml

from controlplane.cli import main
from quotas.models import Queue
from tests.cli.conftest import Run


def test_queue_lifecycle_through_the_cli(cli: Run) -> None:
    assert cli("queue", "create", "--name", "myqueue", "--weight", "10", "--deserved", "cpu=4,memory=8Gi")[0] == 0
    code, out, err = cli("queue", "create", "-n", "child", "-p", "myqueue", "--deserved", "cpu=2,memory=4Gi")
    assert code == 0 and "child created" in out, err
    code, out, _ = cli("queue", "list")
    lines = out.splitlines()
    columns = ["Name", "Weight", "State", "Parent", "Inqueue", "Pending", "Running", "Unknown", "Completed"]
    assert lines[0].split() == columns
    assert any(line.split()[:4] == ["myqueue", "10", "Open", "root"] for line in lines)
    code, out, _ = cli("queue", "view", "myqueue")
    assert code == 0 and "myqueue" in out
    assert "Children:    child" in out and "Reclaimable: true" in out and "Deserved:    cpu=4,memory=8Gi" in out
    code, out, _ = cli("queue", "get", "myqueue", "-o", "json")
    assert json.loads(out)["weight"] == 10
    code, out, _ = cli("queue", "get", "-n", "child", "-o", "yaml")
    assert yaml.safe_load(out)["deserved"] == {"cpu": "2", "memory": "4Gi"}
    code, out, _ = cli("queue", "operate", "-n", "myqueue", "-a", "close")
    assert code == 0 and "queue child: Closed" in out and "queue myqueue: Closed" in out
    assert Queue.objects.get(name="child").closed_by_parent
    assert cli("queue", "operate", "-n", "myqueue", "-a", "open")[0] == 0
    assert Queue.objects.get(name="child").state == "Open"
    assert cli("queue", "operate", "-n", "myqueue", "-a", "update", "-w", "5")[0] == 0
    assert Queue.objects.get(name="myqueue").weight == 5
    code, out, _ = cli("queue", "tree")
    assert code == 0
    assert out.splitlines()[0].startswith("root")
    assert any("└── child" in line or "├── child" in line for line in out.splitlines())
    code, _, err = cli("queue", "delete", "myqueue")
    assert code == 1 and err.startswith('error: queue "myqueue": ') and "child" in err
    assert cli("queue", "delete", "myqueue", "--cascade")[0] == 0
    assert not Queue.objects.filter(name__in=["myqueue", "child"]).exists()


def test_cli_prints_cores_gib_whole_gpus_and_unlimited(cli: Run) -> None:
    from controlplane.cli.output import fmt_resources

    rl = {"cpu": "2500m", "memory": "1536Mi", "nvidia.com/gpu": "3", "pods": None}
    assert fmt_resources(rl) == "cpu=2.5,memory=1.5Gi,nvidia.com/gpu=3,pods=unlimited"
    assert fmt_resources({"nvidia.com/gpu": "3200m"}) == "nvidia.com/gpu=3.2"  # only when truly fractional
    code, _, err = cli("queue", "create", "-n", "units", "--deserved", "cpu=2500m,memory=1536Mi")
    assert code == 0, err
    code, out, _ = cli("queue", "view", "units")
    assert "Deserved:    cpu=2.5,memory=1.5Gi" in out, out
    code, out, _ = cli("queue", "get", "units", "-o", "json")
    assert json.loads(out)["deserved"] == {"cpu": "2500m", "memory": "1536Mi"}  # JSON keeps canonical quantities


def test_detail_views_align_their_values(cli: Run) -> None:
    assert cli("queue", "create", "-n", "aligned")[0] == 0
    out = cli("queue", "view", "aligned")[1]
    labelled = [line for line in out.splitlines() if ":" in line and not line.startswith("Created")]
    columns = {len(line) - len(line.split(":", 1)[1].lstrip()) for line in labelled}
    assert len(columns) == 1, out  # every value starts in the same column
    assert "Reclaimable: true" in out


def test_global_flags_go_before_or_after_the_command(cli: Run, live_server: Any) -> None:
    assert cli("queue", "create", "-n", "flags")[0] == 0
    for argv in (("-o", "json", "queue", "list"), ("queue", "-o", "json", "list"), ("queue", "list", "-o", "json")):
        code, out, err = cli(*argv)
        assert code == 0, (argv, err)
        assert "flags" in {q["name"] for q in json.loads(out)}, argv
    code, out, _ = cli("--output", "yaml", "queue", "view", "flags")
    assert yaml.safe_load(out)["name"] == "flags"
    # --server and --token after the command too (the fixture gives them first; here only after)
    from django.contrib.auth import get_user_model

    from security.tokens import create_token

    token = create_token(get_user_model().objects.get(username="ops"), "test")[1]
    assert main(["queue", "view", "flags", "--server", live_server.url, "--token", token, "-o", "json"]) == 0


def test_errors_name_the_object_and_the_field(cli: Run) -> None:
    code, _, err = cli("queue", "create", "-n", "bad", "--capability", "cpu=-1")
    assert code == 1
    assert err.startswith('error: queue "bad": capability.cpu:') and "greater than or equal to 0" in err
    code, _, err = cli("queue", "create", "-n", "Bad_Name")
    assert code == 1 and err.startswith('error: queue "Bad_Name": name:')
    code, _, err = cli("queue", "view", "ghost")
    assert (code, err) == (1, 'error: queue "ghost" not found\n')
    code, _, err = cli("queue", "delete", "ghost")
    assert (code, err) == (1, 'error: queue "ghost" not found\n')
    code, _, err = cli("queue", "operate", "-n", "root", "-a", "close")
    assert code == 1 and err.startswith('error: queue "root": ')


def test_usage_errors_exit_2(cli: Run) -> None:
    assert cli("queue", "frobnicate")[0] == 2
    assert cli("queue", "create")[0] == 2  # --name is required
    code, _, err = cli("queue", "create", "-n", "x", "--deserved", "cpu")
    assert code == 2 and "--deserved: expected name=quantity" in err
    code, _, err = cli("queue", "view")
    assert code == 2 and "a name is required" in err
    code, _, err = cli("queue", "operate", "-n", "x", "-a", "update")
    assert code == 2 and "nothing to change" in err
    assert cli("queue", "update", "x")[0] == 2
    assert cli("--help")[0] == 0


def test_cli_without_token_is_refused(cli: Run) -> None:
    code, _, err = cli("queue", "list", token=None)
    assert code == 1 and "credentials were not provided" in err and "FAIRWAY_TOKEN" in err


def test_cli_reports_an_unreachable_server(capsys: Any) -> None:
    assert main(["--server", "http://127.0.0.1:9", "queue", "list"]) == 1
    assert "cannot reach" in capsys.readouterr().err


def test_queue_update_changes_only_the_fields_given_and_prints_the_warnings(cli: Run) -> None:
    """``queue update NAME`` (and ``operate -a update``) take every field of ``create``; the rest stays. A write the
    rules accept with a warning (a deserved under the default proportion policy has no effect) prints it on stderr,
    and carries it in the document with ``-o json``."""
    from tests.frontend import builders as b

    b.node("n1", cpu="64", memory="256Gi")
    assert cli("queue", "create", "-n", "dept", "-w", "2", "--guarantee", "cpu=4", "--deserved", "cpu=8")[0] == 0
    assert cli("queue", "create", "-n", "team", "--capability", "cpu=8")[0] == 0
    code, out, err = cli("queue", "update", "team", "-p", "dept", "--priority", "3", "--reclaimable", "false")
    assert code == 0 and "queue team updated: parent, priority, reclaimable" in out, err
    team = Queue.objects.get(name="team")
    assert team.parent is not None and team.parent.name == "dept" and not team.reclaimable and team.priority == 3
    assert team.capability == {"cpu": 8000} and team.weight == 1
    code, out, err = cli(
        "queue", "operate", "-n", "team", "-a", "update", "-w", "3", "--guarantee", "cpu=2", "--deserved", "cpu=2"
    )
    assert code == 0 and "queue team updated: deserved, guarantee, weight 3" in out, err
    assert "warning: deserved: " in err and "proportion" in err
    assert Queue.objects.get(name="team").guarantee == {"cpu": 2000}
    code, out, _ = cli("queue", "update", "team", "--deserved", "cpu=5", "-o", "json")
    assert code == 0 and [w["code"] for w in json.loads(out)["warnings"]] == ["no_effect"]
    code, _, err = cli("queue", "update", "team", "-p", "nosuch")
    assert code != 0 and "nosuch" in err
