"""The plugins Fairway's engine provides, by the name a policy uses (one module per plugin)."""

from __future__ import annotations

from scheduling.engine.framework import Plugin
from scheduling.engine.plugins.binpack import BinpackPlugin
from scheduling.engine.plugins.capacity import CapacityPlugin
from scheduling.engine.plugins.conformance import ConformancePlugin
from scheduling.engine.plugins.drf import DrfPlugin
from scheduling.engine.plugins.elasticquota import ElasticQuotaPlugin
from scheduling.engine.plugins.gang import GangPlugin
from scheduling.engine.plugins.nodeorder import NodeOrderPlugin
from scheduling.engine.plugins.overcommit import OvercommitPlugin
from scheduling.engine.plugins.predicates import PredicatesPlugin
from scheduling.engine.plugins.priority import PriorityPlugin
from scheduling.engine.plugins.proportion import ProportionPlugin

__all__ = ["PLUGINS"]

PLUGINS: dict[str, type[Plugin]] = {
    cls.name: cls
    for cls in (
        PriorityPlugin,
        GangPlugin,
        ConformancePlugin,
        OvercommitPlugin,
        DrfPlugin,
        PredicatesPlugin,
        ProportionPlugin,
        CapacityPlugin,
        NodeOrderPlugin,
        BinpackPlugin,
        ElasticQuotaPlugin,
    )
}
