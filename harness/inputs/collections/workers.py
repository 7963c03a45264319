"""Conversions in worker processes. Workers are spawned (the parent runs rich's refresh thread, and a forked
lock could hang one), leave Ctrl-C to the parent, which ends them at once, and a worker's death (a crash
inside a converter, the kernel's out-of-memory killer) costs only the file that caused it: the files that
were being converted go again each in a process of its own, the others in a new pool."""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable, Generator
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.context import BaseContext
from multiprocessing.queues import SimpleQueue
from typing import Any, Protocol, TypeVar

DIED = "the converter's process died (a crash, or out of memory)"
_IDLE_DEATHS = 2
"""Pools in a row whose workers may die before taking any job, before the remaining files are given up."""


class Job(Protocol):
    @property
    def source(self) -> str: ...


J = TypeVar("J", bound=Job)
R = TypeVar("R")

_started: SimpleQueue | None = None


def run_in_pool(
    jobs: list[J], workers: int, work: Callable[[J], R], died: Callable[[J, str], R]
) -> Generator[R, None, None]:
    """`work(job)` for every job, results as they come; `died(job, reason)` for a job whose process died
    even when it ran alone. `work` must be a module-level function (it is pickled to the workers)."""
    context = multiprocessing.get_context("spawn")
    remaining, idle_deaths = list(jobs), 0
    while remaining:
        started: SimpleQueue = context.SimpleQueue()
        pool = _pool(min(workers, len(remaining)), context, started)
        futures: dict[Future[R], J] = {pool.submit(_announced, work, job): job for job in remaining}
        broken: list[J] = []
        try:
            for future in as_completed(futures):
                try:
                    result = future.result()
                except BrokenProcessPool:
                    broken.append(futures[future])
                    continue
                yield result
        except BaseException:
            stop_workers(pool)
            raise
        pool.shutdown()
        began = set()
        while not started.empty():
            began.add(started.get())
        suspects = sorted((job for job in broken if job.source in began), key=lambda job: job.source)
        remaining = [job for job in broken if job.source not in began]
        idle_deaths = 0 if suspects else idle_deaths + 1
        if idle_deaths > _IDLE_DEATHS:  # workers keep dying before they take a job: no file to blame
            yield from (died(job, DIED) for job in remaining)
            return
        for job in suspects:
            yield _alone(job, work, died, context)


def _alone(job: J, work: Callable[[J], R], died: Callable[[J, str], R], context: BaseContext) -> R:
    pool = _pool(1, context, context.SimpleQueue())
    try:
        return pool.submit(_announced, work, job).result()
    except BrokenProcessPool:
        return died(job, DIED)
    except BaseException:
        stop_workers(pool)
        raise
    finally:
        pool.shutdown()


def _pool(workers: int, context: BaseContext, started: SimpleQueue) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker, initargs=(started,))


def _init_worker(started: SimpleQueue) -> None:
    """Ctrl-C reaches the whole process group; the parent stops the workers, so they ignore it."""
    global _started
    _started = started
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _announced(work: Callable[[Any], R], job: Any) -> R:
    """Tell the parent which job this process took, so that it knows which one to blame if it dies."""
    if _started is not None:
        _started.put(job.source)
    return work(job)


def stop_workers(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the running conversions now, not when they finish."""
    if hasattr(pool, "terminate_workers"):  # Python 3.14+
        pool.terminate_workers()
        return
    workers = list((pool._processes or {}).values())  # before 3.14 the only handle on them; shutdown drops it
    pool.shutdown(wait=False, cancel_futures=True)
    for process in workers:
        process.terminate()
    pool.shutdown(wait=True)
