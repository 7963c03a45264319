"""The episode's cost cap against each installed agent, as a user sets it (`--max-episode-cost` with `--prices`):
the proxy makes the call that reaches the cap and refuses the next (403), the agent, refused, ends, and the row says
which budget it was. Each agent its real run on the local sandbox (the turn budget and the time limit: each agent's
own module)."""

from __future__ import annotations

import os

import pytest
import yaml

from tests.helpers.installed_agents import run_agent
from tests.helpers.openai_server import reply

INSTALLS = {"gemini-cli": "HARNESS_GEMINI_CLI", "claude-code": "HARNESS_CLAUDE_CODE"}
"""The agents installed from npm by .ci/run, and the variable naming each install."""


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
