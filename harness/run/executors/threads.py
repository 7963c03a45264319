"""Many episodes at once in worker threads: separate bounds on sandboxes and model connections, a spend
cap, live progress, and Ctrl-C that cancels running episodes while keeping every finished one."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import replace
from typing import Any

from rich.console import Console

from harness.core.abandon import StoppedWithoutWaiting, stopping_note
from harness.core.messages import Message
from harness.episode import EpisodeContext, run_episode
from harness.episode.throttles import Slots
from harness.inputs.tasks import Task
from harness.models.base import Model, ModelReply
from harness.records.results import ResultRow
from harness.records.run_folder import RunFolder
from harness.run.executors.attempts import Attempts
from harness.run.executors.batch import Batch, BatchLimits, BatchState, ResultsUnwritable, progress_bar


def run_batch(batch: Batch) -> tuple[list[ResultRow], bool]:
    """The batch in worker threads of this process (see `Executor`)."""
    tasks, context, limits, writer, state = batch.tasks, batch.context, batch.limits, batch.writer, batch.state
    slots = Slots.of(limits.max_sandboxes, limits.max_connections)
    bounded = replace(context, slots=slots, make_model=_counting_calls(context.make_model, state))
    results: list[ResultRow] = []
    display = contextlib.nullcontext(batch.progress) if batch.progress else progress_bar(batch.console)
    pool = ThreadPoolExecutor(limits.workers)
    forced = False
    with display as progress:
        bar = progress.add_task(batch.title, total=len(tasks) + state.done, completed=state.done, **state.counts())

        def refresh() -> None:
            progress.update(bar, completed=state.done, **state.counts())

        run_one = _episode_runner(bounded, limits, state, refresh, progress.console)
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
            state.written(result)
            refresh()

        try:
            for future in as_completed(futures):
                record(future)
            if unwritable:
                raise ResultsUnwritable(f"cannot write {writer.path}: {unwritable[0]}")
        except KeyboardInterrupt:
            context.cancel.set()  # running episodes end as `cancelled`, their model calls abandoned
            for future in futures:
                future.cancel()
            progress.console.print(stopping_note(state.running), markup=False, highlight=False)
            try:
                for future in futures:
                    if future not in recorded and not future.cancelled():
                        record(future)
            except KeyboardInterrupt:
                forced = True
                raise StoppedWithoutWaiting from None
            return results, True
        finally:
            pool.shutdown(wait=not forced, cancel_futures=True)
    return results, False


def _episode_runner(
    context: EpisodeContext,
    limits: BatchLimits,
    state: BatchState,
    refresh: Callable[[], None],
    console: Console,
) -> Callable[[Task], ResultRow | None]:
    attempts = Attempts(limits.failures, state, RunFolder(context.run_dir))

    def run_one(task: Task) -> ResultRow | None:
        if not state.may_start(limits, context.cancel):
            return None
        with state.lock:
            state.running += 1
        refresh()
        try:
            result = _with_retries(task, context, attempts)
            state.ended(result, console)
            return result
        finally:
            with state.lock:
                state.running -= 1

    return run_one


def _with_retries(task: Task, context: EpisodeContext, attempts: Attempts) -> ResultRow:
    """The episode, run again while `attempts` says so; only the last attempt's row is returned."""
    attempt = 1
    while True:
        result = run_episode(task, context, attempt)
        retry = attempts.ended(task, result, attempt, context.cancel.is_set())
        if retry is None or context.cancel.wait(retry.backoff_s):
            return result
        attempt = attempts.start(retry)


def _counting_calls(make_model: Callable[[Task], Model], state: BatchState) -> Callable[[Task], Model]:
    """Each episode's model, its calls' tokens counted in STATE as each returns (the live token count)."""
    return lambda task: _CountedModel(make_model(task), state)


class _CountedModel:
    """A model whose replies' tokens go to the batch's counters; everything else is the model's own."""

    def __init__(self, model: Model, state: BatchState):
        self._model, self._state = model, state

    def query(self, messages: list[Message], timeout_s: float) -> ModelReply:
        reply = self._model.query(messages, timeout_s)
        self._state.called(reply.usage.input_tokens + reply.usage.output_tokens)
        return reply

    def __getattr__(self, name: str) -> Any:  # name, context_window, count_tokens, abandon, ...
        return getattr(self._model, name)
