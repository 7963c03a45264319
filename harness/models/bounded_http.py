"""Every provider call's HTTP bounded in time and size, whatever the endpoint sends.

httpx's timeouts bound each socket read, so an endpoint that sends one byte every few seconds (in its headers or
its body) keeps a call alive for ever, and a reply is read whole before anyone looks at it. Here the sockets of
litellm's HTTP clients read under the call's own limits (`call_limits`, set by the thread that makes the call):
every read waits at most until the call's deadline, and past it, or past `REPLY_BYTES_CAP` bytes received, the
read fails and httpcore closes the connection, so neither the call's thread nor its socket lives on.

`litellm_model.py` gives litellm the transport (`bounded_transport`) through litellm's own settings."""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx

REPLY_BYTES_CAP = 32 * 2**20
"""The most bytes one call may receive (32 MB): a chat reply is kilobytes; a longer one is refused, unread, as the
provider's error, so the runner's memory stays bounded however many calls are in flight."""

_MAX_KEEPALIVE = 100
"""Idle connections kept per pool (the OpenAI SDK's own default); the run's throttles bound the calls in flight."""


@dataclass
class _CallLimits:
    """One provider call's limits, and what its reads found."""

    deadline: float
    """`time.monotonic()` past which no read waits."""
    max_bytes: int = REPLY_BYTES_CAP
    received: int = 0
    refused: str | None = None
    """Why the reply was refused (too large, compressed though asked not to be); None while it was not."""
    expired: bool = False
    """A read found the deadline passed."""

    def seconds_left(self, what: str) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            self.expired = True
            raise (httpcore.WriteTimeout if what == "write" else httpcore.ReadTimeout)("the call's deadline passed")
        return left

    def count(self, data: bytes) -> None:
        self.received += len(data)
        if self.received > self.max_bytes:
            self.refused = f"the reply passed {self.max_bytes // 2**20} MB (REPLY_BYTES_CAP): refused unread"
            raise httpcore.ReadError(self.refused)


_LIMITS: contextvars.ContextVar[_CallLimits | None] = contextvars.ContextVar("provider_call_limits", default=None)


@contextlib.contextmanager
def call_limits(timeout_s: float) -> Iterator[_CallLimits]:
    """The limits of the HTTP this thread does inside the block: done within `timeout_s`, at most
    `REPLY_BYTES_CAP` bytes received."""
    limits = _CallLimits(deadline=time.monotonic() + timeout_s)
    token = _LIMITS.set(limits)
    try:
        yield limits
    finally:
        _LIMITS.reset(token)


def _clamped(timeout: float | None, what: str) -> float | None:
    limits = _LIMITS.get()
    if limits is None:
        return timeout
    left = limits.seconds_left(what)
    return left if timeout is None else min(timeout, left)


class _BoundedStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            data = self._stream.read(max_bytes, _clamped(timeout, "read"))
        except httpcore.ReadTimeout:
            if (limits := _LIMITS.get()) is not None and time.monotonic() >= limits.deadline:
                limits.expired = True
            raise
        if (limits := _LIMITS.get()) is not None:
            limits.count(data)
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _clamped(timeout, "write"))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        return _BoundedStream(self._stream.start_tls(ssl_context, server_hostname, _clamped(timeout, "read")))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _BoundedBackend(httpcore.NetworkBackend):
    def __init__(self, backend: httpcore.NetworkBackend) -> None:
        self._backend = backend

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.NetworkStream:
        connected = self._backend.connect_tcp(host, port, _clamped(timeout, "read"), local_address, socket_options)
        return _BoundedStream(connected)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.NetworkStream:
        return _BoundedStream(self._backend.connect_unix_socket(path, _clamped(timeout, "read"), socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


class _BoundedTransport(httpx.BaseTransport):
    """Asks for the reply uncompressed (the cap counts the bytes httpx would hold) and sends each request through
    `client`'s transport for its URL (a proxy's, where the environment names one)."""

    def __init__(self, client: httpx.Client) -> None:
        self._client = client

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.headers["Accept-Encoding"] = "identity"
        # httpx's own routing (mounts for HTTP(S)_PROXY, NO_PROXY): the one way to keep it below a given transport
        response = self._client._transport_for_url(request.url).handle_request(request)
        encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
        if encoding not in ("", "identity") and (limits := _LIMITS.get()) is not None:
            response.close()
            limits.refused = f"the reply came {encoding}-encoded though asked uncompressed: refused unread"
            raise httpx.DecodingError(limits.refused, request=request)
        return response

    def close(self) -> None:
        self._client.close()


def bounded_transport(verify: Any) -> _BoundedTransport:
    """The transport for every provider call: an httpx client built as httpx builds one (the environment's proxies
    included, certificates checked as `verify` says), its connection pools reading under the calls' limits."""
    keepalive = httpx.Limits(max_connections=None, max_keepalive_connections=_MAX_KEEPALIVE)
    client = httpx.Client(verify=verify, limits=keepalive, trust_env=True)
    for transport in [client._transport, *(mounted for mounted in client._mounts.values() if mounted is not None)]:
        # httpx takes no network backend; its pool keeps the one it was built with and gives it to each connection
        pool = getattr(transport, "_pool", None)
        if pool is None or not isinstance(pool._network_backend, httpcore.NetworkBackend):
            raise RuntimeError(f"httpx's transport {type(transport).__name__} has no pool to bound")
        pool._network_backend = _BoundedBackend(pool._network_backend)
    return _BoundedTransport(client)
