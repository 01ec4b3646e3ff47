"""Issue 13's "done when" for fairness over time, as a user runs it: `fairway simulate` with the recorded past usage
of each team (the `fairway.io/past-usage-ratio` annotation) and a policy that turns `fairnessOverTime` on gives the
team that was idle the larger share of a contested surplus, in both trees, and says why; the same input without the
switch gives the peers' point-in-time numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from controlplane.cli import main
from tests.acceptance import manifests as m

IDLE, BUSY = "0.2", "1.8"  # the idle team used a fifth of its share over the window, the busy one almost twice


def _policy(fair: bool) -> str:
    arguments = {"fairnessOverTime": fair, "usageHalfLife": "4h", "usageWindow": "7d"}
    return yaml.safe_dump(
        {
            "actions": "enqueue, allocate, backfill",
            "tiers": [
                {"plugins": [{"name": "priority"}, {"name": "gang"}]},
                {
                    "plugins": [
                        {"name": "proportion", "arguments": arguments},
                        {"name": "elasticquota", "arguments": arguments},
                        {"name": "predicates"},
                    ]
                },
            ],
        }
    )


def _annotated(doc: dict[str, Any], ratio: str) -> dict[str, Any]:
    doc["metadata"].setdefault("annotations", {})["fairway.io/past-usage-ratio"] = ratio
    return doc


def _cluster() -> str:
    """12 cpu; queues idle and busy (weight 1, guarantee 2 each) each with a 12-pod job; quota groups of the same
    names (min 2, max 12) holding those pods."""
    docs: list[Any] = [m.node("n1", cpu="12", memory="96Gi")]
    for team, ratio in (("idle", IDLE), ("busy", BUSY)):
        docs.append(_annotated(m.queue(team, guarantee={"cpu": "2"}, deserved={"cpu": "2"}), ratio))
        docs.append(_annotated(m.elastic_quota(team, min={"cpu": "2"}, max={"cpu": "12"}), ratio))
        docs += m.namespace(team)
        docs.append(m.podgroup(team, "job", team, min_member=1))
        docs += [m.pod(team, f"job-{i}", group="job", quota=team, cpu="1", memory="1Gi") for i in range(12)]
    return m.dump(*docs)


def _simulate(tmp_path: Path, capsys: Any, fair: bool) -> dict[str, Any]:
    (tmp_path / "cluster.yaml").write_text(_cluster())
    (tmp_path / "policy.conf").write_text(_policy(fair))
    code = main(
        ["simulate", "-f", str(tmp_path / "cluster.yaml"), "--policy", str(tmp_path / "policy.conf"), "-o", "json"]
    )
    out = capsys.readouterr()
    assert code == 0, out.err
    document: dict[str, Any] = json.loads(out.out)
    return document


def test_the_idle_team_gets_the_larger_share_of_the_surplus_and_the_explain_says_why(
    tmp_path: Path, capsys: Any
) -> None:
    doc = _simulate(tmp_path, capsys, fair=True)
    idle, busy = doc["queues"]["idle"], doc["queues"]["busy"]
    # effective weights 1000 / 0.2 = 5000 and 1000 / 1.8 = 556 share the 12 cpu above nothing but the guarantees of 2
    assert (idle["deserved"]["cpu"], busy["deserved"]["cpu"]) == ("10", "2")
    assert busy["deserved"]["cpu"] == busy["guarantee"]["cpu"]  # the guarantee is never touched
    assert idle["pastUsage"] == {
        "ratio": 0.2,
        "surplusShare": 0.899928,  # 5000 / (5000 + 556)
        "text": "weight 1, past usage 0.2\u00d7 its share over 7 days \u2192 surplus share 0.9",
    }
    assert busy["pastUsage"]["text"] == "weight 1, past usage 1.8\u00d7 its share over 7 days \u2192 surplus share 0.1"
    # the quota tree likewise: runtime shared by the shared weights divided by the ratios, the mins kept
    # (max 12 each: 12 x 0.2/0.2 against 12 x 0.2/1.8 share the 8 cpu above the mins of 2: 7.2 and 0.8)
    runtime = {g: doc["quotas"][g]["runtime"]["cpu"] for g in ("idle", "busy")}
    assert runtime == {"idle": "9200m", "busy": "2800m"}
    assert doc["quotas"]["idle"]["pastUsage"]["ratio"] == 0.2
    # what was placed follows: the idle team's pods run first
    placed = {team: sum(1 for pod in doc["bindings"] if pod.startswith(f"{team}/")) for team in ("idle", "busy")}
    assert placed["idle"] > placed["busy"]


def test_without_the_switch_the_numbers_are_the_point_in_time_ones(tmp_path: Path, capsys: Any) -> None:
    doc = _simulate(tmp_path, capsys, fair=False)
    assert doc["queues"]["idle"]["deserved"]["cpu"] == doc["queues"]["busy"]["deserved"]["cpu"] == "6"
    assert doc["quotas"]["idle"]["runtime"] == doc["quotas"]["busy"]["runtime"] == {"cpu": "6"}
    assert "pastUsage" not in doc["queues"]["idle"] and "pastUsage" not in doc["quotas"]["idle"]
