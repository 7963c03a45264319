"""The image an agent looks at reaches each provider in that provider's own format, where its API takes it,
within its documented limits: proved by a model on the other side that answers by measuring the bars of the PNG
it receives (tests/helpers/chart_reader.py). Each fake refuses what its provider refuses (image_rules.py)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest
from litellm.llms.vertex_ai.gemini.transformation import _gemini_convert_messages_with_history

from harness.core.images import check_image, tool_message
from harness.models.images_wire import images_placed_for
from harness.models.litellm_model import LiteLLMModel, ProviderSettings
from tests.helpers.chart_reader import answer_from, bar_chart, read_bars
from tests.helpers.providers.anthropic_messages import AnthropicMessages
from tests.helpers.providers.chat_completions import ChatCompletionsProvider, chat_reply
from tests.helpers.providers.chat_rules import OPENAI, SGLANG, Provider
from tests.helpers.providers.gemini_generate import GeminiGenerateContent
from tests.helpers.providers.image_rules import (
    ANTHROPIC_RULES,
    FoundImage,
    anthropic_images,
    check_images,
    gemini_images,
    openai_chat_images,
)
from tests.helpers.providers.loopback import VIEW, LoopbackProvider, ProviderRuleBroken, Turn
from tests.helpers.providers.openai_responses import OpenAIResponses

CHART = bar_chart([40, 2])
"""The mini task's gold is 42: the sum of the bars."""


def reading_turns(fake: LoopbackProvider) -> Any:
    """Look at the chart first, then answer from the pixels of the last image the request carried."""

    def turn(model_turns: int) -> Turn:
        if model_turns == 0:
            return Turn(commands=(f"{VIEW}documents/chart.png",))
        return Turn(text=answer_from([image.data for image in fake.last_images]))

    return turn


def reading_chat(fake: ChatCompletionsProvider) -> Any:
    def respond(request: dict[str, Any]) -> Any:
        if not any(message.get("role") == "tool" for message in request["messages"]):
            call = {"id": "call_view", "type": "function", "function": {"name": "view_image", "arguments": "{}"}}
            call["function"]["arguments"] = json.dumps({"path": "documents/chart.png"})
            return chat_reply(content="", calls=[call])
        return chat_reply(content=answer_from([image.data for image in fake.last_images]))

    return respond


LOOPBACK = {
    "anthropic": (AnthropicMessages, "anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY", ""),
    "gemini": (GeminiGenerateContent, "gemini/gemini-2.5-flash", "GEMINI_API_KEY", "/v1beta"),
    "openai-responses": (OpenAIResponses, "gpt-5.5", "OPENAI_API_KEY", "/v1"),
}
CHAT: dict[str, tuple[Provider, str]] = {
    "openai-chat": (OPENAI, "openai/gpt-4o"),
    "local-server": (SGLANG, "hosted_vllm/qwen3-vl"),
}


@pytest.fixture
def chart_mini(mini):
    (mini.root / "collections" / "mini" / "chart.png").write_bytes(CHART)
    return mini


@pytest.fixture(params=[*LOOPBACK, *CHAT])
def provider(request, monkeypatch) -> Iterator[tuple[str, Any, str, str]]:
    """(name, fake, --model, --api-base) with the fake serving an image-reading model."""
    name = request.param
    if name in LOOPBACK:
        kind, model, key, suffix = LOOPBACK[name]
        monkeypatch.setenv(key, "loopback-key")
        fake = kind(lambda turns: Turn())
        fake.script = reading_turns(fake)
        with fake:
            yield name, fake, model, fake.api_base + suffix
        return
    chat, model = CHAT[name]
    monkeypatch.setenv(chat.key_variable, "loopback-key")
    fake = ChatCompletionsProvider(chat)
    fake.respond = reading_chat(fake)
    fake.start()
    try:
        yield name, fake, model, fake.base_url
    finally:
        fake.stop()


def rule_breaks(fake: Any) -> list[Any]:
    return fake.rule_breaks if isinstance(fake, LoopbackProvider) else fake.broken


def test_the_model_reads_the_chart_the_agent_looked_at(chart_mini, provider):
    name, fake, model, api_base = provider
    outcome = chart_mini.run("--model", model, "--api-base", api_base, "--vision")
    assert rule_breaks(fake) == []
    [row] = outcome.rows
    assert (row["status"], row["answer"], row["verdict"]) == ("answered", "42", "correct"), outcome.output
    [image] = fake.last_images
    assert image.data == CHART
    assert image.media_type == "image/png"
    if name == "anthropic":
        assert ".content.0.content." in image.where  # inside the tool_result, as Anthropic documents
    else:
        assert "tool" not in json.dumps(image.where)


def test_without_vision_the_same_model_cannot_answer(chart_mini, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "loopback-key")
    fake = AnthropicMessages(lambda turns: Turn())
    fake.script = reading_turns(fake)
    with fake:
        outcome = chart_mini.run("--model", "anthropic/claude-sonnet-4-5", "--api-base", fake.api_base)
    [row] = outcome.rows
    assert (row["answer"], row["verdict"]) == ("unknown", "unparseable")
    assert fake.last_images == []


def test_litellm_alone_sends_a_tool_image_where_openai_refuses_it():
    """Why images_wire.py exists: litellm passes a tool message's image through to OpenAI's chat API as is."""
    image = check_image(CHART)
    call = {"id": "c1", "type": "function", "function": {"name": "view_image", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        tool_message("c1", "documents/chart.png", [image]),
    ]
    with pytest.raises(ProviderRuleBroken, match="Image URLs are only allowed for messages with role 'user'"):
        openai_chat_images({"messages": messages})
    placed = images_placed_for("openai", messages)
    assert [found.data for found in openai_chat_images({"messages": placed})] == [CHART]
    with pytest.raises(ProviderRuleBroken, match="Gemini 3 models only"):
        gemini_images({"contents": _gemini_convert_messages_with_history(messages)})
    assert read_bars(gemini_images({"contents": _gemini_convert_messages_with_history(placed)})[0].data) == [40, 2]


@pytest.mark.parametrize(
    ("images", "problem"),
    [
        ([FoundImage("m", "image/png", b"x" * (5 << 20 | 1))], "image exceeds 5 MB maximum"),
        ([FoundImage("m", "image/jpeg", CHART)], "Image does not match the provided media type image/jpeg"),
        ([FoundImage("m", "image/bmp", CHART)], "unsupported image media type image/bmp"),
        ([FoundImage("m", "image/png", CHART)] * 101, "Too many images in the request: 101 > 100"),
        ([FoundImage("m", "image/png", b"\x89PNG\r\n\x1a\n broken")], "Could not process image"),
    ],
)
def test_the_anthropic_fake_refuses_what_anthropic_documents(images, problem):
    with pytest.raises(ProviderRuleBroken, match=problem):
        check_images(images, ANTHROPIC_RULES, "anthropic")


def test_anthropic_lowers_the_side_limit_past_twenty_images():
    wide = bar_chart([1] * 30)  # 2130 px wide
    check_images([FoundImage("m", "image/png", wide)] * 20, ANTHROPIC_RULES, "anthropic")
    with pytest.raises(ProviderRuleBroken, match="max allowed size: 2000 pixels"):
        check_images([FoundImage("m", "image/png", wide)] * 21, ANTHROPIC_RULES, "anthropic")


def test_an_anthropic_image_block_must_be_base64_in_a_user_message():
    block = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": ""}}
    block["source"]["data"] = base64.b64encode(CHART).decode()
    assert [found.data for found in anthropic_images({"messages": [{"role": "user", "content": [block]}]})] == [CHART]
    with pytest.raises(ProviderRuleBroken, match="only allowed in user messages"):
        anthropic_images({"messages": [{"role": "assistant", "content": [block]}]})


def test_the_loopback_model_answers_only_from_the_pixels():
    assert answer_from([bar_chart([40, 2])]).endswith("<answer>42</answer>")
    assert answer_from([bar_chart([30, 5])]).endswith("<answer>35</answer>")
    assert answer_from([]).endswith("<answer>unknown</answer>")


def test_a_model_counts_the_chart_by_its_providers_rule():
    image = check_image(CHART)
    message = [{"role": "user", "content": [{"type": "text", "text": "x"}]}]
    with_image = [tool_message("c", "x", [image])]
    for model, tokens in (("anthropic/claude-sonnet-4-5", 150 * 420 // 750 + 1), ("gemini/gemini-2.5-flash", 258)):
        counted = LiteLLMModel(ProviderSettings(model), None)
        assert counted.count_tokens(with_image) - counted.count_tokens(message) >= tokens - 5
