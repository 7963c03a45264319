"""A model's reply as the records keep it: its text, tool calls, usage and cost. Models build it (as their
`ModelReply`, models/base.py), a `model_call` event holds it (records/events.py) and every reader reads it by
attribute. It lives here because both sides import it: records may not import models, nor models records.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from harness.core.messages import ProviderOpaque
from harness.core.record import AsGiven, Number, Record


class Attempt(AsGiven):
    """One failed attempt at a model call (models/retries.py), and the wait after it; a field an older harness
    did not write is left out of the line."""

    error: str
    """The error's class name (`RateLimitError`)."""
    status: int | None
    """The HTTP status; None for a connection that failed."""
    message: str
    """The error's first line, at most 300 characters."""
    attempt: int | None = None
    duration_s: Number | None = None
    wait_s: Number | None = None
    """The backoff wait after it (0 after the last)."""
    on_agent_clock: bool | None = None
    """It was cut off by the agent's own time left, or the provider rejected what the model generated."""
    in_flight_limit: int | None = None
    """The provider's in-flight limit it waited under (only with a limit)."""


class ToolCall(Record):
    id: str
    name: str
    arguments: str
    """JSON text, exactly as the model produced it."""


class Usage(Record):
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    """Prompt tokens read from the provider's cache (part of `input_tokens`)."""
    reasoning_tokens: int = 0
    cache_write_tokens: int = 0
    """Prompt tokens written to the provider's cache (part of `input_tokens`; Anthropic's cache creation)."""


class Reply(Record):
    """The reply as its `model_call` event's `response`, its fields in the order they are logged. A reply read
    back keeps which fields its line had (an import's has fewer), and is written again with just those."""

    text: str
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    cost_usd: Number | None = None
    """None when the price is unknown."""
    attempts: list[Attempt] = Field(default_factory=list)
    """Failed attempts (and the waits after them) before this reply."""
    reasoning: str | None = None
    """The provider's reasoning text (`reasoning_content`), None when it sent no such field; an empty one
    stays empty (`""`), so that it goes back as the provider sent it."""
    queued_s: Number = 0.0
    """Time the call waited for room under its provider's in-flight limit (ours, not the agent's)."""
    provider_state: ProviderOpaque = Field(default_factory=dict)
    """Message fields, opaque here, that the provider needs back to continue its reasoning (Anthropic's signed
    thinking blocks, the reasoning items litellm replays into the next Responses API call), sent back as given."""
    finish_reason: str | None = None
    """Why the provider stopped (`stop`, `tool_calls`, `length` for a reply cut at --max-output-tokens); None
    where it says nothing (scripted models, records written before it was kept)."""

    def logged(self) -> dict[str, Any]:
        """The fields as its line holds them: those it was given (all of a model's reply), in declared order."""
        return self.model_dump(exclude_unset=True)
