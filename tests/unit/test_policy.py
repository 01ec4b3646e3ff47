"""The scheduler policy: Volcano's configuration format, its defaults, aliases, typed arguments and errors."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.policy.policy import (
    ACTIONS,
    DEFAULT_POLICY,
    KNOWN_PLUGINS,
    SWITCHES,
    CapacityArgs,
    ElasticQuotaArgs,
    PluginOption,
    Policy,
    PolicyError,
    parse_duration,
    parse_elastic_quota_args,
)
from engine.session.plugins.binpack.arguments import BINPACK, BinpackWeights
from engine.session.plugins.capacity.arguments import CAPACITY
from engine.session.plugins.nodeorder.arguments import NODEORDER, NodeOrderWeights
from engine.session.plugins.overcommit.arguments import OVERCOMMIT
from tests.acceptance.manifests import PEER_MANIFESTS, needs_peer_manifests

HELM_CONF = PEER_MANIFESTS / "volcano" / "installer__helm__chart__volcano__config__volcano-scheduler.conf"

OFF_BY_DEFAULT = {"enableHierarchy", "enabledClusterOrder", "enableNamespaceOrder"}


def one_plugin(entry: dict[str, Any], actions: str = "allocate") -> Policy:
    return Policy.from_dict({"actions": actions, "tiers": [{"plugins": [entry]}]})


# -- defaults ----------------------------------------------------------------------------------------------------


def test_default_policy_is_volcanos() -> None:
    # pkg/scheduler/util.go DefaultSchedulerConf
    assert DEFAULT_POLICY.actions == ("enqueue", "allocate", "backfill")
    assert [[p.name for p in tier] for tier in DEFAULT_POLICY.tiers] == [
        ["priority", "gang", "conformance"],
        ["overcommit", "drf", "predicates", "proportion", "nodeorder"],
    ]
    assert DEFAULT_POLICY.configurations == {}
    assert DEFAULT_POLICY.warnings == ()


@pytest.mark.parametrize(("spelling", "attr", "default"), SWITCHES)
def test_a_switch_left_out_has_its_default(spelling: str, attr: str, default: bool) -> None:
    # Volcano's util_test TestLoadSchedulerConf: every plugin of the default conf has every switch true,
    # except the ones Volcano never defaults (hierarchy, cluster order) and seed 000's namespace order.
    assert default is (spelling not in OFF_BY_DEFAULT)
    for plugin in DEFAULT_POLICY.plugins():
        assert getattr(plugin, attr) is default
        assert plugin.switch(spelling) is default


@pytest.mark.parametrize(("spelling", "attr", "default"), SWITCHES)
@pytest.mark.parametrize("value", [True, False])
def test_every_switch_is_read(spelling: str, attr: str, default: bool, value: bool) -> None:
    policy = one_plugin({"name": "drf", spelling: value})
    plugin = policy.plugin("drf")
    assert plugin is not None
    assert getattr(plugin, attr) is value
    assert plugin.switch(spelling) is value
    # to_dict writes a switch only when it differs from the default
    assert (spelling in plugin.to_dict()) is (value != default)


@pytest.mark.parametrize(
    ("alias", "spelling", "attr"),
    [
        ("enableVictim", "enabledVictim", "victim"),
        ("enableOverused", "enabledOverused", "overused"),
        ("enableAllocatable", "enabledAllocatable", "allocatable"),
        ("enableClusterOrder", "enabledClusterOrder", "cluster_order"),
    ],
)
def test_d_less_aliases(alias: str, spelling: str, attr: str) -> None:
    default = dict((s, d) for s, _, d in SWITCHES)[spelling]
    plugin = one_plugin({"name": "proportion", alias: not default}).plugin("proportion")
    assert plugin is not None
    assert getattr(plugin, attr) is (not default)
    assert plugin.switch(alias) is plugin.switch(spelling) is (not default)
    # Written back with Volcano's spelling.
    assert plugin.to_dict() == {"name": "proportion", spelling: not default}
    # Both spellings with one value are fine; with two values it is an error naming both.
    both = one_plugin({"name": "proportion", alias: False, spelling: False}).plugin("proportion")
    assert both is not None and getattr(both, attr) is False
    with pytest.raises(PolicyError, match=rf"{spelling} and {alias} are the same switch"):
        one_plugin({"name": "proportion", spelling: True, alias: False})


def test_unknown_switch_name_raises_key_error() -> None:
    with pytest.raises(KeyError):
        PluginOption("gang").switch("enableEverything")


@pytest.mark.parametrize("value", ["false", 0, 1, None, [True]])
def test_a_switch_must_be_a_boolean(value: object) -> None:
    # Volcano's YAML decoder cannot put a string into a *bool either.
    with pytest.raises(PolicyError, match=r"tiers\[0\]\.plugins\[0\] \(gang\)\.enableJobReady: expected true or false"):
        one_plugin({"name": "gang", "enableJobReady": value})


# -- actions -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("enqueue, allocate, backfill", ("enqueue", "allocate", "backfill")),
        ("enqueue,allocate,backfill,reclaim,preempt", ACTIONS),
        ("  reclaim ,  allocate ", ("reclaim", "allocate")),
        ("allocate, allocate", ("allocate", "allocate")),
    ],
)
def test_actions(text: str, expected: tuple[str, ...]) -> None:
    assert Policy.from_dict({"actions": text}).actions == expected


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("enqueue, shuffle, allocate", "'shuffle'"),
        ("gangpreempt", "'gangpreempt'"),
        ("Allocate", "'Allocate'"),
        ("enqueue,,allocate", "an empty name"),
        ("", "an empty name"),
    ],
)
def test_unknown_action_is_an_error_naming_it(text: str, shown: str) -> None:
    with pytest.raises(PolicyError) as info:
        Policy.from_dict({"actions": text})
    assert str(info.value) == (
        f"actions: unknown action {shown} (Fairway runs enqueue, allocate, backfill, reclaim, preempt)"
    )


def test_actions_missing_or_mistyped() -> None:
    with pytest.raises(PolicyError, match="actions: missing"):
        Policy.from_dict({"tiers": []})
    with pytest.raises(PolicyError, match="actions: expected a comma-separated string, got int"):
        Policy.from_dict({"actions": 3})
    # A YAML list is not Volcano's format but its meaning is plain.
    assert Policy.from_dict({"actions": ["enqueue", "allocate"]}).actions == ("enqueue", "allocate")


# -- plugins -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["sla", "tdm", "numaaware", "task-topology", "resourcequota"])
def test_unknown_plugins_are_kept_and_flagged(name: str) -> None:
    policy = Policy.from_dict(
        {"actions": "allocate", "tiers": [{"plugins": [{"name": "priority"}, {"name": name, "arguments": {"x": 1}}]}]}
    )
    assert [p.name for p in policy.tiers[0]] == ["priority", name]
    plugin = policy.plugin(name)
    assert plugin is not None and not plugin.supported and plugin.arguments == {"x": 1}
    assert policy.unsupported_plugins == (name,)
    assert policy.warnings == (f"plugin {name} is not supported by Fairway's engine; it is kept but has no effect",)


def test_known_plugins() -> None:
    assert sorted(KNOWN_PLUGINS) == sorted(
        [
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
            "kueuefair",
        ]
    )
    assert all(PluginOption(n).supported for n in KNOWN_PLUGINS)


def test_volcano_only_switches_and_unknown_keys_are_warned_about() -> None:
    policy = one_plugin({"name": "gang", "enableTargetJob": False, "enabledHyperNodeOrder": True, "colour": "red"})
    assert policy.warnings == (
        "tiers[0].plugins[0] (gang): switch enableTargetJob has no effect in Fairway; ignored",
        "tiers[0].plugins[0] (gang): switch enabledHyperNodeOrder has no effect in Fairway; ignored",
        "tiers[0].plugins[0] (gang): unknown key 'colour'; ignored",
    )


def test_hierarchical_drf_conflicts_with_proportion_in_the_same_tier() -> None:
    # Volcano's loader refuses this pair (scheduler/util.go).
    with pytest.raises(PolicyError, match="proportion and drf with hierarchy enabled conflicts"):
        Policy.from_dict(
            {
                "actions": "allocate",
                "tiers": [{"plugins": [{"name": "drf", "enableHierarchy": True}, {"name": "proportion"}]}],
            }
        )
    # In different tiers, or without hierarchy, it is accepted.
    Policy.from_dict(
        {
            "actions": "allocate",
            "tiers": [{"plugins": [{"name": "drf", "enableHierarchy": True}]}, {"plugins": [{"name": "proportion"}]}],
        }
    )
    Policy.from_dict({"actions": "allocate", "tiers": [{"plugins": [{"name": "drf"}, {"name": "proportion"}]}]})


def test_proportion_with_capacity_is_a_warning() -> None:
    policy = Policy.from_dict(
        {"actions": "allocate", "tiers": [{"plugins": [{"name": "proportion"}]}, {"plugins": [{"name": "capacity"}]}]}
    )
    assert "proportion and capacity are both enabled; Volcano documents them as exclusive" in policy.warnings


def test_duplicate_plugin_uses_the_first_entry() -> None:
    policy = Policy.from_dict(
        {
            "actions": "allocate",
            "tiers": [
                {"plugins": [{"name": "overcommit", "arguments": {"overcommit-factor": 2.0}}]},
                {"plugins": [{"name": "overcommit", "arguments": {"overcommit-factor": 3.0}}]},
            ],
        }
    )
    assert policy.arguments_of(OVERCOMMIT) == 2.0
    assert policy.tier_of("overcommit") == 0
    assert any("listed more than once" in w for w in policy.warnings)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "expected a mapping with actions and tiers, got list"),
        (None, "expected a mapping with actions and tiers, got nothing"),
        ({"actions": "allocate", "tiers": {"plugins": []}}, "tiers: expected a list of tiers"),
        ({"actions": "allocate", "tiers": ["priority"]}, r"tiers\[0\]: expected a mapping with a plugins list"),
        ({"actions": "allocate", "tiers": [{"plugins": "gang"}]}, r"tiers\[0\]\.plugins: expected a list"),
        ({"actions": "allocate", "tiers": [{"plugins": ["gang"]}]}, r"tiers\[0\]\.plugins\[0\]: expected a plugin"),
        ({"actions": "allocate", "tiers": [{"plugins": [{"name": ""}]}]}, r"plugins\[0\]\.name: a plugin needs a name"),
        (
            {"actions": "allocate", "tiers": [{"plugins": [{"name": "gang", "arguments": [1]}]}]},
            r"\(gang\)\.arguments: expected a mapping",
        ),
        ({"actions": "allocate", "configurations": {"name": "x"}}, "configurations: expected a list"),
        ({"actions": "allocate", "configurations": [{"arguments": {}}]}, r"configurations\[0\]: expected a mapping"),
    ],
)
def test_malformed_policies(data: object, message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        Policy.from_dict(data)


def test_invalid_yaml_names_the_line() -> None:
    with pytest.raises(PolicyError, match=r"^invalid YAML: .*\(line 3, column 1\)$"):
        Policy.from_yaml("actions: allocate\ntiers: [\n")


def test_unknown_top_level_keys_are_warned_about() -> None:
    policy = Policy.from_dict({"actions": "allocate", "metrics": {"address": "x"}})
    assert policy.warnings == ("unknown key 'metrics'; ignored",)


# -- configurations ----------------------------------------------------------------------------------------------


def test_configurations_are_per_action_arguments() -> None:
    policy = Policy.from_yaml(
        """
actions: "enqueue, allocate, preempt"
configurations:
- name: preempt
  arguments:
    enableTopologyAwarePreemption: true
    minCandidateNodesPercentage: 10
- name: enqueue
- name: preempt
  arguments: {ignored: true}
"""
    )
    # Volcano's GetArgOfActionFromConf returns the first entry of a name.
    assert policy.action_arguments("preempt") == {
        "enableTopologyAwarePreemption": True,
        "minCandidateNodesPercentage": 10,
    }
    assert policy.action_arguments("enqueue") == {}
    assert policy.action_arguments("allocate") == {}
    assert policy.to_dict()["configurations"] == [
        {"name": "preempt", "arguments": {"enableTopologyAwarePreemption": True, "minCandidateNodesPercentage": 10}},
        {"name": "enqueue", "arguments": {}},
    ]


# -- typed plugin arguments --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "expected", "warned"),
    [
        ({}, 1.2, False),
        ({"overcommit-factor": 1.5}, 1.5, False),
        ({"overcommit-factor": 2}, 2.0, False),
        ({"overcommit-factor": 1.0}, 1.0, False),
        ({"overcommit-factor": 0.8}, 1.2, True),  # below 1: Volcano uses the default
        ({"overcommit-factor": "1.5"}, 1.2, True),  # not a number: Volcano's GetFloat64 keeps the default
    ],
)
def test_overcommit_factor(arguments: dict[str, Any], expected: float, warned: bool) -> None:
    policy = one_plugin({"name": "overcommit", "arguments": arguments}, "enqueue")
    assert policy.arguments_of(OVERCOMMIT) == expected
    assert bool(policy.warnings) is warned
    assert Policy.from_dict({"actions": "enqueue"}).arguments_of(OVERCOMMIT) == 1.2  # plugin absent


@pytest.mark.parametrize(
    ("arguments", "level", "warned"),
    [({}, 0, False), ({"ancestorReclaimLevel": 2}, 2, False), ({"ancestorReclaimLevel": -1}, 0, True)],
)
def test_capacity_ancestor_reclaim_level(arguments: dict[str, Any], level: int, warned: bool) -> None:
    policy = one_plugin({"name": "capacity", "enableHierarchy": True, "arguments": arguments})
    assert policy.arguments_of(CAPACITY) == CapacityArgs(ancestor_reclaim_level=level)
    assert policy.plugin("capacity") is not None and policy.plugin("capacity").hierarchy  # type: ignore[union-attr]
    assert bool(policy.warnings) is warned


def test_nodeorder_weights_as_volcano_names_them() -> None:
    assert one_plugin({"name": "nodeorder"}).arguments_of(NODEORDER) == NodeOrderWeights(
        least_requested=1,
        most_requested=0,
        node_affinity=2,
        pod_affinity=2,
        balanced_resource=1,
        taint_toleration=3,
        image_locality=1,
        pod_topology_spread=2,
    )
    policy = one_plugin(
        {
            "name": "nodeorder",
            "arguments": {
                "leastrequested.weight": 0,
                "mostrequested.weight": 5,
                "nodeaffinity.weight": 4,
                "podaffinity.weight": 3,
                "balancedresource.weight": 2,
                "tainttoleration.weight": 7,
                "imagelocality.weight": 0,
                "podtopologyspread.weight": 9,
            },
        }
    )
    assert policy.arguments_of(NODEORDER) == NodeOrderWeights(0, 5, 4, 3, 2, 7, 0, 9)
    # A non-integer is ignored with a warning, as Volcano's GetInt does.
    bad = one_plugin({"name": "nodeorder", "arguments": {"leastrequested.weight": 1.5}})
    assert bad.arguments_of(NODEORDER).least_requested == 1
    assert bad.warnings == ("nodeorder: argument leastrequested.weight=1.5 is not an integer; using 1",)


def test_binpack_weights_from_volcanos_example() -> None:
    # The argument block documented in plugins/binpack/binpack.go.
    policy = Policy.from_yaml(
        """
actions: "enqueue, reclaim, allocate, backfill, preempt"
tiers:
- plugins:
  - name: binpack
    arguments:
      binpack.weight: 10
      binpack.cpu: 5
      binpack.memory: 1
      binpack.resources: nvidia.com/gpu, example.com/foo
      binpack.resources.nvidia.com/gpu: 2
      binpack.resources.example.com/foo: 3
"""
    )
    weights = policy.arguments_of(BINPACK)
    assert weights == BinpackWeights(weight=10, cpu=5, memory=1, resources={"nvidia.com/gpu": 2, "example.com/foo": 3})
    assert weights.resource_weights() == {"nvidia.com/gpu": 2, "example.com/foo": 3, "cpu": 5, "memory": 1}
    # Negative cpu/memory/resource weights fall back to 1 (calculateWeight).
    negative = one_plugin(
        {
            "name": "binpack",
            "arguments": {
                "binpack.cpu": -3,
                "binpack.memory": -1,
                "binpack.resources": "x/y",
                "binpack.resources.x/y": -2,
            },
        }
    )
    assert negative.arguments_of(BINPACK) == BinpackWeights(weight=1, cpu=1, memory=1, resources={"x/y": 1})
    assert Policy.from_dict({"actions": "allocate"}).arguments_of(BINPACK) == BinpackWeights()


def test_elastic_quota_args_defaults_and_overrides() -> None:
    # Koordinator's ElasticQuotaArgs defaults (pkg/scheduler/apis/config/v1/defaults.go).
    defaults = ElasticQuotaArgs()
    assert defaults == ElasticQuotaArgs(
        enable_runtime_quota=True,
        enable_min_quota_scale=True,
        enable_check_parent_quota=False,
        monitor_all_quotas=False,
        delay_evict_time=120.0,
        revoke_pod_interval=1.0,
        disable_default_quota_preemption=True,
    )
    assert one_plugin({"name": "elasticquota"}).elastic_quota_args() == defaults
    assert Policy.from_dict({"actions": "allocate"}).elastic_quota_args() == defaults
    policy = one_plugin(
        {
            "name": "elasticquota",
            "arguments": {
                "enableRuntimeQuota": False,
                "enableMinQuotaScale": False,
                "enableCheckParentQuota": True,
                "monitorAllQuotas": True,
                "delayEvictTime": "2m30s",
                "revokePodInterval": "500ms",
                "quotaGroupNamespace": "koordinator-system",  # a Koordinator argument Fairway does not use
            },
        }
    )
    assert policy.elastic_quota_args() == ElasticQuotaArgs(False, False, True, True, 150.0, 0.5, True)
    # Arguments not given fall back to the base (e.g. a KubeSchedulerConfiguration's), then to the defaults.
    base = ElasticQuotaArgs(monitor_all_quotas=True, delay_evict_time=60.0)
    partial = one_plugin({"name": "elasticquota", "arguments": {"delayEvictTime": "10s"}})
    assert partial.elastic_quota_args(base) == ElasticQuotaArgs(monitor_all_quotas=True, delay_evict_time=10.0)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"enableRuntimeQuota": "true"}, "elasticquota argument enableRuntimeQuota: expected true or false"),
        ({"delayEvictTime": "two minutes"}, "elasticquota argument delayEvictTime: 'two minutes' is not a duration"),
        ({"revokePodInterval": "-1s"}, "elasticquota argument revokePodInterval: '-1s' must not be negative"),
        ({"revokeWholeGangs": "no"}, "elasticquota argument revokeWholeGangs: expected true or false"),
    ],
)
def test_elastic_quota_args_are_strict(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        one_plugin({"name": "elasticquota", "arguments": arguments})


def test_elastic_quota_args_round_trip_through_arguments() -> None:
    args = ElasticQuotaArgs(False, True, True, False, 90.5, 2.0, False)
    assert parse_elastic_quota_args(args.to_arguments()) == args
    # Fairway's own key is written only when turned on (Koordinator's files stay Koordinator's)
    assert "revokeWholeGangs" not in args.to_arguments()
    whole = ElasticQuotaArgs(revoke_whole_gangs=True)
    assert whole.to_arguments()["revokeWholeGangs"] is True
    assert parse_elastic_quota_args(whole.to_arguments()) == whole
    assert parse_elastic_quota_args({"revokeWholeGangs": True}).revoke_whole_gangs


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("120s", 120.0),
        ("1s", 1.0),
        ("1m30s", 90.0),
        ("1.5h", 5400.0),
        ("300ms", 0.3),
        ("2h45m", 9900.0),
        ("1h1m1s", 3661.0),
        ("0", 0.0),
        ("+5s", 5.0),
        (30, 30.0),
        (0.5, 0.5),
    ],
)
def test_parse_duration(text: object, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "5", "5 s", "s", "1d", "abc", True, None, "-3m"])
def test_parse_duration_rejects(text: object) -> None:
    with pytest.raises(PolicyError, match=r"^delay: "):
        parse_duration(text, "delay")


# -- the shipped configuration -------------------------------------------------------------------------------------


@needs_peer_manifests
def test_volcano_helm_scheduler_conf() -> None:
    policy = Policy.from_yaml(HELM_CONF.read_text())
    assert policy.actions == ("enqueue", "allocate", "backfill")
    assert [[p.name for p in tier] for tier in policy.tiers] == [
        ["priority", "gang", "conformance"],
        ["overcommit", "drf", "predicates", "proportion", "nodeorder", "binpack"],
    ]
    gang, drf = policy.plugin("gang"), policy.plugin("drf")
    assert gang is not None and drf is not None
    assert gang.preemptable is False and drf.preemptable is False  # enablePreemptable: false
    assert gang.reclaimable and gang.job_ready and drf.job_order and not drf.namespace_order
    assert policy.warnings == ()
    assert policy.unsupported_plugins == ()
    assert Policy.from_yaml(policy.to_yaml()) == policy


# -- round trips -------------------------------------------------------------------------------------------------

_switch_values = st.fixed_dictionaries({}, optional={s: st.booleans() for s, _, _ in SWITCHES})
_arguments = st.dictionaries(
    st.sampled_from(["x", "y.weight", "binpack.weight", "leastrequested.weight"]), st.integers(0, 5), max_size=3
)
_plugins = st.builds(
    lambda name, switches, args: {"name": name, **switches, **({"arguments": args} if args else {})},
    st.sampled_from([*sorted(KNOWN_PLUGINS - {"proportion", "elasticquota", "kueuefair"}), "sla"]),
    _switch_values,
    _arguments,
)


@given(
    actions=st.lists(st.sampled_from(ACTIONS), min_size=1, max_size=5),
    tiers=st.lists(st.lists(_plugins, max_size=4), max_size=3),
)
def test_policy_round_trips_through_its_dict_and_yaml(actions: list[str], tiers: list[list[dict[str, Any]]]) -> None:
    policy = Policy.from_dict({"actions": ", ".join(actions), "tiers": [{"plugins": t} for t in tiers]})
    assert Policy.from_dict(policy.to_dict()) == policy
    assert Policy.from_yaml(policy.to_yaml()) == policy
    for tier_in, tier in zip(tiers, policy.tiers, strict=True):
        for entry, plugin in zip(tier_in, tier, strict=True):
            for spelling, value in entry.items():
                if spelling not in ("name", "arguments"):
                    assert plugin.switch(spelling) is value


def test_with_actions_and_queries() -> None:
    policy = DEFAULT_POLICY.with_actions("enqueue", "allocate", "reclaim")
    assert policy.actions == ("enqueue", "allocate", "reclaim")
    assert policy.tiers == DEFAULT_POLICY.tiers
    assert policy.tier_of("gang") == 0 and policy.tier_of("nodeorder") == 1 and policy.tier_of("capacity") is None
    assert policy.has_plugin("drf") and not policy.has_plugin("binpack")
    with pytest.raises(PolicyError, match="unknown action 'shuffle'"):
        DEFAULT_POLICY.with_actions("shuffle")
