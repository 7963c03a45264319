"""Adaptive concurrency per provider: how many calls to one endpoint may be in flight, learnt from its 429s.

One `ProviderGate` per (provider, api base) in this process, shared by every episode and run that calls it; under
Ray, a run's gates live in its coordinator actor and every node's calls go through them (`GATE_SOURCE`), so the
limit is the cluster's, not each node's. The in-flight limit starts small and doubles each round of calls answered
(one more per answer, TCP's slow start) until the first 429 or the configured maximum, each rise at least
`PROBE_SPACING_S` after the last, so a start past the provider's cap draws a 429 or two, not one per call of a
doubling above it. Then a rate limit halves the calls then in flight
(multiplicative decrease from the flight size, as TCP does, at most once per round of calls in flight) and holds
every caller of that provider back for the server's Retry-After, not only the one that got it; a full round of
calls without one raises it by one (additive increase), up to the maximum. A 429 on a call above the level known
to go through (a full round went through at it; in the slow start, a call) only sets the limit back to that
level: the server held the others, so halving them and pausing every caller would idle what it allows. Where the
provider announces its request and token budgets in its replies' headers, calls are also paced by them
(`pacing.py`), before a 429. Waiting at the gate is our time, never the agent's.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from harness.models.pacing import PacedBudget
from harness.models.rate_limits import Announcement

_DECREASE = 0.5
SLOW_START_FROM = 4
"""The in-flight limit a provider's first calls start at (or the maximum, if smaller): a few calls at once, as TCP
starts with a few segments (RFC 6928), since a provider that takes fewer is rare and one that never answers (a
hung local server) would otherwise hold the limit at its start for good."""
PROBE_SPACING_S = 0.1
"""In the slow start, the limit rises at most once this often: a provider refuses a call above its cap at once, so
the 429 is back before many more levels were tried (answers come back together, a round's doubling at once)."""
PROBE_AFTER_S = 30.0
"""How long the level that drew a 429 is left alone before it is tried again (each try costs a Retry-After)."""
POLL_S = 0.2


class _Admission(NamedTuple):
    round: int
    at: float
    flight: int
    """Calls in flight once it was admitted, itself included: what the server had when it answered (or refused)
    it, as a 429 read late, once the calls beside it returned, no longer tells."""
    answered: int
    """The gate's calls answered (not refused) by then."""


@dataclass(frozen=True)
class GateState:
    """What the progress display and the logs show of a gate."""

    key: str
    """`provider@api base`."""
    limit: int
    maximum: int
    in_flight: int
    rate_limited: int
    """429s answered so far."""

    def describe(self) -> str:
        """The gate as a run's last lines show it: its limit and 429s, not the calls a Ctrl-C left to close."""
        return f"{self.key} limit {self.limit} (max {self.maximum}), {self.rate_limited}×429"


class Gate(Protocol):
    """Where a model call waits for room at its provider's in-flight limit, and says how it went."""

    @property
    def limit(self) -> int: ...

    def acquire(self) -> tuple[int, float]:
        """Wait for room; the call's ticket and the seconds waited."""

    def release(
        self,
        ticket: int,
        rate_limited: bool,
        retry_after_s: float | None,
        announcement: Announcement | None = None,
        tokens_used: int = 0,
    ) -> None:
        """The call is done: whether it drew a 429 (and the delay asked), the budget its reply announced and the
        tokens it used."""


GATE_SOURCE: ContextVar[Callable[[str, int], Gate] | None] = ContextVar("gate_source", default=None)
"""Set (on a Ray node, around an episode): the gate for a provider key and maximum comes from there."""


class ProviderGate:
    def __init__(self, key: str, maximum: int, stale_after_s: float | None = None):
        """`stale_after_s`: a call admitted that long ago is no longer counted in flight (its caller was lost
        with its node; no call outlives its timeout)."""
        self.key, self.maximum, self.stale_after_s = key, maximum, stale_after_s
        self._limit = float(min(maximum, SLOW_START_FROM))
        self._slow_start = self._limit < maximum
        """Until the first 429 or the maximum: one more per answer (doubling each round), not one more per round."""
        self._rises = 0
        """In the slow start, answers whose rise of the limit waits for `_rise_at`."""
        self._rise_at = 0.0
        self._admitted: dict[int, _Admission] = {}
        """Calls in flight by admission number."""
        self._next = 0
        self._rate_limited = 0
        self._successes = 0
        self._answered = 0
        self._paused_until = 0.0
        self._round = 0
        """Incremented at each decrease: a 429 on a call admitted before it does not decrease again."""
        self._ceiling: int | None = None
        """The in-flight level that drew the last 429: not probed again before `_probe_at`."""
        self._probe_at = 0.0
        self._good: int | None = None
        """The most calls in flight during a full round without a 429 (since the last 429 at or below it)."""
        self._round_peak = 0
        """The most calls in flight since the last increase or 429."""
        self._pacing = PacedBudget()
        self._changed = threading.Condition()

    @property
    def limit(self) -> int:
        return max(int(self._limit), 1)

    def acquire(self) -> tuple[int, float]:
        """Wait for room under the limit (and past any Retry-After); returns the call's ticket and the seconds
        waited."""
        started = time.monotonic()
        while True:
            ticket = self.try_acquire(POLL_S)
            if ticket is not None:
                return ticket, time.monotonic() - started

    def try_acquire(self, timeout_s: float) -> int | None:
        """A ticket if room comes within TIMEOUT_S, else None (a remote caller asks again)."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while True:
                now = time.monotonic()
                self._forget_stale(now)
                pace = self._pacing.wait_s(self._next, now)
                self._rise(now)
                if now >= self._paused_until and pace <= 0 and len(self._admitted) < self.limit:
                    ticket, self._next = self._next, self._next + 1
                    self._admitted[ticket] = _Admission(self._round, now, len(self._admitted) + 1, self._answered)
                    self._round_peak = max(self._round_peak, len(self._admitted))
                    return ticket
                if now >= deadline:
                    return None
                rising = self._rise_at - now if self._slow_start and self._rises else 0.0
                held = max(self._paused_until - now, pace, rising, 0.0)
                self._changed.wait(min(held or POLL_S, POLL_S, deadline - now))

    def _forget_stale(self, now: float) -> None:
        if self.stale_after_s is None:
            return
        for ticket in [t for t, call in self._admitted.items() if now - call.at > self.stale_after_s]:
            del self._admitted[ticket]

    def release(
        self,
        ticket: int,
        rate_limited: bool,
        retry_after_s: float | None,
        announcement: Announcement | None = None,
        tokens_used: int = 0,
    ) -> None:
        """One call done: a 429 (with the server's Retry-After, if any) lowers the limit, a success counts; the
        budget it announced paces the next calls."""
        with self._changed:
            call = self._admitted.pop(ticket, None)
            now = time.monotonic()
            self._pacing.heard(announcement, tokens_used, len(self._admitted), self._next, now)
            if call is None:  # counted as lost (stale) already
                return
            if rate_limited:
                self._rate_limited += 1
                self._slow_start = False
                self._successes, self._round_peak = 0, len(self._admitted)
                if self._good is not None and call.flight * _DECREASE <= self._good < call.flight:
                    self._back_to(self._good, now, call.flight)
                else:
                    self._good = None  # refused at a level that went through: the provider's budget ran out
                    if call.round == self._round:
                        self._decrease(now, max(call.flight, len(self._admitted) + 1))
                    # every refusal: the server held no more than the calls then in flight (a burst at the start, far
                    # above its cap, comes down to it as its 429s return, with one Retry-After pause): those still in
                    # flight and, for one read late, those answered meanwhile
                    held = len(self._admitted) + self._answered - call.answered
                    self._limit = min(self._limit, float(max(held, 1)))
                    if retry_after_s:
                        self._paused_until = max(self._paused_until, now + retry_after_s)
            else:
                self._successes += 1
                self._answered += 1
                if self._slow_start:
                    # it went through with that many in flight: a 429 above it returns here (`_back_to`)
                    self._good = max(self._good or 0, call.flight)
                    self._rises += 1
                    self._rise(now)
                elif self._successes >= self.limit:
                    self._successes = 0
                    self._increase(now)
            self._changed.notify_all()

    def _rise(self, now: float) -> None:
        """The slow start's next rise of the limit, if an answer asked for one and its time has come."""
        if self._slow_start and self._rises and now >= self._rise_at:
            self._rises -= 1
            self._limit = min(self._limit + 1, float(self.maximum))
            self._slow_start = self._limit < self.maximum
            self._rise_at = now + PROBE_SPACING_S

    def _decrease(self, now: float, in_flight: int) -> None:
        """Halve what was in flight when the 429 came (TCP's flight size: a limit far above it, as at the start,
        would take several rounds of 429s to come down); that level is not tried again before `_probe_at`."""
        self._ceiling = min(self.limit, in_flight)
        self._limit = max(min(self._limit, float(in_flight)) * _DECREASE, 1.0)
        self._probe_at = now + PROBE_AFTER_S
        self._round += 1

    def _back_to(self, good: int, now: float, in_flight: int) -> None:
        """A probe above GOOD, the level known to go through, drew the 429: back to it (the refused call waits its
        Retry-After on its own), and IN_FLIGHT is not tried again before `_probe_at`."""
        self._ceiling = in_flight
        self._limit = min(self._limit, float(good))
        self._probe_at = now + PROBE_AFTER_S

    def _increase(self, now: float) -> None:
        """One more after a full round of calls without a 429; the level that drew the last one only after
        `PROBE_AFTER_S`, and freely again once a round there went through."""
        self._good, self._round_peak = max(self._good or 0, self._round_peak), len(self._admitted)
        if self._ceiling is not None and self.limit >= self._ceiling:
            self._ceiling = None
        if self._ceiling is not None and self.limit + 1 >= self._ceiling and now < self._probe_at:
            return
        self._limit = min(self._limit + 1, float(self.maximum))

    def state(self) -> GateState:
        with self._changed:
            return GateState(self.key, self.limit, self.maximum, len(self._admitted), self._rate_limited)


_GATES: dict[str, ProviderGate] = {}
_GATES_LOCK = threading.Lock()


def gate_key(model: str, api_base: str | None) -> str:
    """Gates are per provider (a litellm model string's prefix) and endpoint."""
    return f"{model.split('/', 1)[0]}@{api_base or 'default'}"


def provider_gate(model: str, api_base: str | None, maximum: int) -> Gate:
    """The gate for this model's provider and endpoint: `GATE_SOURCE`'s when set, else this process's (made at
    the first caller's maximum; a later caller with a larger maximum raises it)."""
    key = gate_key(model, api_base)
    source = GATE_SOURCE.get()
    if source is not None:
        return source(key, maximum)
    return local_gate(key, maximum)


def local_gate(key: str, maximum: int) -> ProviderGate:
    """This process's gate for a provider key."""
    with _GATES_LOCK:
        return gate_in(_GATES, key, maximum)


def gate_in(gates: dict[str, ProviderGate], key: str, maximum: int, stale_after_s: float | None = None) -> ProviderGate:
    """The gate of KEY in GATES, made at its first caller's maximum; a later caller with a larger maximum raises
    it. The caller holds the lock that guards GATES (this process's, or a run coordinator's)."""
    gate = gates.get(key)
    if gate is None:
        gate = gates[key] = ProviderGate(key, maximum, stale_after_s)
    gate.maximum = max(gate.maximum, maximum)
    return gate


def gate_states(keys: tuple[str, ...]) -> list[GateState]:
    """The states of those of these gates that exist (a gate is made at its provider's first call)."""
    with _GATES_LOCK:
        gates = [_GATES[key] for key in keys if key in _GATES]
    return [gate.state() for gate in gates]
