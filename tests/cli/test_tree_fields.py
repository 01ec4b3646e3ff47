"""``fairway queue`` and ``fairway quota-group`` offer every field of the engine's table of their tree kind
(``engine.treefields``): a ``--flag`` per editable field that sets it, and a line per field in ``view``; the
description among them (issue 27 item 2)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine import treefields
from quotas.models import Queue, QuotaGroup
from tests.cli.conftest import Run
from tests.unit.test_treefields import PARENTS, SAMPLES, sample_spec

COMMANDS = {"queue": "queue", "quota_group": "quota-group"}
MODELS: dict[str, Any] = {"queue": Queue, "quota_group": QuotaGroup}


def _text(value: Any) -> str:
    """A sample's API value as typed on the command line."""
    if isinstance(value, dict) and any(isinstance(v, dict) for v in value.values()):  # Kueue's levers: JSON
        return json.dumps(value)
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, list):  # user limits: the API's JSON list (``--user-limits`` takes it, or its own lines)
        return json.dumps(value)
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


@pytest.mark.parametrize("kind", treefields.TABLES)
def test_every_editable_field_has_a_flag_and_a_line_in_view(cli: Run, kind: str) -> None:
    if kind == "queue":
        assert cli("queue", "create", "-n", "dept", "--deserved", "cpu=16", "--guarantee", "cpu=8")[0] == 0
    flags = [x for name, (api, _) in SAMPLES[kind].items() for x in ("--" + name.replace("_", "-"), _text(api))]
    code, _, err = cli(COMMANDS[kind], "create", "-n", "team", "-p", PARENTS[kind], *flags)
    assert code == 0, err
    spec = MODELS[kind].objects.get(name="team").to_spec()
    assert {name: getattr(spec, name) for name in SAMPLES[kind]} == sample_spec(kind)
    code, out, _ = cli(COMMANDS[kind], "view", "team")
    assert code == 0
    table = treefields.TABLES[kind]  # type: ignore[index]
    shown = {line.split(":", 1)[0] for line in out.splitlines() if ":" in line}
    assert {f.label for f in table if f.name not in ("weight", "state")} <= shown
    assert f"Description: {SAMPLES[kind]['description'][0]}".split() == [
        w for line in out.splitlines() if line.startswith("Description:") for w in line.split()
    ]


def test_the_description_is_changed_and_cleared_from_the_cli(cli: Run) -> None:
    assert cli("quota-group", "create", "-n", "pool", "--description", "Shared GPUs")[0] == 0
    assert QuotaGroup.objects.get(name="pool").description == "Shared GPUs"
    assert cli("quota-group", "update", "pool", "--description", "")[0] == 0
    assert QuotaGroup.objects.get(name="pool").description == ""
    assert "Description:      -" in cli("quota-group", "view", "pool")[1]
    code, _, err = cli("queue", "create", "-n", "long", "--description", "x" * 501)
    assert code == 1 and "queue long: description is 501 characters long; it may be at most 500" in err
    assert not Queue.objects.filter(name="long").exists()
