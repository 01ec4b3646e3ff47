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
  ``capacity_args``, ``nodeorder_weights``, ``binpack_weights``, ``elastic_quota_args``). For Volcano's own
  plugins a value of the wrong type is ignored with a warning, as Volcano's ``Arguments.GetInt`` /
  ``GetFloat64`` do; Koordinator's ``elasticquota`` arguments are decoded strictly, as Koordinator's
  configuration decoder is, so a bad value there is an error.

Pure module: no I/O, no Django. ``Policy.from_yaml`` / ``Policy.from_dict`` raise ``PolicyError``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

import yaml

from engine.limits import Limits, load_yaml

__all__ = [
    "ACTIONS",
    "DEFAULT_POLICY",
    "KNOWN_PLUGINS",
    "SWITCHES",
    "BinpackWeights",
    "CapacityArgs",
    "ElasticQuotaArgs",
    "EnqueueArgs",
    "NodeOrderWeights",
    "PluginOption",
    "Policy",
    "PolicyError",
    "parse_duration",
    "parse_elastic_quota_args",
    "parse_enqueue_args",
]

ACTIONS: tuple[str, ...] = ("enqueue", "allocate", "backfill", "reclaim", "preempt")

KNOWN_PLUGINS: frozenset[str] = frozenset(
    {
        "priority",
        "gang",
        "conformance",
        "overcommit",
        "drf",
        "predicates",
        "proportion",
        "capacity",
        "nodeorder",
        "binpack",
        "elasticquota",
    }
)

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


class PolicyError(ValueError):
    """A scheduler policy that cannot be used; the message names the offending part."""


# -- typed plugin arguments ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NodeOrderWeights:
    """``nodeorder`` plugin weights, with Volcano's defaults (``plugins/nodeorder/nodeorder.go``)."""

    least_requested: int = 1
    most_requested: int = 0
    node_affinity: int = 2
    pod_affinity: int = 2
    balanced_resource: int = 1
    taint_toleration: int = 3
    image_locality: int = 1
    pod_topology_spread: int = 2

    KEYS: ClassVar[dict[str, str]] = {
        "leastrequested.weight": "least_requested",
        "mostrequested.weight": "most_requested",
        "nodeaffinity.weight": "node_affinity",
        "podaffinity.weight": "pod_affinity",
        "balancedresource.weight": "balanced_resource",
        "tainttoleration.weight": "taint_toleration",
        "imagelocality.weight": "image_locality",
        "podtopologyspread.weight": "pod_topology_spread",
    }


@dataclass(frozen=True, slots=True)
class BinpackWeights:
    """``binpack`` plugin weights (``plugins/binpack/binpack.go``): overall weight, cpu, memory and extra resources."""

    weight: int = 1
    cpu: int = 1
    memory: int = 1
    resources: Mapping[str, int] = field(default_factory=dict)  # extra resources named in binpack.resources

    def resource_weights(self) -> dict[str, int]:
        """Every weighted resource, cpu and memory included (as Volcano adds them to the map)."""
        out = dict(self.resources)
        out["cpu"] = self.cpu
        out["memory"] = self.memory
        return out


@dataclass(frozen=True, slots=True)
class CapacityArgs:
    """``capacity`` plugin arguments: how many ancestor levels reclaim may look up (0 = the queue's own level)."""

    ancestor_reclaim_level: int = 0


@dataclass(frozen=True, slots=True)
class EnqueueArgs:
    """``enqueue`` action arguments (``configurations``): when an admitted podgroup that cannot be placed gives its
    reservation back. Fairway's addition (seed 003's Inqueue -> Pending); Volcano keeps such reservations, which
    ``requeueAfterSessions: 0`` restores."""

    requeue_after_sessions: int = 3
    requeue_backoff: float = 4.0  # seconds before the first new admission attempt; doubles per requeue
    requeue_backoff_max: float = 60.0

    def backoff(self, requeues: int) -> float:
        """Seconds a podgroup requeued ``requeues`` times (>= 1) waits before it may be admitted again."""
        return min(self.requeue_backoff_max, self.requeue_backoff * 2.0 ** max(0, min(requeues, 32) - 1))


@dataclass(frozen=True, slots=True)
class ElasticQuotaArgs:
    """Koordinator's ``ElasticQuotaArgs`` that Fairway uses, with Koordinator's defaults (durations in seconds)."""

    enable_runtime_quota: bool = True
    enable_min_quota_scale: bool = True
    enable_check_parent_quota: bool = False
    monitor_all_quotas: bool = False
    delay_evict_time: float = 120.0
    revoke_pod_interval: float = 1.0
    disable_default_quota_preemption: bool = True

    KEYS: ClassVar[dict[str, str]] = {
        "enableRuntimeQuota": "enable_runtime_quota",
        "enableMinQuotaScale": "enable_min_quota_scale",
        "enableCheckParentQuota": "enable_check_parent_quota",
        "monitorAllQuotas": "monitor_all_quotas",
        "delayEvictTime": "delay_evict_time",
        "revokePodInterval": "revoke_pod_interval",
        "disableDefaultQuotaPreemption": "disable_default_quota_preemption",
    }

    def to_arguments(self) -> dict[str, object]:
        """The arguments in the file's spelling (durations as Go duration strings)."""
        out: dict[str, object] = {}
        for key, attr in self.KEYS.items():
            value = getattr(self, attr)
            out[key] = format_duration(value) if isinstance(value, float) else value
        return out


_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(value: object, field_name: str = "duration") -> float:
    """Parse a Go duration (``"120s"``, ``"1m30s"``, ``"1.5h"``, ``"300ms"``) into seconds.

    A bare number is taken as seconds. Raises ``PolicyError`` naming ``field_name``.
    """
    if isinstance(value, bool):
        raise PolicyError(f"{field_name}: expected a duration such as '120s', got {value!r}")
    if isinstance(value, int | float):
        if value < 0:
            raise PolicyError(f"{field_name}: {value!r} must not be negative")
        return float(value)
    if not isinstance(value, str):
        raise PolicyError(f"{field_name}: expected a duration such as '120s', got {type(value).__name__}")
    text = value.strip()
    negative = text.startswith("-")
    text = text.lstrip("+-") if text[:1] in ("+", "-") else text
    if text == "0":  # Go accepts a bare 0 without a unit
        return 0.0
    if not text:
        raise PolicyError(f"{field_name}: empty duration")
    pos, total = 0, 0.0
    while pos < len(text):
        match = _DURATION_PART.match(text, pos)
        if match is None:
            raise PolicyError(f"{field_name}: {value!r} is not a duration (examples: 120s, 1m30s, 500ms)")
        total += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        pos = match.end()
    if negative and total > 0:
        raise PolicyError(f"{field_name}: {value!r} must not be negative")
    return total


def format_duration(seconds: float) -> str:
    """Seconds as a Go duration string that ``parse_duration`` reads back to the same float."""
    if seconds == int(seconds):
        return f"{int(seconds)}s"
    return f"{seconds!r}s"


def _strict_bool(value: object, key: str) -> bool:
    if isinstance(value, bool):
        return value
    # Koordinator's args decoder (JSON) accepts only booleans; YAML strings "true"/"false" are a common slip.
    raise PolicyError(f"elasticquota argument {key}: expected true or false, got {value!r}")


def parse_elastic_quota_args(
    arguments: Mapping[str, object] | None, base: ElasticQuotaArgs | None = None
) -> ElasticQuotaArgs:
    """Read Koordinator ``ElasticQuotaArgs`` keys from ``arguments`` over ``base`` (defaults when None).

    Unknown keys (``quotaGroupNamespace``, ``hookPlugins``, ...) are ignored; a known key of the wrong type is a
    ``PolicyError``, as Koordinator's configuration decoder refuses it.
    """
    current = base or ElasticQuotaArgs()
    if not arguments:
        return current
    values: dict[str, Any] = {f.name: getattr(current, f.name) for f in fields(ElasticQuotaArgs)}
    for key, attr in ElasticQuotaArgs.KEYS.items():
        if key not in arguments:
            continue
        raw = arguments[key]
        if attr in ("delay_evict_time", "revoke_pod_interval"):
            values[attr] = parse_duration(raw, f"elasticquota argument {key}")
        else:
            values[attr] = _strict_bool(raw, key)
    return ElasticQuotaArgs(**values)


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


# -- Volcano-style argument readers (warn and keep the default, as framework.Arguments does) ------------------


def _get_int(args: Mapping[str, Any], key: str, default: int, warnings: list[str] | None, where: str) -> int:
    if key not in args:
        return default
    value = args[key]
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if warnings is not None:
        warnings.append(f"{where}: argument {key}={value!r} is not an integer; using {default}")
    return default


def _get_float(args: Mapping[str, Any], key: str, default: float, warnings: list[str] | None, where: str) -> float:
    if key not in args:
        return default
    value = args[key]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if warnings is not None:
        warnings.append(f"{where}: argument {key}={value!r} is not a number; using {default}")
    return default


DEFAULT_OVERCOMMIT_FACTOR = 1.2


def _overcommit_factor(plugin: PluginOption | None, warnings: list[str] | None = None) -> float:
    if plugin is None:
        return DEFAULT_OVERCOMMIT_FACTOR
    where = "overcommit"
    factor = _get_float(plugin.arguments, "overcommit-factor", DEFAULT_OVERCOMMIT_FACTOR, warnings, where)
    if factor < 1.0:
        # Volcano (plugins/overcommit) replaces a factor below 1 with the default 1.2 rather than refusing it.
        if warnings is not None:
            warnings.append(f"{where}: overcommit-factor {factor} is below 1; using {DEFAULT_OVERCOMMIT_FACTOR}")
        factor = DEFAULT_OVERCOMMIT_FACTOR
    return factor


def _capacity_args(plugin: PluginOption | None, warnings: list[str] | None = None) -> CapacityArgs:
    if plugin is None:
        return CapacityArgs()
    level = _get_int(plugin.arguments, "ancestorReclaimLevel", 0, warnings, "capacity")
    if level < 0:
        # Volcano (plugins/capacity parseArguments) falls back to 0 for a negative level.
        if warnings is not None:
            warnings.append(f"capacity: ancestorReclaimLevel {level} is negative; using 0")
        level = 0
    return CapacityArgs(ancestor_reclaim_level=level)


def parse_enqueue_args(arguments: Mapping[str, Any]) -> EnqueueArgs:
    """The ``enqueue`` action's ``configurations`` arguments; a bad value is a ``PolicyError`` naming the key."""
    where = "configurations enqueue"
    defaults = EnqueueArgs()
    sessions = arguments.get("requeueAfterSessions", defaults.requeue_after_sessions)
    if isinstance(sessions, bool) or not isinstance(sessions, int) or sessions < 0:
        raise PolicyError(f"{where}: requeueAfterSessions: expected a whole number >= 0, got {sessions!r}")
    backoff = parse_duration(arguments.get("requeueBackoff", defaults.requeue_backoff), f"{where}: requeueBackoff")
    most = parse_duration(
        arguments.get("requeueBackoffMax", defaults.requeue_backoff_max), f"{where}: requeueBackoffMax"
    )
    if most < backoff:
        raise PolicyError(f"{where}: requeueBackoffMax ({format_duration(most)}) is below requeueBackoff")
    return EnqueueArgs(requeue_after_sessions=sessions, requeue_backoff=backoff, requeue_backoff_max=most)


def _nodeorder_weights(plugin: PluginOption | None, warnings: list[str] | None = None) -> NodeOrderWeights:
    if plugin is None:
        return NodeOrderWeights()
    defaults = NodeOrderWeights()
    values = {
        attr: _get_int(plugin.arguments, key, getattr(defaults, attr), warnings, "nodeorder")
        for key, attr in NodeOrderWeights.KEYS.items()
    }
    return NodeOrderWeights(**values)


def _binpack_weights(plugin: PluginOption | None, warnings: list[str] | None = None) -> BinpackWeights:
    if plugin is None:
        return BinpackWeights()
    args = plugin.arguments
    where = "binpack"
    weight = _get_int(args, "binpack.weight", 1, warnings, where)
    # Volcano resets a negative cpu/memory/resource weight to 1 (plugins/binpack calculateWeight).
    cpu = _get_int(args, "binpack.cpu", 1, warnings, where)
    cpu = 1 if cpu < 0 else cpu
    memory = _get_int(args, "binpack.memory", 1, warnings, where)
    memory = 1 if memory < 0 else memory
    resources: dict[str, int] = {}
    names = args.get("binpack.resources", "")
    if not isinstance(names, str):
        if warnings is not None:
            warnings.append(f"{where}: argument binpack.resources={names!r} is not a comma-separated string; ignored")
        names = ""
    for raw in names.split(","):
        name = raw.strip()
        if not name:
            continue
        value = _get_int(args, f"binpack.resources.{name}", 1, warnings, where)
        resources[name] = 1 if value < 0 else value
    return BinpackWeights(weight=weight, cpu=cpu, memory=memory, resources=resources)


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
        policy._check(warnings)
        return cls(actions=actions, tiers=tiers, configurations=configurations, warnings=tuple(warnings))

    def _check(self, warnings: list[str]) -> None:
        parse_enqueue_args(self.action_arguments("enqueue"))  # refuse a bad argument when the policy is read
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
        # Read every typed argument once so that bad values are reported now rather than mid-session.
        _overcommit_factor(self.plugin("overcommit"), warnings)
        _capacity_args(self.plugin("capacity"), warnings)
        _nodeorder_weights(self.plugin("nodeorder"), warnings)
        _binpack_weights(self.plugin("binpack"), warnings)
        eq = self.plugin("elasticquota")
        if eq is not None:
            parse_elastic_quota_args(eq.arguments)

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

    def overcommit_factor(self) -> float:
        """``overcommit`` plugin's ``overcommit-factor`` (default 1.2; below 1 reads as 1.2, as in Volcano)."""
        return _overcommit_factor(self.plugin("overcommit"))

    def capacity_args(self) -> CapacityArgs:
        return _capacity_args(self.plugin("capacity"))

    def nodeorder_weights(self) -> NodeOrderWeights:
        return _nodeorder_weights(self.plugin("nodeorder"))

    def binpack_weights(self) -> BinpackWeights:
        return _binpack_weights(self.plugin("binpack"))

    def elastic_quota_args(self, base: ElasticQuotaArgs | None = None) -> ElasticQuotaArgs:
        """The ``elasticquota`` plugin's arguments over ``base`` (Koordinator's defaults when None)."""
        plugin = self.plugin("elasticquota")
        return parse_elastic_quota_args(plugin.arguments if plugin else None, base)

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


DEFAULT_POLICY: Policy = Policy.from_dict(
    {
        "actions": "enqueue, allocate, backfill",
        "tiers": [
            {"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
            {
                "plugins": [
                    {"name": "overcommit"},
                    {"name": "drf"},
                    {"name": "predicates"},
                    {"name": "proportion"},
                    {"name": "nodeorder"},
                ]
            },
        ],
    }
)
