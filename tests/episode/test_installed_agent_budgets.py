"""The budgets against each installed agent, each agent its real run on the local sandbox: the cost cap as a user
sets it (`--max-episode-cost` with `--prices`: the proxy makes the call that reaches the cap and refuses the next,
403, and the agent, refused, ends), and a model that never answers (the agent waits on its call until its time
limit ends it). The row says which budget it was. The turn budget: each agent's own module."""

from __future__ import annotations

import os
from typing import Any

import pytest
import yaml

from tests.helpers.installed_agents import run_agent
from tests.helpers.openai_server import Step, reply
from tests.helpers.silent_server import SilentServer

INSTALLS = {"gemini-cli": "HARNESS_GEMINI_CLI", "claude-code": "HARNESS_CLAUDE_CODE"}
"""The agents installed from npm by .ci/run, and the variable naming each install."""
TIME_LIMIT_S = 10
"""The agent's time, its start-up included (5 to 7 s for mini-swe-agent on the 2-core machine)."""


def never(request: dict[str, Any]) -> Step:
    raise AssertionError("the silent provider answers nothing")


@pytest.mark.parametrize("solver", ["mini-swe-agent", "gemini-cli", "claude-code"])
def test_the_call_past_the_episodes_cost_cap_is_refused_and_the_agent_ends_as_cost_limit(tmp_path, solver):
    if solver in INSTALLS:
        assert os.environ.get(INSTALLS[solver]), f"{solver}'s pinned release is installed by .ci/run"
    prices = tmp_path / "prices.yaml"  # each call of 120 + 30 tokens: $0.15
    prices.write_text(yaml.safe_dump({"openai/test-model": {"input": 1000, "output": 1000}}))
    reading = reply("Reading.", bash="cat documents/ledger.md")
    caps = ("--task-id", "t1", "--max-episode-cost", "0.1", "--prices", str(prices))
    run = run_agent(tmp_path, solver, lambda request: reading, "sk-test", *caps)
    assert run.code == 0 and len(run.server.requests) == 1
    row = run.rows["t1"]
    assert (row["status"], row["turns"]) == ("cost_limit", 1) and row["cost_usd"] == pytest.approx(0.15)
    assert row["detail"] == "0.15 USD spent, cap 0.1"


@pytest.mark.parametrize("solver", ["mini-swe-agent", "gemini-cli", "claude-code"])
def test_an_agent_whose_model_never_answers_ends_at_its_time_limit(tmp_path, solver):
    """The provider reads each call and never answers: the agent waits on the proxy, and at the episode's time
    limit the runner ends it (the call abandoned, its connection closed); the row says `time_limit`."""
    if solver in INSTALLS:
        assert os.environ.get(INSTALLS[solver]), f"{solver}'s pinned release is installed by .ci/run"
    provider = SilentServer()
    provider.start()
    try:
        limits = ("--task-id", "t1", "--time-limit", str(TIME_LIMIT_S), "--max-retries", "0")
        run = run_agent(tmp_path, solver, never, "sk-test", *limits, provider=provider)
    finally:
        provider.stop()
    row = run.rows["t1"]
    assert run.code == 0 and row["status"] == "time_limit", row["detail"]
    assert TIME_LIMIT_S - 1 <= row["duration_s"] <= TIME_LIMIT_S + 10  # ended at its limit, not at the call's timeout
    assert provider.closed_by_client >= 1  # the call it waited on was abandoned
