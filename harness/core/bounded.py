"""Work on untrusted files in processes of their own, each under a memory cap and a wall-clock cap: a tiny
hostile file (a zipped spreadsheet whose last cell is XFD1048576, a PDF page of a few thousand scattered
glyphs) can make a library take tens of gigabytes or hours.

The memory cap is RLIMIT_DATA, set in the worker before it takes any work: a MemoryError there ends only that
item. It counts the private writable memory a process maps, thread stacks included, not its shared libraries.
The parent kills a worker that runs past the time cap. Workers are spawned (the parent may run rich's refresh
thread, and a forked lock could hang one), ignore Ctrl-C (it reaches the whole process group; the parent ends
them at once) and take one item at a time, so a worker that dies (a crash inside a library, the kernel's
out-of-memory killer) costs only its item, which goes again once in a fresh process."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import resource
import signal
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

MEMORY = "memory"
TIME = "time"
DIED = "died"
_THREAD_POOLS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
"""The per-core thread pools of numerical libraries (numpy's OpenBLAS, which pymupdf4llm loads): one thread each
is enough for the work here, and on a machine of many cores their reserved memory alone would go over the cap."""
_DEATHS = 2
"""Deaths of its process after which an item is given up (DIED)."""


@dataclass(frozen=True)
class Limits:
    memory_mb: int
    seconds: float


@dataclass(frozen=True)
class Stopped:
    """An item whose work did not end: it went over a limit (MEMORY, TIME) or its process died twice (DIED)."""

    limit: str


def ran_out_of_memory(error: BaseException) -> bool:
    """The error is a MemoryError, or was raised while one was handled (a library's own wrapping of it)."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, MemoryError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def bounded_map(
    items: list[T], work: Callable[[T], R], limits: Limits, workers: int = 1
) -> Generator[tuple[T, R | Stopped], None, None]:
    """(item, `work(item)`) for every item, as they end, in up to WORKERS processes; `Stopped` for an item that
    went over a limit or whose process died twice. An exception `work` raises ends the map and is raised here.
    `work` must be a module-level function or a partial of one (it is pickled to the workers). Closing the
    generator (Ctrl-C in the parent among the ways) kills the workers at once."""
    context = multiprocessing.get_context("spawn")
    queue, deaths = list(reversed(range(len(items)))), [0] * len(items)
    busy: list[_Worker] = []
    idle: list[_Worker] = []
    try:
        while queue or busy:
            while queue and len(busy) < workers:
                worker = idle.pop() if idle else _Worker.start(context, work, limits.memory_mb)
                worker.take(queue.pop(), items, limits.seconds)
                busy.append(worker)
            wait(
                [handle for worker in busy for handle in worker.handles],
                min(w.deadline for w in busy) - time.monotonic(),
            )
            for worker in list(busy):
                number = worker.number
                if worker.connection.poll() and (answer := worker.answer()) is not None:
                    busy.remove(worker)
                    idle.append(worker)
                    yield items[number], answer[0]
                    continue
                if worker.process.is_alive() and time.monotonic() < worker.deadline:
                    continue
                busy.remove(worker)
                died = worker.process.is_alive() is False
                worker.kill()
                if not died:
                    yield items[number], Stopped(TIME)
                    continue
                deaths[number] += 1
                if deaths[number] < _DEATHS:
                    queue.append(number)
                else:
                    yield items[number], Stopped(DIED)
    finally:
        for worker in busy + idle:
            worker.kill()


@dataclass
class _Worker:
    process: BaseProcess
    connection: Connection
    number: int = 0
    """The item it works on (its index)."""
    deadline: float = 0.0
    handles: list[Any] = field(default_factory=list)

    @classmethod
    def start(cls, context: Any, work: Callable[[Any], Any], memory_mb: int) -> _Worker:
        parent, child = context.Pipe()
        process = context.Process(target=_serve, args=(child, work, memory_mb), daemon=True)
        # Ctrl-C blocked while it starts (the mask survives exec): until the worker ignores it, one that came
        # would end it with a traceback; here it waits, and reaches the parent once unblocked
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        child.close()
        return cls(process, parent, handles=[parent, process.sentinel])

    def take(self, number: int, items: list[Any], seconds: float) -> None:
        self.number, self.deadline = number, time.monotonic() + seconds
        with contextlib.suppress(OSError):  # it died while idle: seen as dead with this item
            self.connection.send(items[number])

    def answer(self) -> tuple[Any] | None:
        """(the work's result,), or None when the process died before it sent it all. An exception the work
        raised is raised here."""
        try:
            kind, value = self.connection.recv()
        except (EOFError, OSError):
            return None
        if kind == "raised":
            raise value
        return (value,)

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.connection.close()


def _serve(connection: Connection, work: Callable[[Any], Any], memory_mb: int) -> None:
    """A worker: cap its memory, then do the work for each item the parent sends until the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    for name in _THREAD_POOLS:  # before the libraries load: each thread's stack and buffers count against the cap
        os.environ.setdefault(name, "1")
    cap = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))
    while True:
        try:
            item = connection.recv()
        except (EOFError, OSError):  # the parent closed the pipe, or went away (Ctrl-C) with an answer unread
            return
        try:
            answer: tuple[str, Any] = ("result", work(item))
        except Exception as error:
            answer = ("result", Stopped(MEMORY)) if ran_out_of_memory(error) else ("raised", error)
        del item
        try:
            connection.send(answer)
        except OSError:  # the parent went away
            return
        except MemoryError:
            connection.send(("result", Stopped(MEMORY)))
        except Exception as error:  # an exception that cannot be pickled: its words
            connection.send(("raised", RuntimeError(f"{type(answer[1]).__name__}: {answer[1]} ({error})")))


class BoundedWorker:
    """One worker process kept for many items, taken one at a time, each under its own time cap (an episode's
    images): started at the first item, and again after one it was killed for; `close` ends it."""

    def __init__(self, work: Callable[[Any], Any], memory_mb: int) -> None:
        self._work, self._memory_mb = work, memory_mb
        self._worker: _Worker | None = None

    def run(self, item: Any, seconds: float) -> Any:
        """`work(item)`, or `Stopped` past SECONDS or the memory cap, or when its process died; an exception the
        work raised is raised here (the process stays for the next item)."""
        if self._worker is None:
            self._worker = _Worker.start(multiprocessing.get_context("spawn"), self._work, self._memory_mb)
        worker = self._worker
        worker.take(0, [item], seconds)
        while True:
            wait(worker.handles, max(worker.deadline - time.monotonic(), 0.0))
            if worker.connection.poll() and (answer := worker.answer()) is not None:
                return answer[0]
            if worker.process.is_alive() and time.monotonic() < worker.deadline:
                continue
            died = not worker.process.is_alive()
            self.close()
            return Stopped(DIED if died else TIME)

    def close(self) -> None:
        if self._worker is not None:
            self._worker.kill()
            self._worker = None
