"""Provider failures no retry can mend: a host name that does not resolve, a connection refused, a key the
provider refuses, a model it does not know. Such a call is not retried, its episode is not run again, and a run
whose first episodes all end on the same one stops (`run/executors/failures.py`)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import litellm

_REFUSALS = (litellm.AuthenticationError, litellm.PermissionDeniedError, litellm.NotFoundError)
"""A key refused (401, 403) or a model unknown (404): the same request gets the same answer."""

_UNREACHABLE_PHRASES = (
    "name or service not known",
    "nodename nor servname provided",
    "temporary failure in name resolution",
    "no address associated with hostname",
    "getaddrinfo failed",
    "connection refused",
)
"""How a failed connection says the host has no address (getaddrinfo's errors on glibc, macOS and Windows) or
nothing listens at it, when its cause is no longer an exception of its own (a provider SDK's text)."""


def permanent_cause(error: BaseException) -> str | None:
    """Why no retry mends ERROR (the first line of the cause's own text), or None when a retry may."""
    if isinstance(error, _REFUSALS):
        return _first_line(error)
    return unreachable_cause(error)


def unreachable_cause(error: BaseException) -> str | None:
    """The text of the connection failure no retry mends that ERROR was raised from (litellm wraps one in an
    `APIConnectionError` or, for OpenAI's SDK, a 500 `InternalServerError`), or None. A provider's own HTTP
    answer is never one, whatever its text says (a proxy's "connection refused" may pass)."""
    if isinstance(error, litellm.Timeout):
        return None
    for cause in _chain(error):
        if isinstance(cause, (socket.gaierror, ConnectionRefusedError)):
            return _first_line(cause)
        answered = isinstance(getattr(cause, "status_code", None), int)
        if not answered and any(phrase in str(cause).lower() for phrase in _UNREACHABLE_PHRASES):
            return _first_line(cause)
    return None


def _chain(error: BaseException) -> Iterator[BaseException]:
    """ERROR and what it was raised from or during, innermost last (each once)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:300] if text else type(error).__name__
