"""Free TCP ports on the loopback interface, for tests and benchmarks that start daemons."""

from __future__ import annotations

import socket

__all__ = ["free_ports"]


def free_ports(count: int) -> list[int]:
    """``count`` ports nothing listens on now on 127.0.0.1 (the kernel's choice, all held
    at once so that they differ, then released)."""
    sockets = []
    for _ in range(count):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        sockets.append(s)
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports
