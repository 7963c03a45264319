"""The run's shared state on a Ray cluster: connection slots, the spend cap and the cancel flag, in one actor."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from harness.episode.throttles import POLL_S


class RunCoordinator:
    """The run's shared state on a Ray cluster, as one actor beside the driver (`executors/ray.py` makes it
    one, threaded): the global connection slots, the spend cap and the cancel flag every node polls.

    Slots are held per episode attempt (`owner`), so those of an attempt whose node died can be given back."""

    def __init__(self, max_connections: int, max_cost_usd: float | None):
        self._connections = threading.BoundedSemaphore(max_connections)
        self._held: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._max_cost_usd = max_cost_usd
        self._spent_usd = 0.0
        self._cancelled = False
        self._stopped: str | None = None

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
        """None when an episode may start; else why not (`cancelled`, `cost`, `errors`)."""
        if self._cancelled:
            return "cancelled"
        if self._stopped is not None:
            return self._stopped
        if self._max_cost_usd is not None and self._spent_usd >= self._max_cost_usd:
            return "cost"
        return None

    def add_cost(self, usd: float) -> None:
        self._spent_usd += usd

    def cancel(self) -> None:
        self._cancelled = True

    def stop_starting(self, reason: str) -> None:
        """No more episodes start (`errors`: the model's error rate was passed; `cost`: the sweep's cap was
        reached); running ones go on."""
        self._stopped = self._stopped or reason

    def is_cancelled(self) -> bool:
        return self._cancelled


class CoordinatorSlot:
    """A connection slot of a `RunCoordinator` actor, for one episode attempt on a Ray node."""

    def __init__(self, coordinator: Any, owner: str):
        self._coordinator, self._owner = coordinator, owner

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        import ray

        return ray.get(self._coordinator.acquire.remote(self._owner, POLL_S if timeout is None else timeout))

    def release(self) -> None:
        import ray

        ray.get(self._coordinator.release.remote(self._owner))
