"""Closing the connections of abandoned provider calls. litellm's calls are synchronous and build their own
HTTP clients (httpx, or the openai SDK's httpx2, per provider), so the run cannot hand them a client to close;
what it can do, when the run is cancelled, is shut down this process's TCP connections to the provider's
endpoint: the server sees the client go (a local server stops generating) and the abandoned call's thread
wakes up and ends."""

from __future__ import annotations

import contextlib
import os
import socket
from urllib.parse import urlsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}


def _endpoint_addresses(url: str) -> set[tuple[str, int]]:
    """The (address, port) pairs a connection to `url`'s host can have as its peer; empty when it resolves
    to none."""
    parts = urlsplit(url)
    port = parts.port or _DEFAULT_PORTS.get(parts.scheme, 0)
    if not parts.hostname or not port:
        return set()
    try:
        infos = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except OSError:
        return set()
    return {(str(info[4][0]), port) for info in infos}


def _open_descriptors() -> list[int]:
    for listing in ("/proc/self/fd", "/dev/fd"):
        with contextlib.suppress(OSError):
            return [int(name) for name in os.listdir(listing) if name.isdigit()]
    return []


def shut_down_connections_to(url: str) -> int:
    """Shut down (both ways) every TCP connection of this process whose peer is `url`'s host and port, leaving
    each socket to its owner to close; how many were shut down."""
    peers = _endpoint_addresses(url)
    count = 0
    for descriptor in _open_descriptors() if peers else []:
        try:
            sock = socket.socket(fileno=descriptor)
        except OSError:  # not a socket (or gone since the listing)
            continue
        try:
            if sock.type == socket.SOCK_STREAM and tuple(sock.getpeername()[:2]) in peers:
                sock.shutdown(socket.SHUT_RDWR)
                count += 1
        except OSError:  # not connected, or a socket of another family
            pass
        finally:
            sock.detach()  # the descriptor stays its owner's
    return count
