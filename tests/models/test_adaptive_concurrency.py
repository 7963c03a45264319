"""Adaptive concurrency per provider: 429s lower the in-flight limit for every caller of that provider, success
raises it again. Real litellm over real HTTP to the local test server, real bubblewrap sandboxes."""

from __future__ import annotations

import re
import threading
import time

import pytest

from harness.models import concurrency
from harness.models.concurrency import ProviderGate
from tests.helpers.openai_server import ScriptedOpenAIServer, two_step_agent
from tests.run.test_sweeps import HUNG_CALL_BOUND

CAP = 8


pytestmark = pytest.mark.usefixtures("openai_key")


@pytest.fixture
def past_the_slow_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """New gates start at their maximum, as after a slow start that reached it: what comes after the start."""
    monkeypatch.setattr(concurrency, "SLOW_START_FROM", 1 << 20)


def agent_server(concurrency_limit: int | None) -> ScriptedOpenAIServer:
    server = ScriptedOpenAIServer()
    server.respond = two_step_agent
    server.reply_delay_s = 1.0
    server.concurrency_limit = concurrency_limit
    server.start()
    return server


def provider_line(output: str) -> re.Match[str]:
    match = re.search(r" limit (\d+) \(max (\d+)\), (\d+)×429", output)
    assert match, output
    return match


def test_a_rate_limited_provider_converges_to_its_cap_in_flight(mini):
    """Structural: the start finds the cap from below and the limit ends within twice it; how much of the cap is used
    over a run is a wall-clock figure, printed by bench/sweep_throughput.py and bench/sweep_shared_provider.py (here
    a loaded machine once held it to 3.2 of 8)."""
    mini.task_copies(48)
    server = agent_server(CAP)
    try:
        outcome = mini.run(
            "--model",
            "openai/test-model",
            "--api-base",
            server.url,
            "--workers",
            "32",
            "--max-connections",
            "32",
            "--max-retries",
            "20",
            *HUNG_CALL_BOUND,
        )
    finally:
        server.stop()
    assert outcome.exit_code == 0 and [row["status"] for row in outcome.rows] == ["answered"] * 48
    refused_share = server.refused / len(server.requests + [None] * server.refused)
    limit, maximum, rate_limited = map(int, provider_line(outcome.output).groups())
    assert maximum == 32 and rate_limited == server.refused > 0  # the 429 count is reported
    assert refused_share < 0.2, (server.refused, len(server.requests))
    assert server.refused < CAP, server.refused  # the start found the cap from below: a start at 32 drew 15
    assert limit <= 2 * CAP


def test_a_provider_without_a_limit_keeps_the_configured_maximum(mini):
    mini.task_copies(32)
    server = agent_server(None)
    try:
        outcome = mini.run(
            "--model", "openai/test-model", "--api-base", server.url, "--workers", "32", "--max-connections", "32"
        )
    finally:
        server.stop()
    assert outcome.exit_code == 0 and len(outcome.rows) == 32
    limit, maximum, rate_limited = map(int, provider_line(outcome.output).groups())
    # never lowered: no 429, and the slow start climbed from 4 to the maximum or within a rise or two of it (a rise
    # at most every PROBE_SPACING_S, one per answer: the run's last answers can end it a rise short, as CI once saw)
    assert (maximum, rate_limited) == (32, 0) and limit >= 30, (limit, maximum, rate_limited)
    assert server.max_concurrent > CAP


@pytest.mark.usefixtures("past_the_slow_start")
def test_a_retry_after_holds_back_every_caller_of_the_provider():
    gate = ProviderGate("openai@test", 4)
    admitted, _ = gate.acquire()
    gate.release(admitted, rate_limited=True, retry_after_s=1.0)  # one caller's 429
    assert gate.state().limit == 1  # half of the one call in flight, at least one
    waits: list[float] = []

    def another_caller() -> None:
        admitted, waited = gate.acquire()
        waits.append(waited)
        gate.release(admitted, rate_limited=False, retry_after_s=None)

    started = time.monotonic()
    callers = [threading.Thread(target=another_caller) for _ in range(3)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert time.monotonic() - started >= 0.9 and min(waits) >= 0.9


@pytest.mark.usefixtures("past_the_slow_start")
def test_a_burst_of_429s_halves_the_limit_once_and_success_raises_it_back(monkeypatch):
    monkeypatch.setattr(concurrency, "PROBE_AFTER_S", 0.5)
    gate = ProviderGate("openai@test", 8)

    def calls(count: int) -> None:
        for _ in range(count):
            ticket, _ = gate.acquire()
            gate.release(ticket, rate_limited=False, retry_after_s=None)

    tickets = [gate.acquire()[0] for _ in range(8)]
    gate.release(tickets.pop(), rate_limited=True, retry_after_s=None)
    assert gate.state().limit == 4  # the first refusal of the round halves the eight in flight
    gate.release(tickets.pop(), rate_limited=True, retry_after_s=None)
    assert gate.state().limit == 4  # a second one in the same round does not halve again
    for ticket in tickets:  # the rest refused too: the server held none of them
        gate.release(ticket, rate_limited=True, retry_after_s=None)
    assert gate.state().limit == 1
    calls(1 + 2 + 3 + 4 + 5 + 6)  # a full round of successes at each limit adds one
    assert gate.state().limit == 7
    calls(50)
    assert gate.state().limit == 7  # the level that drew the 429 waits for its probe
    time.sleep(0.6)
    calls(7 + 8)
    assert gate.state().limit == 8
    calls(40)
    assert gate.state().limit == 8  # never above the maximum


@pytest.mark.parametrize("header", ["nan", "inf", "86400", "-5"])
def test_an_absurd_retry_after_never_holds_the_provider_longer_than_the_longest_backoff(header):
    from harness.models.rate_limits import MAX_DELAY_S, provider_delay_s

    refused = Exception("429")
    refused.headers = {"retry-after": header}  # type: ignore[attr-defined]
    seconds = provider_delay_s(refused)
    assert seconds is None or 0.0 <= seconds <= MAX_DELAY_S


def test_a_call_lost_with_its_node_stops_counting_after_the_longest_call():
    gate = ProviderGate("openai@test", 1, stale_after_s=0.3)
    gate.acquire()  # never released: its node died mid-call
    assert gate.try_acquire(0.1) is None  # still counted in flight
    started = time.monotonic()
    ticket, _ = gate.acquire()
    assert time.monotonic() - started < 1.0 and gate.state().in_flight == 1
    gate.release(ticket, rate_limited=False, retry_after_s=None)
    assert gate.state().in_flight == 0


@pytest.mark.usefixtures("past_the_slow_start")
def test_a_429_far_below_the_limit_halves_what_was_in_flight_in_one_round():
    gate = ProviderGate("openai@test", 32)
    tickets = [gate.acquire()[0] for _ in range(5)]  # the server takes 4: the fifth is refused
    gate.release(tickets.pop(), rate_limited=True, retry_after_s=None)
    assert gate.state().limit == 2  # 5 in flight halved, not 32 halved to 16 (then 8, then 4)


@pytest.mark.usefixtures("past_the_slow_start")
def test_a_burst_far_above_the_cap_comes_down_to_what_the_server_held():
    gate = ProviderGate("openai@test", 32)
    tickets = [gate.acquire()[0] for _ in range(32)]  # the server holds 4 and refuses 28 at once
    for ticket in tickets[4:]:
        gate.release(ticket, rate_limited=True, retry_after_s=None)
    assert gate.state().limit == 4  # one round of 429s, not 32 -> 16 -> 8 -> 4 with a pause each


def _round_at(gate: ProviderGate, in_flight: int, rounds: int) -> None:
    """ROUNDS times IN_FLIGHT calls at once, all answered."""
    for _ in range(rounds):
        tickets = [gate.acquire()[0] for _ in range(in_flight)]
        for ticket in tickets:
            gate.release(ticket, rate_limited=False, retry_after_s=None)


@pytest.mark.usefixtures("past_the_slow_start")
def test_a_429_on_one_call_above_the_level_that_went_through_returns_to_it_and_pauses_no_one():
    gate = ProviderGate("openai@test", 16)
    _round_at(gate, 8, rounds=2)  # a full round of 16 answers with 8 in flight
    tickets = [gate.acquire()[0] for _ in range(9)]
    gate.release(tickets.pop(), rate_limited=True, retry_after_s=5.0)  # the server allows 8
    assert gate.state().limit == 8  # back to what went through, not half of the 9 in flight
    gate.release(tickets.pop(), rate_limited=False, retry_after_s=None)
    assert gate.try_acquire(0.05) is not None  # the refused call waits its Retry-After; the others go on


@pytest.mark.usefixtures("past_the_slow_start")
def test_a_429_at_the_level_that_went_through_still_halves_and_pauses_every_caller():
    gate = ProviderGate("openai@test", 16)
    _round_at(gate, 8, rounds=2)
    tickets = [gate.acquire()[0] for _ in range(8)]
    gate.release(tickets.pop(), rate_limited=True, retry_after_s=5.0)  # the provider's budget ran out
    assert gate.state().limit == 4
    for ticket in tickets:
        gate.release(ticket, rate_limited=False, retry_after_s=None)
    assert gate.try_acquire(0.05) is None


@pytest.mark.usefixtures("past_the_slow_start")
def test_a_429_read_after_the_calls_beside_it_returned_halves_what_was_in_flight_when_it_was_sent():
    gate = ProviderGate("openai@test", 16)
    tickets = [gate.acquire()[0] for _ in range(9)]
    for ticket in tickets[:8]:  # the eight the server held are answered before the refusal is read
        gate.release(ticket, rate_limited=False, retry_after_s=None)
    gate.release(tickets[8], rate_limited=True, retry_after_s=None)
    assert gate.state().limit == 4  # half of the 9 in flight when it was sent, not of the 1 left when it was read


@pytest.mark.usefixtures("past_the_slow_start")
def test_a_burst_whose_calls_reached_the_server_out_of_order_halves_the_burst_not_the_calls_ahead_of_the_refused():
    gate = ProviderGate("openai@test", 16)
    tickets = [gate.acquire()[0] for _ in range(16)]
    gate.release(tickets[2], rate_limited=True, retry_after_s=None)  # the third admitted came in after eight others
    assert gate.state().limit == 8  # half the 16 in flight, not the 2 admitted before it


def test_a_new_gate_starts_small_and_doubles_each_round_up_to_the_maximum(monkeypatch):
    """From a few calls at once (RFC 6928's initial window of a few segments), not from the maximum."""
    monkeypatch.setattr(concurrency, "PROBE_SPACING_S", 0.0)
    gate = ProviderGate("openai@test", 20)
    limits = [gate.state().limit]
    for _ in range(5):
        _round_at(gate, gate.state().limit, rounds=1)
        limits.append(gate.state().limit)
    assert limits == [4, 8, 16, 20, 20, 20]  # one more per answer: twice as many after each full round


def test_in_the_slow_start_the_limit_rises_once_a_spacing_and_its_first_429_pauses_no_one(monkeypatch):
    """Answers come back together (a round's doubling at once): the limit rises one level per spacing, so the
    provider's 429 is back before many calls above its cap went; it ends the slow start without a pause."""
    monkeypatch.setattr(concurrency, "PROBE_SPACING_S", 1.0)
    monkeypatch.setattr(concurrency, "SLOW_START_FROM", 2)
    gate = ProviderGate("openai@test", 32)
    _round_at(gate, 2, rounds=1)  # two answers at once: one rise now, the other a spacing later
    assert gate.state().limit == 3
    tickets = [gate.acquire()[0] for _ in range(3)]
    assert gate.try_acquire(0.1) is None
    tickets.append(gate.acquire()[0])
    assert gate.state().limit == 4
    gate.release(tickets.pop(), rate_limited=True, retry_after_s=5.0)  # refused with 4 in flight
    assert gate.state().limit == 2  # back to the level that went through
    for ticket in tickets:
        gate.release(ticket, rate_limited=False, retry_after_s=None)
    ticket = gate.try_acquire(0.05)
    assert ticket is not None  # the refused call waits its Retry-After, no one else
    gate.release(ticket, rate_limited=False, retry_after_s=None)
    _round_at(gate, 1, rounds=20)
    assert gate.state().limit == 3  # one more per round from here, below the refused level until its probe
