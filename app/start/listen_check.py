"""Whether `serve` can listen where it was asked to, checked before anything starts.

uvicorn finds out only once the server is built: it logs the bind error among the start-up lines and
exits with its own status 3, which is hexmcp's "model package missing" (core/startup.py). Checked here
first, a port in use or an address this machine does not have is one line and exit 2, as a bad flag is.
"""

from __future__ import annotations

import socket


def why_cannot_listen(host: str, port: int) -> str | None:
    """Why `host:port` cannot be bound now (None: it can, or port 0 asks for any free one). Binds every
    address the host resolves to, as uvicorn's server will, with the same SO_REUSEADDR, then lets go."""
    if port == 0:
        return None
    try:
        addresses = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        return f"cannot listen on {host}:{port}: {error.strerror}"
    for family, kind, protocol, _, address in addresses:
        with socket.socket(family, kind, protocol) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                probe.bind(address)
            except OSError as error:
                return f"cannot listen on {host}:{port}: {error.strerror or error}"
    return None
