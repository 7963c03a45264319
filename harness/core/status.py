"""How an episode ended: its `Status`, the two exceptions that end it, and its `Outcome`. The loop ends an
episode itself by raising `EpisodeFinished` (an answer, a limit, a cancellation: the status, the submission, the
detail); an error from below that ends an episode (a model's, a sandbox's) is an `EpisodeFailure`, its class
naming the status; `outcome_of` turns either, or any other exception, into the episode's `Outcome`."""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from enum import Enum
from typing import ClassVar


class Status(str, Enum):
    ANSWERED = "answered"
    TURN_LIMIT = "turn_limit"
    TIME_LIMIT = "time_limit"
    CONTEXT_LIMIT = "context_limit"
    COST_LIMIT = "cost_limit"
    """The episode's spend reached `--max-episode-cost`."""
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

NO_RETRY_MENDS = "; no retry mends this"
"""How a failure's detail ends when no retry can mend it (`models/permanent.py`): its episode is not run again,
and a run whose first episodes all end on the same one stops."""


def mended_by_no_retry(detail: str | None) -> bool:
    """Whether a row's detail says its failure is one no retry mends."""
    return detail is not None and detail.rstrip().endswith(NO_RETRY_MENDS.strip())


class EpisodeFinished(Exception):
    """The loop's own end of the episode (an answer, a limit, a cancellation), raised inside the loop with what to
    record; `submission` is the text to grade (answered), or an episode ended by format errors' final reply."""

    def __init__(self, status: Status, submission: str | None = None, detail: str | None = None):
        super().__init__(status.value)
        self.status = status
        self.submission = submission
        self.detail = detail


class EpisodeFailure(Exception):
    """The base of an error from below the loop that ends the episode as its class's `status` (the provider
    failing, the sandbox failing or hitting a limit), with the error's message as the detail."""

    status: ClassVar[Status]


@dataclass(frozen=True)
class Outcome:
    """How an episode ended: its status, the text to grade (answered; or the final reply of an episode ended by
    format errors, which only a judge that reads whole final replies grades) and why a limit or failure ended it."""

    status: Status
    submission: str | None
    detail: str | None

    def with_note(self, note: str) -> Outcome:
        """The same outcome, its detail followed by NOTE (what went wrong after the episode's end)."""
        detail = f"{self.detail}; {note}" if self.detail else note
        return Outcome(self.status, self.submission, detail)


def outcome_of(error: BaseException) -> Outcome:
    """The one place an exception becomes an outcome: `EpisodeFinished` as it says, an `EpisodeFailure` as its
    status, anything else a bug of ours (`harness_error`, with its traceback)."""
    if isinstance(error, EpisodeFinished):
        return Outcome(error.status, error.submission, error.detail)
    if isinstance(error, EpisodeFailure):
        return Outcome(error.status, None, str(error))
    return Outcome(Status.HARNESS_ERROR, None, failure_text(error))


_TRACEBACK_CHARS = 4000


def failure_text(error: BaseException) -> str:
    """The error's traceback, its head and tail when long (kept in a row's detail and the trajectory)."""
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    if len(text) <= _TRACEBACK_CHARS:
        return text
    return text[: _TRACEBACK_CHARS // 4] + "\n...\n" + text[-_TRACEBACK_CHARS // 2 :]
