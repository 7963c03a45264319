"""An episode's attempts, one path for every executor (threads, Ray): an attempt that ended as an
infrastructure failure runs again after a backoff while attempts are left and the run goes on; the earlier
attempt's trajectory moves to previous/ when the next one starts. A run stopped during the backoff keeps the
failed attempt's row."""

from __future__ import annotations

from dataclasses import dataclass

from harness.inputs.tasks import Task
from harness.records.results import ResultRow
from harness.records.run_folder import RunFolder
from harness.run.executors.batch import BatchState
from harness.run.executors.failures import FailurePolicy


@dataclass(frozen=True)
class Retry:
    """An episode's next attempt, due after a backoff; `row` is the failed attempt's, recorded if it never runs."""

    task: Task
    attempt: int
    backoff_s: float
    row: ResultRow


@dataclass(frozen=True)
class Attempts:
    failures: FailurePolicy
    state: BatchState
    folder: RunFolder

    def ended(self, task: Task, row: ResultRow, attempt: int, stopped: bool) -> Retry | None:
        """Attempt `attempt` of an episode ended with `row`: its spend is counted at once (the spend caps read
        it). The attempt to run next; None when `row` is the episode's last (also when the run was `stopped`, or
        the model's error rate stopped it)."""
        self.state.spent(row)
        errors = self.state.errors
        if stopped or (errors is not None and errors.tripped) or not self.failures.retries(row, attempt):
            return None
        return Retry(task, attempt + 1, self.failures.backoff_s(attempt), row)

    def start(self, retry: Retry) -> int:
        """The retry starts: the trajectory of the attempt before it moves to previous/; its attempt number."""
        self.folder.keep_previous_attempt(*retry.task.episode)
        return retry.attempt
