"""One episode end to end: (for a solver that needs one) wait for a sandbox slot and start the sandbox, the solver,
grade, trajectory closed, results row returned. Whatever goes wrong, an episode that started returns a row."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from harness.core.names import file_name
from harness.core.status import Outcome, Status, failure_text, outcome_of
from harness.diagnostics.episode_end import EpisodeEnd, finish_episode, graded_text_of, log_failure
from harness.episode.budget import Budget
from harness.episode.context import EpisodeContext
from harness.episode.solvers import EpisodeInputs
from harness.episode.throttles import ThrottledModel, wait_for_slot
from harness.grading import Grade
from harness.grading.judge import JudgePanel
from harness.inputs.tasks import Task, collection_of
from harness.records.episode_row import Spend, Timings, episode_row
from harness.records.events import SandboxFacts, SandboxReadyEvent
from harness.records.results import ResultRow
from harness.records.run_folder import RunFolder
from harness.records.trajectory import TrajectoryLog
from harness.sandboxes.base import Sandbox
from harness.sandboxes.file_opens import WatchedSandbox, watched
from harness.sandboxes.model_socket import make_socket_folder, mount_agent_folder, remove_socket_folder


@dataclass
class _Clocks:
    """The episode's timings as they accrue, and the collection files the host saw opened (None where it
    cannot see them)."""

    attempt: int = 1
    queue_s: float = 0.0
    sandbox_start_s: float = 0.0
    opens: dict[str, int] | None = None
    budget: Budget | None = None
    """The episode's budget once its model exists (the open watcher reads its turn)."""

    def timings(self) -> Timings:
        return Timings(round(self.queue_s, 3), round(self.sandbox_start_s, 3), self.attempt)


def run_episode(task: Task, context: EpisodeContext, attempt: int = 1) -> ResultRow:
    """Never raises but for Ctrl-C (after the trajectory got its end): every failure becomes a row, which
    records `attempt`, the episode's attempt within its run."""
    clocks = _Clocks(attempt=attempt)
    budget: Budget | None = None
    log: TrajectoryLog | None = None
    outcome = Outcome(Status.HARNESS_ERROR, None, "the episode did not finish")
    try:
        log = context.trajectory_log(task)
        log.write(context.start_of(task))  # before the sandbox starts: every episode can be re-graded
        if context.settings.solver.needs_sandbox:
            with _sandbox_slot(context, clocks):
                outcome, budget = _run_in_sandbox(task, context, log, clocks)
        else:
            outcome, budget = _solve(task, context, log, clocks, None)
    except Exception as error:  # cancelled while waiting, the log unwritable, a bug of ours: the batch goes on
        outcome = outcome_of(error)
    except BaseException as error:  # Ctrl-C: the trajectory still gets its end, then it propagates
        outcome = Outcome(Status.CANCELLED, None, f"interrupted: {type(error).__name__}: {error}")
        raise
    finally:
        spend = budget.spend() if budget else Spend()
        collection = context.collections.get(collection_of(task))
        result = _finish(task, outcome, spend, clocks, log, collection, context.judge, context.cancel)
    return result


def failed_row(task: Task, status: Status, detail: str) -> ResultRow:
    """The row of an episode that ended outside `run_episode` (its Ray node was lost, twice)."""
    return _finish(task, Outcome(status, None, detail), Spend(), _Clocks(), None)


@contextlib.contextmanager
def _sandbox_slot(context: EpisodeContext, clocks: _Clocks) -> Iterator[None]:
    clocks.queue_s += wait_for_slot(context.slots.sandboxes, context.cancel)
    try:
        yield
    finally:
        context.slots.sandboxes.release()


def _run_in_sandbox(
    task: Task, context: EpisodeContext, log: TrajectoryLog, clocks: _Clocks
) -> tuple[Outcome, Budget | None]:
    epoch = "" if task.epoch == 1 else f"-epoch{task.epoch}"
    sandbox = context.make_sandbox(task, file_name(f"{task.domain}-{task.id}{epoch}"))
    budget: Budget | None = None
    outcome = Outcome(Status.HARNESS_ERROR, None, "the episode did not finish")
    collection = context.collections.get(collection_of(task))
    socket_folder: Path | None = None
    try:
        if context.settings.solver.model_socket:  # mounted as the sandbox starts
            socket_folder = make_socket_folder(sandbox)
        agent = context.settings.solver.agent_folder()
        if agent is not None:
            mount_agent_folder(sandbox, agent)
        if collection and context.watch_opens:
            sandbox = watched(sandbox, collection, lambda: clocks.budget.turns if clocks.budget else 0)
        started = time.monotonic()
        sandbox.start()
        clocks.sandbox_start_s = time.monotonic() - started
        log.write(
            SandboxReadyEvent(
                sandbox=SandboxFacts.model_validate(sandbox.describe()), start_s=round(clocks.sandbox_start_s, 3)
            )
        )
        outcome, budget = _solve(task, context, log, clocks, sandbox, socket_folder)
    except Exception as error:
        outcome = outcome_of(error)
    finally:
        if isinstance(sandbox, WatchedSandbox):
            clocks.opens = sandbox.opens()
        try:
            sandbox.close()
        except Exception as error:  # cleanup is ours: the row keeps the agent's outcome and says what failed
            log_failure(log, "sandbox cleanup", failure_text(error))
            outcome = outcome.with_note(f"sandbox cleanup failed: {type(error).__name__}")
        if socket_folder is not None:
            remove_socket_folder(socket_folder)
    return outcome, budget


def _solve(
    task: Task,
    context: EpisodeContext,
    log: TrajectoryLog,
    clocks: _Clocks,
    sandbox: Sandbox | None,
    socket_folder: Path | None = None,
) -> tuple[Outcome, Budget | None]:
    """The run's solver on the episode (in SANDBOX, started, when it needs one), its model throttled; the budget
    is returned with the outcome for the row's spend."""
    model = context.make_model(task)
    budget = clocks.budget = context.settings.budget(model, context.cancel)
    throttled = ThrottledModel(model, context.slots.connections, budget.clock, context.cancel)
    inputs = EpisodeInputs(
        task=task,
        model=throttled,
        budget=budget,
        log=log,
        prompts=context.prompts,
        loop=context.settings.loop,
        images=RunFolder(context.run_dir).images,
        collection=context.collections.get(collection_of(task)),
        sandbox=sandbox,
        limits=context.settings.request_limits,
        socket_folder=socket_folder,
    )
    try:
        return context.settings.solver.solve(inputs), budget
    except Exception as error:
        return outcome_of(error), budget
    finally:
        clocks.queue_s += throttled.waited_s + budget.provider_queue_s


def _finish(
    task: Task,
    outcome: Outcome,
    spend: Spend,
    clocks: _Clocks,
    log: TrajectoryLog | None,
    collection: Path | None = None,
    judge: JudgePanel | None = None,
    cancel: threading.Event | None = None,
) -> ResultRow:
    """The episode's end as every episode's (diagnostics/episode_end.py), with the run's spend and timings."""

    def row_of(ended: Outcome, graded: Grade) -> ResultRow:
        return episode_row(task, ended, graded, spend, clocks.timings())

    end = EpisodeEnd(outcome, graded_text_of(outcome, task, judge), collection, clocks.opens, judge, cancel)
    return finish_episode(task, end, row_of, log)
