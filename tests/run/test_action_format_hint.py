"""A run whose model never made a tool call (a local server that does not pass it its tools, or a model that
writes its commands as text) ends saying which --action-format to try."""

from __future__ import annotations

TEXT_ONLY = "I would read the ledger:\n```bash\ncat documents/ledger.md\n```"


def test_a_run_whose_replies_never_held_a_tool_call_names_action_format_text(mini):
    mini.task_copies(2)
    outcome = mini.run("--model", mini.script([TEXT_ONLY, TEXT_ONLY]), "--max-format-errors", "2")
    assert [row["status"] for row in outcome.rows] == ["format_errors", "format_errors"]
    [line] = [line for line in outcome.output.splitlines() if "--action-format" in line]
    assert line.startswith("no reply of the 2 episodes held a tool call") and line.endswith("```bash block)")


def test_no_hint_when_a_reply_held_a_tool_call_or_the_format_is_text(mini):
    once = mini.script([{"bash": "true"}, TEXT_ONLY, TEXT_ONLY])
    called = mini.run("--model", once, "--max-format-errors", "2", run_id="called")
    assert [row["status"] for row in called.rows] == ["format_errors"]
    text = mini.run("--model", mini.script(["no block"] * 2), "--action-format", "text", run_id="text")
    assert [row["status"] for row in text.rows] == ["format_errors"]
    assert "--action-format text" not in called.output + text.output
