"""The agent's clock against a provider that fails: failed attempts and backoff waits are not the agent's time.

Real litellm over real HTTP to the local test server, real bubblewrap sandboxes."""

from __future__ import annotations

import pytest

from tests.helpers.openai_server import RandomFaults, two_step_agent

EPISODES = 16
FAULT_DELAY_S = 1.0
"""How long the failing server holds a request before its 500."""


pytestmark = pytest.mark.usefixtures("openai_key")


def run_against(mini, server, run_id: str):
    return mini.run(
        "--model", "openai/test-model", "--api-base", server.url, "--workers", "8", "--max-retries", "10", run_id=run_id
    )


@pytest.mark.slow
def test_agent_time_is_the_same_against_a_server_that_fails_30_percent_with_a_delay(mini, openai_server):
    mini.task_copies(EPISODES)
    openai_server.respond = two_step_agent
    run_against(mini, openai_server, "warm-up")  # the process's first calls pay litellm's one-off set-up
    openai_server.reply_delay_s = 1.0  # the model's own latency: the agent's time
    clean = run_against(mini, openai_server, "clean")
    openai_server.faults = RandomFaults(rate=0.3, status=500, delay_s=FAULT_DELAY_S, seed=3)
    faulty = run_against(mini, openai_server, "faulty")
    by_task = {row["task_id"]: row for row in clean.rows}
    assert len(by_task) == len(faulty.rows) == EPISODES
    assert sum(row["retry_wait_s"] for row in faulty.rows) >= 5  # the faults happened
    for row in faulty.rows:
        reference = by_task[row["task_id"]]
        assert row["status"] == reference["status"] == "answered"
        # each fault holds its attempt FAULT_DELAY_S and is followed by a backoff wait: counted as the agent's, the
        # two would add more than a whole fault; load on a shared machine (CI beside other runs) moves either run by
        # up to half a second, so the slack is three quarters of a fault
        slack = max(0.1 * reference["duration_s"], 0.75 * FAULT_DELAY_S)
        assert abs(row["duration_s"] - reference["duration_s"]) <= slack, row["task_id"]
        assert reference["retry_wait_s"] == reference["failed_attempts_s"] == 0


def test_each_row_records_the_retry_waits_and_the_failed_attempts_time(mini, openai_server):
    from tests.helpers.openai_server import fault, reply

    slow_failure = fault(500, "boom")
    slow_failure.delay_s = 1.0
    openai_server.push(slow_failure, fault(429, "slow down", {"Retry-After": "2"}), reply("<answer>42</answer>"))
    outcome = mini.run("--model", "openai/test-model", "--api-base", openai_server.url)
    [row] = outcome.rows
    assert row["status"] == "answered"
    assert row["retry_wait_s"] >= 3  # 1 s of exponential backoff, then the server's 2 s
    assert 1.0 <= row["failed_attempts_s"] < 2.0
    assert row["duration_s"] < 1.0  # neither the waits nor the failed attempts
    [call] = [e for e in outcome.trajectory("t1") if e["event"] == "model_call"]
    assert [a["duration_s"] >= 1.0 for a in call["response"]["attempts"]] == [True, False]


def slow(step, delay_s: float = 1.0):
    step.delay_s = delay_s
    return step


@pytest.mark.parametrize("rejected", ["no choices", "no message", "invalid content"])
def test_a_generation_the_provider_rejected_is_the_agents_time(mini, openai_server, rejected):
    """The provider answered, and what it could not use was the model's own output: that time went into the
    model's generation, like a slow reply (it was taken off the agent's clock, a free second try)."""
    from tests.helpers.openai_server import fault, malformed, reply

    step = {
        "no choices": malformed(choices=[]),
        "no message": malformed(choices=[{"index": 0, "message": None, "finish_reason": "stop"}]),
        "invalid content": fault(500, "The model produced invalid content. Consider modifying your prompt."),
    }[rejected]
    openai_server.push(slow(step), reply("<answer>42</answer>"))
    outcome = mini.run("--model", "openai/test-model", "--api-base", openai_server.url)
    [row] = outcome.rows
    assert row["status"] == "answered"
    assert row["duration_s"] >= 1.0 and row["failed_attempts_s"] == 0
    [call] = [e for e in outcome.trajectory("t1") if e["event"] == "model_call"]
    assert [a["on_agent_clock"] for a in call["response"]["attempts"]] == [True]


def test_a_model_whose_output_the_provider_keeps_rejecting_runs_out_of_its_own_time(mini, openai_server):
    from tests.helpers.openai_server import malformed

    openai_server.push(*[slow(malformed(choices=[])) for _ in range(8)])
    limits = ("--time-limit", "3", "--max-retries", "8")
    outcome = mini.run("--model", "openai/test-model", "--api-base", openai_server.url, *limits)
    [row] = outcome.rows
    assert row["status"] == "time_limit", row["detail"]
    assert row["duration_s"] < 6
