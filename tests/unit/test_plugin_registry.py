"""Plugins register themselves (Volcano's ``plugins/factory.go``): the registry holds what each plugin module
registered, the framework and the session import no plugin and name none."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import engine.session.plugins  # noqa: F401  (registers the plugins)
from engine.session.framework import Plugin
from engine.session.policy import KNOWN_PLUGINS
from engine.session.registry import PLUGINS, register
from engine.session.session import Session
from tests.unit.test_session_support import node, plugin, pod, podgroup, policy, queue, running, snapshot

SESSION_DIR = Path(__file__).resolve().parents[2] / "engine" / "session"


def test_every_plugin_a_policy_knows_is_registered_by_its_module() -> None:
    assert sorted(PLUGINS) == sorted(KNOWN_PLUGINS)
    for name, cls in PLUGINS.items():
        assert cls.name == name
        assert cls.__module__ == f"engine.session.plugins.{name}"


def test_a_name_cannot_be_registered_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("engine.session.registry.PLUGINS", dict(PLUGINS))
    other = type("OtherGang", (Plugin,), {"name": "gang"})
    with pytest.raises(ValueError, match="registered twice"):
        register(other)
    with pytest.raises(ValueError, match="has no name"):
        register(type("Nameless", (Plugin,), {}))


def _imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth of its code (function-level imports included)."""
    found: set[str] = set()
    for item in ast.walk(ast.parse(path.read_text())):
        if isinstance(item, ast.ImportFrom) and item.module:
            found.add(item.module)
        elif isinstance(item, ast.Import):
            found.update(alias.name for alias in item.names)
    return found


@pytest.mark.parametrize("module", ["framework.py", "session.py"])
def test_the_framework_and_the_session_import_no_plugin_and_no_action(module: str) -> None:
    imported = _imported_modules(SESSION_DIR / module)
    assert not [m for m in imported if m.startswith(("engine.session.plugins", "engine.session.actions"))]
    tree = ast.parse((SESSION_DIR / module).read_text())
    lookups = [
        item
        for item in ast.walk(tree)
        if isinstance(item, ast.Call)
        and isinstance(item.func, ast.Attribute)
        and item.func.attr in ("plugin", "has_plugin")
        and any(isinstance(a, ast.Constant) for a in item.args)
    ]
    assert not lookups, f"{module} looks a plugin up by name"
    # "gang" is also a kind of blocker; the queue and quota plugins' names have no other meaning there
    constants = {c.value for c in ast.walk(tree) if isinstance(c, ast.Constant) and isinstance(c.value, str)}
    assert not constants & {"proportion", "capacity", "elasticquota", "drf", "overcommit", "binpack"}


def test_capabilities_replace_names() -> None:
    """What the session used to ask by plugin name it now asks by capability: the queue book, whether the quota
    runtimes are read, and gang's unschedulable-at-close."""
    snap = snapshot(
        nodes=[node("n1", "2", "4Gi")],
        queues=[queue("q")],
        podgroups=[podgroup("ns", "a", "q", 2), podgroup("ns", "b", "q", 1)],
        pods=[running("ns", "a-0", "a", "n1"), pod("ns", "b-0", "b", "4")],
    )
    with_gang = Session(snap, policy("allocate", ["gang"], ["capacity", plugin("elasticquota")]), 0.0)
    assert with_gang.queue_book is with_gang.framework.plugin("capacity").book  # type: ignore[union-attr]
    assert with_gang.elastic is not None  # no quota group of its own, but elasticquota reads the runtimes
    assert with_gang.framework.job_unschedulable(with_gang.jobs["ns/a"])  # 1 of minMember 2
    without = Session(snap, policy("allocate", ["priority"], ["proportion"]), 0.0)
    assert without.elastic is None
    assert not without.framework.job_unschedulable(without.jobs["ns/a"])
    assert without.close().podgroups["ns/a"].phase != "Unknown"
