"""What every plugin's argument reader shares: the registry of plugin names, the policy error, and Volcano's
lenient readers (``framework.Arguments.GetInt`` / ``GetFloat64``: a value of the wrong type is reported and the
default kept).

Light on purpose: ``engine.policy.policy`` reads its default policy when it is imported, before any plugin class
(which imports the session) can be, so the readers (here and in each plugin's ``arguments.py``) import nothing of
the session.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = [
    "PLUGIN_ARGUMENTS",
    "ArgumentReader",
    "PluginArguments",
    "PolicyError",
    "declare",
    "format_duration",
    "get_float",
    "get_int",
    "parse_duration",
]


class PolicyError(ValueError):
    """A scheduler policy that cannot be used; the message names the offending part."""


T = TypeVar("T")

# (the plugin's arguments, or None when the policy does not enable it; the list warnings go to, or None) -> value
ArgumentReader = Callable[[Mapping[str, Any] | None, list[str] | None], T]


@dataclass(frozen=True, slots=True)
class PluginArguments(Generic[T]):
    """A plugin a policy can name and, when it takes arguments, the function that reads them (what a plugin's
    folder declares; ``Policy.arguments_of`` gives its arguments as read, once per policy)."""

    name: str
    read: ArgumentReader[T] | None = None


# Every plugin Fairway's engine provides, in the order the registry (``engine.session.plugins``) declares them,
# which is the order a policy's argument warnings come in.
PLUGIN_ARGUMENTS: dict[str, PluginArguments[Any]] = {}


def declare(name: str, read: ArgumentReader[T] | None = None) -> PluginArguments[T]:
    """Make ``name`` a plugin a policy may name, read by ``read`` (None: it takes no arguments); returns the
    declaration, which the plugin hands to ``Policy.arguments_of``."""
    known = PLUGIN_ARGUMENTS.get(name)
    if known is not None and known.read is not read:
        raise ValueError(f"plugin {name!r} declares its arguments twice")
    declared = PluginArguments(name, read)
    PLUGIN_ARGUMENTS[name] = declared
    return declared


def get_int(args: Mapping[str, Any], key: str, default: int, warnings: list[str] | None, where: str) -> int:
    if key not in args:
        return default
    value = args[key]
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if warnings is not None:
        warnings.append(f"{where}: argument {key}={value!r} is not an integer; using {default}")
    return default


def get_float(args: Mapping[str, Any], key: str, default: float, warnings: list[str] | None, where: str) -> float:
    if key not in args:
        return default
    value = args[key]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if warnings is not None:
        warnings.append(f"{where}: argument {key}={value!r} is not a number; using {default}")
    return default


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
