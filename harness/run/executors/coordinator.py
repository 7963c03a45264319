"""The run's shared state on a Ray cluster: connection slots, the providers' adaptive limits, the spend cap and
the cancel flag, in one actor."""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any

from harness.episode.throttles import POLL_S
from harness.models.concurrency import GateState, ProviderGate, gate_in
from harness.models.rate_limits import Announcement
from harness.sandboxes.pacing import CreationPacer, wait_for


class RunCoordinator:
    """The run's shared state on a Ray cluster, as one actor beside the driver (`executors/ray.py` makes it
    one, threaded): the global connection slots, the spend cap and the cancel flag every node polls.

    Slots are held per episode attempt (`owner`), so those of an attempt whose node died can be given back."""

    def __init__(self, max_connections: int, max_cost_usd: float | None, call_timeout_s: float = 600.0):
        self._connections = threading.BoundedSemaphore(max_connections)
        self._gates: dict[str, ProviderGate] = {}
        """Each provider's in-flight limit for the whole cluster (`models/concurrency.py`)."""
        self._pacer: CreationPacer | None = None
        """E2B's sandbox creations, paced for every node together (`sandboxes/pacing.py`)."""
        self._stale_call_s = call_timeout_s + 60.0
        """A call admitted this long ago was lost with its node: no longer counted in flight."""
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

    def creation_delay(self, creations_per_s: float) -> float:
        """A turn for one sandbox creation at the plan's rate for the whole cluster; the seconds until it."""
        with self._lock:
            if self._pacer is None:
                self._pacer = CreationPacer(creations_per_s)
        return self._pacer.reserve()

    def gate_acquire(self, key: str, maximum: int, timeout_s: float) -> int | None:
        with self._lock:
            gate = gate_in(self._gates, key, maximum, self._stale_call_s)
        return gate.try_acquire(timeout_s)

    def gate_release(
        self,
        key: str,
        ticket: int,
        rate_limited: bool,
        retry_after_s: float | None,
        announcement: Announcement | None = None,
        tokens_used: int = 0,
    ) -> None:
        self._gates[key].release(ticket, rate_limited, retry_after_s, announcement, tokens_used)

    def gate_limit(self, key: str) -> int:
        return self._gates[key].limit

    def gate_states(self, keys: tuple[str, ...]) -> list[GateState]:
        return [self._gates[key].state() for key in keys if key in self._gates]


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


class CoordinatorGate:
    """A provider's gate in a `RunCoordinator` actor, for the model calls of a Ray node (`concurrency.Gate`)."""

    def __init__(self, coordinator: Any, key: str, maximum: int):
        self._coordinator, self._key, self._maximum = coordinator, key, maximum

    @property
    def limit(self) -> int:
        import ray

        return int(ray.get(self._coordinator.gate_limit.remote(self._key)))

    def acquire(self) -> tuple[int, float]:
        import ray

        started = time.monotonic()
        while True:
            ticket = ray.get(self._coordinator.gate_acquire.remote(self._key, self._maximum, POLL_S))
            if ticket is not None:
                return int(ticket), time.monotonic() - started

    def release(
        self,
        ticket: int,
        rate_limited: bool,
        retry_after_s: float | None,
        announcement: Announcement | None = None,
        tokens_used: int = 0,
    ) -> None:
        import ray

        remote = self._coordinator.gate_release.remote
        ray.get(remote(self._key, ticket, rate_limited, retry_after_s, announcement, tokens_used))


class CoordinatorPacer:
    """A Ray node's sandbox creations, paced by the run's coordinator: the plan's rate holds for the cluster."""

    def __init__(self, coordinator: Any, creations_per_s: float):
        self._coordinator, self._creations_per_s = coordinator, creations_per_s

    def wait_turn(self, cancel: threading.Event) -> bool:
        """Wait for the cluster's next free turn; False when cancelled meanwhile."""
        import ray

        return wait_for(float(ray.get(self._coordinator.creation_delay.remote(self._creations_per_s))), cancel)
