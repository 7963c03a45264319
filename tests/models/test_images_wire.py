"""A tool's image goes where each provider's API takes it."""

from __future__ import annotations

from harness.core.images import check_image, image_part, tool_message
from harness.models.images_wire import images_placed_for
from tests.helpers.images import png

IMAGE = check_image(png())
CALL = {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {}}]}


def test_anthropic_keeps_the_image_in_the_tool_result():
    messages = [CALL, tool_message("c1", "page.png", [IMAGE])]
    assert images_placed_for("anthropic", messages) is messages


def test_openai_gets_the_tool_text_then_the_image_in_a_user_message():
    messages = [CALL, tool_message("c1", "page.png", [IMAGE]), {"role": "assistant", "content": "ok"}]
    placed = images_placed_for("openai", messages)
    assert placed[1] == {"role": "tool", "tool_call_id": "c1", "content": "page.png"}
    assert placed[2]["role"] == "user"
    assert placed[2]["content"][1] == image_part(IMAGE)
    assert placed[3] == messages[2]


def test_the_moved_image_ends_the_conversation_when_the_tool_result_does():
    placed = images_placed_for("gemini", [CALL, tool_message("c1", "page.png", [IMAGE])])
    assert [message["role"] for message in placed] == ["assistant", "tool", "user"]


def test_a_conversation_without_tool_images_is_sent_as_it_is():
    messages = [CALL, tool_message("c1", "text only", [])]
    assert images_placed_for("openai", messages) is messages
