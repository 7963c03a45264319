"""How each provider says "slow down", "too long", "blocked", "cut off", "malformed" and "nothing", each answered
by its loopback fake over real HTTP, and the status our runner gives it (docs/guide/models.md, "Provider
conformance"): a rate limit waits the provider's own delay and succeeds; an overflow is `context_limit`, the
agent's outcome; a blocked, cut, malformed or empty reply is a turn the agent spent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.helpers.providers import anthropic_messages, gemini_generate, openai_responses
from tests.helpers.providers.loopback import Fault, LoopbackProvider, Turn


@dataclass(frozen=True)
class Provider:
    fake: type[LoopbackProvider]
    model: str
    key_variable: str
    api_base_path: str
    rate_limit: Fault
    """A 429 whose own delay field says 2 seconds."""
    overflow: Fault
    malformed_arguments: str
    extra: tuple[str, ...] = ()


PROVIDERS = {
    "anthropic": Provider(
        anthropic_messages.AnthropicMessages,
        "anthropic/claude-sonnet-4-5",
        "ANTHROPIC_API_KEY",
        "",
        Fault(429, "This request would exceed your organization's rate limit.", headers={"retry-after": "2"}),
        Fault(400, anthropic_messages.CONTEXT_OVERFLOW),
        '{"cmd": "cat documents/ledger.md"}',
        ("--model-arg", "reasoning_effort=high"),
    ),
    "gemini": Provider(
        gemini_generate.GeminiGenerateContent,
        "gemini-3.1-pro",
        "GEMINI_API_KEY",
        "/v1beta",
        Fault(
            429,
            "Resource has been exhausted (e.g. check quota).",
            details=({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"},),
        ),
        Fault(400, gemini_generate.CONTEXT_OVERFLOW),
        '{"command": "cat documents/ledger.md"',
    ),
    "openai": Provider(
        openai_responses.OpenAIResponses,
        "gpt-5.5",
        "OPENAI_API_KEY",
        "/v1",
        Fault(429, "Rate limit reached for gpt-5.5 on requests per min (RPM).", headers={"retry-after": "2"}),
        Fault(400, openai_responses.CONTEXT_OVERFLOW, code="context_length_exceeded"),
        '{"command": "cat documents/ledger.md"',
    ),
}
SPENT_TURNS = {
    "safety block": Turn(finish="safety"),
    "length cut": Turn(text="The total of the two years is", finish="length"),
    "empty reply": Turn(thinking=""),
}


def answering_after(first: Turn):
    return lambda model_turns: first if model_turns == 0 else Turn(text="<answer>42</answer>")


def run_against(mini: Any, monkeypatch: pytest.MonkeyPatch, provider: Provider, fake: LoopbackProvider) -> Any:
    monkeypatch.setenv(provider.key_variable, "loopback-key")
    base = fake.api_base + provider.api_base_path
    return mini.run("--model", provider.model, "--api-base", base, "--retry-errors", "0", *provider.extra)


def events(outcome: Any, kind: str) -> list[dict[str, Any]]:
    return [event for event in outcome.trajectory("t1") if event.get("event") == kind]


@pytest.mark.parametrize("name", sorted(PROVIDERS))
def test_a_rate_limit_waits_the_providers_own_delay(name, mini, monkeypatch):
    provider = PROVIDERS[name]
    with provider.fake(answering_after(Turn(commands=("cat documents/ledger.md",)))) as fake:
        fake.faults[1] = provider.rate_limit
        outcome = run_against(mini, monkeypatch, provider, fake)
    assert outcome.rows[0]["status"] == "answered"
    [attempt] = events(outcome, "model_call")[0]["response"]["attempts"]
    assert (attempt["status"], attempt["wait_s"]) == (429, 2.0)


@pytest.mark.parametrize("name", sorted(PROVIDERS))
def test_a_context_overflow_is_the_agents_context_limit(name, mini, monkeypatch):
    provider = PROVIDERS[name]
    with provider.fake(answering_after(Turn(commands=("cat documents/ledger.md",)))) as fake:
        fake.faults[2] = provider.overflow
        outcome = run_against(mini, monkeypatch, provider, fake)
    assert outcome.rows[0]["status"] == "context_limit"
    assert len(fake.requests) == 2  # never retried


@pytest.mark.parametrize("shape", sorted(SPENT_TURNS))
@pytest.mark.parametrize("name", sorted(PROVIDERS))
def test_a_blocked_cut_or_empty_reply_is_a_turn_the_agent_spent(name, shape, mini, monkeypatch):
    provider = PROVIDERS[name]
    with provider.fake(answering_after(SPENT_TURNS[shape])) as fake:
        outcome = run_against(mini, monkeypatch, provider, fake)
    assert (outcome.rows[0]["status"], outcome.rows[0]["turns"]) == ("answered", 2)
    assert len(events(outcome, "format_error")) == 1


@pytest.mark.parametrize("name", sorted(PROVIDERS))
def test_malformed_tool_arguments_are_a_format_error_turn(name, mini, monkeypatch):
    provider = PROVIDERS[name]
    malformed = Turn(commands=("cat documents/ledger.md",), arguments=provider.malformed_arguments)
    with provider.fake(answering_after(malformed)) as fake:
        outcome = run_against(mini, monkeypatch, provider, fake)
    assert (outcome.rows[0]["status"], outcome.rows[0]["turns"]) == ("answered", 2)
    assert len(events(outcome, "format_error")) == 1
