"""The messages the model was sent at each call, rebuilt from an episode's log.

A model call's event holds only the messages added since the call before; the reply in between goes back
as the assistant message `ModelReply.to_message` makes. So every call's conversation is the log's, exactly.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from harness.models.base import ModelReply


def messages_sent(events: Iterable[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Per model call (and a failed call, which ends the log), the whole conversation it sent."""
    conversation: list[dict[str, Any]] = []
    sent: list[list[dict[str, Any]]] = []
    for event in events:
        if event.get("event") not in ("model_call", "model_error"):
            continue
        conversation.extend(event["messages"])
        sent.append(copy.deepcopy(conversation))
        if event["event"] == "model_call":
            conversation.append(ModelReply.from_dict(event["response"]).to_message())
    return sent
