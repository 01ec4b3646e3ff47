"""The scheduler policy: Volcano's scheduler configuration (``volcano-scheduler.conf``), read and typed.

A policy says which **actions** a session runs, in order, and which **plugins** take part, grouped in
**tiers**. Volcano combines plugin answers tier by tier (the first decisive order function wins, gates are
ANDed, victim lists are intersected within a tier), so the tier a plugin sits in matters and is kept.

The format is Volcano's, so a Volcano file means the same thing here::

    actions: "enqueue, allocate, backfill"
    tiers:
    - plugins:
      - name: priority
      - name: gang
        enablePreemptable: false
    - plugins:
      - name: proportion
      - name: overcommit
        arguments:
          overcommit-factor: 1.5
    configurations:
    - name: preempt
      arguments: {...}

* ``actions`` is a comma-separated list; only ``enqueue, allocate, backfill, reclaim, preempt`` are run by
  Fairway's engine, and any other name is an error that names it (Volcano also refuses an action it does
  not know).
* Each plugin carries boolean **switches** that turn its callbacks on or off. A switch left out is true,
  as Volcano's configuration loader defaults every ``*bool`` it finds nil (``plugins.ApplyPluginConfDefaults``),
  except ``enableHierarchy`` and ``enabledClusterOrder`` (Volcano never defaults them, so nil reads false)
  and ``enableNamespaceOrder`` (drf's namespace order from seed 000; Volcano removed it in v1.8, so it is
  off unless a file asks for it). Four switches are spelled with Volcano's ``d`` (``enabledVictim``,
  ``enabledOverused``, ``enabledAllocatable``, ``enabledClusterOrder``); the spellings without the ``d``
  are accepted as aliases.
* A plugin the engine does not provide (Volcano's ``sla``, ``tdm``, ``numaaware``, ...) is kept in its tier
  but reported in ``Policy.warnings`` and ``Policy.unsupported_plugins``; Volcano likewise logs and skips a
  plugin it cannot build rather than refusing the whole configuration.
* Plugin ``arguments`` are kept as given and read through typed accessors (``overcommit_factor``,
  ``capacity_args``, ``nodeorder_weights``, ``binpack_weights``, ``elastic_quota_args``), each read once, when
  the policy is; a plugin's reader lives in its folder (``engine/session/plugins/<name>/arguments.py``) and the
  registry (``engine.session.plugins``) names the plugins ``KNOWN_PLUGINS`` lists. For Volcano's own
  plugins a value of the wrong type is ignored with a warning, as Volcano's ``Arguments.GetInt`` /
  ``GetFloat64`` do; Koordinator's ``elasticquota`` arguments are decoded strictly, as Koordinator's
  configuration decoder is, so a bad value there is an error.

Pure module: no I/O, no Django. ``Policy.from_yaml`` / ``Policy.from_dict`` raise ``PolicyError``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import yaml

from engine.limits import Limits, load_yaml
from engine.policy.arguments import PLUGIN_ARGUMENTS, PluginArguments, PolicyError, parse_duration
from engine.policy.enqueue import EnqueueArgs, parse_enqueue_args
from engine.policy.fairness import FairnessArgs
from engine.policy.minruntime import (
    MIN_RUNTIME_ACTIONS,
    parse_min_runtime,
    parse_min_runtime_higher_priority,
    parse_whole_gangs,
)
from engine.session.plugins.capacity.arguments import CAPACITY, CapacityArgs
from engine.session.plugins.elasticquota.arguments import ELASTICQUOTA, ElasticQuotaArgs, parse_elastic_quota_args
from engine.session.plugins.proportion.arguments import PROPORTION

T = TypeVar("T")

__all__ = [
    "ACTIONS",
    "DEFAULT_POLICY",
    "KNOWN_PLUGINS",
    "SWITCHES",
    "CapacityArgs",
    "ElasticQuotaArgs",
    "EnqueueArgs",
    "FairnessArgs",
    "PluginOption",
    "Policy",
    "PolicyError",
    "parse_duration",
    "parse_elastic_quota_args",
    "parse_enqueue_args",
]

ACTIONS: tuple[str, ...] = ("enqueue", "allocate", "backfill", "reclaim", "preempt")

# Every plugin the engine provides (the registry's names; importing a reader above ran the registry).
KNOWN_PLUGINS: frozenset[str] = frozenset(PLUGIN_ARGUMENTS)

# (spelling in the file, PluginOption attribute, default when left out)
SWITCHES: tuple[tuple[str, str, bool], ...] = (
    ("enableJobOrder", "job_order", True),
    ("enableNamespaceOrder", "namespace_order", False),
    ("enableHierarchy", "hierarchy", False),
    ("enableJobReady", "job_ready", True),
    ("enableJobPipelined", "job_pipelined", True),
    ("enableTaskOrder", "task_order", True),
    ("enablePreemptable", "preemptable", True),
    ("enableReclaimable", "reclaimable", True),
    ("enablePreemptive", "preemptive", True),
    ("enableQueueOrder", "queue_order", True),
    ("enablePredicate", "predicate", True),
    ("enableBestNode", "best_node", True),
    ("enableNodeOrder", "node_order", True),
    ("enableJobEnqueued", "job_enqueued", True),
    ("enableJobStarving", "job_starving", True),
    ("enabledVictim", "victim", True),
    ("enabledOverused", "overused", True),
    ("enabledAllocatable", "allocatable", True),
    ("enabledClusterOrder", "cluster_order", False),
)
_SWITCH_BY_SPELLING: dict[str, tuple[str, bool]] = {s: (attr, d) for s, attr, d in SWITCHES}
# Volcano spells these four with a "d" (enabledVictim, ...); the plain spellings are accepted too.
_SWITCH_ALIASES: dict[str, str] = {
    "enableVictim": "enabledVictim",
    "enableOverused": "enabledOverused",
    "enableAllocatable": "enabledAllocatable",
    "enableClusterOrder": "enabledClusterOrder",
}
# Switches Volcano's PluginOption knows but Fairway's engine has no callback for: accepted, ignored, reported.
_VOLCANO_ONLY_SWITCHES: frozenset[str] = frozenset(
    {
        "enableTargetJob",
        "enableReservedNodes",
        "enabledHyperNodeOrder",
        "enabledSubJobReady",
        "enabledSubJobPipelined",
        "enabledSubJobOrder",
        "enabledHyperNodeGradient",
    }
)


# -- plugin options --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PluginOption:
    """One plugin in a tier: its switches (resolved with the defaults) and its raw arguments."""

    name: str
    job_order: bool = True
    namespace_order: bool = False
    hierarchy: bool = False
    job_ready: bool = True
    job_pipelined: bool = True
    task_order: bool = True
    preemptable: bool = True
    reclaimable: bool = True
    preemptive: bool = True
    queue_order: bool = True
    predicate: bool = True
    best_node: bool = True
    node_order: bool = True
    job_enqueued: bool = True
    job_starving: bool = True
    victim: bool = True
    overused: bool = True
    allocatable: bool = True
    cluster_order: bool = False
    arguments: Mapping[str, Any] = field(default_factory=dict)

    @property
    def supported(self) -> bool:
        """True when Fairway's engine provides this plugin."""
        return self.name in KNOWN_PLUGINS

    def switch(self, spelling: str) -> bool:
        """A switch by its spelling in the file (``"enablePreemptable"``; the ``d``-less aliases work too)."""
        spelling = _SWITCH_ALIASES.get(spelling, spelling)
        try:
            attr, _ = _SWITCH_BY_SPELLING[spelling]
        except KeyError:
            raise KeyError(f"unknown switch {spelling!r}") from None
        value: bool = getattr(self, attr)
        return value

    def to_dict(self) -> dict[str, Any]:
        """The plugin as it is written in a policy file: name, the switches that differ from the default, arguments."""
        out: dict[str, Any] = {"name": self.name}
        for spelling, attr, default in SWITCHES:
            value = getattr(self, attr)
            if value != default:
                out[spelling] = value
        if self.arguments:
            out["arguments"] = copy.deepcopy(dict(self.arguments))
        return out

    @classmethod
    def from_dict(cls, data: object, where: str, warnings: list[str] | None = None) -> PluginOption:
        """Read one plugin entry; ``where`` (e.g. ``tiers[1].plugins[0]``) prefixes error and warning messages."""
        if not isinstance(data, Mapping):
            raise PolicyError(f"{where}: expected a plugin entry with a name, got {type(data).__name__}")
        name = data.get("name")
        if not isinstance(name, str) or not name.strip():
            raise PolicyError(f"{where}.name: a plugin needs a name")
        name = name.strip()
        where = f"{where} ({name})"
        values: dict[str, Any] = {}
        given: dict[str, str] = {}  # attribute -> spelling used, to catch a switch given twice
        for key, value in data.items():
            if key in ("name", "arguments"):
                continue
            if not isinstance(key, str):
                raise PolicyError(f"{where}: unexpected key {key!r}")
            spelling = _SWITCH_ALIASES.get(key, key)
            if spelling in _SWITCH_BY_SPELLING:
                if not isinstance(value, bool):
                    raise PolicyError(f"{where}.{key}: expected true or false, got {value!r}")
                attr, _ = _SWITCH_BY_SPELLING[spelling]
                if attr in given and values[attr] != value:
                    raise PolicyError(f"{where}: {given[attr]} and {key} are the same switch with different values")
                values[attr] = value
                given[attr] = key
            elif warnings is not None:
                if key in _VOLCANO_ONLY_SWITCHES:
                    warnings.append(f"{where}: switch {key} has no effect in Fairway; ignored")
                else:
                    warnings.append(f"{where}: unknown key {key!r}; ignored")
        arguments = data.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            raise PolicyError(f"{where}.arguments: expected a mapping of argument name to value")
        for key in arguments:
            if not isinstance(key, str):
                raise PolicyError(f"{where}.arguments: argument names must be strings, got {key!r}")
        return cls(name=name, arguments=copy.deepcopy(dict(arguments)), **values)


# -- the policy ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Policy:
    """A scheduler policy: actions in order, plugin tiers, per-action arguments.

    ``warnings`` (not part of equality) lists what was accepted but has no effect: unsupported plugins,
    ignored switches, ignored or replaced arguments.
    """

    actions: tuple[str, ...]
    tiers: tuple[tuple[PluginOption, ...], ...]
    configurations: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    warnings: tuple[str, ...] = field(default=(), compare=False)
    # each plugin's arguments as its reader made them (``arguments_of``): read when the policy is, kept with it
    parsed: dict[str, object] = field(default_factory=dict, compare=False, repr=False)

    # -- reading --------------------------------------------------------------------------------------------
    @classmethod
    def from_yaml(cls, text: str, *, max_depth: int = Limits.max_yaml_depth) -> Policy:
        """Parse a ``volcano-scheduler.conf`` document (nested at most ``max_depth`` levels, checked before it is
        built). Raises ``PolicyError``."""
        try:
            data = load_yaml(text, max_depth)
        except yaml.YAMLError as exc:
            raise PolicyError(f"invalid YAML: {_yaml_problem(exc)}") from None
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: object) -> Policy:
        """Build a policy from the parsed configuration mapping. Raises ``PolicyError``."""
        if not isinstance(data, Mapping):
            got = "nothing" if data is None else type(data).__name__
            raise PolicyError(f"expected a mapping with actions and tiers, got {got}")
        warnings: list[str] = []
        for key in data:
            if key not in ("actions", "tiers", "configurations"):
                warnings.append(f"unknown key {key!r}; ignored")
        actions = _parse_actions(data.get("actions"))
        tiers = _parse_tiers(data.get("tiers"), warnings)
        configurations = _parse_configurations(data.get("configurations"))
        policy = cls(actions=actions, tiers=tiers, configurations=configurations)
        parsed = policy._check(warnings)
        return cls(actions, tiers, configurations, tuple(warnings), parsed)

    def _check(self, warnings: list[str]) -> dict[str, object]:
        parse_enqueue_args(self.action_arguments("enqueue"))  # refuse a bad argument when the policy is read
        for action in MIN_RUNTIME_ACTIONS:
            parse_min_runtime(action, self.action_arguments(action))
            parse_whole_gangs(action, self.action_arguments(action))
            parse_min_runtime_higher_priority(action, self.action_arguments(action))
        for tier in self.tiers:
            names = {p.name for p in tier}
            # Volcano's loader refuses this pair in one tier (scheduler/util.go UnmarshalSchedulerConf).
            if "proportion" in names and any(p.name == "drf" and p.hierarchy for p in tier):
                raise PolicyError("proportion and drf with hierarchy enabled conflicts")
        all_names = [p.name for tier in self.tiers for p in tier]
        for name in sorted(set(all_names)):
            if name not in KNOWN_PLUGINS:
                warnings.append(f"plugin {name} is not supported by Fairway's engine; it is kept but has no effect")
            if all_names.count(name) > 1:
                warnings.append(f"plugin {name} is listed more than once; the first entry's arguments are used")
        if "proportion" in all_names and "capacity" in all_names:
            warnings.append("proportion and capacity are both enabled; Volcano documents them as exclusive")
        # Each enabled plugin reads its arguments once, so that bad values are reported now rather than mid-session.
        parsed: dict[str, object] = {}
        for declared in PLUGIN_ARGUMENTS.values():
            plugin = self.plugin(declared.name)
            if declared.read is not None and plugin is not None:
                parsed[declared.name] = declared.read(plugin.arguments, warnings)
        return parsed

    # -- writing --------------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The policy in Volcano's file layout (switches only where they differ from the defaults)."""
        out: dict[str, Any] = {
            "actions": ", ".join(self.actions),
            "tiers": [{"plugins": [p.to_dict() for p in tier]} for tier in self.tiers],
        }
        if self.configurations:
            out["configurations"] = [
                {"name": name, "arguments": copy.deepcopy(dict(args))} for name, args in self.configurations.items()
            ]
        return out

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False, default_flow_style=False)

    # -- queries --------------------------------------------------------------------------------------------
    def plugins(self) -> tuple[PluginOption, ...]:
        """Every plugin, tier by tier."""
        return tuple(p for tier in self.tiers for p in tier)

    def plugin(self, name: str) -> PluginOption | None:
        """The first entry of plugin ``name``, or None when it is not enabled."""
        for tier in self.tiers:
            for p in tier:
                if p.name == name:
                    return p
        return None

    def has_plugin(self, name: str) -> bool:
        return self.plugin(name) is not None

    def tier_of(self, name: str) -> int | None:
        """The 0-based tier index of plugin ``name``, or None."""
        for i, tier in enumerate(self.tiers):
            if any(p.name == name for p in tier):
                return i
        return None

    @property
    def unsupported_plugins(self) -> tuple[str, ...]:
        """Plugin names listed in the policy that Fairway's engine does not provide, in order of appearance."""
        seen: list[str] = []
        for p in self.plugins():
            if not p.supported and p.name not in seen:
                seen.append(p.name)
        return tuple(seen)

    def action_arguments(self, action: str) -> Mapping[str, Any]:
        """The ``configurations`` arguments of ``action`` (empty when none)."""
        return self.configurations.get(action, {})

    def enqueue_args(self) -> EnqueueArgs:
        return parse_enqueue_args(self.action_arguments("enqueue"))

    def min_runtime(self, action: str) -> float:
        """Seconds of the ``reclaim`` / ``preempt`` action's ``minRuntime`` (0: off, Volcano's behaviour)."""
        return parse_min_runtime(action, self.action_arguments(action))

    def min_runtime_higher_priority(self, action: str) -> str:
        """What a strictly higher priority may do, in the ``reclaim`` / ``preempt`` action, to a pod within its
        minimum runtime (``minRuntimeHigherPriority``): ``cut`` it short (the default), only as a ``lastResort``, or
        ``wait``."""
        return parse_min_runtime_higher_priority(action, self.action_arguments(action))

    def whole_gangs(self, action: str) -> bool:
        """Whether the ``reclaim`` / ``preempt`` action chooses its victims with gangs in mind (``wholeGangs``;
        false: pod by pod, Volcano's behaviour)."""
        return parse_whole_gangs(action, self.action_arguments(action))

    def _arguments(self, name: str) -> Mapping[str, Any] | None:
        plugin = self.plugin(name)
        return plugin.arguments if plugin is not None else None

    def arguments_of(self, declared: PluginArguments[T]) -> T:
        """The arguments of ``declared``'s plugin (its folder's ``arguments.py`` declares it) as its reader made
        them when the policy was read; its defaults when the policy does not enable the plugin."""
        name = declared.name
        if name not in self.parsed:
            if declared.read is None:
                raise ValueError(f"plugin {name!r} takes no arguments")
            self.parsed[name] = declared.read(self._arguments(name), None)
        return cast(T, self.parsed[name])

    def elastic_quota_args(self, base: ElasticQuotaArgs | None = None) -> ElasticQuotaArgs:
        """The ``elasticquota`` plugin's arguments over ``base`` (Koordinator's defaults when None)."""
        if base is None:
            return self.arguments_of(ELASTICQUOTA)
        return parse_elastic_quota_args(self._arguments("elasticquota"), base)

    def queue_fairness(self) -> FairnessArgs:
        """Fairness over time of the queue tree: the arguments of the queue plugin the values follow (``capacity``
        when the policy has it, else ``proportion``); off when neither is enabled."""
        if self.has_plugin("capacity"):
            return self.arguments_of(CAPACITY).fairness
        return self.arguments_of(PROPORTION)

    def quota_fairness(self, base: ElasticQuotaArgs | None = None) -> FairnessArgs:
        """Fairness over time of the quota tree (the ``elasticquota`` plugin's arguments over ``base``)."""
        return self.elastic_quota_args(base).fairness

    def with_actions(self, *actions: str) -> Policy:
        """A copy running ``actions`` instead (validated)."""
        return Policy.from_dict({**self.to_dict(), "actions": ", ".join(actions)})


def _parse_actions(raw: object) -> tuple[str, ...]:
    if raw is None:
        raise PolicyError('actions: missing (e.g. actions: "enqueue, allocate, backfill")')
    if isinstance(raw, str):
        names = [part.strip() for part in raw.split(",")]
    elif isinstance(raw, Sequence):
        # A YAML list is not Volcano's format, but its meaning is unambiguous.
        names = [part.strip() if isinstance(part, str) else repr(part) for part in raw]
    else:
        raise PolicyError(f"actions: expected a comma-separated string, got {type(raw).__name__}")
    for name in names:
        if name not in ACTIONS:
            shown = repr(name) if name else "an empty name"
            raise PolicyError(f"actions: unknown action {shown} (Fairway runs {', '.join(ACTIONS)})")
    return tuple(names)


def _parse_tiers(raw: object, warnings: list[str]) -> tuple[tuple[PluginOption, ...], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        raise PolicyError(f"tiers: expected a list of tiers, got {type(raw).__name__}")
    tiers: list[tuple[PluginOption, ...]] = []
    for i, tier in enumerate(raw):
        where = f"tiers[{i}]"
        if not isinstance(tier, Mapping):
            raise PolicyError(f"{where}: expected a mapping with a plugins list, got {type(tier).__name__}")
        plugins = tier.get("plugins")
        if plugins is None:
            plugins = []
        if not isinstance(plugins, Sequence) or isinstance(plugins, str):
            raise PolicyError(f"{where}.plugins: expected a list of plugins")
        tiers.append(tuple(PluginOption.from_dict(p, f"{where}.plugins[{j}]", warnings) for j, p in enumerate(plugins)))
    return tuple(tiers)


def _parse_configurations(raw: object) -> dict[str, dict[str, Any]]:
    if raw is None:
        return {}
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        raise PolicyError("configurations: expected a list of {name, arguments}")
    out: dict[str, dict[str, Any]] = {}
    for i, entry in enumerate(raw):
        where = f"configurations[{i}]"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str) or not entry["name"].strip():
            raise PolicyError(f"{where}: expected a mapping with a name and arguments")
        args = entry.get("arguments")
        if args is None:
            args = {}
        if not isinstance(args, Mapping):
            raise PolicyError(f"{where}.arguments: expected a mapping of argument name to value")
        # Volcano's GetArgOfActionFromConf returns the first entry of a name; keep the first too.
        out.setdefault(entry["name"].strip(), copy.deepcopy(dict(args)))
    return out


def _yaml_problem(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is not None:
        return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
    return str(problem)


def default_policy_with(queue_plugin: Mapping[str, Any]) -> Policy:
    """Volcano's default policy (no policy file, no ConfigMap) with ``queue_plugin`` where it has ``proportion``: the
    plugin that shares the cluster among the queues."""
    return Policy.from_dict(
        {
            "actions": "enqueue, allocate, backfill",
            "tiers": [
                {"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
                {
                    "plugins": [
                        {"name": "overcommit"},
                        {"name": "drf"},
                        {"name": "predicates"},
                        dict(queue_plugin),
                        {"name": "nodeorder"},
                    ]
                },
            ],
        }
    )


DEFAULT_POLICY: Policy = default_policy_with({"name": "proportion"})
