"""Koordinator kinds: ElasticQuota (the quota tree) and the ElasticQuota plugin's arguments in a KubeSchedulerConfiguration."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from engine.manifests.common import (
    _FROM_KOORD,
    FAIRWAY_MIN_SCALE_EXEMPT,
    KOORD_ALLOW_LENT,
    KOORD_IS_PARENT,
    KOORD_IS_ROOT,
    KOORD_NAMESPACES,
    KOORD_PARENT,
    KOORD_SHARED_WEIGHT,
    KOORD_TREE_ID,
    _BuilderBase,
    _Doc,
    _FieldError,
    _json_annotation,
    _limit_annotations,
    _list,
    _map,
    _past_usage_annotation,
    _rl,
    _string_map,
    _user_limits_annotation,
)
from engine.objects import ROOT_GROUP, QuotaGroupSpec
from engine.policy.policy import PolicyError, parse_elastic_quota_args
from engine.resources import ResourceList
from engine.treefields import QUOTA_GROUP_FIELDS, from_annotations
from engine.usage import QUOTA


class KoordinatorReaders(_BuilderBase):
    def _elastic_quota(self, doc: _Doc) -> None:
        spec = doc.spec
        quota_min = _rl(spec.get("min"), "spec.min")
        quota_max = _rl(spec.get("max"), "spec.max")
        labels = _string_map(doc.meta.get("labels"), "metadata.labels", doc, self.warnings)
        annotations = _string_map(doc.meta.get("annotations"), "metadata.annotations", doc, self.warnings)
        name = _FROM_KOORD.get(doc.name, doc.name)
        is_root = name == ROOT_GROUP
        parent_label = labels.get(KOORD_PARENT, "")
        parent: str | None = _FROM_KOORD.get(parent_label, parent_label) or ROOT_GROUP
        if is_root or labels.get(KOORD_IS_ROOT) == "true":
            parent = None
        is_parent_label = labels.get(KOORD_IS_PARENT)
        allow_lent_label = labels.get(KOORD_ALLOW_LENT)
        shared_raw = _json_annotation(annotations, KOORD_SHARED_WEIGHT, self.limits.max_json_depth)
        shared: ResourceList | None = None
        if shared_raw is not None:
            shared = _rl(shared_raw, f"metadata.annotations[{KOORD_SHARED_WEIGHT}]")
            if shared.is_zero():
                shared = None  # Koordinator: a zero shared weight falls back to max
        ns_raw = _json_annotation(annotations, KOORD_NAMESPACES, self.limits.max_json_depth)
        namespaces: tuple[str, ...] = ()
        if ns_raw is not None:
            if not isinstance(ns_raw, list) or not all(isinstance(n, str) for n in ns_raw):
                raise _FieldError(f"metadata.annotations[{KOORD_NAMESPACES}]: expected a JSON list of namespace names")
            namespaces = tuple(ns_raw)
        borrowing, lending = _limit_annotations(annotations, self.limits.max_json_depth)
        _past_usage_annotation(annotations, QUOTA, name, self.past_ratios)
        if KOORD_TREE_ID in labels:
            self.tree_id_given.add(name)
        else:
            self.tree_id_given.discard(name)
        spec_obj = QuotaGroupSpec(
            name=name,
            parent=parent,
            # The root quota is a parent that lends nothing unless its labels say otherwise.
            is_parent=(is_parent_label == "true") if is_parent_label is not None else is_root,
            min=quota_min,
            max=quota_max,
            shared_weight=shared,
            allow_lent=(allow_lent_label != "false") if allow_lent_label is not None else not is_root,
            tree_id=labels.get(KOORD_TREE_ID, ""),
            min_scale_exempt=annotations.get(FAIRWAY_MIN_SCALE_EXEMPT) == "true",
            borrowing_limit=borrowing,
            lending_limit=lending,
            user_limits=_user_limits_annotation(annotations, self.limits.max_json_depth),
            **from_annotations(QUOTA_GROUP_FIELDS, annotations),
        )
        self._add_group(spec_obj, namespaces)

    def _inherit_tree_ids(self) -> None:
        # Koordinator's mutating webhook copies a missing tree-id from the parent quota: the nearest ancestor's that
        # has one. Each chain is walked once (``found``: the tree id a group passes to its children), so a
        # 20,000-level chain costs 20,000 steps, not 200 million.
        found: dict[str, str] = {}
        for start in list(self.groups):
            path: list[str] = []
            on_path: set[str] = set()
            node: str | None = start
            while node is not None and node in self.groups and node not in found and node not in on_path:
                path.append(node)
                on_path.add(node)
                if self.groups[node].tree_id:
                    break
                node = self.groups[node].parent
            inherited = found.get(node, "") if node is not None else ""
            for member in reversed(path):
                own = self.groups[member].tree_id
                inherited = found[member] = own or inherited
        for name in list(self.groups):
            spec = self.groups[name]
            if name in self.tree_id_given or spec.tree_id or spec.parent is None:
                continue
            tree_id = found.get(spec.parent, "")
            if tree_id:
                self.groups[name] = _replace_group(spec, tree_id=tree_id)

    def _kube_scheduler_configuration(self, doc: _Doc) -> None:
        if not self._elastic_quota_plugin_args(doc, doc.obj, ""):
            self.warnings.append(f"{doc.where}: no ElasticQuota plugin arguments; skipped")

    def _elastic_quota_plugin_args(self, doc: _Doc, config: Mapping[str, Any], prefix: str) -> bool:
        found = False
        dot = f"{prefix}." if prefix else ""
        for i, profile in enumerate(_list(config.get("profiles"), f"{dot}profiles")):
            profile_map = _map(profile, f"{dot}profiles[{i}]")
            for j, entry in enumerate(_list(profile_map.get("pluginConfig"), f"{dot}profiles[{i}].pluginConfig")):
                entry_map = _map(entry, f"{dot}profiles[{i}].pluginConfig[{j}]")
                if entry_map.get("name") != "ElasticQuota":
                    continue
                args = _map(entry_map.get("args"), f"{dot}profiles[{i}].pluginConfig[{j}].args")
                try:
                    self.eq_args = parse_elastic_quota_args(args)
                except PolicyError as exc:
                    raise _FieldError(f"{dot}profiles[{i}].pluginConfig[{j}].args: {exc}") from None
                found = True
        return found


def _replace_group(spec: QuotaGroupSpec, **changes: Any) -> QuotaGroupSpec:
    return dataclasses.replace(spec, **changes)
