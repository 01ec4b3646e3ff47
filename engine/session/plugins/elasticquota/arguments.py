"""``elasticquota`` plugin arguments: Koordinator's ``ElasticQuotaArgs``, decoded strictly as Koordinator's
configuration decoder does (a bad value is a ``PolicyError``, not a warning)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from engine.policy.arguments import PolicyError, declare, format_duration, parse_duration
from engine.policy.fairness import FairnessArgs, parse_fairness_args

__all__ = ["ELASTICQUOTA", "ElasticQuotaArgs", "parse_elastic_quota_args", "read_elastic_quota_args"]


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
    # Fairway's fairness over time (``engine.policy.fairness``), not a Koordinator key
    fairness: FairnessArgs = field(default_factory=FairnessArgs)
    # Fairway's ``revokeWholeGangs``, not a Koordinator key: when true, recycling chooses victims with gangs in
    # mind and never leaves a gang below its minMember (spare pods first, then the least-waste set of whole gangs);
    # off by default, as Koordinator revokes pod by pod (see ``engine.session.recycle``)
    revoke_whole_gangs: bool = False

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
        out.update(self.fairness.to_arguments())  # nothing unless fairness over time is configured
        if self.revoke_whole_gangs:  # written only when turned on: Koordinator's files stay Koordinator's
            out["revokeWholeGangs"] = True
        return out


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
    if "revokeWholeGangs" in arguments:
        values["revoke_whole_gangs"] = _strict_bool(arguments["revokeWholeGangs"], "revokeWholeGangs")
    if any(key in arguments for key in FairnessArgs.KEYS):
        values["fairness"] = parse_fairness_args(arguments, "elasticquota")
    return ElasticQuotaArgs(**values)


def read_elastic_quota_args(arguments: Mapping[str, Any] | None, warnings: list[str] | None = None) -> ElasticQuotaArgs:
    """The registry's reader: strict, so ``warnings`` stays untouched and a bad value raises."""
    return parse_elastic_quota_args(arguments)


ELASTICQUOTA = declare("elasticquota", read_elastic_quota_args)
