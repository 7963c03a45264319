"""The model calls in flight in this process, for the progress line: how many are being retried, and how long
the oldest one has been going. Thread-safe: each episode thread registers its call for as long as it lasts
(`litellm_model.py`), the retry policy marks it when it is retried (`retries.py`), the display reads a view."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass
class _Call:
    owner: str
    started: float
    retried: bool = False


@dataclass(frozen=True)
class _InFlightView:
    calls: int
    retrying: int
    """Calls on their second attempt or later, or waiting to make it."""
    oldest_s: float | None
    """How long the oldest call has been going (its retries included); None when no call is in flight."""

    def describe(self) -> str:
        """For the progress line: "" when nothing is worth saying."""
        parts = [f"retrying {self.retrying}"] if self.retrying else []
        if self.oldest_s is not None and self.oldest_s >= 10:
            parts.append(f"oldest call {_age(self.oldest_s)}")
        return "".join(f" · {part}" for part in parts)


class _InFlightCalls:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: dict[int, _Call] = {}
        self._by_thread: dict[int, int] = {}
        self._numbers = itertools.count()

    @contextmanager
    def calling(self, owner: str) -> Iterator[None]:
        """This thread's call to OWNER (a provider gate's key) is in flight for the block."""
        number, thread = next(self._numbers), threading.get_ident()
        with self._lock:
            self._calls[number] = _Call(owner, time.monotonic())
            self._by_thread[thread] = number
        try:
            yield
        finally:
            with self._lock:
                del self._calls[number]
                self._by_thread.pop(thread, None)

    def retrying(self) -> None:
        """This thread's call failed an attempt and will be tried again (nothing when no call is registered)."""
        with self._lock:
            number = self._by_thread.get(threading.get_ident())
            if number is not None:
                self._calls[number].retried = True

    def view(self, owners: Iterable[str]) -> _InFlightView:
        """The calls to OWNERS."""
        wanted, now = set(owners), time.monotonic()
        with self._lock:
            calls = [call for call in self._calls.values() if call.owner in wanted]
        oldest = min((call.started for call in calls), default=None)
        return _InFlightView(len(calls), sum(call.retried for call in calls), None if oldest is None else now - oldest)


def _age(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole}s" if whole < 60 else f"{whole // 60}m{whole % 60:02d}s"


IN_FLIGHT = _InFlightCalls()
"""This process's calls."""
