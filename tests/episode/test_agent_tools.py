"""The bash agent's tools are objects its solver offers: a variant that removes bash and adds a tool of its own is
offered exactly its tools in the provider's request, its tool runs through the loop, and a call of a removed tool is
the agent's format error."""

from __future__ import annotations

import json
import shlex
from typing import Any, ClassVar

import pytest

from harness.core.reply import ToolCall
from harness.episode.solvers import AgentLoop, BashAgent
from harness.episode.solvers.tools import AgentTool
from harness.models.base import ModelReply
from tests.helpers.openai_server import Step, reply

pytestmark = pytest.mark.usefixtures("openai_key")


class ReadFileTool(AgentTool):
    name = "read_file"
    description = "Print one file of the sandbox."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    }

    def read(self, call: ToolCall) -> str:
        return json.loads(call.arguments or "{}")["path"]

    def run(self, loop: AgentLoop, reply: ModelReply, argument: str) -> None:
        loop.execute(reply, f"cat -- {shlex.quote(argument)}")


class ReadOnlyAgent(BashAgent):
    name = "read-only-agent"

    @classmethod
    def tools(cls, vision: bool) -> list[AgentTool]:
        return [ReadFileTool()]


def call(name: str, **arguments: str) -> Step:
    """A completion whose one tool call is NAME(ARGUMENTS)."""
    function = {"name": name, "arguments": json.dumps(arguments)}
    message = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": f"call_{name}", "type": "function", "function": function}],
    }
    return Step(text="", body={"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]})


def test_a_variant_offers_its_own_tools_and_runs_them(mini, openai_server):
    openai_server.push(
        call("bash", command="ls"), call("read_file", path="documents/ledger.md"), reply("<answer>42</answer>")
    )
    solver = f"{__name__}:ReadOnlyAgent"
    outcome = mini.run(
        "--model", "openai/test-model", "--api-base", openai_server.url, "--retry-errors", "0", "--solver", solver
    )
    assert outcome.exit_code == 0 and outcome.rows[0]["verdict"] == "correct", outcome.output
    first, _, third = openai_server.requests
    assert first["tools"] == [ReadFileTool().schema()]
    refused = next(e for e in outcome.trajectory("t1") if e["event"] == "format_error")
    assert refused["problem"] == "unknown tool 'bash'; the only tool is read_file"
    observation = next(e for e in outcome.trajectory("t1") if e["event"] == "observation")
    assert "| 2020 | 40 |" in observation["stdout"] and "| 2020 | 40 |" in third["messages"][-1]["content"]


def test_in_the_text_format_a_variant_without_a_tool_that_has_a_text_form_is_a_format_error_not_a_crash():
    from harness.episode.actions import FormatError
    from harness.episode.solvers.tools import read_action

    reply = ModelReply(text="```bash\nls\n```")
    assert read_action(reply, "text", BashAgent.tools(vision=False))[1] == "ls"
    with pytest.raises(FormatError, match=r"no tool of this agent \(read_file\) can be called in text"):
        read_action(reply, "text", ReadOnlyAgent.tools(vision=False))
