"""The agent's clock against a provider that fails: failed attempts and backoff waits are not the agent's time.

Real litellm over real HTTP to the local test server, real bubblewrap sandboxes."""

from __future__ import annotations

import pytest

from tests.openai_server import RandomFaults, two_step_agent

EPISODES = 16


pytestmark = pytest.mark.usefixtures("openai_key")


def run_against(mini, server, run_id: str):
    return mini.run("--model", "openai/test-model", "--api-base", server.url, "--workers", "8",
                    "--max-retries", "10", run_id=run_id)  # fmt: skip


def test_agent_time_is_the_same_against_a_server_that_fails_30_percent_with_a_delay(mini, openai_server):
    mini.task_copies(EPISODES)
    openai_server.respond = two_step_agent
    openai_server.reply_delay_s = 1.0  # the model's own latency: the agent's time
    run_against(mini, openai_server, "warm-up")  # the process's first calls pay litellm's one-off set-up
    clean = run_against(mini, openai_server, "clean")
    openai_server.faults = RandomFaults(rate=0.3, status=500, delay_s=1.0, seed=3)
    faulty = run_against(mini, openai_server, "faulty")
    by_task = {row["task_id"]: row for row in clean.rows}
    assert len(by_task) == len(faulty.rows) == EPISODES
    assert sum(row["retry_wait_s"] for row in faulty.rows) >= 5  # the faults happened
    for row in faulty.rows:
        reference = by_task[row["task_id"]]
        assert row["status"] == reference["status"] == "answered"
        assert abs(row["duration_s"] - reference["duration_s"]) <= 0.1 * reference["duration_s"], row["task_id"]
        assert reference["retry_wait_s"] == reference["failed_attempts_s"] == 0


def test_each_row_records_the_retry_waits_and_the_failed_attempts_time(mini, openai_server):
    from tests.openai_server import fault, reply

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
