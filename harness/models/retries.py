"""Which provider errors are worth retrying, and how long to wait: the policy around every model call."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import litellm
import tenacity

from harness.models.concurrency import Gate
from harness.models.in_flight import IN_FLIGHT
from harness.models.rate_limits import MAX_DELAY_S, announcement_of, provider_delay_s

T = TypeVar("T")


class MalformedResponse(Exception):
    """The provider answered without a reply to read (no choices, no message): retried like a 5xx."""


class ReplyRefused(Exception):
    """The provider's reply was refused unread (`models/bounded_http.py`: past the size cap, or compressed though
    asked not to be): the provider's error, not retried (the same request gets the same reply)."""


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

MAX_BACKOFF_S = MAX_DELAY_S
MODEL_OUTPUT_REJECTED = ("invalid response object", "the model produced invalid content")
"""How a failure says the provider answered and the model's own generation was what it could not use:
litellm's error for a choice without a message, and OpenAI's for output its parser refused."""


def rejects_model_output(error: BaseException) -> bool:
    """Whether the failed attempt's time went into the model's own generation, which the provider then
    rejected (a reply without choices or message, "the model produced invalid content"): the agent's time,
    like a slow reply. A bare 5xx, a rate limit, a timeout or a dropped connection says nothing of the kind,
    and an outage is never charged to the model."""
    if isinstance(error, MalformedResponse):
        return True
    message = str(error).lower()
    return is_retryable(error) and any(phrase in message for phrase in MODEL_OUTPUT_REJECTED)


CONTEXT_OVERFLOW_PHRASES = ("prompt exceeds max length",)
"""How providers that litellm does not map say the prompt is over the context window: Z.ai's business code
1261 (https://docs.z.ai/api-reference/api-code)."""


def is_context_overflow(error: BaseException) -> bool:
    """The provider refused the prompt as too long: the agent's `context_limit`, never retried."""
    if isinstance(error, litellm.ContextWindowExceededError):
        return True
    message = str(error).lower()
    return isinstance(error, litellm.BadRequestError) and any(phrase in message for phrase in CONTEXT_OVERFLOW_PHRASES)


def is_retryable(error: BaseException) -> bool:
    if is_context_overflow(error):
        return False
    if isinstance(error, RETRYABLE):
        return True
    status = getattr(error, "status_code", None)
    return isinstance(status, int) and status >= 500


def describe_error(error: BaseException) -> dict[str, Any]:
    """The error's class, HTTP status and first line. A connection that failed has no HTTP status: litellm
    gives its `APIConnectionError` a 500, which would read as the server's answer."""
    connection_failed = isinstance(error, litellm.APIConnectionError)
    return {
        "error": type(error).__name__,
        "status": None if connection_failed else getattr(error, "status_code", None),
        "message": str(error).splitlines()[0][:300] if str(error) else "",
    }


def call_with_retries(
    call: Callable[[float], T],
    max_retries: int,
    call_timeout_s: float,
    agent_time_s: float,
    attempts: list[dict[str, Any]],
    gate: Gate | None = None,
    gate_waits: list[float] | None = None,
) -> T:
    """Run `call(timeout_s)` until it succeeds, the error is not retryable, retries run out, the next wait would
    pass `call_timeout_s` of wall time, or an attempt timed out on the agent's own time left (`agent_time_s`).

    Each failure is appended to `attempts` with its time (`duration_s`) and the wait after it (`wait_s`). Failed
    attempts and waits are the provider's time, not the agent's, so every attempt gets the agent's time left;
    an attempt cut off by that time is the agent's (`on_agent_clock`) and ends the retries, and so is one whose
    generation the provider rejected (`rejects_model_output`), which the next attempts' time left no longer
    holds. With a `gate`, each attempt waits for room at its provider's in-flight limit first (the waits go to
    `gate_waits`) and tells it whether it was rate-limited."""
    exponential = tenacity.wait_exponential(multiplier=1, min=1, max=MAX_BACKOFF_S)
    call_deadline = time.monotonic() + call_timeout_s
    current: dict[str, float] = {"agent_left": agent_time_s}

    def attempt() -> T:
        admitted = 0
        if gate is not None:
            admitted, waited = gate.acquire()
            if gate_waits is not None:
                gate_waits.append(waited)
        timeout = max(min(current["agent_left"], call_deadline - time.monotonic()), 0.1)
        current.update(started=time.monotonic(), timeout=timeout)
        try:
            result = call(timeout)
        except Exception as error:
            if gate is not None:
                limited = isinstance(error, litellm.RateLimitError)
                gate.release(admitted, limited, provider_delay_s(error), announcement_of(error))
            raise
        if gate is not None:
            gate.release(admitted, False, None, announcement_of(result), _tokens_used(result))
        return result

    def entry(error: BaseException, number: int, wait_s: float) -> dict[str, Any]:
        duration_s = round(time.monotonic() - current["started"], 3)
        on_agent_clock = cut_by_agent_time(error) or rejects_model_output(error)
        if on_agent_clock:
            current["agent_left"] = max(current["agent_left"] - duration_s, 0.0)
        entry = {
            **describe_error(error),
            "attempt": number,
            "duration_s": duration_s,
            "wait_s": round(wait_s, 3),
            "on_agent_clock": on_agent_clock,
        }
        if gate is not None:
            entry["in_flight_limit"] = gate.limit
        return entry

    def wait(state: tenacity.RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        server_wait = provider_delay_s(error) if error else None
        return server_wait if server_wait is not None else exponential(state)

    def cut_by_agent_time(error: BaseException | None) -> bool:
        return isinstance(error, litellm.Timeout) and current["timeout"] >= current["agent_left"]

    def stop(state: tenacity.RetryCallState) -> bool:
        error = state.outcome.exception() if state.outcome else None
        return (
            state.attempt_number > max_retries
            or cut_by_agent_time(error)
            or (
                error is not None
                and rejects_model_output(error)
                and time.monotonic() - current["started"] >= current["agent_left"]
            )
            or time.monotonic() + state.upcoming_sleep >= call_deadline
        )

    def record(state: tenacity.RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        if error is not None:
            attempts.append(entry(error, state.attempt_number, state.upcoming_sleep))
            IN_FLIGHT.retrying()

    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception(is_retryable),
        wait=wait,
        stop=stop,
        before_sleep=record,
        reraise=True,
    )
    try:
        return retrying(attempt)
    except Exception as error:  # the last failure is an attempt too, with no wait after it
        attempts.append(entry(error, len(attempts) + 1, 0.0))
        raise


def _tokens_used(reply: Any) -> int:
    """The reply's total tokens (prompt and completion), 0 when it reports none."""
    total = getattr(getattr(reply, "usage", None), "total_tokens", None)
    return total if isinstance(total, int) and not isinstance(total, bool) and total > 0 else 0
