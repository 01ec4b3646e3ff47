"""Copy a user understands: correct plurals (the ``plural`` filter and the engine's messages), no references to
design documents or issues on any page of the demo, "Live" that says when it is paused, and a parent queue's
namespaces message printed once."""

from __future__ import annotations

import re
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.template import Context, Template

from engine.wording import plural
from frontend.templatetags.fairway import plural as plural_filter
from quotas.models import Queue, QuotaGroup
from scheduling import sessions
from scheduling.models import Cluster, Node
from tests.frontend import builders as b

# Words that must never follow the number 1, and internal references that must never reach a page.
WRONG_PLURALS = re.compile(
    r"(?<![\d.,])1 (pods|jobs|nodes|queues|child queues|child groups|quota groups|namespaces|podgroups|tasks|"
    r"sessions|changes|problems|rounds|seconds|minutes|hours|children|waiting jobs)\b"
)
INTERNAL = re.compile(
    r"\bseed \d{3}\b|\(seed|\bissue \d+|\bissue #\d+|SIMULATE\.md|ARCHITECTURE\.md|STYLE\.md"
    # Python's spelling of a flag or a field where a person reads: "reclaimable: True", "closed_by_parent"
    r"|: (?:True|False)\b|\b(?:closed_by_parent|allow_lent|min_scale_exempt|is_parent|shared_weight)\b"
)


@pytest.mark.parametrize(
    "count,word,expected",
    [
        (0, "pod", "0 pods"),
        (1, "pod", "1 pod"),
        (2, "pod", "2 pods"),
        (1, "child queue", "1 child queue"),
        (3, "child queue", "3 child queues"),
        (2, "child,children", "2 children"),
        (1, "child,children", "1 child"),
        ([1, 2], "node", "2 nodes"),
        ("1", "waiting job", "1 waiting job"),
        (2, "box", "2 boxes"),
    ],
)
def test_the_plural_filter(count: Any, word: str, expected: str) -> None:
    assert plural_filter(count, word) == expected
    rendered = Template("{{ n|plural:w }}").render(Context({"n": count, "w": word}))
    assert rendered == expected  # a builtin of every template, no {% load %} needed


def test_the_engine_plural() -> None:
    assert plural(1, "task") == "1 task" and plural(4, "task") == "4 tasks"
    assert plural(2, "child", "children") == "2 children"


def _pages(cluster: Cluster) -> list[str]:
    paths = [
        "/",
        "/overview/",
        "/trees/queues/",
        "/trees/quotas/",
        "/trees/quotas/?style=icicle",
        "/team/",
        "/nodes/",
        "/edit/",
        "/edit/new/queue/",
        "/edit/new/quota/",
        "/whatif/",
        "/history/",
    ]
    paths += [f"/queues/{q}/" for q in Queue.objects.values_list("name", flat=True)]
    paths += [f"/quotas/{g}/" for g in QuotaGroup.objects.values_list("name", flat=True)]
    paths += [f"/edit/queues/{q}/" for q in Queue.objects.values_list("name", flat=True)[:6]]
    paths += [f"/nodes/{n}/" for n in Node.objects.filter(cluster=cluster).values_list("name", flat=True)[:4]]
    from django.contrib.auth.models import Group

    paths += [f"/team/{g}/" for g in Group.objects.filter(queues__isnull=False).values_list("name", flat=True)]
    return paths


def _visible_text(html: str) -> str:
    html = re.sub(r"<script\b.*?</script>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_every_page_of_the_demo_reads_right(client: Any, db: Any) -> None:
    call_command("load_demo", stdout=StringIO())
    cluster = Cluster.objects.get(name="default")
    sessions.run_scheduling_session(cluster)  # reasons and messages as the pages show them
    sessions.run_scheduling_session(cluster)
    admin = get_user_model().objects.create_user("copy-admin", password="x", is_staff=True)
    client.force_login(admin)
    problems = []
    for path in _pages(cluster):
        response = client.get(path)
        assert response.status_code == 200, path
        text = _visible_text(response.content.decode())
        problems += [f"{path}: {m.group(0)!r}" for m in WRONG_PLURALS.finditer(text)]
        problems += [f"{path}: {m.group(0)!r}" for m in INTERNAL.finditer(text)]
    lead = get_user_model().objects.filter(username__endswith="-lead").exclude(username="copy-admin").first()
    assert lead is not None
    client.force_login(lead)
    for path in ("/", "/nodes/", "/history/"):
        text = _visible_text(client.get(path, follow=True).content.decode())
        problems += [f"{lead.username} {path}: {m.group(0)!r}" for m in WRONG_PLURALS.finditer(text)]
        problems += [f"{lead.username} {path}: {m.group(0)!r}" for m in INTERNAL.finditer(text)]
    assert problems == []


def test_a_parent_queue_says_once_that_no_namespace_has_jobs(admin_client: Any, db: Any) -> None:
    from quotas import services

    services.ensure_builtins()
    b.cluster()
    b.node("n1", cpu="8", memory="32Gi")
    b.queue("dept")
    b.queue("team", parent="dept")
    html = admin_client.get("/queues/dept/").content.decode()
    assert html.count("No namespace has jobs in this queue.") == 1
    assert "(seed" not in html


def test_the_live_toggle_says_paused_when_paused(admin_client: Any, lending: None) -> None:
    html = admin_client.get("/overview/").content.decode()
    assert 'id="live-state" data-live="Live, every 5 s">Live, every 5 s</span>' in html
    with open("frontend/static/frontend/js/live.js", encoding="utf-8") as f:
        assert 'state.textContent = paused ? "Paused" : state.dataset.live' in f.read()


def test_a_one_child_node_reads_in_the_singular(admin_client: Any, lending: None) -> None:
    b.queue("solo-parent")
    b.queue("only-child", parent="solo-parent")
    html = _visible_text(admin_client.get("/queues/solo-parent/").content.decode())
    assert "1 child " in html and "1 children" not in html
