"""A message builder broken on purpose fails against the right provider's fake with that provider's own words:
the fakes, not luck, decide whether a conversation is sent back as the provider requires."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from harness.models.base import ModelReply
from tests.helpers.providers.anthropic_messages import AnthropicMessages
from tests.helpers.providers.gemini_generate import GeminiGenerateContent
from tests.helpers.providers.loopback import Turn
from tests.helpers.providers.openai_responses import OpenAIResponses


def three_turns(model_turns: int) -> Turn:
    """Read the ledger, read it again, answer."""
    if model_turns < 2:
        return Turn(commands=("cat documents/ledger.md",))
    return Turn(text="<answer>42</answer>")


def break_builder(monkeypatch: pytest.MonkeyPatch, breaking: Any) -> None:
    """Every assistant message the loop sends back goes through `breaking` first."""
    building = ModelReply.to_message
    monkeypatch.setattr(ModelReply, "to_message", lambda reply: breaking(building(reply)))


def without_thinking_blocks(message: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in message.items() if key != "thinking_blocks"}


def without_thought_signatures(message: dict[str, Any]) -> dict[str, Any]:
    calls = [call | {"id": call["id"].split("__thought__")[0]} for call in message.get("tool_calls") or []]
    return message | ({"tool_calls": calls} if calls else {})


def without_reasoning_items(message: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in message.items() if key not in ("reasoning_items", "provider_specific_fields")}


def model_errors(outcome: Any) -> list[str]:
    return [event["error"] for event in outcome.trajectory("t1") if event.get("event") == "model_error"]


def test_claude_with_thinking_refuses_a_turn_sent_back_without_its_thinking_block(mini, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "loopback-key")
    break_builder(monkeypatch, without_thinking_blocks)
    with AnthropicMessages(three_turns) as fake:
        outcome = mini.run(
            "--model",
            "anthropic/claude-sonnet-4-5",
            "--api-base",
            fake.api_base,
            "--model-arg",
            "reasoning_effort=high",
            "--retry-errors",
            "0",
        )
    [row] = outcome.rows
    assert row["status"] == "model_error"
    [error] = model_errors(outcome)
    assert "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`" in error
    assert len(fake.rule_breaks) == 1


def test_claude_with_thinking_keeps_its_thinking_blocks_with_the_builder_intact(mini, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "loopback-key")
    with AnthropicMessages(three_turns) as fake:
        outcome = mini.run(
            "--model",
            "anthropic/claude-sonnet-4-5",
            "--api-base",
            fake.api_base,
            "--model-arg",
            "reasoning_effort=high",
        )
    [row] = outcome.rows
    assert (row["status"], row["verdict"], fake.rule_breaks) == ("answered", "correct", [])


def test_gemini_signature_dropped_is_sent_as_the_degrading_placeholder(mini, monkeypatch):
    """litellm puts Google's skip-validator placeholder where a Gemini 3 signature is missing, which Google
    accepts at a cost to the model's reasoning: the fake counts it, so the conformance run fails on it."""
    monkeypatch.setenv("GEMINI_API_KEY", "loopback-key")
    break_builder(monkeypatch, without_thought_signatures)
    with GeminiGenerateContent(three_turns) as fake:
        outcome = mini.run("--model", "gemini-3.1-pro", "--api-base", fake.api_base + "/v1beta")
    assert outcome.rows[0]["status"] == "answered"
    assert fake.degraded == ["request 2: contents.1", "request 3: contents.1", "request 3: contents.3"]


def test_gpt_5_5_reasoning_items_dropped_are_counted_by_the_fake(mini, monkeypatch):
    """OpenAI accepts function calls sent back without the reasoning items that came with them (the model then
    reasons from scratch): the fake counts each one, so the conformance run fails on it."""
    monkeypatch.setenv("OPENAI_API_KEY", "loopback-key")
    break_builder(monkeypatch, without_reasoning_items)
    with OpenAIResponses(three_turns) as fake:
        outcome = mini.run("--model", "gpt-5.5", "--api-base", fake.api_base + "/v1")
    assert outcome.rows[0]["status"] == "answered"
    assert [entry.split(":")[0] for entry in fake.degraded] == ["request 2", "request 3", "request 3"]
    assert fake.rule_breaks == []


def test_gemini_refuses_a_current_turn_function_call_without_its_signature():
    """The rule itself, on the wire: what Google answers a request whose signed call came back unsigned."""
    with GeminiGenerateContent(three_turns) as fake:
        url = f"{fake.api_base}/v1beta/models/gemini-3.1-pro-preview:generateContent"
        first = _post(url, {"contents": [{"role": "user", "parts": [{"text": "How many units?"}]}]})
        call = first["candidates"][0]["content"]["parts"][1]
        unsigned = {"functionCall": call["functionCall"]}
        answer = {"functionResponse": {"name": "bash", "response": {"content": "40"}}}
        contents = [
            {"role": "user", "parts": [{"text": "How many units?"}]},
            {"role": "model", "parts": [unsigned]},
            {"role": "user", "parts": [answer]},
        ]
        with pytest.raises(urllib.error.HTTPError) as refused:
            _post(url, {"contents": contents})
    assert refused.value.code == 400
    error = json.loads(refused.value.read())["error"]
    assert (error["code"], error["status"]) == (400, "INVALID_ARGUMENT")
    assert error["message"].startswith("Function call is missing a thought_signature in functionCall parts.")
    assert "thoughtSignature" in call


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return dict(json.loads(response.read()))
