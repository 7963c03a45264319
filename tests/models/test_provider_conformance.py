"""Each published alias through the real command line against its provider's loopback fake: a 60-turn episode
with a format error, parallel calls, a retried 429 and 500, a kill and resume, a replay and a regrade, and not
one request that breaks the provider's documented rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.records.trajectory import read_jsonl
from tests.helpers.providers import anthropic_messages, gemini_generate, openai_responses
from tests.helpers.providers.conformance import (
    EPISODE_TURNS,
    KILL_AT_REQUEST,
    Alias,
    episode_script,
    model_calls,
    run_conformance_episode,
)
from tests.helpers.providers.loopback import Fault, LoopbackProvider

RATE_LIMITED, SERVER_ERROR = KILL_AT_REQUEST + 5, KILL_AT_REQUEST + 7
"""Requests of the resumed run (the fake numbers every request), so the finished episode shows both retried."""
GEMINI_FAULTS = {
    RATE_LIMITED: Fault(
        429,
        "Resource has been exhausted (e.g. check quota).",
        details=({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0s"},),
    ),
    SERVER_ERROR: Fault(
        500,
        "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
    ),
}
ANTHROPIC_FAULTS = {
    RATE_LIMITED: Fault(429, "This request would exceed your organization's rate limit.", headers={"retry-after": "0"}),
    SERVER_ERROR: Fault(500, "Internal server error"),
}
OPENAI_FAULTS = {
    RATE_LIMITED: Fault(
        429,
        "Rate limit reached for gpt-5.5 in organization org-loopback on requests per min (RPM): Limit 500, Used 500.",
        headers={"retry-after": "0", "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "0s"},
    ),
    SERVER_ERROR: Fault(500, "The server had an error while processing your request. Sorry about that!"),
}
ALIASES = {
    "gpt-5.5": Alias("gpt-5.5", "OPENAI_API_KEY", "/v1", parallel_calls=True, faults=OPENAI_FAULTS),
    "gemini-3.1-pro": Alias("gemini-3.1-pro", "GEMINI_API_KEY", "/v1beta", parallel_calls=True, faults=GEMINI_FAULTS),
    "gemini-3.1-flash-lite": Alias(
        "gemini-3.1-flash-lite", "GEMINI_API_KEY", "/v1beta", parallel_calls=True, faults=GEMINI_FAULTS
    ),
    "anthropic/claude-sonnet-4-5 thinking": Alias(
        "anthropic/claude-sonnet-4-5",
        "ANTHROPIC_API_KEY",
        model_args=("reasoning_effort=high",),
        parallel_calls=True,
        faults=ANTHROPIC_FAULTS,
    ),
}
FAKES: dict[str, type[LoopbackProvider]] = {
    "OPENAI_API_KEY": openai_responses.OpenAIResponses,
    "GEMINI_API_KEY": gemini_generate.GeminiGenerateContent,
    "ANTHROPIC_API_KEY": anthropic_messages.AnthropicMessages,
}


@pytest.mark.parametrize("name", sorted(ALIASES))
def test_a_long_episode_keeps_every_provider_rule(name: str, tmp_path: Path) -> None:
    alias = ALIASES[name]
    with FAKES[alias.key_variable](episode_script(alias.parallel_calls)) as fake:
        run = run_conformance_episode(alias, fake, tmp_path)
    assert fake.rule_breaks == [], run.output
    assert fake.degraded == []
    [row] = run.rows
    assert (row["status"], row["verdict"], row["turns"]) == ("answered", "correct", EPISODE_TURNS), run.output
    retried = [attempt["status"] for call in model_calls(run.run_dir) for attempt in call["response"]["attempts"]]
    assert retried == [429, 500]
    assert (run.run_dir / "episodes" / "demo" / "previous").is_dir()  # the killed attempt, set aside on resume
    assert run.killed_after >= KILL_AT_REQUEST
    assert (run.replay_code, run.regrade_code) == (0, 0), run.output
    [regraded] = read_jsonl(run.run_dir / "results.regraded.jsonl")
    assert regraded["verdict"] == "correct"
