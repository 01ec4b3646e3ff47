"""The plugins Fairway's engine provides, by the name a policy uses (one module per plugin)."""

from __future__ import annotations

from engine.session.framework import Plugin
from engine.session.plugins.binpack import BinpackPlugin
from engine.session.plugins.capacity import CapacityPlugin
from engine.session.plugins.conformance import ConformancePlugin
from engine.session.plugins.drf import DrfPlugin
from engine.session.plugins.elasticquota import ElasticQuotaPlugin
from engine.session.plugins.gang import GangPlugin
from engine.session.plugins.nodeorder import NodeOrderPlugin
from engine.session.plugins.overcommit import OvercommitPlugin
from engine.session.plugins.predicates import PredicatesPlugin
from engine.session.plugins.priority import PriorityPlugin
from engine.session.plugins.proportion import ProportionPlugin

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
