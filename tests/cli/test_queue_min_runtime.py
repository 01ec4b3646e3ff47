"""``fairway queue create|operate --min-runtime``: whole seconds, '' unsets; the view says it."""

from __future__ import annotations

from quotas.models import Queue
from tests.cli.conftest import Run


def test_min_runtime_through_the_cli(cli: Run) -> None:
    code, _, err = cli("queue", "create", "-n", "team", "--min-runtime", "90")
    assert code == 0, err
    assert Queue.objects.get(name="team").min_runtime == 90
    code, out, _ = cli("queue", "view", "team")
    assert "Min runtime: 90 s" in out, out
    assert cli("queue", "operate", "-n", "team", "-a", "update", "--min-runtime", "")[0] == 0
    assert Queue.objects.get(name="team").min_runtime is None
    assert "Min runtime: unset" in cli("queue", "view", "team")[1]
    code, _, err = cli("queue", "operate", "-n", "team", "-a", "update", "--min-runtime", "soon")
    assert code == 2 and "--min-runtime: 'soon' is not a whole number of seconds" in err
    code, _, err = cli("queue", "operate", "-n", "team", "-a", "update", "--min-runtime", "-3")
    assert code == 1 and "min_runtime -3 s must be 0 or more seconds" in err
