"""The engine is plain Python: importing it must not import Django."""

import subprocess
import sys

ENGINE_MODULES = [
    "quotas.resources",
    "quotas.rules",
    "quotas.fairshare.queues",
    "quotas.fairshare.elastic",
    "quotas.fairshare.proportion",
    "quotas.fairshare.capacity",
    "quotas.fairshare.namespace",
    "quotas.fairshare.waterfill",
    "scheduling.engine.snapshot",
    "scheduling.engine.policy",
    "scheduling.manifests",
    "scheduling.simulate",
    "scheduling.engine.values",
    "scheduling.engine.run",
    "scheduling.engine.session",
    "scheduling.engine.statement",
    "scheduling.engine.framework",
    "scheduling.engine.recycle",
    "scheduling.engine.actions.allocate",
    "scheduling.engine.actions.reclaim",
    "scheduling.engine.plugins.elasticquota",
    "quotas.whatif",
]


def test_engine_imports_no_django() -> None:
    code = (
        "import importlib, sys\n"
        f"for m in {ENGINE_MODULES!r}:\n"
        "    importlib.import_module(m)\n"
        "bad = sorted(m for m in sys.modules if m == 'django' or m.startswith('django.'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"engine modules imported Django: {out.stdout.strip()}"
