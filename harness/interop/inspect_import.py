"""An inspect_ai evaluation log's samples as our episodes (the other way of inspect_export.py).

A sample our export wrote carries, under the metadata key `harness`, the events and row fields inspect has
no place for, and gives them back exactly. Any other sample whose id is one of our task ids is read from
inspect's own fields: the assistant messages are the model calls, their `bash` tool calls the actions,
tool messages the observations, `output.completion` the submission, the sample's limit or error the status,
its model usage the tokens and cost, its working time the agent's time.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool, ContentImage
from pydantic import ValidationError

from harness.core.images import image_of_part
from harness.core.status import Status
from harness.interop.imported import ImportedEpisode, checked_opens, row_fields
from harness.interop.inspect_messages import KEY
from harness.records.events import (
    ActionEvent,
    Event,
    FormatErrorEvent,
    ImageViewEvent,
    ModelCallEvent,
    ObservationEvent,
)
from harness.records.image_store import logged_part
from harness.records.reading import event_of, invalid_event

_LIMIT_STATUSES = {
    "turn": Status.TURN_LIMIT,
    "message": Status.TURN_LIMIT,
    "time": Status.TIME_LIMIT,
    "working": Status.TIME_LIMIT,
    "context": Status.CONTEXT_LIMIT,
    "token": Status.CONTEXT_LIMIT,
    "cost": Status.COST_LIMIT,
    "operator": Status.CANCELLED,
}
"""inspect's sample limit types as our statuses; another (custom) ends as turn_limit unless our
metadata says which."""
_COMMAND_ARGUMENTS = ("command", "cmd")
"""Where a bash tool call's command is: ours name it `command`, inspect's own bash tool `cmd`."""


def sample_names(sample: EvalSample) -> tuple[tuple[str | None, str], ...]:
    """The (domain, task id)s a sample may name, best first: our export's metadata, else its id (`id`, or an id
    written `domain/id`)."""
    extension = sample.metadata.get(KEY) if isinstance(sample.metadata, dict) else None
    if isinstance(extension, dict) and extension.get("task_id") is not None:
        domain = extension.get("domain")
        return ((str(domain) if domain is not None else None, str(extension["task_id"])),)
    named = str(sample.id)
    domain, _, task_id = named.partition("/")
    return ((None, named), (domain, task_id)) if task_id else ((None, named),)


def import_sample(sample: EvalSample) -> ImportedEpisode:
    """Our events, outcome and row fields from one sample: from inspect's own fields (INSPECT_OWN says which
    of a row's they hold), and every other row field from our export's metadata."""
    found = sample.metadata.get(KEY)
    extension: dict[str, Any] = found if isinstance(found, dict) else {}
    try:
        episode = ImportedEpisode(events=_events(sample.messages))
    except ValidationError as error:  # the file is input: a value of the wrong type is named, in one line
        raise invalid_event(error) from None
    episode.status = Status(extension["status"]) if extension.get("status") else _status(sample)
    submission = extension.get("submission", sample.output.completion or None)
    episode.submission = submission if episode.status is Status.ANSWERED else None
    episode.detail = extension["detail"] if "detail" in extension else _detail(sample, episode.status)
    episode.opens = checked_opens(extension.get("opens"))
    answered_by = Counter(
        message.model for message in sample.messages if isinstance(message, ChatMessageAssistant) and message.model
    )
    own = _usage(sample) | {
        "turns": sum(isinstance(message, ChatMessageAssistant) for message in sample.messages),
        "duration_s": sample.working_time or sample.total_time or 0.0,
        "model_ids": dict(answered_by),
    }
    episode.row = row_fields(own | extension)
    return episode


def _status(sample: EvalSample) -> Status:
    if sample.error is not None:
        return Status.MODEL_ERROR
    if sample.limit is not None:
        return _LIMIT_STATUSES.get(sample.limit.type, Status.TURN_LIMIT)
    return Status.ANSWERED


def _detail(sample: EvalSample, status: Status) -> str | None:
    if sample.error is not None:
        return f"inspect sample error: {sample.error.message}"
    if sample.limit is not None:
        return f"inspect {sample.limit.type} limit {sample.limit.limit:g}" + (
            f": {sample.limit.reason}" if sample.limit.reason else ""
        )
    return None if status is Status.ANSWERED else f"inspect sample ended as {status}"


def _usage(sample: EvalSample) -> dict[str, Any]:
    totals = {"input_tokens": 0, "output_tokens": 0, "cached_tokens": 0, "reasoning_tokens": 0}
    costs = []
    for usage in sample.model_usage.values():
        totals["input_tokens"] += usage.input_tokens
        totals["output_tokens"] += usage.output_tokens
        totals["cached_tokens"] += usage.input_tokens_cache_read or 0
        totals["reasoning_tokens"] += usage.reasoning_tokens or 0
        if usage.total_cost is not None:
            costs.append(usage.total_cost)
    return totals | {"cost_usd": round(sum(costs), 8) if costs else None}


def _events(messages: list[ChatMessage]) -> list[Event]:
    events: list[Event] = []
    pending: list[dict[str, Any]] = []
    turn = 0
    for message in messages:
        record = message.metadata.get(KEY) if isinstance(message.metadata, dict) else None
        if isinstance(message, ChatMessageAssistant):
            turn = int(record["turn"]) if isinstance(record, dict) and "turn" in record else turn + 1
            events += _model_call(message, record if isinstance(record, dict) else None, turn, pending)
            pending = []
            continue
        pending.append(_openai_message(message))
        if isinstance(record, dict):
            events.append(_shown(record))
        elif isinstance(message, ChatMessageTool) and turn:
            events.append(_observation(turn, message))
    return events


def _shown(record: dict[str, Any]) -> Event:
    """The observation or format error our export kept beside the message the model was shown."""
    event = event_of(record)
    if not isinstance(event, ObservationEvent | FormatErrorEvent | ImageViewEvent):
        raise ValueError(f"event {event.kind!r} is not one an import gives")
    return event


def _model_call(
    message: ChatMessageAssistant, record: dict[str, Any] | None, turn: int, pending: list[dict[str, Any]]
) -> list[Event]:
    """The model_call (and its actions) of one assistant message; ours come back from the metadata."""
    if record is not None:
        response = {
            "text": message.text,
            **{key: value for key, value in record.items() if key not in ("turn", "latency_s", "commands")},
        }
        response["reasoning"] = _reasoning(message)
        call = ModelCallEvent.model_validate(
            {
                "turn": turn,
                "messages": pending,
                "response": response,
                "latency_s": record.get("latency_s"),
                "model_id": message.model or None,  # the model the provider said answered
            }
        )
        return [call, *(ActionEvent(turn=turn, command=command) for command in record.get("commands") or [])]
    calls = [
        {"id": tool.id, "name": tool.function, "arguments": json.dumps(tool.arguments)}
        for tool in message.tool_calls or []
    ]
    response = {
        "text": message.text,
        "tool_calls": calls,
        "attempts": [],
        "reasoning": _reasoning(message),
        "usage": {"input_tokens": 0, "output_tokens": 0, "cached_tokens": 0, "reasoning_tokens": 0},
        "cost_usd": None,
    }
    actions = [ActionEvent(turn=turn, command=_command(tool.arguments)) for tool in message.tool_calls or []]
    return [ModelCallEvent.model_validate({"turn": turn, "messages": pending, "response": response}), *actions]


def _command(arguments: dict[str, Any]) -> str:
    found = next((arguments[name] for name in _COMMAND_ARGUMENTS if isinstance(arguments.get(name), str)), None)
    return found if found is not None else json.dumps(arguments)


def _reasoning(message: ChatMessageAssistant) -> str | None:
    if isinstance(message.content, str):
        return None
    parts = [part.reasoning for part in message.content if part.type == "reasoning"]
    return "".join(parts) if parts else None


def _openai_message(message: ChatMessage) -> dict[str, Any]:
    """A message as the loop logs it (OpenAI format)."""
    record: dict[str, Any] = {"role": message.role}
    if isinstance(message, ChatMessageTool):
        record["tool_call_id"] = message.tool_call_id
    images = (
        [part for part in message.content if isinstance(part, ContentImage)]
        if isinstance(message.content, list)
        else []
    )
    record["content"] = message.text if not images else _with_image_refs(message.text, images)
    return record


def _with_image_refs(text: str, images: list[ContentImage]) -> list[dict[str, Any]]:
    """A message's text and images as our log keeps them: each image a reference (its bytes are the log's
    run folder's, never the log's); an image that is no data URL of an image we take stays out."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
    for image in images:
        part = {"type": "image_url", "image_url": {"url": image.image}}
        try:
            if image_of_part(part) is not None:
                parts.append(logged_part(part))
        except (OSError, ValueError):
            continue
    return parts


def _observation(turn: int, message: ChatMessageTool) -> ObservationEvent:
    timed_out = message.error is not None and message.error.type == "timeout"
    return ObservationEvent.reported(turn, message.text, timed_out)
