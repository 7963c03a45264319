"""Which provider errors are worth retrying, and how long to wait: the policy around every model call."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import litellm
import tenacity

from harness.core.reply import Attempt
from harness.models.concurrency import Gate
from harness.models.in_flight import IN_FLIGHT
from harness.models.permanent import permanent_cause, unreachable_cause
from harness.models.rate_limits import MAX_DELAY_S, announcement_of, provider_delay_s

T = TypeVar("T")


class MalformedResponse(Exception):
    """The provider answered without a reply to read (no choices, no message): retried like a 5xx."""


class ReplyRefused(Exception):
    """The provider's reply was refused unread (`models/bounded_http.py`: past the size cap, or compressed though
    asked not to be): the provider's error, not retried (the same request gets the same reply)."""


_RETRYABLE = (
    MalformedResponse,
    litellm.RateLimitError,
    litellm.InternalServerError,
    litellm.ServiceUnavailableError,
    litellm.BadGatewayError,
    litellm.Timeout,
    litellm.APIConnectionError,
)
"""Malformed replies, rate limits, 5xx, timeouts and connection errors. Auth, bad request (context overflow
included) and not-found fail at once, and so does a connection no retry mends (`models/permanent.py`: a host
name that does not resolve, a connection refused)."""

_MAX_BACKOFF_S = MAX_DELAY_S
_MODEL_OUTPUT_REJECTED = ("invalid response object", "the model produced invalid content")
"""How a failure says the provider answered and the model's own generation was what it could not use:
litellm's error for a choice without a message, and OpenAI's for output its parser refused."""


def _rejects_model_output(error: BaseException) -> bool:
    """Whether the failed attempt's time went into the model's own generation, which the provider then
    rejected (a reply without choices or message, "the model produced invalid content"): the agent's time,
    like a slow reply. A bare 5xx, a rate limit, a timeout or a dropped connection says nothing of the kind,
    and an outage is never charged to the model."""
    if isinstance(error, MalformedResponse):
        return True
    message = str(error).lower()
    return _is_retryable(error) and any(phrase in message for phrase in _MODEL_OUTPUT_REJECTED)


_CONTEXT_OVERFLOW_PHRASES = ("prompt exceeds max length",)
"""How providers that litellm does not map say the prompt is over the context window: Z.ai's business code
1261 (https://docs.z.ai/api-reference/api-code)."""


def is_context_overflow(error: BaseException) -> bool:
    """The provider refused the prompt as too long: the agent's `context_limit`, never retried."""
    if isinstance(error, litellm.ContextWindowExceededError):
        return True
    message = str(error).lower()
    return isinstance(error, litellm.BadRequestError) and any(phrase in message for phrase in _CONTEXT_OVERFLOW_PHRASES)


def _is_retryable(error: BaseException) -> bool:
    if is_context_overflow(error) or permanent_cause(error) is not None:
        return False
    if isinstance(error, _RETRYABLE):
        return True
    status = getattr(error, "status_code", None)
    return isinstance(status, int) and status >= 500


def describe_error(error: BaseException) -> dict[str, Any]:
    """The error's class, HTTP status and first line. A connection that failed has no HTTP status: litellm
    gives its `APIConnectionError` a 500 (and wraps OpenAI's in a 500 `InternalServerError`), which would read as
    the server's answer."""
    connection_failed = isinstance(error, litellm.APIConnectionError) or unreachable_cause(error) is not None
    return {
        "error": type(error).__name__,
        "status": None if connection_failed else getattr(error, "status_code", None),
        "message": str(error).splitlines()[0][:300] if str(error) else "",
    }


class RetriedCall(Generic[T]):
    """One model call, tried until it succeeds, the error is not retryable, retries run out, the next wait would
    pass `call_timeout_s` of wall time, or an attempt timed out on the agent's own time left (`agent_time_s`).

    Each failure goes to `attempts` with its time (`duration_s`) and the wait after it (`wait_s`). Failed
    attempts and waits are the provider's time, not the agent's, so every attempt gets the agent's time left;
    an attempt cut off by that time is the agent's (`on_agent_clock`) and ends the retries, and so is one whose
    generation the provider rejected (`_rejects_model_output`), which the next attempts' time left no longer
    holds. With a `gate`, each attempt waits for room at its provider's in-flight limit first (the waits go to
    `gate_waits`) and tells it whether it was rate-limited."""

    def __init__(
        self,
        call: Callable[[float], T],
        max_retries: int,
        call_timeout_s: float,
        agent_time_s: float,
        gate: Gate | None = None,
    ):
        self._call, self._max_retries, self._gate = call, max_retries, gate
        self._deadline = time.monotonic() + call_timeout_s
        self._agent_left = agent_time_s
        """The agent's time left for an attempt: less only by attempts on its own clock."""
        self._started = time.monotonic()
        self._timeout = 0.0
        """When the current attempt started, and the time it was given."""
        self.attempts: list[Attempt] = []
        self.gate_waits: list[float] = []

    def run(self) -> T:
        """`call(timeout_s)`'s result, or its last error (after the attempts)."""
        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception(_is_retryable),
            wait=self._wait,
            stop=self._stop,
            before_sleep=self._record,
            reraise=True,
        )
        try:
            return retrying(self._attempt)
        except Exception as error:  # the last failure is an attempt too, with no wait after it
            self.attempts.append(self._entry(error, len(self.attempts) + 1, 0.0))
            raise

    def _attempt(self) -> T:
        gate, admitted = self._gate, 0
        if gate is not None:
            admitted, waited = gate.acquire()
            self.gate_waits.append(waited)
        self._timeout = max(min(self._agent_left, self._deadline - time.monotonic()), 0.1)
        self._started = time.monotonic()
        try:
            result = self._call(self._timeout)
        except Exception as error:
            if gate is not None:
                limited = isinstance(error, litellm.RateLimitError)
                gate.release(admitted, limited, provider_delay_s(error), announcement_of(error))
            raise
        if gate is not None:
            gate.release(admitted, False, None, announcement_of(result), _tokens_used(result))
        return result

    def _entry(self, error: BaseException, number: int, wait_s: float) -> Attempt:
        duration_s = round(time.monotonic() - self._started, 3)
        on_agent_clock = self._cut_by_agent_time(error) or _rejects_model_output(error)
        if on_agent_clock:
            self._agent_left = max(self._agent_left - duration_s, 0.0)
        described = describe_error(error)
        timing = {"attempt": number, "duration_s": duration_s, "wait_s": round(wait_s, 3)}
        limit = {} if self._gate is None else {"in_flight_limit": self._gate.limit}
        return Attempt.model_validate(described | timing | {"on_agent_clock": on_agent_clock} | limit)

    @staticmethod
    def _wait(state: tenacity.RetryCallState) -> float:
        error = _error_of(state)
        server_wait = provider_delay_s(error) if error else None
        return server_wait if server_wait is not None else _EXPONENTIAL(state)

    def _cut_by_agent_time(self, error: BaseException | None) -> bool:
        return isinstance(error, litellm.Timeout) and self._timeout >= self._agent_left

    def _stop(self, state: tenacity.RetryCallState) -> bool:
        error = _error_of(state)
        return (
            state.attempt_number > self._max_retries
            or self._cut_by_agent_time(error)
            or (
                error is not None
                and _rejects_model_output(error)
                and time.monotonic() - self._started >= self._agent_left
            )
            or time.monotonic() + state.upcoming_sleep >= self._deadline
        )

    def _record(self, state: tenacity.RetryCallState) -> None:
        error = _error_of(state)
        if error is not None:
            self.attempts.append(self._entry(error, state.attempt_number, state.upcoming_sleep))
            IN_FLIGHT.retrying()


_EXPONENTIAL = tenacity.wait_exponential(multiplier=1, min=1, max=_MAX_BACKOFF_S)
"""The wait after a failure whose provider named none."""


def _error_of(state: tenacity.RetryCallState) -> BaseException | None:
    return state.outcome.exception() if state.outcome else None


def _tokens_used(reply: Any) -> int:
    """The reply's total tokens (prompt and completion), 0 when it reports none."""
    total = getattr(getattr(reply, "usage", None), "total_tokens", None)
    return total if isinstance(total, int) and not isinstance(total, bool) and total > 0 else 0
