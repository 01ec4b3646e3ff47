"""``fairway queue|quota-group create|update --user-limits``: the per-user limits (issue 30 item 5) as lines people
type (``user NAME: jobs=N, RESOURCE=QUANTITY; group NAME: ...``) or the API's JSON list, shown by ``view``, cleared
by ``''``; a problem is the server's sentence naming the entry."""

from __future__ import annotations

from quotas.models import Queue
from tests.cli.conftest import Run


def test_the_limits_are_set_shown_and_cleared_from_the_cli(cli: Run) -> None:
    code, _, err = cli(
        "queue", "create", "-n", "nlp", "--user-limits", "user *: jobs=2; group ml-interns: cpu=8, jobs=1"
    )
    assert code == 0, err
    assert Queue.objects.get(name="nlp").user_limits == [
        {"kind": "user", "name": "*", "max_resources": {}, "max_jobs": 2},
        {"kind": "group", "name": "ml-interns", "max_resources": {"cpu": 8000}, "max_jobs": 1},
    ]
    out = cli("queue", "view", "nlp")[1]
    assert "User limits:" in out and "each user: at most 2 jobs; group ml-interns: at most 1 job, cpu=8" in out
    assert cli("queue", "update", "nlp", "--user-limits", "")[0] == 0
    assert Queue.objects.get(name="nlp").user_limits is None
    assert "User limits: none" in cli("queue", "view", "nlp")[1]


def test_a_bad_limit_is_refused_with_the_servers_sentence(cli: Run) -> None:
    code, _, err = cli("queue", "create", "-n", "nlp", "--user-limits", "user alice: jobs=1; user alice: jobs=2")
    assert code == 1 and "user alice has a limit already (entry 0)" in err
    code, _, err = cli("queue", "create", "-n", "nlp", "--user-limits", "alice: jobs=1")
    assert code == 2 and "expected 'user NAME: jobs=N" in err
    assert not Queue.objects.filter(name="nlp").exists()
