"""Prices: a --prices file or litellm's map; --max-cost refused without a price; costs from recorded tokens.

Real litellm over real HTTP to the local test server, real bubblewrap sandboxes."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.helpers.openai_server import reply, two_step_agent

MODEL = "openai/test-model"
"""A model litellm's map has no price for."""


pytestmark = pytest.mark.usefixtures("openai_key")


def write_prices(mini, prices) -> str:
    path = mini.root / "prices.yaml"
    path.write_text(yaml.safe_dump(prices) if not isinstance(prices, str) else prices)
    return str(path)


def provider_run(mini, server, *extra):
    return mini.run("--model", MODEL, "--api-base", server.url, *extra)


@pytest.mark.parametrize("cap", ["--max-cost", "--max-episode-cost"])
def test_a_cost_cap_without_a_known_price_is_refused_before_anything_runs(mini, openai_server, cap):
    openai_server.respond = two_step_agent
    outcome = provider_run(mini, openai_server, cap, "1")
    assert outcome.exit_code == 2 and not outcome.run_dir.exists()
    [line] = outcome.output.strip().splitlines()
    assert line.startswith(f"error: {cap}:") and MODEL in line and "--prices" in line
    assert openai_server.requests == []


def test_the_call_past_the_episodes_cost_cap_is_not_made_and_the_row_says_cost_limit(mini, openai_server):
    openai_server.respond = two_step_agent  # each call 120 + 30 tokens: $0.15 at these prices
    prices = write_prices(mini, {MODEL: {"input": 1000, "output": 1000}})
    outcome = provider_run(mini, openai_server, "--max-episode-cost", "0.1", "--prices", prices)
    [row] = outcome.rows
    assert outcome.exit_code == 0 and len(openai_server.requests) == 1
    assert row["status"] == "cost_limit" and row["turns"] == 1 and row["cost_usd"] == pytest.approx(0.15)
    assert "cap 0.1" in row["detail"]
    record = yaml.safe_load((outcome.run_dir / "run.yaml").read_text())
    assert record["protocol"]["max_episode_cost"] == 0.1


def test_with_prices_the_run_starts_and_the_spend_cap_holds(mini, openai_server):
    mini.task_copies(16)
    openai_server.respond = two_step_agent  # 2 calls of 120 + 30 tokens: $0.30 an episode at these prices
    prices = write_prices(mini, {MODEL: {"input": 1000, "output": 1000}})
    outcome = provider_run(mini, openai_server, "--max-cost", "1", "--prices", prices, "--workers", "2")
    assert outcome.exit_code == 0
    costs = [row["cost_usd"] for row in outcome.rows]
    assert all(cost == pytest.approx(0.30) for cost in costs)
    assert 1 <= sum(costs) <= 1 + 2 * 0.30 + 1e-9  # at most the episodes in flight past the cap
    assert len(costs) < 16
    record = yaml.safe_load((outcome.run_dir / "run.yaml").read_text())
    assert record["prices"] == {
        "source": prices,
        "input": 1000.0,
        "output": 1000.0,
        "cache_read": 1000.0,
        "cache_write": 1000.0,
    }


def test_an_unknown_price_without_max_cost_is_warned_once_and_costs_null(mini, openai_server):
    mini.task_copies(3)
    openai_server.respond = two_step_agent
    outcome = provider_run(mini, openai_server, "--workers", "3")
    assert outcome.exit_code == 0 and [row["cost_usd"] for row in outcome.rows] == [None] * 3
    assert outcome.output.count("does not know openai/test-model: its price") == 1


def test_cache_reads_and_writes_are_recorded_and_priced_apart(mini, openai_server):
    openai_server.push(
        reply(
            "<answer>42</answer>", prompt_tokens=1000, completion_tokens=100, cached_tokens=200, cache_write_tokens=300
        )
    )
    prices = write_prices(mini, {MODEL: {"input": 1, "output": 2, "cache_read": 0.1, "cache_write": 1.25}})
    [row] = provider_run(mini, openai_server, "--prices", prices).rows
    assert (row["cached_tokens"], row["cache_write_tokens"]) == (200, 300)
    assert row["cost_usd"] == pytest.approx((500 * 1 + 200 * 0.1 + 300 * 1.25 + 100 * 2) / 1e6)


def test_a_call_over_the_long_context_threshold_is_priced_at_the_long_context_tier(mini, openai_server):
    openai_server.push(
        reply(bash="true", prompt_tokens=1000, completion_tokens=10),
        reply("<answer>42</answer>", prompt_tokens=5000, completion_tokens=10),
    )
    tier = {"above": 4000, "input": 10, "output": 20}
    prices = write_prices(mini, {MODEL: {"input": 1, "output": 2, "long_context": tier}})
    [row] = provider_run(mini, openai_server, "--prices", prices).rows
    assert row["cost_usd"] == pytest.approx((1000 * 1 + 10 * 2 + 5000 * 10 + 10 * 20) / 1e6)


def test_a_price_in_the_file_is_found_by_the_alias_given(mini, openai_server):
    openai_server.push(reply("<answer>42</answer>", prompt_tokens=1_000_000, completion_tokens=0))
    prices = write_prices(mini, {"cheap": {"input": 3, "output": 4}})
    config = mini.root / "config.yaml"
    config.write_text(yaml.safe_dump({"model_aliases": {"cheap": MODEL}}))
    outcome = mini.run("--model", "cheap", "--api-base", openai_server.url, "--prices", prices, "--config", str(config))
    [row] = outcome.rows
    assert row["cost_usd"] == pytest.approx(3.0)


def test_litellms_map_is_the_fallback_and_costs_follow_the_recorded_tokens(mini, openai_server):
    openai_server.push(reply("<answer>42</answer>"))  # 120 prompt and 30 completion tokens
    outcome = mini.run("--model", "openai/gpt-5", "--api-base", openai_server.url, "--max-cost", "5")
    [row] = outcome.rows
    record = yaml.safe_load((outcome.run_dir / "run.yaml").read_text())
    assert record["prices"]["source"] == "litellm"
    expected = (120 * record["prices"]["input"] + 30 * record["prices"]["output"]) / 1e6
    assert row["cost_usd"] == pytest.approx(expected) and expected > 0


@pytest.mark.parametrize("model", ["anthropic/claude-sonnet-9", "openai/gpt-9"])
def test_a_name_litellm_only_guesses_at_has_no_price_window_or_reply_cap(model):
    """litellm answers these with prices of 0 and another model's window: a guess, not the map's entry."""
    from harness.models.litellm_model import bundled_price, context_window_of, output_maximum_of

    assert (bundled_price(model), context_window_of(model), output_maximum_of(model)) == (None, None, None)
    known = bundled_price("anthropic/claude-sonnet-4-5")
    assert known is not None and known.rates.input > 0 and context_window_of("anthropic/claude-sonnet-4-5")


def test_max_cost_refuses_a_model_name_litellm_only_guesses_at(mini, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    outcome = mini.run("--model", "anthropic/claude-sonnet-9", "--max-cost", "1")
    assert outcome.exit_code == 2 and not outcome.run_dir.exists()
    [line] = outcome.output.strip().splitlines()
    assert "no price is known for anthropic/claude-sonnet-9" in line and "--prices" in line


def test_a_model_the_map_does_not_know_is_named_at_start_with_each_unknown_and_its_flag(mini, openai_server):
    openai_server.push(reply("<answer>42</answer>"))
    outcome = provider_run(mini, openai_server)
    [line] = [line for line in outcome.output.splitlines() if "does not know" in line]
    assert line.startswith(f"warning: litellm's map does not know {MODEL}: its price")
    assert all(flag in line for flag in ("--prices", "--context-window", "--max-output-tokens"))
    assert "prices" not in yaml.safe_load((outcome.run_dir / "run.yaml").read_text())
    assert outcome.rows[0]["cost_usd"] is None


@pytest.mark.parametrize(
    ("text", "where", "field"),
    [
        ("openai/test-model:\n  input: 1\n  output: cheap\n", ":3:", "'output'"),
        ("openai/test-model:\n  input: 1\n", ":2:", "'output'"),
        ("openai/test-model:\n  input: -1\n  output: 1\n", ":2:", "'input'"),
        ("openai/test-model:\n  input: 1\n  output: 1\n  currency: EUR\n", ":4:", "'currency'"),
        (
            "openai/test-model:\n  input: 1\n  output: 1\n  long_context:\n    input: 2\n    output: 2\n",
            ":5:",
            "'long_context.above'",
        ),
    ],
)
def test_a_bad_prices_file_is_one_line_naming_file_line_and_field(mini, openai_server, text, where, field):
    prices = write_prices(mini, text)
    outcome = provider_run(mini, openai_server, "--prices", prices)
    assert outcome.exit_code == 2 and not outcome.run_dir.exists()
    [line] = outcome.output.strip().splitlines()
    assert f"prices.yaml{where}" in line and field in line


def test_report_reprices_a_run_from_its_recorded_tokens(mini, openai_server):
    import csv

    from harness.cli.main import main

    mini.task_copies(3)
    openai_server.respond = two_step_agent  # 2 calls of 120 + 30 tokens each
    outcome = provider_run(mini, openai_server)
    assert outcome.exit_code == 0 and [row["cost_usd"] for row in outcome.rows] == [None] * 3
    prices = write_prices(
        mini, {MODEL: {"input": 1000, "output": 2000, "long_context": {"above": 100, "input": 3000, "output": 4000}}}
    )  # every call is over 100 prompt tokens: the tier
    out = mini.root / "repriced"
    assert main(["report", str(outcome.run_dir), "--out", str(out), "--prices", prices]) == 0
    rows = {row["domain"]: row for row in csv.DictReader((out / "accuracy.csv").open())}
    per_episode = 2 * (120 * 3000 + 30 * 4000) / 1e6
    assert float(rows["all"]["cost_usd"]) == pytest.approx(3 * per_episode)
    logged = (outcome.run_dir / "results.jsonl").read_text().splitlines()
    assert [json.loads(line)["cost_usd"] for line in logged] == [None] * 3  # the run folder is unchanged
    unpriced = write_prices(mini, {"openai/another-model": {"input": 1, "output": 1}})
    assert main(["report", str(outcome.run_dir), "--out", str(mini.root / "same"), "--prices", unpriced]) == 0
    rows = {row["domain"]: row for row in csv.DictReader((mini.root / "same" / "accuracy.csv").open())}
    assert rows["all"]["cost_usd"] == ""  # not priced by the file: the cost it was run with (unknown)
