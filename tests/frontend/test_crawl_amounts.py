"""Every page a person reaches from the navigation, as an admin and as a team lead, on the (small) demo after two
sessions, shows amounts as people read them: no sentinel, no bare base-unit number, no "base units", no "(s)", no
milli-GPU, no approximation written as a quantity (issue 30, item 1; ``tests/support/amount_checks.py``).

The crawl follows the links of every page it reads within the dashboard (GET only: forms are not posted; the Django
admin, the API, static files and sign-out are left out), a few pages of each kind (a path's first segment and depth)
and a few query strings of each path, so that it reads every kind of page in seconds.
"""

from __future__ import annotations

from collections import Counter, deque
from io import StringIO
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from scheduling import sessions
from scheduling.models import Cluster
from tests.support.amount_checks import problems, read_page

LEFT_OUT = ("/admin/", "/api/", "/static/", "/accounts/", "/metrics", "/__")
PER_KIND = 6  # pages of each kind (first path segment and depth): six job pages read as much as sixty
PER_PATH = 3  # query strings of one path (sortings, filters, windows)
POST_ONLY = ("/apply/", "/discard/", "/remove/", "/revoke/", "/stage/", "/open/", "/close/")


def _kind(path: str) -> tuple[str, int]:
    parts = [p for p in path.split("/") if p]
    return (parts[0] if parts else "", len(parts))


def crawl(client: Any, start: str = "/") -> tuple[list[str], list[str]]:
    """(every path read, every problem found) from ``start``, following links breadth first."""
    queue: deque[str] = deque([start])
    seen = {start}
    kinds: Counter[tuple[str, int]] = Counter()
    queries: Counter[str] = Counter()
    read, found = [], []
    while queue:
        url = queue.popleft()
        response = client.get(url, follow=True)
        assert response.status_code < 500, url
        read.append(url)
        if "text/html" not in response.get("Content-Type", ""):
            continue
        text, links = read_page(response.content.decode())
        found += problems(text, url)
        for href in links:
            target = urlsplit(urljoin(url, href))
            if target.scheme not in ("", "http") or target.netloc not in ("", "testserver"):
                continue
            path = target.path
            if path.startswith(LEFT_OUT) or any(p in path for p in POST_ONLY):
                continue
            full = f"{path}?{target.query}" if target.query else path
            if full in seen:
                continue
            seen.add(full)
            if target.query:
                if queries[path] >= PER_PATH:
                    continue
                queries[path] += 1
            elif kinds[_kind(path)] >= PER_KIND:
                continue
            else:
                kinds[_kind(path)] += 1
            queue.append(full)
    return read, found


@pytest.fixture
def demo(db: Any) -> Cluster:
    call_command("load_demo", stdout=StringIO())
    cluster = Cluster.objects.get(name="default")
    sessions.run_scheduling_session(cluster)  # reasons, values and samples as the pages show them
    sessions.run_scheduling_session(cluster)
    return cluster


def test_no_page_shows_a_base_unit_or_a_sentinel(client: Any, demo: Cluster) -> None:
    users = get_user_model().objects
    admin = users.create_user("crawl-admin", password="x", is_staff=True)
    lead = users.filter(username__endswith="-lead").order_by("username").first()
    assert lead is not None
    found: list[str] = []
    for user in (admin, lead):
        client.force_login(user)
        read, seen_problems = crawl(client)
        assert len(read) > (30 if user is admin else 8), read  # the navigation was followed
        found += [f"{user.username} {p}" for p in seen_problems]
    assert found == []


@pytest.mark.parametrize(
    ("text", "caught"),
    [
        ("max 4611686018427387904", "sentinel"),
        ("at most 4611686018427387904 base units", "the words base units"),
        ("weight 1288490188800 / 1288490188800", "bare base units"),
        ("received 2 in 1 round(s) of sharing", "a (s) plural"),
        ("Discarded 1 staged change(s).", "a (s) plural"),
        ("nvidia.com/gpu: 47976m", "a milli-GPU"),
        ("47976m GPUs", "a milli-GPU"),
        ("memory=≈1400.195Gi", "an approximate quantity"),
    ],
)
def test_the_checks_catch_each_probe_of_the_issue(text: str, caught: str) -> None:
    assert any(f": {caught}: " in p for p in problems(text, "probe")), problems(text, "probe")


@pytest.mark.parametrize(
    "text",
    ["memory=≈1400.195 GiB", "600 GiB", "4 GPUs", "2.5 cores", "1 round of sharing", "cpu=500m", "2026-11-28 14:02"],
)
def test_the_checks_pass_what_people_read(text: str) -> None:
    assert problems(text, "fine") == []
