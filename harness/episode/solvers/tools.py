"""The bash agent's tools as objects: each has a name, a description and the JSON schema of its arguments (what the
model is offered), reads its argument out of the model's call, and runs it through one step of the agent's loop.
A solver offers a list of them (`BashAgent.tools`); a variant adds or removes one, with no branch on a tool's name
anywhere else."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, Protocol

from harness.core.reply import ToolCall
from harness.episode.actions import FormatError, parse_text_command, parse_tool_command, parse_view_path, the_one_call
from harness.models.base import ModelReply


class LoopSteps(Protocol):
    """The steps of the agent's loop a tool runs through (`agent_loop.AgentLoop` has them): named here rather
    than imported, so that the loop, which offers the tools, and the tools import in one direction only."""

    def execute(self, reply: ModelReply, command: str) -> None: ...

    def view(self, reply: ModelReply, path: str) -> None: ...


class AgentTool(ABC):
    """One tool the agent can call."""

    name: ClassVar[str]
    description: ClassVar[str]
    parameters: ClassVar[dict[str, Any]]
    """The JSON schema of its arguments."""

    def schema(self) -> dict[str, Any]:
        """The tool as a chat-completions request offers it (litellm turns it into each provider's form)."""
        function = {"name": self.name, "description": self.description, "parameters": self.parameters}
        return {"type": "function", "function": function}

    text_form: ClassVar[bool] = False
    """The tool can be called in the reply's text (the `text` action format: a fenced block), by `read_text`."""

    @abstractmethod
    def read(self, call: ToolCall) -> str:
        """The call's one argument; a `FormatError` saying what is wrong with it."""

    def read_text(self, text: str) -> str:
        """The argument of a call written in the reply's text (only for a tool with a `text_form`)."""
        raise FormatError(f"the {self.name} tool cannot be called in text")

    @abstractmethod
    def run(self, loop: LoopSteps, reply: ModelReply, argument: str) -> None:
        """Carry the call out as a step of LOOP (which logs it and shows the model its result)."""


class BashTool(AgentTool):
    """Runs one bash command in the sandbox (`AgentLoop.execute`)."""

    name = "bash"
    description = "Run one bash command in a fresh process inside the sandbox and return its output."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"command": {"type": "string", "description": "The bash command to run."}},
        "required": ["command"],
    }

    text_form = True

    def read(self, call: ToolCall) -> str:
        return parse_tool_command(call)

    def read_text(self, text: str) -> str:
        return parse_text_command(text)

    def run(self, loop: LoopSteps, reply: ModelReply, argument: str) -> None:
        loop.execute(reply, argument)


class ViewImageTool(AgentTool):
    """Shows the agent an image file of its sandbox (`AgentLoop.view`; offered with `--vision`)."""

    name = "view_image"
    description = (
        "Look at an image file in the sandbox (PNG, JPEG or WebP, e.g. a page you rendered or a chart you "
        "cropped): the image is attached to this tool's result."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The image file's path, absolute or from /workspace."}
        },
        "required": ["path"],
    }

    def read(self, call: ToolCall) -> str:
        return parse_view_path(call)

    def run(self, loop: LoopSteps, reply: ModelReply, argument: str) -> None:
        loop.view(reply, argument)


def read_action(reply: ModelReply, action_format: str, tools: Sequence[AgentTool]) -> tuple[AgentTool, str]:
    """The tool REPLY calls, of TOOLS, and its argument: in the `text` format the one tool with a text form, else
    the one tool call's; a `FormatError` saying what is wrong."""
    if action_format == "text":
        tool = next((tool for tool in tools if tool.text_form), None)
        if tool is None:
            names = ", ".join(tool.name for tool in tools)
            raise FormatError(f"no tool of this agent ({names}) can be called in text; the run needs toolcall")
        return tool, tool.read_text(reply.text)
    call = the_one_call(reply, [tool.name for tool in tools])
    tool = next(tool for tool in tools if tool.name == call.name)
    return tool, tool.read(call)
