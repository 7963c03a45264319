"""The DeepSeek fake, not luck, decides: a message builder that drops an empty `reasoning_content` fails with
DeepSeek's own message, and ours passes, both with litellm's placeholder for a missing one switched off (a
litellm release without it, as the ones before it were)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litellm.llms.deepseek.chat.transformation import DeepSeekChatConfig

from harness.cli.main import main
from harness.models.base import ModelReply
from tests.conftest import REPO
from tests.helpers.providers.chat_completions import ChatCompletionsProvider
from tests.helpers.providers.chat_conformance import TASK_ID, LongEpisode, events, reasoning_sent_back, result_row
from tests.helpers.providers.chat_rules import DEEPSEEK, DEEPSEEK_REASONING_MISSING

SHORT = 8


@pytest.fixture
def deepseek(monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatCompletionsProvider]:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-conformance")
    monkeypatch.setattr(DeepSeekChatConfig, "_fill_reasoning_content", lambda self, messages: messages)
    fake = ChatCompletionsProvider(DEEPSEEK)
    fake.start()
    yield fake
    fake.stop()


def run_short_episode(fake: ChatCompletionsProvider, results: Path) -> tuple[LongEpisode, Path]:
    episode = LongEpisode(fake, turns=SHORT)
    fake.respond = episode
    folders = ["--tasks-dir", str(REPO / "tasks"), "--collections-dir", str(REPO / "collections")]
    arguments = ["--model", "deepseek-v4-flash", "--api-base", fake.base_url, "--domain", "demo", *folders]
    main(
        [*arguments, "--task-id", TASK_ID, "--retry-errors", "0", "--results-dir", str(results), "--run-id", "builder"]
    )
    return episode, results / "builder"


def dropping_empty_reasoning(reply: ModelReply) -> dict[str, Any]:
    """The builder as it was: an empty reasoning left out of the message."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
            for call in reply.tool_calls
        ]
    return message


def test_a_builder_dropping_empty_reasoning_fails_with_deepseeks_own_message(deepseek, tmp_path, monkeypatch):
    monkeypatch.setattr(ModelReply, "to_message", dropping_empty_reasoning)
    _, run_dir = run_short_episode(deepseek, tmp_path)
    row = result_row(run_dir)
    assert row["status"] == "model_error"
    assert DEEPSEEK_REASONING_MISSING in row["detail"]
    assert [broken.message for broken in deepseek.broken] == [DEEPSEEK_REASONING_MISSING]
    assert not any(event["event"] == "action" and event["turn"] > 2 for event in events(run_dir))


def test_our_builder_sends_empty_reasoning_back_as_deepseek_sent_it(deepseek, tmp_path):
    episode, run_dir = run_short_episode(deepseek, tmp_path)
    assert (result_row(run_dir)["status"], result_row(run_dir)["turns"]) == ("answered", SHORT)
    assert deepseek.broken == []
    assert reasoning_sent_back(deepseek, episode) == []
    second = deepseek.requests[2]["messages"]
    assert [message.get("reasoning_content") for message in second if message["role"] == "assistant"] == [
        "Turn 1: the ledger rows come next.",
        "",
    ]
