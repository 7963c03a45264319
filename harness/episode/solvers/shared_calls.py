"""One model call that several episodes of a run share (the paper's batches: a document's questions in one
request), made by the first of them to need it and read by the others: per run and in this process only.

Each key has its own lock: the first episode to take it makes the call while the others of its key wait, then
read what it got. What it got is kept when it is the reply, or a refusal that would be the same for every
episode (the request past a limit); a failed call is not kept, so the next episode of the key asks again (and a
retried episode too): a key costs one call whenever its calls succeed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = ["SharedCalls"]

Result = TypeVar("Result")


@dataclass
class _Entry(Generic[Result]):
    lock: threading.Lock = field(default_factory=threading.Lock)
    result: Result | None = None


class SharedCalls(Generic[Result]):
    """Results by key, each made once by whoever asks first."""

    def __init__(self) -> None:
        self._entries: dict[Hashable, _Entry[Result]] = {}
        self._lock = threading.Lock()

    def keep(self, key: Hashable, result: Result) -> bool:
        """KEY's result, made elsewhere (a resumed run's records); False when KEY already has one."""
        with self._lock:
            entry = self._entries.setdefault(key, _Entry())
        with entry.lock:
            if entry.result is not None:
                return False
            entry.result = result
            return True

    def result(self, key: Hashable, make: Callable[[], Result]) -> tuple[Result, bool]:
        """KEY's result, and whether this call made it (MAKE, called under KEY's lock; what it raises is not
        kept and propagates to this caller alone)."""
        with self._lock:
            entry = self._entries.setdefault(key, _Entry())
        with entry.lock:
            if entry.result is not None:
                return entry.result, False
            entry.result = make()
            return entry.result, True
