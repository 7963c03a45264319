"""Many episodes at once: worker threads, separate bounds on sandboxes and model connections, a spend
cap, live progress, and Ctrl-C that cancels running episodes while keeping every finished one."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from harness.episode.lifecycle import EpisodeContext, run_episode
from harness.episode.throttles import Slots
from harness.inputs.tasks import Task
from harness.records.results import ResultRow, ResultsWriter


class ResultsUnwritable(OSError):
    """results.jsonl could not be appended to (a full disk): the batch stopped; written rows are kept."""


@dataclass(frozen=True)
class BatchLimits:
    workers: int
    """Episodes in progress at once."""
    max_sandboxes: int
    """Sandboxes alive at once (an episode waits for a slot before its sandbox starts)."""
    max_connections: int
    """Model calls in flight at once, across episodes."""
    max_cost_usd: float | None
    """Stop starting new episodes once the run's spend reaches this (None: no cap)."""


@dataclass
class BatchState:
    """Counters the progress display reads; updated under `lock` by the episode threads."""

    done: int = 0
    correct: int = 0
    running: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    skipped_for_cost: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def counts(self) -> dict[str, Any]:
        return {
            "correct": self.correct,
            "running": self.running,
            "tokens": f"{self.input_tokens + self.output_tokens:,}",
            "cost": f"${self.cost_usd:.2f}",
        }


def progress_bar(console: Console) -> Progress:
    """The live bar both executors show (local threads, Ray)."""
    columns = (
        TextColumn("{task.description}", style="bold", markup=False),  # model and domain names as written
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("correct {task.fields[correct]} · running {task.fields[running]}"),
        TextColumn("· {task.fields[tokens]} tokens · {task.fields[cost]}"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
    )
    return Progress(*columns, console=console)


def run_batch(
    tasks: list[Task],
    context: EpisodeContext,
    limits: BatchLimits,
    writer: ResultsWriter,
    console: Console,
    title: str,
    state: BatchState,
) -> tuple[list[ResultRow], bool]:
    """Run every task; returns the results in finishing order and whether Ctrl-C interrupted the batch.

    Raises `ResultsUnwritable` (after stopping every episode) when a results row cannot be written."""
    bounded = replace(context, slots=Slots.of(limits.max_sandboxes, limits.max_connections))
    results: list[ResultRow] = []
    with progress_bar(console) as progress, ThreadPoolExecutor(limits.workers) as pool:
        bar = progress.add_task(title, total=len(tasks) + state.done, completed=state.done, **state.counts())

        def refresh() -> None:
            progress.update(bar, completed=state.done, **state.counts())

        run_one = _episode_runner(bounded, limits, state, refresh)
        futures: list[Future[ResultRow | None]] = [pool.submit(run_one, task) for task in tasks]
        recorded: set[Future[ResultRow | None]] = set()

        unwritable: list[OSError] = []

        def record(future: Future[ResultRow | None]) -> None:
            recorded.add(future)
            result = future.result()
            if result is None or unwritable:  # not started (spend cap, Ctrl-C), or nothing can be written
                return
            try:
                writer.append(result)
            except OSError as error:  # a full disk: stop every episode; the rows written so far stay
                unwritable.append(error)
                context.cancel.set()
                return
            results.append(result)
            with state.lock:
                state.done += 1
                state.correct += result.is_correct()
            refresh()

        try:
            for future in as_completed(futures):
                record(future)
            if unwritable:
                raise ResultsUnwritable(f"cannot write {writer.path}: {unwritable[0]}")
        except KeyboardInterrupt:
            context.cancel.set()  # running episodes stop at their next step and end as `cancelled`
            for future in futures:
                future.cancel()
            for future in futures:
                if future not in recorded and not future.cancelled():
                    record(future)
            return results, True
    return results, False


def _episode_runner(
    context: EpisodeContext, limits: BatchLimits, state: BatchState, refresh: Callable[[], None]
) -> Callable[[Task], ResultRow | None]:
    def run_one(task: Task) -> ResultRow | None:
        with state.lock:
            if context.cancel.is_set():
                return None
            if limits.max_cost_usd is not None and state.cost_usd >= limits.max_cost_usd:
                state.skipped_for_cost += 1
                return None
            state.running += 1
        refresh()
        try:
            result = run_episode(task, context)
        finally:
            with state.lock:
                state.running -= 1
        with state.lock:
            state.input_tokens += result.input_tokens
            state.output_tokens += result.output_tokens
            state.cost_usd += result.cost_usd or 0.0
        return result

    return run_one
