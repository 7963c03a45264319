"""The run's own throttles: sandbox slots and model-connection slots.

Waiting for a slot is our time, not the agent's: it is recorded apart (`queue_s`) and never counted
against the episode's time budget, so a status never depends on `--max-sandboxes` or `--max-connections`.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Protocol

from harness.budget import Stopwatch
from harness.models import Model, ModelReply
from harness.outcome import EpisodeEnd, Status

_POLL_S = 0.2


class Slot(Protocol):
    """A counting semaphore: a thread's, or `CoordinatorSlot`'s across a Ray cluster."""

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool: ...

    def release(self) -> None: ...


@dataclass(frozen=True)
class Slots:
    sandboxes: Slot
    """Sandboxes alive at once (held from before start until after close)."""
    connections: Slot
    """Model calls in flight at once, across episodes."""

    @classmethod
    def of(cls, max_sandboxes: int, max_connections: int) -> Slots:
        return cls(threading.BoundedSemaphore(max_sandboxes), threading.BoundedSemaphore(max_connections))


def wait_for_slot(slot: Slot, cancel: threading.Event) -> float:
    """Acquire `slot`; returns the seconds waited. A cancelled run ends the episode as `cancelled`."""
    started = time.monotonic()
    while not slot.acquire(timeout=_POLL_S):
        if cancel.is_set():
            raise EpisodeEnd(Status.CANCELLED, detail="the run was interrupted while waiting for a slot")
    return time.monotonic() - started


class ThrottledModel:
    """A model whose calls wait for a connection slot, with the episode's clock paused while waiting."""

    def __init__(self, model: Model, slot: Slot, clock: Stopwatch, cancel: threading.Event):
        self._model, self._slot, self._clock, self._cancel = model, slot, clock, cancel
        self.name, self.context_window = model.name, model.context_window
        self.waited_s = 0.0

    def count_tokens(self, messages: list[dict[str, Any]]) -> int:
        return self._model.count_tokens(messages)

    def query(self, messages: list[dict[str, Any]], timeout_s: float) -> ModelReply:
        with self._clock.paused():
            self.waited_s += wait_for_slot(self._slot, self._cancel)
        try:
            return self._model.query(messages, timeout_s)
        finally:
            self._slot.release()


class RunCoordinator:
    """The run's shared state on a Ray cluster, as one actor beside the driver (`ray_executor.py` makes it
    one, threaded): the global connection slots, the spend cap and the cancel flag every node polls.

    Slots are held per episode attempt (`owner`), so those of an attempt whose node died can be given back."""

    def __init__(self, max_connections: int, max_cost_usd: float | None):
        self._connections = threading.BoundedSemaphore(max_connections)
        self._held: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._max_cost_usd = max_cost_usd
        self._spent_usd = 0.0
        self._cancelled = False

    def acquire(self, owner: str, timeout: float) -> bool:
        if not self._connections.acquire(timeout=timeout):
            return False
        with self._lock:
            self._held[owner] += 1
        return True

    def release(self, owner: str) -> None:
        with self._lock:
            self._held[owner] -= 1
        self._connections.release()

    def release_all(self, owner: str) -> None:
        """Give back the slots of an attempt that will never release them (its node died)."""
        with self._lock:
            count = self._held.pop(owner, 0)
        for _ in range(count):
            self._connections.release()

    def may_start(self) -> str | None:
        """None when an episode may start; else why not (`cancelled`, `cost`)."""
        if self._cancelled:
            return "cancelled"
        if self._max_cost_usd is not None and self._spent_usd >= self._max_cost_usd:
            return "cost"
        return None

    def add_cost(self, usd: float) -> None:
        self._spent_usd += usd

    def cancel(self) -> None:
        self._cancelled = True

    def is_cancelled(self) -> bool:
        return self._cancelled


class CoordinatorSlot:
    """A connection slot of a `RunCoordinator` actor, for one episode attempt on a Ray node."""

    def __init__(self, coordinator: Any, owner: str):
        self._coordinator, self._owner = coordinator, owner

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        import ray

        return ray.get(self._coordinator.acquire.remote(self._owner, _POLL_S if timeout is None else timeout))

    def release(self) -> None:
        import ray

        ray.get(self._coordinator.release.remote(self._owner))
