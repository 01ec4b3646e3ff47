"""What Django's set-up imports: every process pays it at start (a management command, a Celery worker or beat,
gunicorn, each test worker and each subprocess the tests start), so what a process may never use is imported where
it is used. Set up alone costs about 1.2 s of CPU here instead of 1.9 before the REST framework's serializers, the
store, the engine's session and numpy were left out of it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# each with what pulled it in before: the admin's cluster form (the serializers: the REST framework, the store, the
# engine's session and replay), the scheduling signals (the tasks and the mirror), the database facts (the engine's
# values), the snapshot's matrices (numpy) and the OpenID Connect discovery (requests)
NOT_AT_START = (
    "rest_framework.serializers",
    "drf_spectacular.utils",
    "scheduling.serializers",
    "scheduling.store",
    "scheduling.tasks",
    "scheduling.feed.mirror",
    "engine.session.run",
    "engine.replay",
    "engine.values",
    "numpy",
    "requests",
)


def test_django_set_up_leaves_out_what_a_process_may_never_use() -> None:
    code = (
        "import django, json, sys\ndjango.setup()\n"
        f"print(json.dumps([m for m in {NOT_AT_START!r} if m in sys.modules]))\n"
        "from django.contrib import admin\n"  # the admin was discovered: its forms are there, lazily or not
        "print(json.dumps(sorted(m.__name__ for m in admin.site._registry)))\n"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "controlplane.settings",
        "DATABASE_URL": "sqlite:///:memory:",
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    imported, registered = (json.loads(line) for line in done.stdout.strip().splitlines()[-2:])
    assert imported == []
    assert {"Cluster", "Queue", "QuotaGroup"} <= set(registered)
