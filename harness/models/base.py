"""What a model is: the `Model` protocol (it answers a list of chat messages with one reply), `ModelReply`, the
model errors and the token estimate."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol, cast, runtime_checkable

from harness.core.messages import Message
from harness.core.reply import Attempt, Reply, ToolCall
from harness.core.status import EpisodeFailure, Status
from harness.core.untrusted_json import json_or_none
from harness.models.image_tokens import openai_image_tokens, split_images


class ModelReply(Reply):
    """A model's reply: what the records keep (core/reply.py) and the model that answered."""

    model_id: str | None = None
    """The model the provider says answered (its reply's `model`, Gemini's `modelVersion`): providers swap
    snapshots behind an alias. None for models that name none (oracle, scripted, replay). Logged beside the
    reply in its `model_call` event, not in `to_dict`."""

    def to_message(self) -> Message:
        """The reply as an OpenAI-format assistant message for the conversation. Reasoning goes back as the
        provider sent it, an empty one too: DeepSeek's thinking mode refuses a tool-call turn without its
        `reasoning_content` (a litellm release may or may not put a placeholder in its place), and litellm
        removes the field for providers known to refuse it."""
        message: Message = {"role": "assistant", "content": self.text}
        if self.reasoning is not None:
            message["reasoning_content"] = self.reasoning
        if calls := self.replayable_calls:
            message["tool_calls"] = [
                {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
                for call in calls
            ]
        return cast(Message, message | self.provider_state)  # the provider's own fields ride beside ours

    @property
    def replayable_calls(self) -> list[ToolCall]:
        """The tool calls that can go back in the conversation: those whose arguments are a JSON object. A
        server that renders the history through the model's chat template (SGLang, vLLM) parses every earlier
        call's arguments and refuses the request when they do not parse; a call that does not is the agent's
        format error, which the next message tells it. A reply whose provider state holds its calls (the Responses
        API's replay record pairs each call with the reasoning item before it) goes back whole."""
        if self.provider_state:
            return list(self.tool_calls)
        return [call for call in self.tool_calls if _is_json_object(call.arguments)]

    def to_dict(self) -> dict[str, Any]:
        """The reply as its `model_call` event's `response`, every field (the model id is the event's own)."""
        return self.model_dump(exclude={"model_id"})

    def record(self) -> Reply:
        """The reply as its `model_call` event holds it."""
        return Reply.model_validate(self.to_dict())

    @classmethod
    def of(cls, logged: Reply) -> ModelReply:
        """A logged reply (the `response` of a `model_call` event) as a model's again."""
        return cls(**dict(logged))


def _is_json_object(text: str) -> bool:
    return isinstance(json_or_none(text), dict)


@dataclass(frozen=True)
class RetryTime:
    """The provider's share of one model call: its failed attempts and the backoff waits after them."""

    wait_s: float = 0.0
    """Backoff waits after failed attempts (exponential, or the server's Retry-After)."""
    failed_s: float = 0.0
    """Time the failed attempts themselves took, but for one cut off by the agent's own time left."""

    @classmethod
    def of(cls, attempts: list[Attempt]) -> RetryTime:
        """From a call's logged attempts (`duration_s`, `wait_s`, `on_agent_clock`, as `models/retries.py` writes)."""
        failed = sum(float(a.duration_s or 0.0) for a in attempts if not a.on_agent_clock)
        return cls(wait_s=sum(float(a.wait_s or 0.0) for a in attempts), failed_s=failed)


class ModelError(EpisodeFailure, RuntimeError):
    """The model could not answer (provider failure after retries): the episode ends as `model_error`."""

    status = Status.MODEL_ERROR

    def __init__(self, message: str, attempts: list[Attempt] | None = None, queued_s: float = 0.0):
        super().__init__(message)
        self.attempts = attempts or []
        """Failed attempts before giving up: error, status, time taken, wait before the next one."""
        self.queued_s = queued_s
        """Time spent waiting for room under the provider's in-flight limit (ours, not the agent's)."""


class ContextOverflow(ModelError):
    """The provider refused the prompt as too long: the episode ends as `context_limit`, never retried."""

    status = Status.CONTEXT_LIMIT


CHARS_PER_TOKEN = 4
"""The estimate for models without a tokenizer of their own."""


def estimate_tokens(messages: list[Message]) -> int:
    """The text by its characters, each image by OpenAI's tile rule (the format these models take)."""
    text_only, sizes = split_images(messages)
    images = sum(openai_image_tokens(width, height) for width, height in sizes)
    return len(json.dumps(text_only, ensure_ascii=False)) // CHARS_PER_TOKEN + images


class Model(Protocol):
    @property
    def name(self) -> str:
        """What the trajectory and run.yaml call it."""

    @property
    def context_window(self) -> int | None:
        """Tokens the model accepts, None when unknown or unlimited."""

    def query(self, messages: list[Message], timeout_s: float) -> ModelReply:
        """One reply to the conversation so far, within `timeout_s` seconds (retries included)."""

    def count_tokens(self, messages: list[Message]) -> int:
        """The prompt tokens these messages take for this model (offline): the context budget's measure."""


@runtime_checkable
class Abandonable(Protocol):
    def abandon(self) -> None:
        """Close the connections of the call in flight (called from another thread when the run is cancelled)."""


def view_reply(text: str, path: str, call_id: str) -> ModelReply:
    """A reply that asks to see the image at `path` (a view_image tool call)."""
    return ModelReply(
        text=text, tool_calls=[ToolCall(id=call_id, name="view_image", arguments=json.dumps({"path": path}))]
    )


def action_reply(text: str, command: str, action_format: str, call_id: str) -> ModelReply:
    """A reply that runs `command`: a bash tool call, or one fenced bash block in `text` format."""
    if action_format == "text":
        block = f"```bash\n{command}\n```"
        return ModelReply(text=f"{text}\n\n{block}" if text else block)
    call = ToolCall(id=call_id, name="bash", arguments=json.dumps({"command": command}))
    return ModelReply(text=text, tool_calls=[call])
