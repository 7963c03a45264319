"""Answer extraction (GRADING.md 2.2) and action parsing."""

from __future__ import annotations

import json

import pytest

from harness.actions import FormatError, parse_action
from harness.answer import command_submits_answer, find_answer_tag, has_closed_answer, strip_code_blocks
from harness.models import ModelReply, ToolCall


def test_tag_inside_a_fenced_block_is_removed_from_the_submission():
    text = "Here is a template:\n```\n<answer>1</answer>\n```\nStill working."
    assert not has_closed_answer(strip_code_blocks(text))


def test_tilde_fence_and_unclosed_fence_are_removed():
    assert strip_code_blocks("a\n~~~\n<answer>1</answer>\n~~~\nb\n") == "a\nb\n"
    assert strip_code_blocks("a\n```bash\n<answer>1</answer>\n") == "a\n"


def test_tag_outside_blocks_survives_stripping():
    text = "```bash\nls\n```\nDone: <answer>42</answer>"
    assert find_answer_tag(strip_code_blocks(text)).content == "42"


@pytest.mark.parametrize(
    ("text", "content", "reason"),
    [
        ("<answer>42</answer>", "42", None),
        ("<ANSWER >42</answer >", "42", None),
        ("<answer>1</answer><answer>2</answer>", "2", None),
        ("<answer>outer <answer>inner</answer></answer>", "inner", None),
        ("no tag here", None, "NO_TAG"),
        ("<answer>1</answer> <answer>2", None, "UNCLOSED_TAG"),
        ("<answer></answer>", "", "EMPTY_TAG"),
    ],
)
def test_find_answer_tag(text, content, reason):
    result = find_answer_tag(text)
    assert (result.content, result.reason) == (content, reason)


def test_echo_submission_is_recognised_by_the_command():
    assert command_submits_answer("echo '<answer>5</answer>'")
    assert not command_submits_answer("cat documents/a.md")


def toolcall(*calls: tuple[str, str]) -> ModelReply:
    return ModelReply(text="", tool_calls=[ToolCall(f"c{i}", name, args) for i, (name, args) in enumerate(calls)])


def test_toolcall_action_is_the_command_argument():
    assert parse_action(toolcall(("bash", json.dumps({"command": "ls"}))), "toolcall") == "ls"


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (ModelReply(text="thinking"), "no bash tool call"),
        (toolcall(("bash", '{"command": "ls"}'), ("bash", '{"command": "pwd"}')), "2 tool calls"),
        (toolcall(("python", '{"command": "ls"}')), "unknown tool"),
        (toolcall(("bash", "{not json")), "not valid JSON"),
        (toolcall(("bash", '{"cmd": "ls"}')), "non-empty string"),
    ],
)
def test_toolcall_format_errors(reply, problem):
    with pytest.raises(FormatError, match=problem):
        parse_action(reply, "toolcall")


def test_text_action_is_the_one_bash_block():
    reply = ModelReply(text="Let me look.\n```bash\nls documents | head\n```\n")
    assert parse_action(reply, "text") == "ls documents | head"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("just prose", "no ```bash block"),
        ("```bash\nls\n```\n```sh\npwd\n```", "2 bash blocks"),
        ("```python\nprint(1)\n```", "no ```bash block"),
    ],
)
def test_text_format_errors(text, problem):
    with pytest.raises(FormatError, match=problem):
        parse_action(ModelReply(text=text), "text")
