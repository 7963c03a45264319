"""`replay:PATH`: feeds the replies logged in a trajectory, in order (no network, no provider; the run reads
them, harness/run/planning/model_factory.py)."""

from __future__ import annotations

from harness.core.messages import Message
from harness.models.base import ModelReply, estimate_tokens


class ReplayModel:
    """Returns the given replies in order (logged ones, or a script's); once they run out, empty text (a
    format error)."""

    context_window = None

    def __init__(self, name: str, replies: list[ModelReply]):
        self.name = name
        self._replies = replies
        self._position = 0

    def count_tokens(self, messages: list[Message]) -> int:
        return estimate_tokens(messages)

    def query(self, messages: list[Message], timeout_s: float) -> ModelReply:
        if self._position >= len(self._replies):
            return ModelReply(text="")
        reply = self._replies[self._position]
        self._position += 1
        return reply
