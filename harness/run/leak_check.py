"""A run's leakage check (harness/inputs/leakage_cache.py), in the background while its first episodes start.

The check only warns: what it finds changes no episode, so nothing waits for it but the record. A run's
run.yaml says `leakage check not finished` until the check ends, then holds its warning (or none), and the
console prints the warning when it comes; a run that ends normally waits for it, so its record and console
have it before the end table. Runs of one process over the same tasks and collections (a sweep's models)
share one check.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

from harness.inputs.collections.hashing import CollectionFiles
from harness.inputs.leakage import leak_summary
from harness.inputs.leakage_cache import find_leaks_cached
from harness.inputs.tasks import Task

NOT_FINISHED = "leakage check not finished (the run stopped first); python -m harness leakage runs it"

_NICENESS = 10
_started: dict[str, Future[str | None]] = {}
_lock = threading.Lock()


class LeakCheck:
    """The check of TASKS over their collections, started at once in a thread of its own."""

    def __init__(self, tasks: list[Task], files: dict[str, CollectionFiles], cache_dir: Path) -> None:
        key = _key(tasks, files, cache_dir)
        with _lock:
            future = _started.get(key)
            if future is None:
                future = _started[key] = Future()
                worker = threading.Thread(
                    target=_check, args=(future, tasks, files, cache_dir), name="leakage-check", daemon=True
                )
                worker.start()
        self._future = future

    def done(self) -> bool:
        return self._future.done()

    def warning(self, timeout: float | None = None) -> str | None:
        """The warning line (None: nothing counts), waiting up to TIMEOUT; NOT_FINISHED when it did not end."""
        try:
            return self._future.result(timeout)
        except TimeoutError:
            return NOT_FINISHED

    def when_done(self, callback: Callable[[str | None], None]) -> None:
        """Call CALLBACK with the warning when the check ends (at once, here, when it has)."""
        self._future.add_done_callback(lambda future: callback(future.result()))


def _check(future: Future[str | None], tasks: list[Task], files: dict[str, CollectionFiles], cache_dir: Path) -> None:
    # below the run's own threads (Linux sets a thread's niceness by its id; ripgrep and the scan's worker
    # processes inherit it): on a busy machine the check takes what the first episodes leave
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), _NICENESS)
    try:
        future.set_result(leak_summary(find_leaks_cached(tasks, files, cache_dir)))
    except Exception as error:  # the check's failure is said and recorded; the run goes on (the next start retries)
        with _lock:
            _started.pop(_key(tasks, files, cache_dir), None)
        future.set_result(f"leakage check failed ({type(error).__name__}: {error}); python -m harness leakage")


def _key(tasks: list[Task], files: dict[str, CollectionFiles], cache_dir: Path) -> str:
    """What the check's answer depends on: the tasks' needles and allowances, the collections' contents."""
    looked_for = sorted((t.domain, t.id, t.answer, t.solution, t.leak_allow, t.collection) for t in tasks)
    collections = sorted((name, listed.digest, str(listed.root)) for name, listed in files.items())
    text = json.dumps([str(cache_dir), looked_for, collections], default=str)
    return hashlib.sha256(text.encode()).hexdigest()
