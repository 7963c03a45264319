"""Models by spec. A model answers a list of chat messages with one reply."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

BASH_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run one bash command in a fresh process inside the sandbox and return its output.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The bash command to run."}},
            "required": ["command"],
        },
    },
}


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str
    """JSON text, exactly as the model produced it."""


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass(frozen=True)
class ModelReply:
    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    """None when the price is unknown."""

    def to_message(self) -> dict[str, Any]:
        """The reply as an OpenAI-format assistant message for the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
                for call in self.tool_calls
            ]
        return message

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class ModelError(RuntimeError):
    """The model could not answer (provider failure after retries): the episode ends as `model_error`."""


class Model(Protocol):
    name: str
    context_window: int | None
    """Tokens the model accepts, None when unknown or unlimited."""

    def query(self, messages: list[dict[str, Any]]) -> ModelReply:
        """One reply to the conversation so far."""


def action_reply(text: str, command: str, action_format: str, call_id: str) -> ModelReply:
    """A reply that runs `command`: a bash tool call, or one fenced bash block in `text` format."""
    if action_format == "text":
        block = f"```bash\n{command}\n```"
        return ModelReply(text=f"{text}\n\n{block}" if text else block)
    call = ToolCall(id=call_id, name="bash", arguments=json.dumps({"command": command}))
    return ModelReply(text=text, tool_calls=[call])
