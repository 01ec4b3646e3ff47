"""A free TCP port on the loopback interface, for the servers the tests start.

A port the kernel hands out for ``bind(("127.0.0.1", 0))`` comes from the ephemeral range, the same range every
outgoing connection takes its local port from: between the moment a test frees the port and the moment its server
binds it, a client connection of any process (an API server talking to its etcd, a Celery worker to Redis) may take
it, and the server dies with "address already in use". So the port is drawn below the ephemeral range, where only
servers that ask for a port by number bind; two test processes drawing at random among thousands rarely meet, and
a server that still finds its port taken is started again on another (see ``ControlPlane.start``)."""

from __future__ import annotations

import random
import socket
from pathlib import Path

_LOWEST = 10_000  # above the well-known and registered ports most services on a machine listen on
_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
_draw = random.Random()  # not the tests' seeded random: two workers seeded alike would draw the same ports


def _ephemeral_low() -> int:
    try:
        return int(_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768  # Linux's default


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A loopback port nothing listens on now, outside the range outgoing connections take theirs from."""
    high = _ephemeral_low()
    if high - _LOWEST >= 1000:
        for _ in range(200):
            port = _draw.randrange(_LOWEST, high)
            if _bindable(port):
                return port
    with socket.socket() as s:  # a machine whose ephemeral range starts low: the kernel's choice
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
