"""The run's own throttles: sandbox slots and model-connection slots.

Waiting for a slot is our time, not the agent's: it is recorded apart (`queue_s`) and never counted
against the episode's time budget, so a status never depends on `--max-sandboxes` or `--max-connections`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Protocol

from harness.core.abandon import CallAbandoned, call_abandonable
from harness.core.messages import Message
from harness.core.status import EpisodeFinished, Status
from harness.episode.budget import Stopwatch
from harness.models.base import Abandonable, Model, ModelReply

POLL_S = 0.2


class _Slot(Protocol):
    """A counting semaphore: a thread's, or `CoordinatorSlot`'s across a Ray cluster."""

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool: ...

    def release(self) -> None: ...


@dataclass(frozen=True)
class Slots:
    sandboxes: _Slot
    """Sandboxes alive at once (held from before start until after close)."""
    connections: _Slot
    """Model calls in flight at once, across episodes."""

    @classmethod
    def of(cls, max_sandboxes: int, max_connections: int) -> Slots:
        return cls(threading.BoundedSemaphore(max_sandboxes), threading.BoundedSemaphore(max_connections))


def wait_for_slot(slot: _Slot, cancel: threading.Event) -> float:
    """Acquire `slot`; returns the seconds waited. A cancelled run ends the episode as `cancelled`."""
    started = time.monotonic()
    while not slot.acquire(timeout=POLL_S):
        if cancel.is_set():
            raise EpisodeFinished(Status.CANCELLED, detail="the run was interrupted while waiting for a slot")
    return time.monotonic() - started


class ThrottledModel:
    """A model whose calls wait for a connection slot, with the episode's clock paused while waiting; a call in
    flight when the run is cancelled is abandoned (its connections closed where the model can) and the episode
    ends as `cancelled` at once, whatever the provider does."""

    def __init__(self, model: Model, slot: _Slot, clock: Stopwatch, cancel: threading.Event):
        self._model, self._slot, self._clock, self._cancel = model, slot, clock, cancel
        self.name, self.context_window = model.name, model.context_window
        self.waited_s = 0.0

    def count_tokens(self, messages: list[Message]) -> int:
        return self._model.count_tokens(messages)

    def query(self, messages: list[Message], timeout_s: float) -> ModelReply:
        with self._clock.paused():
            self.waited_s += wait_for_slot(self._slot, self._cancel)
        model = self._model
        abandon = model.abandon if isinstance(model, Abandonable) else None
        try:
            return call_abandonable(lambda: model.query(messages, timeout_s), self._cancel, abandon)
        except CallAbandoned:
            detail = "the run was interrupted during a model call: the call was abandoned"
            raise EpisodeFinished(Status.CANCELLED, detail=detail) from None
        finally:
            self._slot.release()
