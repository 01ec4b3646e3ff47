"""Failed token authentications counted per client address in the cache (Redis with ``FAIRWAY_CACHE_URL``, so the
count is shared by every web process; the default local-memory cache counts per process).

Once an address has sent ``FAIRWAY_TOKEN_FAILURE_LIMIT`` bad keys within ``FAIRWAY_TOKEN_FAILURE_WINDOW_SECONDS``,
every token request from it is answered 429 with ``Retry-After`` until the window ends, a valid key included: a
guesser learns nothing more while it is blocked."""

from __future__ import annotations

import time

from django.conf import settings
from django.core.cache import cache

KEY = "fairway:token-failures:{ip}"


def _keys(ip: str) -> tuple[str, str]:
    base = KEY.format(ip=ip)
    return base, base + ":until"


def retry_after(ip: str) -> int | None:
    """Seconds until ``ip`` may try a token again, or None when it is not blocked."""
    count_key, until_key = _keys(ip)
    count = cache.get(count_key) or 0
    if count < settings.FAIRWAY["TOKEN_FAILURE_LIMIT"]:
        return None
    until = cache.get(until_key)
    if until is None:
        return None
    return max(1, int(until - time.time() + 0.999))


def record_failure(ip: str) -> None:
    window = settings.FAIRWAY["TOKEN_FAILURE_WINDOW_SECONDS"]
    count_key, until_key = _keys(ip)
    cache.add(until_key, time.time() + window, timeout=window)
    cache.add(count_key, 0, timeout=window)
    try:
        cache.incr(count_key)
    except ValueError:  # expired between add and incr: a new window
        cache.set(count_key, 1, timeout=window)
