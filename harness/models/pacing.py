"""Calls paced by the budget their provider last announced (`rate_limits.Announcement`), so that the next call
waits for room the provider said it has instead of drawing a 429.

The latest announcement counts, but for one that leaves more than one heard just before it (replies come back
out of the provider's order); the calls still in flight when it was heard and those admitted after it may not
be in its figures, so each is taken off them (a request each, and as many tokens as the last call used). A
budget with a known size refills evenly until its reset (Anthropic's buckets refill continuously; OpenAI's
reset is the time until the budget is whole), at the fastest rate an announcement proved (the remaining count
is a whole number, the reset is not: `(limit - remaining - 1) / reset` is never more than the true rate); one
without waits for its reset, past which it says nothing.
Not thread-safe: the provider's gate (`concurrency.ProviderGate`) holds its lock around it.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.models.rate_limits import Allowance, Announcement

_EXPIRY = 2.0
"""An announcement of a known budget says nothing once twice its reset has passed without a newer one (a
provider that stopped announcing): the calls go on under the adaptive limit alone."""


@dataclass(frozen=True)
class _Heard:
    allowance: Allowance
    at: float
    """When it was heard (monotonic seconds)."""
    uncounted: int
    """Calls in flight when it was heard, besides the one that brought it."""
    next_ticket: int
    """The gate's next ticket then: the calls admitted since are the tickets from it on."""
    refill_per_s: float
    """How fast the budget comes back, as far as the announcements so far prove (0: not known)."""


def _proven_refill_per_s(allowance: Allowance) -> float:
    """The slowest refill this announcement allows: its remaining count may be up to one short of the truth."""
    if allowance.limit is None or allowance.reset_in_s <= 0:
        return 0.0
    return max(allowance.limit - allowance.remaining - 1, 0.0) / allowance.reset_in_s


def _free(heard: _Heard, cost: float, next_ticket: int, now: float) -> float:
    """What HEARD leaves NOW once the calls it may not count are taken off (each COST), at most the whole budget;
    infinite once it has expired (its reset passed, twice over when its size is known)."""
    allowance, elapsed = heard.allowance, now - heard.at
    if elapsed >= allowance.reset_in_s * (1 if allowance.limit is None else _EXPIRY):
        return float("inf")
    admitted_since = heard.uncounted + next_ticket - heard.next_ticket
    refilled = allowance.remaining + heard.refill_per_s * elapsed
    if allowance.limit is not None:
        refilled = min(refilled, allowance.limit)
    return refilled - admitted_since * cost


def _wait_for(heard: _Heard | None, cost: float, next_ticket: int, now: float) -> float:
    """Seconds until COST fits in what HEARD leaves; 0: it fits."""
    if heard is None or cost <= 0:
        return 0.0
    free = _free(heard, cost, next_ticket, now)
    if free >= cost:
        return 0.0
    limit = heard.allowance.limit
    until_expiry = heard.allowance.reset_in_s * (1 if limit is None else _EXPIRY) - (now - heard.at)
    refill = heard.refill_per_s
    return min((cost - free) / refill, until_expiry) if refill > 0 else until_expiry


def _latest(current: _Heard | None, heard: _Heard, cost: float, now: float) -> _Heard:
    """The newer announcement, but for one that leaves more than the current one heard less than a refill of a
    call ago: replies come back out of the order the provider counted them in, so an older count may arrive
    last."""
    if current is None or current.refill_per_s <= 0 or now - current.at >= max(cost, 1.0) / current.refill_per_s:
        return heard
    if _free(heard, max(cost, 1.0), heard.next_ticket, now) <= _free(current, max(cost, 1.0), heard.next_ticket, now):
        return heard
    return current


class PacedBudget:
    def __init__(self) -> None:
        self._requests: _Heard | None = None
        self._tokens: _Heard | None = None
        self._tokens_per_call = 0.0
        """What the last call that said so used: the next one's likely share of a token budget."""
        self._refills = {"requests": 0.0, "tokens": 0.0}
        """The fastest refill (per second) an announcement proved, per budget."""

    def heard(
        self, announcement: Announcement | None, tokens_used: int, in_flight: int, next_ticket: int, now: float
    ) -> None:
        """A call's reply (or refusal): what it announced and the tokens it used, with the calls then IN_FLIGHT
        besides it and the gate's NEXT_TICKET."""
        if tokens_used > 0:
            self._tokens_per_call = float(tokens_used)
        if announcement is None:
            return
        if announcement.requests is not None:
            heard = self._heard("requests", announcement.requests, in_flight, next_ticket, now)
            self._requests = _latest(self._requests, heard, 1.0, now)
        if announcement.tokens is not None:
            heard = self._heard("tokens", announcement.tokens, in_flight, next_ticket, now)
            self._tokens = _latest(self._tokens, heard, self._tokens_per_call, now)

    def _heard(self, budget: str, allowance: Allowance, in_flight: int, next_ticket: int, now: float) -> _Heard:
        self._refills[budget] = max(self._refills[budget], _proven_refill_per_s(allowance))
        return _Heard(allowance, now, in_flight, next_ticket, self._refills[budget])

    def wait_s(self, next_ticket: int, now: float) -> float:
        """Seconds the call to get NEXT_TICKET waits for room in the announced budgets; 0: it may go."""
        return max(
            _wait_for(self._requests, 1.0, next_ticket, now),
            _wait_for(self._tokens, self._tokens_per_call, next_ticket, now),
        )
