"""An episode's attempts, decided the same way by every executor (threads, Ray): an attempt that ended as an
infrastructure failure runs again after a backoff while attempts are left and the run goes on; the earlier
attempt's trajectory then moves to previous/."""

from __future__ import annotations

from dataclasses import dataclass

from harness.inputs.tasks import Task
from harness.records.results import ResultRow
from harness.records.run_folder import RunFolder
from harness.run.executors.batch import BatchState
from harness.run.executors.failures import FailurePolicy


@dataclass(frozen=True)
class Attempts:
    failures: FailurePolicy
    state: BatchState
    folder: RunFolder

    def ended(self, row: ResultRow, attempt: int, stopped: bool) -> float | None:
        """Attempt `attempt` of an episode ended with `row`: its spend is counted at once (the spend caps read
        it). The seconds to wait before the episode runs again; None when `row` is its last (also when the run
        was `stopped`, or the model's error rate stopped it)."""
        self.state.spent(row)
        errors = self.state.errors
        if stopped or (errors is not None and errors.tripped) or not self.failures.retries(row, attempt):
            return None
        return self.failures.backoff_s(attempt)

    def again(self, task: Task, attempt: int) -> int:
        """The episode runs again after attempt `attempt`, whose trajectory moves to previous/; the next number."""
        self.folder.keep_previous_attempt(*task.episode)
        return attempt + 1
