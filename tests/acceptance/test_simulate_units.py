"""`fairway simulate` in the units people read and the JSON the contract gives (SIMULATE.md): GPU trees split in
whole GPUs as Koordinator does, an unbounded amount is null in JSON and "unlimited" in the table, messages say
"3" GPUs rather than "3000m", and a request for a resource no node offers is a warning, not an error."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from controlplane.cli import main
from tests.acceptance import manifests as m

GPU = "nvidia.com/gpu"
SENTINEL = re.compile(r"4611686018427387904|1329227995784915872903807060280344576|9223372036854775807|\d+Ei\b")
MILLI = re.compile(r"\b\d+m\b")


def run(tmp_path: Path, capsys: Any, text: str, *args: str) -> tuple[str, str]:
    f = tmp_path / "snapshot.yaml"
    f.write_text(text)
    code = main(["simulate", "-f", str(f), *args])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out, out.err


def gpu_tree() -> str:
    """25 GPUs on three nodes; three equal teams each asking 40 GPUs (40 pods of 1 GPU)."""
    docs: list[Any] = [
        m.node("g1", cpu="64", memory="512Gi", **{GPU: "8"}),
        m.node("g2", cpu="64", memory="512Gi", **{GPU: "8"}),
        m.node("g3", cpu="64", memory="512Gi", **{GPU: "9"}),
    ]
    for team in ("a", "b", "c"):
        docs.append(m.elastic_quota(team, min={GPU: "0"}, max={GPU: "40"}))
        docs += [m.pod("default", f"{team}-{i}", quota=team, cpu="1", **{GPU: "1"}) for i in range(40)]
    return m.dump(*docs)


def test_gpu_runtimes_are_whole_gpus_and_unbounded_amounts_are_null(tmp_path: Path, capsys: Any) -> None:
    out, _ = run(tmp_path, capsys, gpu_tree(), "-o", "json")
    doc = json.loads(out)
    runtime = {g: doc["quotas"][g]["runtime"][GPU] for g in "abc"}
    assert runtime == {"a": "9", "b": "8", "c": "8"}  # 25 / 3 in whole GPUs (8333m before), the spare to "a"
    for builtin in ("system", "default"):
        assert doc["quotas"][builtin]["max"] == {"cpu": None, "memory": None}
        assert doc["quotas"][builtin]["runtime"] == {"cpu": None, "memory": None}
    assert not SENTINEL.search(out)


def test_the_table_reads_whole_gpus_cores_gi_and_unlimited(tmp_path: Path, capsys: Any) -> None:
    out, _ = run(tmp_path, capsys, gpu_tree(), "-o", "table")
    assert not SENTINEL.search(out)
    quotas = out.split("QUOTAS", 1)[1].split("\n\n", 1)[0].splitlines()
    rows = {line.split()[0]: line for line in quotas[2:]}
    assert "nvidia.com/gpu=9" in rows["a"] and "nvidia.com/gpu=8" in rows["b"]
    assert "cpu=unlimited,memory=unlimited" in rows["default"] and "cpu=unlimited" in rows["system"]
    queues = out.split("QUEUES", 1)[1].split("\n\n", 1)[0]
    assert "memory=1536Gi" in queues  # 3 x 512Gi, in Gi
    assert not MILLI.search(out.split("PODGROUPS")[0]), out  # no 25000m, no 8333m


def test_messages_say_whole_gpus(tmp_path: Path, capsys: Any) -> None:
    """A pod asking 4 GPUs on nodes of 3: the reason's numbers read 4 and 3 GPUs, never 4000m / 3000m."""
    text = m.dump(
        m.node("g1", cpu="16", memory="64Gi", **{GPU: "3"}),
        m.node("g2", cpu="16", memory="64Gi", **{GPU: "3"}),
        m.queue("q1"),
        m.namespace("ns"),
        m.podgroup("ns", "big", "q1"),
        m.pod("ns", "big-0", group="big", cpu="1", **{GPU: "4"}),
    )
    out, _ = run(tmp_path, capsys, text, "-o", "json", "--sessions", "2")
    pg = json.loads(out)["podgroups"]["ns/big"]
    assert pg["phase"] != "Running" and pg["message"], pg
    assert GPU in pg["message"], pg
    assert not MILLI.search(pg["message"]), pg
    assert re.search(r"\b4\b", pg["message"]) and re.search(r"\b3\b", pg["message"]), pg


def test_a_request_for_a_resource_no_node_offers_is_a_warning(tmp_path: Path, capsys: Any) -> None:
    text = m.dump(
        m.node("n1", cpu="8", memory="32Gi"),
        m.namespace("ns"),
        m.pod("ns", "p0", cpu="1", **{"example.com/fpga": "1"}),
        m.pod("ns", "p1", cpu="1", memory="1Gi", **{"hugepages-2Mi": "64Mi"}),  # standard: known, no warning
        m.pod("ns", "p2", cpu="1"),
    )
    out, err = run(tmp_path, capsys, text, "-o", "json")
    warnings = [line for line in err.splitlines() if "no node offers" in line]
    assert len(warnings) == 1, err
    assert warnings[0].startswith("warning: pod ns/p0 request example.com/fpga, which no node offers"), warnings
    doc = json.loads(out)
    assert "ns/p0" not in doc["bindings"] and doc["bindings"].get("ns/p2") == "n1"  # the rest still runs
