"""The end of an episode, made one way for a live run and an imported trajectory: grade what it submitted, build
its row, add the diagnostics (and, with a judge panel, the facts it stated), then write the `evidence` and
`episode_end` events. A bug in grading is a harness_error row, one in the diagnostics keeps the row; a failing log
never loses it."""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from harness.core.abandon import CallAbandoned, call_abandonable
from harness.core.facts import FactRow
from harness.core.status import Outcome, Status, failure_text
from harness.diagnostics.retrieved_coverage import judge_retrieved_coverage, retrieved_chunks
from harness.diagnostics.row_diagnostics import with_diagnostics, with_stated_facts
from harness.grading import GRADERS, GoldSpec, Grade, Verdict, grade, is_judged
from harness.grading.judge import JudgePanel
from harness.records.events import EpisodeEndEvent, HarnessErrorEvent
from harness.records.results import ResultRow
from harness.records.trajectory import TrajectoryLog, judge_log

UNGRADED = Grade.uniform(Verdict.NO_ANSWER, ["NOT_GRADED"], None, "")
"""The grade of a row whose grading itself failed (a harness_error)."""


class FinishedTask(Protocol):
    """What of the task the finish reads (harness/inputs/tasks.py's `Task`)."""

    @property
    def question(self) -> str: ...
    @property
    def grader(self) -> str: ...
    @property
    def gold(self) -> GoldSpec: ...
    @property
    def evidence(self) -> list[str]: ...
    @property
    def canary(self) -> bool: ...
    @property
    def facts(self) -> Sequence[FactRow]: ...
    @property
    def metadata(self) -> dict[str, Any]: ...


RowOf = Callable[[Outcome, Grade], ResultRow]
"""The episode's row from how it ended and its grade (records/episode_row.py's `episode_row`, with what its maker
adds: a run its spend and timings, an import the fields the foreign file gives)."""


@dataclass(frozen=True)
class EpisodeEnd:
    """How an episode ended and what its diagnostics read."""

    outcome: Outcome
    graded_text: str | None
    """The submission the grader reads (and the `episode_end` event records)."""
    collection: Path | None = None
    opens: dict[str, int] | None = None
    """The collection files the host saw opened (None where it cannot see them)."""
    judge: JudgePanel | None = None
    cancel: threading.Event | None = None
    """Set when the run is cancelled: a judge's call in flight is abandoned (a `judge_error` grade)."""


def graded_text_of(outcome: Outcome, task: FinishedTask, judge: JudgePanel | None) -> str | None:
    """The submission the grader reads: an answered episode's, or, for a judge whose protocol reads the whole
    final reply (MuDABench's judges the model's last answer, tag or not), the final reply of an episode that
    ended replying without an action."""
    if outcome.status is Status.ANSWERED:
        return outcome.submission
    if judge is None or outcome.status is not Status.FORMAT_ERRORS:
        return None
    protocol = {"judge": judge.protocol, "score": judge.score_protocol}.get(task.grader)
    return outcome.submission if protocol is not None and protocol.reads == "final_reply" else None


def finish_episode(task: FinishedTask, end: EpisodeEnd, row_of: RowOf, log: TrajectoryLog | None) -> ResultRow:
    """The episode's row, graded and annotated, its end written to LOG (none: the row alone)."""
    try:
        graded = _grade(task, end, log)
        if graded.grader_failure is not None:  # the grade says GRADER_ERROR; the traceback goes in the log
            log_failure(log, "grading", graded.grader_failure)
        row = row_of(end.outcome, graded)
    except Exception as error:
        failed = Outcome(Status.HARNESS_ERROR, None, failure_text(error))
        end = dataclasses.replace(end, outcome=failed, graded_text=None)
        row = row_of(end.outcome, UNGRADED)
    if log is not None:
        row = _annotated(task, end, row, log)
        with contextlib.suppress(OSError, ValueError):  # a full disk: the row still reaches the batch
            log.write(EpisodeEndEvent(row=row, submission=end.graded_text))
            log.close()
    return row


def log_failure(log: TrajectoryLog | None, during: str, error: str) -> None:
    """A failure of ours DURING a step, in the trajectory (a log that cannot take it is let be)."""
    if log is not None:
        with contextlib.suppress(OSError, ValueError):
            log.write(HarnessErrorEvent(during=during, error=error))


def _grade(task: FinishedTask, end: EpisodeEnd, log: TrajectoryLog | None) -> Grade:
    judge_events = None if log is None else judge_log(log)

    def graded() -> Grade:
        return grade(task.grader, end.graded_text, task.gold, end.judge, judge_events)

    if not is_judged(task.grader) or end.cancel is None:
        return graded()
    try:
        return call_abandonable(graded, end.cancel)
    except CallAbandoned:  # the episode keeps its outcome; a resume asks the judges again
        cancelled = Verdict.JUDGE_ERROR
        return Grade(cancelled, cancelled, cancelled, ["CANCELLED"], None, None, None, GRADERS[task.grader].version)


def _annotated(task: FinishedTask, end: EpisodeEnd, row: ResultRow, log: TrajectoryLog) -> ResultRow:
    """Evidence, failure mode and refused attempts from what the episode logged, and with a judge panel the facts
    it stated; a failure here keeps the row."""
    try:
        events = log.events()
        row, evidence = with_diagnostics(row, events, task.evidence, task.canary, end.collection, end.opens, task.facts)
        if evidence is not None and end.judge is not None and task.facts:
            stated = with_stated_facts(row, end.judge, task.question, task.facts, events, end.graded_text)
            row, facts_stated = stated
            evidence = evidence.model_copy(update={"facts_stated": facts_stated})
        if evidence is not None:
            log.write(evidence)
        source_answer = task.metadata.get("source_answer")
        chunks = retrieved_chunks(events)
        if end.judge is not None and chunks is not None and isinstance(source_answer, list) and source_answer:
            row = with_retrieved_coverage(row, end.judge, [str(fact) for fact in source_answer], chunks, log)
    except Exception as error:  # a bug here must not cost the episode its row
        log_failure(log, "evidence record", failure_text(error))
    return row


def with_retrieved_coverage(
    row: ResultRow, panel: JudgePanel, source_answer: list[str], chunks: list[str], log: TrajectoryLog
) -> ResultRow:
    """The row with the conservative coverage of the task's facts in words by the retrieved CHUNKS
    (retrieved_coverage.py), its judges' calls logged and their cost added to `judge_cost_usd`."""
    judged = judge_retrieved_coverage(panel, source_answer, chunks)
    write = judge_log(log)
    for call in judged.calls:
        write(call)
    cost = row.judge_cost_usd
    if judged.cost_usd is not None:
        cost = round((cost or 0.0) + judged.cost_usd, 8)
    return dataclasses.replace(row, facts_retrieved=judged.coverage, judge_cost_usd=cost)
