"""The `fairway queue` commands against a live server, with a token, as automation uses them."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from controlplane.cli import main
from quotas.models import Queue


@pytest.fixture
def cli(live_server: Any, transactional_db: Any, make_user: Any) -> Any:
    from rest_framework.authtoken.models import Token

    from quotas.services import ensure_builtins

    ensure_builtins()
    token = Token.objects.create(user=make_user("ops", staff=True)).key

    def run(capsys: Any, *argv: str) -> tuple[int, str, str]:
        code = main(["--server", live_server.url, "--token", token, *argv])
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


def test_queue_lifecycle_through_the_cli(cli: Any, capsys: Any) -> None:
    assert (
        cli(capsys, "queue", "create", "--name", "myqueue", "--weight", "10", "--deserved", "cpu=4,memory=8Gi")[0] == 0
    )
    code, out, err = cli(capsys, "queue", "create", "-n", "child", "-p", "myqueue", "--deserved", "cpu=2,memory=4Gi")
    assert code == 0 and "child created" in out, err
    code, out, _ = cli(capsys, "queue", "list")
    lines = out.splitlines()
    assert lines[0].split() == [
        "Name",
        "Weight",
        "State",
        "Parent",
        "Inqueue",
        "Pending",
        "Running",
        "Unknown",
        "Completed",
    ]
    assert any(line.split()[:4] == ["myqueue", "10", "Open", "root"] for line in lines)
    code, out, _ = cli(capsys, "queue", "view", "myqueue")
    assert code == 0 and "myqueue" in out and "Children:   child" in out
    code, out, _ = cli(capsys, "queue", "get", "myqueue", "-o", "json")
    assert json.loads(out)["weight"] == 10
    code, out, _ = cli(capsys, "queue", "get", "-n", "child", "-o", "yaml")
    assert yaml.safe_load(out)["deserved"] == {"cpu": "2", "memory": "4Gi"}
    code, out, _ = cli(capsys, "queue", "operate", "-n", "myqueue", "-a", "close")
    assert code == 0 and "queue child: Closed" in out and "queue myqueue: Closed" in out
    assert Queue.objects.get(name="child").closed_by_parent
    assert cli(capsys, "queue", "operate", "-n", "myqueue", "-a", "open")[0] == 0
    assert Queue.objects.get(name="child").state == "Open"
    assert cli(capsys, "queue", "operate", "-n", "myqueue", "-a", "update", "-w", "5")[0] == 0
    assert Queue.objects.get(name="myqueue").weight == 5
    code, out, _ = cli(capsys, "queue", "tree")
    assert code == 0
    assert out.splitlines()[0].startswith("root")
    assert any("└── child" in line or "├── child" in line for line in out.splitlines())
    code, _, err = cli(capsys, "queue", "delete", "myqueue")
    assert code == 1 and "child" in err
    assert cli(capsys, "queue", "delete", "myqueue", "--cascade")[0] == 0
    assert not Queue.objects.filter(name__in=["myqueue", "child"]).exists()


def test_cli_prints_cores_gib_whole_gpus_and_unlimited(cli: Any, capsys: Any) -> None:
    from controlplane.cli import _fmt_resources

    rl = {"cpu": "2500m", "memory": "1536Mi", "nvidia.com/gpu": "3", "pods": None}
    assert _fmt_resources(rl) == "cpu=2.5,memory=1.5Gi,nvidia.com/gpu=3,pods=unlimited"
    assert _fmt_resources({"nvidia.com/gpu": "3200m"}) == "nvidia.com/gpu=3.2"  # only when truly fractional
    code, _, err = cli(capsys, "queue", "create", "-n", "units", "--deserved", "cpu=2500m,memory=1536Mi")
    assert code == 0, err
    code, out, _ = cli(capsys, "queue", "view", "units")
    assert "Deserved:   cpu=2.5,memory=1.5Gi" in out, out
    code, out, _ = cli(capsys, "queue", "get", "units", "-o", "json")
    assert json.loads(out)["deserved"] == {"cpu": "2500m", "memory": "1536Mi"}  # JSON keeps canonical quantities


def test_cli_errors_name_the_field(cli: Any, capsys: Any) -> None:
    code, _, err = cli(capsys, "queue", "create", "-n", "bad", "--capability", "cpu=-1")
    assert code == 1
    assert "error: capability.cpu:" in err and "greater than or equal to 0" in err
    code, _, err = cli(capsys, "queue", "create", "-n", "Bad_Name")
    assert code == 1 and err.startswith("error: name:")
    code, _, err = cli(capsys, "queue", "view", "ghost")
    assert code == 1 and "Not found" in err
    code, _, err = cli(capsys, "queue", "operate", "-n", "root", "-a", "close")
    assert code == 1 and "root" in err


def test_cli_without_token_is_refused(live_server: Any, transactional_db: Any, capsys: Any) -> None:
    assert main(["--server", live_server.url, "queue", "list"]) == 1
    assert "credentials were not provided" in capsys.readouterr().err


def test_cli_reports_an_unreachable_server(capsys: Any) -> None:
    assert main(["--server", "http://127.0.0.1:9", "queue", "list"]) == 1
    assert "cannot reach" in capsys.readouterr().err
