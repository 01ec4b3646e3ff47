"""Plugins register themselves (Volcano's ``plugins/factory.go``): one folder per plugin, the registry
(``engine.session.plugins``) names the folders and holds what each plugin's ``plugin.py`` registered; the framework
and the session import no plugin and name none; each plugin reads its own arguments, once per policy."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from engine.policy.arguments import PLUGIN_ARGUMENTS, PolicyError, declare
from engine.policy.policy import KNOWN_PLUGINS, Policy
from engine.session.framework import Plugin
from engine.session.plugins import NAMES
from engine.session.plugins.capacity.arguments import CAPACITY, read_capacity_args
from engine.session.plugins.overcommit.arguments import read_overcommit_factor
from engine.session.registry import PLUGINS, load, register
from engine.session.session import Session
from tests.unit.test_session_support import node, plugin, pod, podgroup, policy, queue, running, snapshot

SESSION_DIR = Path(__file__).resolve().parents[2] / "engine" / "session"
PLUGINS_DIR = SESSION_DIR / "plugins"
load()


def test_every_plugin_a_policy_knows_is_registered_by_its_module() -> None:
    assert sorted(PLUGINS) == sorted(KNOWN_PLUGINS)
    for name, cls in PLUGINS.items():
        assert cls.name == name
        assert cls.__module__ == f"engine.session.plugins.{name}.plugin"


def test_a_plugin_is_its_folder_and_its_name_in_the_registry() -> None:
    """Adding a plugin touches its folder and the registry only: every folder with a ``plugin.py`` is named in
    ``NAMES`` and the other way round; a folder with an ``arguments.py`` declares its reader, which the registry
    imports (a folder without one takes no arguments); nothing else in the engine names a plugin's module."""
    folders = {p.parent.name for p in PLUGINS_DIR.glob("*/plugin.py")}
    assert folders == set(NAMES)
    with_arguments = {p.parent.name for p in PLUGINS_DIR.glob("*/arguments.py")}
    assert with_arguments == {n for n, declared in PLUGIN_ARGUMENTS.items() if declared.read is not None}
    registry = _imported_modules(PLUGINS_DIR / "__init__.py")
    assert {f"engine.session.plugins.{n}" for n in with_arguments} <= registry  # ``from ... import arguments``
    engine = PLUGINS_DIR.parents[1]
    for path in engine.rglob("*.py"):
        if path.is_relative_to(PLUGINS_DIR) or path.name == "policy.py":
            continue  # the plugins themselves; the policy's fairness over time reads three plugins' arguments
        plugin_modules = {m for m in _imported_modules(path) if m.startswith("engine.session.plugins.")}
        assert all(m.endswith(".arguments") for m in plugin_modules), (path, plugin_modules)


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
    # the registry itself (``engine.session.plugins``) but no plugin's module and no action
    assert not [m for m in imported if m.startswith(("engine.session.plugins.", "engine.session.actions"))]
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


# -- each plugin reads its own arguments ------------------------------------------------------------------------


# one argument of the wrong type per plugin that takes arguments, and what reading the policy then says
BAD_ARGUMENT = {
    "overcommit": ({"overcommit-factor": "lots"}, "overcommit: argument overcommit-factor='lots' is not a number"),
    "capacity": ({"ancestorReclaimLevel": "deep"}, "capacity: argument ancestorReclaimLevel='deep' is not an integer"),
    "nodeorder": ({"leastrequested.weight": 1.5}, "nodeorder: argument leastrequested.weight=1.5 is not an integer"),
    "binpack": ({"binpack.cpu": "x"}, "binpack: argument binpack.cpu='x' is not an integer"),
    "elasticquota": ({"monitorAllQuotas": "yes"}, "elasticquota argument monitorAllQuotas: expected true or false"),
    "proportion": ({"fairnessOverTime": "yes"}, "proportion argument fairnessOverTime: expected true or false"),
    "kueuefair": ({"enable": "yes"}, "kueuefair: enable: expected true or false"),
}
# decoded strictly: an error, not a warning (Kueue refuses a bad Configuration too)
STRICT = frozenset({"elasticquota", "proportion", "kueuefair"})


def test_the_argument_modules_declare_every_plugin_and_import_no_session() -> None:
    assert frozenset(PLUGIN_ARGUMENTS) == KNOWN_PLUGINS
    with_reader = sorted(name for name, declared in PLUGIN_ARGUMENTS.items() if declared.read is not None)
    assert with_reader == sorted(BAD_ARGUMENT)
    readers = sorted(PLUGINS_DIR.glob("*/arguments.py"))
    assert [p.parent.name for p in readers] == sorted(BAD_ARGUMENT)
    for path in readers:
        imported = _imported_modules(path)
        assert not [m for m in imported if m.startswith("engine.") and not m.startswith("engine.policy.")], path


def test_a_policy_reads_each_plugins_arguments_once() -> None:
    policy = Policy.from_dict(
        {
            "actions": "allocate",
            "tiers": [{"plugins": [{"name": "capacity", "arguments": {"ancestorReclaimLevel": 2}}]}],
        }
    )
    first = policy.arguments_of(CAPACITY)
    assert first.ancestor_reclaim_level == 2
    assert policy.arguments_of(CAPACITY) is first  # kept with the policy, not read again
    assert Policy.from_dict({"actions": "allocate"}).arguments_of(CAPACITY).ancestor_reclaim_level == 0  # defaults
    with pytest.raises(ValueError, match="takes no arguments"):
        policy.arguments_of(PLUGIN_ARGUMENTS["gang"])


@pytest.mark.parametrize("name", sorted(BAD_ARGUMENT))
def test_reading_a_policy_asks_each_plugin_to_read_its_arguments(name: str) -> None:
    arguments, message = BAD_ARGUMENT[name]
    data = {"actions": "allocate", "tiers": [{"plugins": [{"name": name, "arguments": arguments}]}]}
    if name in STRICT:  # Koordinator's decoder is strict, and so are Fairway's own keys: an error, not a warning
        with pytest.raises(PolicyError, match=message):
            Policy.from_dict(data)
        return
    read = Policy.from_dict(data)
    assert any(w.startswith(message) for w in read.warnings), read.warnings
    # a plugin the policy does not enable reads nothing: no warning for it
    assert not any(w.startswith(name) for w in Policy.from_dict({"actions": "allocate", "tiers": []}).warnings)


def test_a_plugin_declares_its_arguments_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("engine.policy.arguments.PLUGIN_ARGUMENTS", dict(PLUGIN_ARGUMENTS))
    declare("capacity", read_capacity_args)  # the same reader again: harmless (a module imported twice)
    with pytest.raises(ValueError, match="declares its arguments twice"):
        declare("capacity", read_overcommit_factor)
