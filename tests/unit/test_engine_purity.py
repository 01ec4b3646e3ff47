"""The engine is plain Python: no module of the ``engine`` package may import Django, directly or through another."""

import pkgutil
import subprocess
import sys
from pathlib import Path

import engine


def engine_modules() -> list[str]:
    root = Path(engine.__file__).parent
    return ["engine"] + [m.name for m in pkgutil.walk_packages([str(root)], prefix="engine.")]


def test_the_walk_finds_the_whole_package() -> None:
    modules = engine_modules()
    for name in (
        "engine.values",
        "engine.session.framework",
        "engine.session.plugins.gang.plugin",
        "engine.fairshare.elastic",
    ):
        assert name in modules
    on_disk = {p for p in Path(engine.__file__).parent.rglob("*.py")}
    assert len(modules) == len(on_disk)


def test_no_engine_module_imports_django() -> None:
    code = (
        "import importlib, sys\n"
        f"for m in {engine_modules()!r}:\n"
        "    importlib.import_module(m)\n"
        "bad = sorted(m for m in sys.modules if m == 'django' or m.startswith(('django.', 'rest_framework', 'celery')))\n"
        "ours = sorted(m for m in sys.modules if m.split('.')[0] in ('quotas', 'scheduling', 'planning', 'frontend', 'controlplane'))\n"
        "print(','.join(bad)); print(','.join(ours))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    django, ours = out.stdout.split("\n")[:2]
    assert django == "", f"engine modules imported Django: {django}"
    assert ours == "", f"engine modules imported the Django apps: {ours}"
