"""Kueue's Configuration (``config.kueue.x-k8s.io`` ``Configuration``, bare or in the ``kueue-manager-config``
ConfigMap under ``controller_manager_config.yaml``) as a policy input.

``read_kueue_configuration`` reads the whole object once into a ``KueueConfiguration``: the sections Fairway maps
(``waitForPodsReady``, ``admissionFairSharing``) decoded and checked, and the object itself (``raw``) for the readers
of other sections (``fairSharing``: the fair-sharing plugin's). A bad value is a ``_FieldError`` naming the field.

* ``waitForPodsReady`` (``WaitForPodsReady``): v1beta1 reads ``enable`` (default false) and a ``timeout`` of 5
  minutes; v1beta2 has no switch (the section is always in force) and a timeout of 30 minutes, as Kueue's defaults;
  ``recoveryTimeout`` defaults to the timeout, ``requeuingStrategy`` to a backoff base of 60 s and a maximum of
  3600 s. ``apply_wait_for_pods_ready`` maps it onto the ``enqueue`` configuration: ``gangRepairTimeout`` is the
  recovery timeout (a running gang below its minimum is released whole after it; disabled: 0, never), and
  ``requeueBackoff`` / ``requeueBackoffMax`` are the backoff base and maximum (docs/recycling-and-gangs.md);
* ``admissionFairSharing`` (``engine.admission.AdmissionFairSharing``): ``usageHalfLifeTime`` (required),
  ``usageSamplingInterval`` (default 5m) and ``resourceWeights`` (a number per resource, default 1).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from engine.admission import AdmissionFairSharing
from engine.manifests.common import _FieldError, _map
from engine.policy.arguments import PolicyError, format_duration, parse_duration
from engine.policy.fairness import format_days
from engine.policy.policy import Policy

__all__ = [
    "KUEUE_CONFIGMAP",
    "KUEUE_CONFIG_GROUP",
    "KUEUE_CONFIG_KEY",
    "KueueConfiguration",
    "WaitForPodsReady",
    "apply_wait_for_pods_ready",
    "is_kueue_configuration",
    "read_kueue_configuration",
]

KUEUE_CONFIG_GROUP = "config.kueue.x-k8s.io"
KUEUE_CONFIGMAP = "kueue-manager-config"
KUEUE_CONFIG_KEY = "controller_manager_config.yaml"

_V1BETA1_TIMEOUT = 300.0  # Kueue v1beta1's default waitForPodsReady.timeout
_V1BETA2_TIMEOUT = 1800.0  # v1beta2's
_BACKOFF_BASE = 60  # requeuingStrategy.backoffBaseSeconds
_BACKOFF_MAX = 3600  # requeuingStrategy.backoffMaxSeconds
_SAMPLING = 300.0  # admissionFairSharing.usageSamplingInterval


@dataclass(frozen=True, slots=True)
class WaitForPodsReady:
    """Kueue's ``waitForPodsReady`` as read (seconds). ``enabled`` false: Kueue never evicts for readiness."""

    enabled: bool
    timeout: float
    recovery_timeout: float
    backoff_base: float = float(_BACKOFF_BASE)
    backoff_max: float = float(_BACKOFF_MAX)
    backoff_limit_count: int | None = None
    block_admission: bool = False


@dataclass(frozen=True)
class KueueConfiguration:
    """One Kueue Configuration: where it came from, the sections Fairway maps, and the object as given."""

    where: str
    wait_for_pods_ready: WaitForPodsReady
    admission_fair_sharing: AdmissionFairSharing | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)


def is_kueue_configuration(obj: object) -> bool:
    """Whether ``obj`` is a Kueue Configuration (``config.kueue.x-k8s.io/<version>``, kind ``Configuration``)."""
    if not isinstance(obj, Mapping) or obj.get("kind") != "Configuration":
        return False
    version = obj.get("apiVersion")
    return isinstance(version, str) and version.partition("/")[0] == KUEUE_CONFIG_GROUP


def _seconds(value: object, path: str, default: float) -> float:
    if value is None:
        return default
    try:
        seconds = parse_duration(value, path)
    except PolicyError as exc:
        raise _FieldError(str(exc)) from None
    if seconds < 0:
        raise _FieldError(f"{path}: {value!r} must not be negative")
    return seconds


def _whole(value: object, path: str, default: int | None, least: int) -> int | None:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise _FieldError(f"{path}: expected a whole number of at least {least}, got {value!r}")
    return value


def _flag(value: object, path: str, default: bool) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise _FieldError(f"{path}: expected true or false, got {value!r}")
    return value


def _wait_for_pods_ready(section: Mapping[str, Any], v1beta1: bool) -> WaitForPodsReady:
    path = "waitForPodsReady"
    enabled = _flag(section.get("enable"), f"{path}.enable", False) if v1beta1 else True
    timeout = _seconds(section.get("timeout"), f"{path}.timeout", _V1BETA1_TIMEOUT if v1beta1 else _V1BETA2_TIMEOUT)
    if timeout == 0:
        timeout = _V1BETA1_TIMEOUT if v1beta1 else _V1BETA2_TIMEOUT  # Kueue reads 0 as unset
    recovery = _seconds(section.get("recoveryTimeout"), f"{path}.recoveryTimeout", timeout)
    strategy = _map(section.get("requeuingStrategy"), f"{path}.requeuingStrategy")
    spath = f"{path}.requeuingStrategy"
    stamp = strategy.get("timestamp")
    if stamp is not None and stamp not in ("Eviction", "Creation"):
        raise _FieldError(f"{spath}.timestamp: {stamp!r} is not one of Eviction, Creation")
    base = _whole(strategy.get("backoffBaseSeconds"), f"{spath}.backoffBaseSeconds", _BACKOFF_BASE, 0)
    most = _whole(strategy.get("backoffMaxSeconds"), f"{spath}.backoffMaxSeconds", _BACKOFF_MAX, 0)
    assert base is not None and most is not None
    if most < base:
        raise _FieldError(f"{spath}.backoffMaxSeconds: {most} is below backoffBaseSeconds ({base})")
    return WaitForPodsReady(
        enabled=enabled,
        timeout=timeout,
        recovery_timeout=recovery,
        backoff_base=float(base),
        backoff_max=float(most),
        backoff_limit_count=_whole(strategy.get("backoffLimitCount"), f"{spath}.backoffLimitCount", None, 0),
        block_admission=_flag(section.get("blockAdmission"), f"{path}.blockAdmission", False),
    )


def _admission_fair_sharing(section: Mapping[str, Any]) -> AdmissionFairSharing:
    path = "admissionFairSharing"
    if section.get("usageHalfLifeTime") is None:
        raise _FieldError(f"{path}.usageHalfLifeTime: missing (e.g. 168h)")
    half_life = _seconds(section.get("usageHalfLifeTime"), f"{path}.usageHalfLifeTime", 0.0)
    sampling = _seconds(section.get("usageSamplingInterval"), f"{path}.usageSamplingInterval", _SAMPLING) or _SAMPLING
    weights: dict[str, Fraction] = {}
    for name, raw in _map(section.get("resourceWeights"), f"{path}.resourceWeights").items():
        where = f"{path}.resourceWeights.{name}"
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            raise _FieldError(f"{where}: expected a number, got {raw!r}")
        if raw < 0:
            raise _FieldError(f"{where}: {raw!r} must not be negative")
        weights[str(name)] = Fraction(str(raw))
    return AdmissionFairSharing(half_life=half_life, sampling_interval=sampling, resource_weights=weights)


def read_kueue_configuration(obj: Mapping[str, Any], where: str) -> KueueConfiguration:
    """The Kueue Configuration ``obj`` (``is_kueue_configuration``), read from ``where``; ``_FieldError`` names a bad
    field."""
    v1beta1 = str(obj.get("apiVersion", "")).endswith("/v1beta1")
    wait = obj.get("waitForPodsReady")
    if wait is None and v1beta1:
        ready = WaitForPodsReady(enabled=False, timeout=_V1BETA1_TIMEOUT, recovery_timeout=_V1BETA1_TIMEOUT)
    else:
        ready = _wait_for_pods_ready(_map(wait, "waitForPodsReady"), v1beta1)
    afs = obj.get("admissionFairSharing")
    return KueueConfiguration(
        where=where,
        wait_for_pods_ready=ready,
        admission_fair_sharing=None if afs is None else _admission_fair_sharing(_map(afs, "admissionFairSharing")),
        raw=obj,
    )


def apply_wait_for_pods_ready(policy: Policy, config: KueueConfiguration) -> tuple[Policy, str]:
    """``policy`` with its ``enqueue`` configuration set from ``config``'s ``waitForPodsReady`` (the module
    docstring), and a sentence saying what was set."""
    ready = config.wait_for_pods_ready
    args: dict[str, Any] = dict(policy.action_arguments("enqueue"))
    if ready.enabled:
        args["gangRepairTimeout"] = format_duration(ready.recovery_timeout)
        args["requeueBackoff"] = format_duration(ready.backoff_base)
        args["requeueBackoffMax"] = format_duration(ready.backoff_max)
        said = (
            f"{config.where}: waitForPodsReady: a gang below its minimum is released whole after "
            f"{format_days(ready.recovery_timeout)} (gangRepairTimeout), then waits a backoff of "
            f"{format_days(ready.backoff_base)} doubling up to {format_days(ready.backoff_max)}"
        )
    else:
        args["gangRepairTimeout"] = "0s"
        said = (
            f"{config.where}: waitForPodsReady is off: a gang below its minimum is never released (gangRepairTimeout 0)"
        )
    data = policy.to_dict()
    configurations = [c for c in data.get("configurations", []) if c.get("name") != "enqueue"]
    data["configurations"] = [*configurations, {"name": "enqueue", "arguments": args}]
    return Policy.from_dict(data), said
