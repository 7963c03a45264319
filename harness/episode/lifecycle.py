"""One episode end to end: wait for a sandbox slot, sandbox up, agent loop, grade, trajectory closed,
results row returned. Whatever goes wrong, an episode that started returns a row."""

from __future__ import annotations

import contextlib
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.core.names import file_name
from harness.core.status import EpisodeEnd, Status
from harness.episode.budget import Budget
from harness.episode.loop import LoopOutcome, LoopSettings, run_agent
from harness.episode.throttles import Slots, ThrottledModel, wait_for_slot
from harness.grading import Grade, Verdict, grade
from harness.grading.judge import JudgeLog, JudgePanel
from harness.inputs.config import RunConfig
from harness.inputs.prompts import PromptSet
from harness.inputs.tasks import Task, collection_of, task_digest
from harness.models.base import Model
from harness.records.events import (
    EpisodeEndEvent,
    EpisodeStartEvent,
    EvidenceEvent,
    HarnessErrorEvent,
    JudgeCallEvent,
    SandboxReadyEvent,
    write_event,
)
from harness.records.results import ResultRow
from harness.records.run_folder import RunFolder
from harness.records.trajectory import TrajectoryLog, TrajectoryWriter
from harness.sandboxes.base import Sandbox, SandboxError, SandboxLimitHit
from harness.sandboxes.file_opens import WatchedSandbox, watched
from harness.signals.annotate import annotate

SandboxFactory = Callable[[Task, str], Sandbox]


_TRACEBACK_CHARS = 4000


@dataclass(frozen=True)
class EpisodeContext:
    config: RunConfig
    prompts: PromptSet
    make_model: Callable[[Task], Model]
    make_sandbox: SandboxFactory
    run_dir: Path
    run_facts: dict[str, Any]
    """Recorded in every episode_start: config hash, harness version (and on Ray, the node)."""
    collection_hashes: dict[str, str]
    cancel: threading.Event
    """Set on Ctrl-C: running episodes end as `cancelled` at their next step."""
    slots: Slots = field(default_factory=lambda: Slots.of(1 << 20, 1 << 20))
    """The run's sandbox and connection throttles (unbounded unless the batch sets them)."""
    sandbox_facts: dict[str, Any] = field(default_factory=dict)
    """The backend's facts, for episode_start (before this episode's sandbox exists)."""
    collections: dict[str, Path] = field(default_factory=dict)
    """Domain -> collection folder, to name the documents an episode touched."""
    judge: JudgePanel | None = None
    """Grades tasks whose grader is `judge`."""
    watch_opens: bool = False
    """Record exactly which collection files each episode opens (`watch_opens_possible`: asked, and seen)."""
    open_log: Callable[[Task], TrajectoryLog] | None = None
    """Where the episode's events go (default: its trajectory file in the run folder; on a Ray node, a
    stream to the driver, which alone writes the run folder)."""


@dataclass
class _Timings:
    attempt: int = 1
    queue_s: float = 0.0
    sandbox_start_s: float = 0.0
    opens: dict[str, int] | None = None
    """Collection files the host saw opened, with the first turn (None where it cannot see them)."""


def episode_name(task: Task) -> str:
    return file_name(f"{task.domain}-{task.id}" + ("" if task.epoch == 1 else f"-epoch{task.epoch}"))


def run_episode(task: Task, context: EpisodeContext, attempt: int = 1) -> ResultRow:
    """Never raises but for Ctrl-C (after the trajectory got its end): every failure becomes a row, which
    records `attempt`, the episode's attempt within its run."""
    timings = _Timings(attempt=attempt)
    budget: Budget | None = None
    log: TrajectoryLog | None = None
    outcome = LoopOutcome(Status.HARNESS_ERROR, None, "the episode did not finish")
    try:
        if context.open_log is None:
            log = TrajectoryWriter(RunFolder(context.run_dir).trajectory_path(*task.episode))
        else:
            log = context.open_log(task)
        _write_start(log, task, context)
        with _sandbox_slot(context, timings):
            outcome, budget = _run_in_sandbox(task, context, log, timings)
    except EpisodeEnd as end:  # cancelled while waiting for a slot
        outcome = LoopOutcome(end.status, None, end.detail)
    except Exception as error:  # the log could not be written, or a bug of ours: the row says so, the batch goes on
        outcome = _outcome_of_failure(error)
    except BaseException as error:  # Ctrl-C: the trajectory still gets its end, then it propagates
        outcome = LoopOutcome(Status.CANCELLED, None, f"interrupted: {type(error).__name__}: {error}")
        raise
    finally:
        result = _finish(
            task, outcome, budget, timings, log, context.collections.get(collection_of(task)), context.judge
        )
    return result


def failed_row(task: Task, status: Status, detail: str) -> ResultRow:
    """The row of an episode that ended outside `run_episode` (its Ray node was lost, twice)."""
    return _finish(task, LoopOutcome(status, None, detail), None, _Timings(), None)


def _write_start(log: TrajectoryLog, task: Task, context: EpisodeContext) -> None:
    """Written before the sandbox starts, so even an episode whose sandbox failed can be re-graded."""
    collection_hash = context.collection_hashes.get(collection_of(task))
    event = start_event(task, context.config.model, sandbox=context.sandbox_facts, collection_hash=collection_hash,
                        run_facts=context.run_facts)  # fmt: skip
    write_event(log, event)


def start_event(
    task: Task,
    model: str | None,
    *,
    sandbox: dict[str, Any] | None = None,
    collection_hash: str | None = None,
    run_facts: dict[str, Any] | None = None,
    imported_from: str | None = None,
) -> EpisodeStartEvent:
    """The episode_start of TASK: a run's (with its sandbox and run facts) or an import's (with its file)."""
    return EpisodeStartEvent(task_id=task.id, domain=task.domain, task=task_record(task), task_digest=task_digest(task),
                             model=model, sandbox=sandbox, collection_hash=collection_hash, imported_from=imported_from,
                             epoch=task.epoch if task.epoch > 1 else None, **(run_facts or {}))  # fmt: skip


@contextlib.contextmanager
def _sandbox_slot(context: EpisodeContext, timings: _Timings) -> Iterator[None]:
    timings.queue_s += wait_for_slot(context.slots.sandboxes, context.cancel)
    try:
        yield
    finally:
        context.slots.sandboxes.release()


def _run_in_sandbox(
    task: Task, context: EpisodeContext, log: TrajectoryLog, timings: _Timings
) -> tuple[LoopOutcome, Budget | None]:
    config = context.config
    sandbox = context.make_sandbox(task, episode_name(task))
    budget: Budget | None = None
    outcome: LoopOutcome | None = None
    collection = context.collections.get(collection_of(task))
    if collection and context.watch_opens:
        sandbox = watched(sandbox, collection, lambda: budget.turns if budget else 0)
    try:
        started = time.monotonic()
        sandbox.start()
        timings.sandbox_start_s = time.monotonic() - started
        write_event(log, SandboxReadyEvent(sandbox=sandbox.describe(), start_s=round(timings.sandbox_start_s, 3)))
        model = context.make_model(task)
        window = config.context_window or model.context_window
        budget = Budget(config.max_turns, config.time_limit, window, config.output_reserve, context.cancel,
                        model.count_tokens)  # fmt: skip
        throttled = ThrottledModel(model, context.slots.connections, budget.clock, context.cancel)
        settings = LoopSettings(config.action_format, config.command_timeout, config.max_format_errors)
        try:
            outcome = run_agent(task, throttled, sandbox, budget, context.prompts, log, settings)
        finally:
            timings.queue_s += throttled.waited_s + budget.provider_queue_s
    except Exception as error:
        outcome = _outcome_of_failure(error)
    finally:
        if isinstance(sandbox, WatchedSandbox):
            timings.opens = sandbox.opens()
        try:
            sandbox.close()
        except Exception as error:  # cleanup is ours: the row keeps the agent's outcome and says what failed
            with contextlib.suppress(OSError, ValueError):
                write_event(log, HarnessErrorEvent(during="sandbox cleanup", error=_failure_text(error)))
            outcome = _with_detail(outcome, f"sandbox cleanup failed: {type(error).__name__}")
    assert outcome is not None
    return outcome, budget


def _outcome_of_failure(error: Exception) -> LoopOutcome:
    """The sandbox failing is a sandbox_error; anything else unexpected is ours, with its traceback."""
    if isinstance(error, SandboxLimitHit):
        return LoopOutcome(Status.SANDBOX_LIMIT, None, str(error))
    if isinstance(error, SandboxError):
        return LoopOutcome(Status.SANDBOX_ERROR, None, str(error))
    return LoopOutcome(Status.HARNESS_ERROR, None, _failure_text(error))


def _with_detail(outcome: LoopOutcome | None, note: str) -> LoopOutcome:
    if outcome is None:
        return LoopOutcome(Status.HARNESS_ERROR, None, note)
    detail = f"{outcome.detail}; {note}" if outcome.detail else note
    return LoopOutcome(outcome.status, outcome.submission, detail)


def _failure_text(error: BaseException) -> str:
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    if len(text) <= _TRACEBACK_CHARS:
        return text
    return text[: _TRACEBACK_CHARS // 4] + "\n...\n" + text[-_TRACEBACK_CHARS // 2 :]


def _finish(
    task: Task,
    outcome: LoopOutcome,
    budget: Budget | None,
    timings: _Timings,
    log: TrajectoryLog | None,
    collection: Path | None = None,
    judge: JudgePanel | None = None,
) -> ResultRow:
    """Grade and build the row; a grader bug is a harness_error row, a failing log never loses the row."""
    try:
        result = _result(task, outcome, budget, timings, grade_fields(_grade(task, outcome, judge, log)))
    except Exception as error:
        outcome = LoopOutcome(Status.HARNESS_ERROR, None, _failure_text(error))
        result = _result(task, outcome, budget, timings, _UNGRADED)
    if log is not None:
        result = _annotated(task, result, log, collection, timings.opens)
        with contextlib.suppress(OSError, ValueError):  # a full disk: the row still reaches the batch
            write_event(log, EpisodeEndEvent(row=result, submission=_graded_text(outcome)))
            log.close()
    return result


def _annotated(
    task: Task, result: ResultRow, log: TrajectoryLog, collection: Path | None, opens: dict[str, int] | None
) -> ResultRow:
    """Evidence, failure mode and refused attempts from what the loop logged; a failure here keeps the row."""
    try:
        result, evidence = annotate(result, log.events(), task.evidence, task.canary, collection, opens)
        if evidence is not None:
            write_event(log, EvidenceEvent(**evidence))
    except Exception as error:  # a bug here must not cost the episode its row
        with contextlib.suppress(OSError, ValueError):
            write_event(log, HarnessErrorEvent(during="evidence record", error=_failure_text(error)))
    return result


TASK_RECORD = ("question", "answer", "answer_format", "grader", "rel_tol", "abs_tol", "type", "collection")
"""The task's fields the trajectory keeps: what regrading needs from the logs alone (the trajectory is a host
file; it never enters the sandbox)."""


def task_record(task: Task) -> dict[str, Any]:
    return {name: getattr(task, name) for name in TASK_RECORD}


def _graded_text(outcome: LoopOutcome) -> str | None:
    """The submission the grader reads: only answered episodes have one."""
    return outcome.submission if outcome.status is Status.ANSWERED else None


def _grade(task: Task, outcome: LoopOutcome, judge: JudgePanel | None, log: TrajectoryLog | None) -> Grade:
    return grade(task.grader, _graded_text(outcome), task.gold, judge, None if log is None else judge_log(log))


def judge_log(log: TrajectoryLog) -> JudgeLog:
    """Judge calls into the trajectory as `judge_call` events."""

    def write(event: dict[str, Any]) -> None:
        with contextlib.suppress(OSError, ValueError):  # a full disk never costs the grade
            write_event(log, JudgeCallEvent(**event))

    return write


_UNGRADED = {
    "answer": None, "verdict": Verdict.NO_ANSWER, "verdict_strict": Verdict.NO_ANSWER,
    "verdict_lenient": Verdict.NO_ANSWER,
    "reasons": ["NOT_GRADED"], "correct_at_tolerance": None, "parsed_value": None, "unit": None, "grader_version": "",
    "item_f1": None, "judge_cost_usd": None,
}  # fmt: skip
"""The grade fields of a row whose grading itself failed (a harness_error)."""


def _result(
    task: Task, outcome: LoopOutcome, budget: Budget | None, timings: _Timings, graded: dict[str, Any]
) -> ResultRow:
    return ResultRow(
        task_id=task.id,
        domain=task.domain,
        status=outcome.status,
        **graded,
        **_spent(budget),
        detail=outcome.detail,
        queue_s=round(timings.queue_s, 3),
        sandbox_start_s=round(timings.sandbox_start_s, 3),
        task_digest=task_digest(task),
        task_type=task.type,
        epoch=task.epoch,
        attempt=timings.attempt,
    )


def _spent(budget: Budget | None) -> dict[str, Any]:
    """What the agent used; nothing when its sandbox never came up (no budget was opened)."""
    if budget is None:
        return {"turns": 0, "duration_s": 0.0, "input_tokens": 0, "output_tokens": 0, "cached_tokens": 0,
                "reasoning_tokens": 0, "cost_usd": None, "cache_write_tokens": 0, "retry_wait_s": 0.0,
                "failed_attempts_s": 0.0}  # fmt: skip
    return {
        "turns": budget.turns,
        "duration_s": round(budget.elapsed_s, 3),
        "input_tokens": budget.input_tokens,
        "output_tokens": budget.output_tokens,
        "cached_tokens": budget.cached_tokens,
        "reasoning_tokens": budget.reasoning_tokens,
        "cost_usd": budget.cost_usd,
        "cache_write_tokens": budget.cache_write_tokens,
        "retry_wait_s": round(budget.retry_wait_s, 3),
        "failed_attempts_s": round(budget.failed_attempts_s, 3),
    }


GRADE_FIELDS = (
    "verdict",
    "verdict_strict",
    "verdict_lenient",
    "reasons",
    "correct_at_tolerance",
    "parsed_value",
    "unit",
    "grader_version",
    "item_f1",
    "judge_cost_usd",
)


def grade_fields(grade: Grade) -> dict[str, Any]:
    """The results-row fields that come from the grade (shared with re-grading): its tag's content as
    `answer`, then the grade's own."""
    return {"answer": grade.tag_content} | {name: getattr(grade, name) for name in GRADE_FIELDS}
