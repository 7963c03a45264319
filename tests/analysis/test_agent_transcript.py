"""An installed agent's own transcript as `show` and the viewer present it: mini-swe-agent's messages role by role
with the commands it ran; anything else (the agent's word: any JSON, a file cut short) raw; all of it bounded."""

from __future__ import annotations

from typing import Any

import pytest

from harness.analysis.agent_transcript import MESSAGE_CHARS, RAW_CHARS, SHOWN_CHARS, transcript_view
from harness.core.json_text import json_text
from harness.records.events import AgentTranscriptEvent

FORMAT = "mini-swe-agent-1.1"


def toolcall_reply(command: str) -> dict[str, Any]:
    """An assistant message as mini-swe-agent's litellm model writes it: the model's bash tool call, and the action
    it parsed from it in `extra`."""
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": f'{{"command": "{command}"}}'}}
    return {
        "role": "assistant",
        "content": "Reading.",
        "tool_calls": [call],
        "extra": {"actions": [{"command": command}]},
    }


def transcript(messages: list[Any], **info: Any) -> AgentTranscriptEvent:
    data = {"info": info, "messages": messages, "trajectory_format": FORMAT}
    return AgentTranscriptEvent(agent="mini-swe-agent", version="2.4.6", transcript=data)


def test_a_mini_swe_agent_transcript_reads_role_by_role_with_the_commands_it_ran():
    bare_call = toolcall_reply("ls documents") | {"extra": {}}
    text_based = {"role": "assistant", "content": "Summing.\n```mswea_bash_command\nawk 1 ledger.md\n```\n"}
    observation = {"role": "tool", "content": "<returncode>0</returncode>\n<output>\n| 2020 | 40 |\n</output>"}
    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": [{"type": "text", "text": "How many units?"}, {"type": "image_url"}]},
        toolcall_reply("cat documents/ledger.md"),
        observation,
        bare_call,
        text_based,
        {"role": "exit", "content": "<answer>42</answer>", "extra": {"exit_status": "Submitted"}},
    ]
    view = transcript_view(transcript(messages, exit_status="Submitted"))
    assert (view.format, view.ending, view.raw, view.hidden) == (FORMAT, "Submitted", None, 0)
    roles = [message.role for message in view.messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "assistant", "exit"]
    assert view.messages[1].text == "How many units?\n[image_url]"
    assert [message.commands for message in view.messages[2:6]] == [
        ["cat documents/ledger.md"],
        [],
        ["ls documents"],  # from its tool call where the agent recorded no action
        ["awk 1 ledger.md"],  # from a text-based model's command block
    ]
    assert view.messages[3].text == observation["content"]


@pytest.mark.parametrize(
    ("kept", "problem"),
    [
        ('{"info": {"exit_status": "Submi', "not JSON: the file as the agent left it"),
        (["a", "list"], "it names no format"),
        (12, "it names no format"),
        ({"trajectory_format": "other-9", "messages": []}, "other-9 is not a format we read"),
        ({"trajectory_format": FORMAT, "messages": "none"}, "its messages are not a list of objects"),
        ({"trajectory_format": FORMAT, "messages": [{"role": "user"}, "x"]}, "its messages are not a list of objects"),
        ("<script>" * 2_000_000, "not JSON: the file as the agent left it"),
    ],
)
def test_a_transcript_not_in_its_format_is_shown_raw_and_bounded(kept, problem):
    view = transcript_view(AgentTranscriptEvent(agent="mini-swe-agent", version="2.4.6", transcript=kept))
    assert view.problem == problem and view.messages == []
    assert view.raw is not None and 0 < len(view.raw) <= RAW_CHARS + 40
    assert view.raw[:20] == (kept if isinstance(kept, str) else json_text(kept, indent=1))[:20]


def test_a_10_mb_message_is_cut_and_a_long_transcript_shows_its_first_messages():
    huge = "x" * 10_000_000
    many = [{"role": "user", "content": "y" * MESSAGE_CHARS} for _ in range(2 * SHOWN_CHARS // MESSAGE_CHARS)]
    view = transcript_view(transcript([toolcall_reply(huge) | {"content": huge}, *many]))
    first = view.messages[0]
    assert first.text.startswith("x" * MESSAGE_CHARS) and first.text.endswith("… 9,980,000 more characters")
    assert len(first.commands[0]) < MESSAGE_CHARS + 40
    assert sum(len(message.text) + sum(map(len, message.commands)) for message in view.messages) <= SHOWN_CHARS
    assert view.hidden > 0 and len(view.messages) + view.hidden == 1 + len(many)


def test_empty_messages_show_a_bounded_number_of_headings():
    view = transcript_view(transcript([{}] * 10_000))
    assert 0 < len(view.messages) <= SHOWN_CHARS // 100 and len(view.messages) + view.hidden == 10_000
    assert view.messages[0].role == "(no role)"


def gemini(events: list[Any]) -> AgentTranscriptEvent:
    return AgentTranscriptEvent(agent="gemini-cli", version="0.61.0", transcript=events)


def test_gemini_clis_events_fold_into_its_messages_with_the_commands_it_ran():
    """Gemini CLI's stream-json: a reply comes in pieces (`delta`), each shell call is a `tool_use` of the reply before
    it, each result a `tool_result`; the closing `result` says how it ended."""
    events = [
        {"type": "init", "session_id": "s", "model": "gemini-2.5-flash"},
        {"type": "message", "role": "user", "content": "How many units?"},
        {"type": "message", "role": "assistant", "content": "Reading ", "delta": True},
        {"type": "message", "role": "assistant", "content": "the ledger.", "delta": True},
        {"type": "tool_use", "tool_name": "run_shell_command", "tool_id": "t1", "parameters": {"command": "cat l.md"}},
        {"type": "tool_use", "tool_name": "run_shell_command", "tool_id": "t2", "parameters": {"dir": "/"}},
        {"type": "tool_result", "tool_id": "t1", "status": "success", "output": "| 2020 | 40 |"},
        {"type": "tool_result", "tool_id": "t2", "status": "error", "error": {"message": "no command"}},
        {"type": "message", "role": "assistant", "content": "<answer>42</answer>", "delta": True},
        {"type": "result", "status": "success", "stats": {"total_tokens": 10}},
    ]
    view = transcript_view(gemini(events))
    assert (view.format, view.ending, view.raw, view.hidden) == ("stream-json", "success", None, 0)
    assert [(m.role, m.text, m.commands) for m in view.messages] == [
        ("user", "How many units?", []),
        ("assistant", "Reading the ledger.", ["cat l.md", '{"dir": "/"}']),
        ("tool", "| 2020 | 40 |", []),
        ("tool", '{"message": "no command"}', []),
        ("assistant", "<answer>42</answer>", []),
    ]


def test_a_reply_of_a_million_pieces_is_joined_once_and_cut():
    pieces = [{"type": "message", "role": "assistant", "content": "ab", "delta": True}] * 1_000_000
    view = transcript_view(gemini([*pieces, "not an event", {"type": "result", "status": 7}]))
    [message] = view.messages
    assert message.text.startswith("ab" * 100) and message.text.endswith(
        f"{2_000_000 - MESSAGE_CHARS:,} more characters"
    )
    assert view.ending is None  # the agent's word: a status that is not a string is not shown


def test_claude_codes_events_fold_into_its_messages_with_the_commands_it_ran():
    """Claude Code's stream-json: each content block of a reply an `assistant` event of its own (one `message.id`),
    the tool results a `user` event's `tool_result` blocks; the closing `result`'s subtype says how it ended. What is
    not in its shape (no message, blocks that are not objects, an input without a command) is shown, not trusted."""
    reply = {"id": "msg_1", "role": "assistant"}
    events = [
        {"type": "system", "subtype": "init", "tools": ["Bash"]},
        {"type": "assistant", "message": reply | {"content": [{"type": "thinking", "thinking": "hm"}]}},
        {"type": "assistant", "message": reply | {"content": [{"type": "text", "text": "Reading the ledger."}]}},
        {"type": "assistant", "message": reply | {"content": [{"type": "tool_use", "input": {"command": "cat l.md"}}]}},
        {"type": "assistant", "message": reply | {"content": [{"type": "tool_use", "input": {"dir": "/"}}, "x"]}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "content": "| 2020 | 40 |"}]}},
        {
            "type": "user",
            "message": {"content": [{"type": "tool_result", "content": [{"type": "text", "text": "no"}]}]},
        },
        {"type": "assistant", "message": "not a message"},
        {"type": "assistant", "message": {"id": "msg_2", "content": [{"type": "text", "text": "<answer>42</answer>"}]}},
        {"type": "result", "subtype": "success", "is_error": False, "result": "<answer>42</answer>"},
    ]
    view = transcript_view(AgentTranscriptEvent(agent="claude-code", version="2.1.337", transcript=events))
    assert (view.format, view.ending, view.raw, view.hidden) == ("stream-json", "success", None, 0)
    assert [(m.role, m.text, m.commands) for m in view.messages] == [
        ("assistant", "Reading the ledger.", ["cat l.md", '{"dir": "/"}']),
        ("tool", "| 2020 | 40 |", []),
        ("tool", "no", []),
        ("assistant", "", []),
        ("assistant", "<answer>42</answer>", []),
    ]
