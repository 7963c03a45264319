"""How an episode ended. Leaving the agent loop is an `EpisodeEnd` carrying what to record."""

from __future__ import annotations

from enum import Enum


class Status(str, Enum):
    ANSWERED = "answered"
    TURN_LIMIT = "turn_limit"
    TIME_LIMIT = "time_limit"
    CONTEXT_LIMIT = "context_limit"
    SANDBOX_LIMIT = "sandbox_limit"
    """The agent's own use of memory, disk or processes brought its sandbox down: the agent's outcome."""
    FORMAT_ERRORS = "format_errors"
    MODEL_ERROR = "model_error"
    SANDBOX_ERROR = "sandbox_error"
    HARNESS_ERROR = "harness_error"
    """A bug of ours (the traceback is kept in the row's detail and the trajectory)."""
    CANCELLED = "cancelled"

    def __str__(self) -> str:
        return self.value


INFRASTRUCTURE_FAILURES = frozenset({Status.MODEL_ERROR, Status.SANDBOX_ERROR, Status.HARNESS_ERROR})
"""Failures of the provider, the sandbox or ours; never the agent's outcome."""
INTERRUPTED = INFRASTRUCTURE_FAILURES | {Status.CANCELLED}
"""Episodes that did not get to their own end: a resume runs them again; no failure mode is theirs."""


class EpisodeEnd(Exception):
    """Raised inside the loop to end the episode; `submission` is the text to grade (answered only)."""

    def __init__(self, status: Status, submission: str | None = None, detail: str | None = None):
        super().__init__(status.value)
        self.status = status
        self.submission = submission
        self.detail = detail
