"""Sandbox creations paced at a service's rate (E2B's plan): one pacer per runner, or one for a whole Ray
cluster (executors/coordinator.py), so workers started together reach the service one by one."""

from __future__ import annotations

import random
import threading
import time
from typing import Protocol

_PACING_JITTER = 0.2
"""Each gap between this runner's creations is the rate's interval stretched by up to this fraction."""


class Pacer(Protocol):
    """Where a sandbox creation waits for its turn at the service's rate."""

    def wait_turn(self, cancel: threading.Event) -> bool:
        """False when cancelled while waiting."""


class CreationPacer:
    """Gives this runner's sandbox creations turns at most the rate apart (each gap stretched by a random part
    of `_PACING_JITTER`)."""

    def __init__(self, creations_per_s: float):
        self._interval_s = 1.0 / creations_per_s
        self._next = 0.0
        self._lock = threading.Lock()

    def wait_turn(self, cancel: threading.Event) -> bool:
        """Wait for the next free turn; False when cancelled meanwhile."""
        return wait_for(self.reserve(), cancel)

    def reserve(self) -> float:
        """Take the next free turn; the seconds until it (a Ray node's caller waits them itself)."""
        with self._lock:
            now = time.monotonic()
            turn = max(now, self._next)
            self._next = turn + self._interval_s * (1 + random.uniform(0, _PACING_JITTER))
        return turn - now


def wait_for(delay_s: float, cancel: threading.Event) -> bool:
    """Wait DELAY_S for a turn; False when cancelled meanwhile."""
    return not cancel.wait(delay_s) if delay_s > 0 else not cancel.is_set()
