"""Words for people: a count with its noun in the right number, a length of time (used by the engine's messages
and the pages)."""

from __future__ import annotations

import re

from engine.resources import format_amount, is_unlimited, milli_scale, nouns

__all__ = ["EVICTED", "amount", "duration", "duration_or", "plural", "spelled_duration"]

_SUFFIX = re.compile(r"^([0-9.]+)([KMGTPE]i|[kMGTPE])?$")


def plural(count: int, word: str, many: str | None = None) -> str:
    """``count`` and ``word`` in the right number: ``plural(1, "pod")`` is "1 pod", ``plural(2, "pod")`` "2 pods",
    ``plural(2, "child queue")`` "2 child queues"; ``many`` gives an irregular plural (``plural(3, "child",
    "children")``). Words ending in s, x, ch or sh take "es" ("2 taxes")."""
    if count == 1:
        return f"{count} {word}"
    if many is None:
        many = word + "es" if word.endswith(("s", "x", "ch", "sh")) else word + "s"
    return f"{count} {many}"


def spelled_duration(seconds: float) -> str:
    """A length of time in words, in its two largest units: "3 days", "1 day 12 hours", "12 hours", "1 hour 30
    minutes", "45 seconds" (whole units, rounded down)."""
    left = max(0, int(seconds))
    units = ((86400, "day"), (3600, "hour"), (60, "minute"), (1, "second"))
    for i, (size, name) in enumerate(units[:-1]):
        if left >= size:
            first, rest = divmod(left, size)
            small, small_name = units[i + 1]
            second = rest // small
            return f"{plural(first, name)} {plural(second, small_name)}" if second else plural(first, name)
    return plural(left, "second")


def duration(seconds: float) -> str:
    """A length of time as a person says it, in its two largest units: "45 s", "12 min", "4 min 10 s",
    "3 h 20 min", "2 d 4 h" (whole units, rounded down; more than nothing but less than a second is "under 1 s", not
    "0 s": a median wait of 0.4 s is a wait)."""
    if 0 < seconds < 1:
        return "under 1 s"
    left = max(0, int(seconds))
    for big, big_name, small, small_name in ((86400, "d", 3600, "h"), (3600, "h", 60, "min"), (60, "min", 1, "s")):
        if left >= big:
            first, rest = divmod(left, big)
            second = rest // small
            return f"{first} {big_name} {second} {small_name}" if second else f"{first} {big_name}"
    return f"{left} s"


def duration_or(seconds: float | None, missing: str) -> str:
    """``duration`` of a length that may be unknown (a wait of jobs none of which started): ``missing`` then ("—" on a
    page, "-" in a terminal's table)."""
    return missing if seconds is None else duration(seconds)


def amount(value: int | None, resource: str) -> str:
    """An exact amount of ``resource`` (base units) in the words people use: "124 cores", "2.5 cores", "1 core",
    "96 GiB", "512 MiB", "4 GPUs", "1 GPU", "3 pods", "2 example.com/fpga", "unlimited" (the number as
    ``engine.resources.format_amount`` writes it, with its unit spelled out)."""
    if is_unlimited(value):
        return "unlimited"
    assert value is not None
    text = format_amount(value, resource)
    if milli_scale(resource) == 1:  # bytes: 96Gi -> 96 GiB, 2G -> 2 GB, 512 -> 512 bytes; ≈2.235 GiB as it is
        found = _SUFFIX.match(text)
        if found is None:
            return text if text.startswith("\u2248") else f"{text} bytes"
        number, suffix = found.groups()
        return f"{number} {suffix}B" if suffix else f"{number} bytes"
    words = nouns(resource)  # the one table of nouns (engine.resources.NOUNS): cores, GPUs, pods
    if words is None:
        return f"{text} {resource}"
    return f"{text} {words[0] if text == '1' else words[1]}"


# what happened to an evicted pod, by the eviction's action (the job page, the team page and ``fairway eviction``)
EVICTED = {
    "reclaim": "reclaimed",
    "preempt": "preempted",
    "recycle": "recycled",
    "node-lost": "lost with its node",
    "gang-release": "released with its gang",
    "suspend": "released when its job was suspended",
    "requeue": "released when its job was requeued",
    "drain": "drained when its queue was stopped",
}
