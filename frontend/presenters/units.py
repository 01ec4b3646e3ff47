"""Display units of the dashboard: base-unit integers (``engine.resources``) shown as people read them.

Charts plot floats in one display unit per resource (cores, GiB, whole GPUs); tables print the same numbers with
the unit. An unlimited amount (``engine.resources.is_unlimited``: no bound, or any integer form of "unlimited")
reads as unlimited. ``pods`` is a count of pods and is hidden from the quota pages (every pod asks for one).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping

from engine.resources import display_factor, format_amount, nouns, resource_sort_key, split_flavor, unit_name
from engine.resources import is_unlimited as is_unlimited  # re-exported: the presenters read units.is_unlimited

HIDDEN_RESOURCES = frozenset({"pods"})


def unit_of(resource: str) -> tuple[float, str]:
    """(base units per display unit, unit label) of ``resource``: cpu in cores, bytes in GiB, others whole (the
    engine's one table of units and nouns, ``engine.resources.nouns``; a resource without a noun by its short name)."""
    return float(display_factor(resource)), unit_name(resource)


def to_display(amount: int | None, resource: str) -> float | None:
    """``amount`` in the display unit of ``resource`` (``None`` when unlimited)."""
    if is_unlimited(amount):
        return None
    assert amount is not None
    return amount / unit_of(resource)[0]


def places(amount: int | None, resource: str) -> int:
    """The decimals :func:`human` shows of ``amount``: 0 from 100 display units up, 1 from 10, else 2."""
    if is_unlimited(amount):
        return 0
    magnitude = abs(to_display(amount, resource) or 0.0)
    return 0 if magnitude >= 100 else 1 if magnitude >= 10 else 2


def _trim(value: float, decimals: int | None = None) -> str:
    if value == 0:
        return "0"
    if decimals is None:
        magnitude = abs(value)
        decimals = 0 if magnitude >= 100 else 1 if magnitude >= 10 else 2
    text = f"{value:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


@functools.lru_cache(maxsize=16384)
def human(
    amount: int | None, resource: str, *, unit: bool = True, signed: bool = False, decimals: int | None = None
) -> str:
    """A short reading of ``amount`` (``12.5 cores``, ``96 GiB``, ``4 GPUs``, ``unlimited``); ``decimals`` fixes the
    rounding (at most that many decimals) so that numbers read side by side add up (``228.6 → 243 cores, +14.4``:
    see :func:`places`). Kept per argument: a tree page reads some 9,000 amounts, most of them the same few."""
    if is_unlimited(amount):
        return "unlimited"
    assert amount is not None
    value = to_display(amount, resource) or 0.0
    text = _trim(value, decimals)
    if signed and amount > 0:
        text = "+" + text
    if not unit:
        return text
    words = nouns(resource)
    name = unit_of(resource)[1]
    if words is not None and text.lstrip("+-") == "1":
        name = words[0]
    return f"{text} {name}"


def in_list(amount: int | None, resource: str) -> str:
    """:func:`human` for a list of amounts side by side: a Kueue flavor's amount says its flavor (``3 cores (spot)``),
    where ``cpu@spot`` and ``cpu@on-demand`` would otherwise both read ``cores``."""
    flavor = split_flavor(resource)[1]
    return f"{human(amount, resource)} ({flavor})" if flavor else human(amount, resource)


def quantity(amount: int | None, resource: str) -> str:
    """The exact amount without its unit, as people read it (``1.5`` cores, ``3`` GPUs, ``96Gi``) or ``unlimited``
    (``engine.resources.format_amount``: a GPU amount reads ``3.2`` only when it truly is fractional)."""
    return format_amount(amount, resource)


def resource_order(names: Iterable[str]) -> list[str]:
    """cpu, memory, then the rest by name; hidden resources left out."""
    return sorted({n for n in names if n not in HIDDEN_RESOURCES}, key=resource_sort_key)


def resources_of(*lists: Mapping[str, int] | None) -> list[str]:
    """Every resource named by any of ``lists``, in display order."""
    return resource_order(k for rl in lists if rl for k in rl)


def label(resource: str) -> str:
    """A resource name with its unit, for axis titles (``cpu (cores)``; a Kueue flavor's: ``cpu (spot, cores)``)."""
    base, flavor = split_flavor(resource)
    return f"{base} ({flavor + ', ' if flavor else ''}{unit_of(resource)[1]})"
