"""Every annotation is validated whether or not its option is on (issue 25, item 7): ``fairway.io/past-usage-ratio:
"1e999"`` was accepted with fairness over time off (and ``1e-999999999`` would have built a fraction of a billion
digits)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from controlplane.cli import main

QUEUE = """apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata:
  name: nlp
  annotations: {{fairway.io/past-usage-ratio: "{ratio}"}}
spec: {{weight: 1}}
"""


@pytest.mark.parametrize("ratio", ["1e999", "1e-999999999", "-1", "nan"])
def test_a_bad_past_usage_ratio_is_refused_with_fairness_off(tmp_path: Path, capsys: Any, ratio: str) -> None:
    path = tmp_path / "q.yaml"
    path.write_text(QUEUE.format(ratio=ratio))
    code = main(["simulate", "-f", str(path), "-o", "json"])
    err = capsys.readouterr().err
    assert code == 2
    assert "metadata.annotations[fairway.io/past-usage-ratio]" in err and "Traceback" not in err


def test_a_sane_ratio_is_still_read(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "q.yaml"
    path.write_text(QUEUE.format(ratio="1.8"))
    assert main(["simulate", "-f", str(path), "-o", "json"]) == 0
