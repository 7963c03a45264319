"""Each way DeepSeek, Z.ai and SGLang say "slow down", "too long", "blocked" or "cut off", over real HTTP from
their fakes, and the status the runner gives it (the table in docs/guide/models.md, "Provider conformance")."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.providers.chat_completions import ChatCompletionsProvider, chat_reply, refused, tool_call
from tests.helpers.providers.chat_rules import DEEPSEEK, SGLANG, ZAI, Provider

ALIAS = {"deepseek": "deepseek-v4-flash", "zai": "glm-5.1", "sglang": "qwen3.5-9b"}
ANSWER = chat_reply("<answer>42</answer>", "40 + 2.")
READ = chat_reply("", "Read the ledger.", [tool_call("cat documents/ledger.md")])


@pytest.fixture(params=[DEEPSEEK, ZAI, SGLANG], ids=lambda provider: provider.name)
def fake(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatCompletionsProvider]:
    provider: Provider = request.param
    monkeypatch.setenv(provider.key_variable, "sk-conformance")
    server = ChatCompletionsProvider(provider)
    server.start()
    yield server
    server.stop()


def run(mini, fake: ChatCompletionsProvider):
    alias = ALIAS[fake.provider.name]
    return mini.run("--model", alias, "--api-base", fake.base_url, "--retry-errors", "0")


def format_errors(outcome) -> list[str]:
    return [event["problem"] for event in outcome.trajectory("t1") if event["event"] == "format_error"]


def test_rate_limit_is_retried_after_the_providers_own_delay(mini, fake):
    fake.push(refused(fake.provider.rate_limited, fake.provider.rate_limit_headers), ANSWER)
    outcome = run(mini, fake)
    assert outcome.rows[0]["status"] == "answered" and len(fake.requests) == 2
    if fake.provider is ZAI:  # litellm's OpenAI client retries Z.ai's 429 itself: our records never see it
        return
    [call] = [event for event in outcome.trajectory("t1") if event["event"] == "model_call"]
    [attempt] = call["response"]["attempts"]
    assert (attempt["status"], attempt["error"]) == (429, "RateLimitError")
    server_delay = fake.provider.rate_limit_headers.get("Retry-After")
    assert attempt["wait_s"] == (float(server_delay) if server_delay is not None else 1.0)


def test_context_overflow_in_the_providers_words_is_the_agents_context_limit(mini, fake):
    fake.push(READ, refused(fake.provider.overflow))
    outcome = run(mini, fake)
    row = outcome.rows[0]
    assert row["status"] == "context_limit", row["detail"]
    assert fake.provider.overflow.message[:40] in row["detail"]


def test_a_reply_the_safety_system_cut_is_a_turn_the_agent_spent(mini, fake):
    fake.push(chat_reply("", None, finish_reason=fake.provider.filtered_finish_reason), READ, ANSWER)
    outcome = run(mini, fake)
    assert (outcome.rows[0]["status"], outcome.rows[0]["turns"]) == ("answered", 3)
    assert format_errors(outcome) == ["no bash tool call and no answer"]
    assert fake.broken == []


def test_a_reply_cut_at_max_tokens_is_a_turn_the_agent_spent(mini, fake):
    fake.push(chat_reply("I will first list the", "Plan.", finish_reason="length"), READ, ANSWER)
    outcome = run(mini, fake)
    assert (outcome.rows[0]["status"], outcome.rows[0]["turns"]) == ("answered", 3)
    assert format_errors(outcome) == ["no bash tool call and no answer"]
    assert fake.broken == []


def test_malformed_tool_arguments_are_a_format_error_turn(mini, fake):
    malformed = chat_reply("", "Run it.", [tool_call("", arguments='{"command": "cat documents/ledger.md')])
    fake.push(malformed, READ, ANSWER)
    outcome = run(mini, fake)
    assert (outcome.rows[0]["status"], outcome.rows[0]["turns"]) == ("answered", 3), outcome.rows[0]["detail"]
    assert format_errors(outcome) == ['the tool arguments are not valid JSON; send {"command": "..."}']
    assert fake.broken == []


def test_an_empty_reply_is_a_turn_the_agent_spent(mini, fake):
    fake.push(chat_reply(None, None), READ, ANSWER)
    outcome = run(mini, fake)
    assert (outcome.rows[0]["status"], outcome.rows[0]["turns"]) == ("answered", 3)
    assert format_errors(outcome) == ["no bash tool call and no answer"]
    assert fake.broken == []
