"""Which provider errors are worth retrying, and how long to wait: the policy around every model call."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import litellm
import tenacity

T = TypeVar("T")


class MalformedResponse(Exception):
    """The provider answered without a reply to read (no choices, no message): retried like a 5xx."""


RETRYABLE = (
    MalformedResponse,
    litellm.RateLimitError,
    litellm.InternalServerError,
    litellm.ServiceUnavailableError,
    litellm.BadGatewayError,
    litellm.Timeout,
    litellm.APIConnectionError,
)
"""Malformed replies, rate limits, 5xx, timeouts and connection errors. Auth, bad request (context overflow
included) and not-found fail at once."""

MAX_BACKOFF_S = 60.0


def is_retryable(error: BaseException) -> bool:
    if isinstance(error, litellm.ContextWindowExceededError):
        return False
    if isinstance(error, RETRYABLE):
        return True
    status = getattr(error, "status_code", None)
    return isinstance(status, int) and status >= 500


def retry_after_s(error: BaseException) -> float | None:
    """The server's Retry-After (seconds form), from the exception's headers or its HTTP response."""
    sources = [getattr(error, "headers", None), getattr(getattr(error, "response", None), "headers", None)]
    for headers in sources:
        if not headers:
            continue
        value = headers.get("retry-after") or headers.get("Retry-After")
        try:
            return max(float(value), 0.0) if value is not None else None
        except ValueError:
            continue
    return None


def describe_error(error: BaseException) -> dict[str, Any]:
    return {
        "error": type(error).__name__,
        "status": getattr(error, "status_code", None),
        "message": str(error).splitlines()[0][:300] if str(error) else "",
    }


def call_with_retries(
    call: Callable[[float], T], max_retries: int, deadline: float, attempts: list[dict[str, Any]]
) -> T:
    """Run `call(timeout_s)` until it succeeds, the error is not retryable, retries run out, or the next
    wait would pass `deadline` (a `time.monotonic()` value). Each failure is appended to `attempts`."""
    exponential = tenacity.wait_exponential(multiplier=1, min=1, max=MAX_BACKOFF_S)

    def wait(state: tenacity.RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        server_wait = retry_after_s(error) if error else None
        return server_wait if server_wait is not None else exponential(state)

    def stop(state: tenacity.RetryCallState) -> bool:
        return state.attempt_number > max_retries or time.monotonic() + state.upcoming_sleep >= deadline

    def record(state: tenacity.RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        entry = describe_error(error) if error else {}
        attempts.append({**entry, "attempt": state.attempt_number, "wait_s": round(state.upcoming_sleep, 3)})

    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception(is_retryable),
        wait=wait,
        stop=stop,
        before_sleep=record,
        reraise=True,
    )
    return retrying(lambda: call(max(deadline - time.monotonic(), 0.1)))
