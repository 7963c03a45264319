"""Answer extraction (docs/GRADING.md §2.2) and action parsing."""

from __future__ import annotations

import json

import pytest

from harness.episode.actions import MAX_TEXT_REPLY_CHARS, FormatError
from harness.episode.solvers import BashAgent
from harness.episode.solvers.tools import read_action
from harness.grading.answer import command_submits_answer, find_answer_tag, has_closed_answer, strip_code_blocks
from harness.models.base import ModelReply, ToolCall


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


def parse_action(reply: ModelReply, action_format: str, vision: bool = False) -> str:
    """The bash agent's reading of REPLY: the command of its bash call (anything else is a format error)."""
    tool, argument = read_action(reply, action_format, BashAgent.tools(vision))
    assert tool.name == "bash", tool
    return argument


def toolcall(*calls: tuple[str, str]) -> ModelReply:
    return ModelReply(
        text="", tool_calls=[ToolCall(id=f"c{i}", name=name, arguments=args) for i, (name, args) in enumerate(calls)]
    )


def test_toolcall_action_is_the_command_argument():
    assert parse_action(toolcall(("bash", json.dumps({"command": "ls"}))), "toolcall") == "ls"


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (ModelReply(text="thinking"), "no bash tool call"),
        (toolcall(("bash", '{"command": "ls"}'), ("bash", '{"command": "pwd"}')), "2 tool calls"),
        (toolcall(("python", '{"command": "ls"}')), "unknown tool"),
        (toolcall(("view_image", '{"path": "run/chart.png"}')), "unknown tool 'view_image'; the only tool is bash"),
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


@pytest.mark.parametrize(
    ("text", "command", "prose"),
    [
        ("````bash\nls\n`````\nDone.", "ls", "Done."),  # a longer closing fence closes
        ("```bash\r\nls -l\r\n```\r\nDone.", "ls -l", "Done."),  # CRLF line endings
        ("  ```sh\n  ls\n   pwd\n  ```\n", "ls\n pwd", ""),  # the opener's indent is removed from the body
        ("```Bash title\nls\n```\n", "ls", ""),  # the language is the info string's first word
    ],
)
def test_action_and_prose_come_from_the_same_fences(text, command, prose):
    assert parse_action(ModelReply(text=text), "text") == command
    assert strip_code_blocks(text) == prose


def test_bash_block_quoted_inside_another_block_is_not_an_action():
    text = "A reply looks like this:\n~~~markdown\n```bash\nls\n```\n~~~\nNo action yet."
    assert strip_code_blocks(text) == "A reply looks like this:\nNo action yet."
    with pytest.raises(FormatError, match="no ```bash block"):
        parse_action(ModelReply(text=text), "text")


def test_unclosed_bash_block_is_a_format_error_that_says_so():
    text = "```bash\nls documents\n"
    assert strip_code_blocks(text) == ""
    with pytest.raises(FormatError, match="not closed"):
        parse_action(ModelReply(text=text), "text")


def test_backtick_fence_whose_info_string_holds_a_backtick_is_not_a_fence():
    assert strip_code_blocks("```not `a fence```\n<answer>1</answer>") == "```not `a fence```\n<answer>1</answer>"


def test_text_reply_over_the_cap_is_a_format_error():
    text = "```bash\nls\n```\n" + "x" * MAX_TEXT_REPLY_CHARS
    with pytest.raises(FormatError, match=f"over the limit of {MAX_TEXT_REPLY_CHARS:,}"):
        parse_action(ModelReply(text=text), "text")


MEGABYTE = 1_000_000


@pytest.mark.parametrize(
    ("text", "problem", "prose"),
    [
        ("```bash\n" * (MEGABYTE // 8), "not closed", ""),
        ("```bash\n```\n" * (MEGABYTE // 12), f"{MEGABYTE // 12} bash blocks", ""),
        ("`" * MEGABYTE, "no ```bash block", ""),
        (("`" * 40 + "\n") * (MEGABYTE // 41), "no ```bash block", ""),
        ("".join("`" * (3 + i % 50) + "bash\n" for i in range(MEGABYTE // 33)), "not closed", ""),
        ("```bash`\n" * (MEGABYTE // 9), "no ```bash block", "```bash`\n" * (MEGABYTE // 9)),
    ],
    ids=["bash openers", "empty bash blocks", "backtick run", "backtick lines", "growing fences", "not fences"],
)
def test_hostile_megabyte_replies_parse_to_the_right_error(text, problem, prose):
    """bench/hostile_parsing.py shows these take time linear in their size."""
    with pytest.raises(FormatError, match=problem):
        parse_action(ModelReply(text=text), "text")
    assert strip_code_blocks(text) == prose


@pytest.mark.parametrize(
    ("text", "content", "reason", "closed"),
    [
        ("<answer>" * (MEGABYTE // 8), None, "UNCLOSED_TAG", False),
        ("<answer>" * (MEGABYTE // 17) + "7" + "</answer>" * (MEGABYTE // 17), "7", None, True),
        (("<answer" + " " * 100) * (MEGABYTE // 107) + "<answer>7</answer>", "7", None, True),
        ("<answer>7</answer>" + "</answer " * (MEGABYTE // 9), "7", None, True),
    ],
    ids=["unclosed tags", "nested tags", "tags without their >", "stray closing tags"],
)
def test_hostile_megabyte_answers_find_the_right_tag(text, content, reason, closed):
    result = find_answer_tag(text)
    assert (result.content, result.reason) == (content, reason)
    assert has_closed_answer(text) is closed
