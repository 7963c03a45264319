"""Infrastructure failures inside a run: an episode that ended as one runs again (`--retry-errors`) unless no
retry mends it, and a model whose recent episodes mostly fail (`--max-error-rate` over `--error-window`), or
whose first episodes all failed the same way no retry mends, starts no more of them."""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass

from harness.core.status import INFRASTRUCTURE_FAILURES, mended_by_no_retry
from harness.records.results import ResultRow

_BACKOFF_BASE_S = 1.0
_BACKOFF_MAX_S = 60.0
FIRST_FAILURES_THAT_STOP = 3
"""The run's first finished episodes that, all failed with the same error no retry mends (a host that does not
resolve, a key refused, a model unknown), stop it: the rest would fail the same way."""


class ErrorRateExceeded(RuntimeError):
    """The run stopped starting episodes: too many of its model's recent episodes were infrastructure failures."""


@dataclass(frozen=True)
class FailurePolicy:
    retry_errors: int
    """Further attempts of an episode that ended as an infrastructure failure."""
    max_error_rate: float
    """The share of infrastructure failures among the last `window` finished episodes that stops the model."""
    window: int

    def retries(self, row: ResultRow, attempt: int) -> bool:
        """Whether the episode that gave `row` on its `attempt` runs again."""
        return (
            row.status in INFRASTRUCTURE_FAILURES
            and attempt <= self.retry_errors
            and not mended_by_no_retry(row.detail)
        )

    @staticmethod
    def backoff_s(attempt: int) -> float:
        """The wait before attempt `attempt + 1`: exponential from one second, at most a minute."""
        return min(_BACKOFF_BASE_S * 2 ** (attempt - 1), _BACKOFF_MAX_S)


class ErrorWindow:
    """The last finished episodes of one model (after their retries): trips once the window is full and its
    share of infrastructure failures is over the policy's rate, or once its first `FIRST_FAILURES_THAT_STOP`
    episodes all failed with the same error no retry mends, and then says why (with the last error)."""

    def __init__(self, policy: FailurePolicy):
        self._policy = policy
        self._recent: deque[bool] = deque(maxlen=policy.window)
        self._last_error: str | None = None
        self._first: list[str | None] | None = []
        """The details of the run's first finished episodes, while they all failed the same way no retry mends."""
        self._lock = threading.Lock()
        self.reason: str | None = None
        """Why the model's remaining episodes are not started; None while they may be."""
        self.first_failure: str | None = None
        """The first infrastructure failure's status and last line of detail, once there is one."""

    def record(self, row: ResultRow) -> str | None:
        """Count a finished episode; the line saying the run's first infrastructure failure, when ROW is it."""
        failed = row.status in INFRASTRUCTURE_FAILURES
        with self._lock:
            self._recent.append(failed)
            first = None
            if failed:
                self._last_error = (row.detail or row.status.value).strip().splitlines()[-1][:300]
                if self.first_failure is None:
                    self.first_failure = first = f"first {row.status.value}: {self._last_error}"
            self._count_first(row)
            if self.reason is None and len(self._recent) == self._policy.window:
                rate = sum(self._recent) / len(self._recent)
                if rate > self._policy.max_error_rate:
                    failed_count, limit = sum(self._recent), self._policy.max_error_rate
                    self.reason = (
                        f"{failed_count} of the last {len(self._recent)} episodes failed ({rate:.0%} > "
                        f"--max-error-rate {limit:g}); last error: {self._last_error}"
                    )
        return first

    def _count_first(self, row: ResultRow) -> None:
        if self._first is None:
            return
        if not mended_by_no_retry(row.detail) or (self._first and row.detail != self._first[0]):
            self._first = None  # the run's start was not all one failure no retry mends: this rule is done
            return
        self._first.append(row.detail)
        if len(self._first) == FIRST_FAILURES_THAT_STOP and self.reason is None:
            self.reason = (
                f"its first {FIRST_FAILURES_THAT_STOP} episodes failed the same way, which no retry mends: "
                f"{self._last_error}"
            )

    @property
    def tripped(self) -> bool:
        return self.reason is not None
