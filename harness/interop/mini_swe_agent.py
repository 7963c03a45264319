"""mini-swe-agent's trajectory format (`trajectory_format: "mini-swe-agent-1.1"`), both ways (pure functions).

A file holds `info` (`exit_status`, `submission`, `model_stats` with `instance_cost` and `api_calls`,
`config`) and `messages`: OpenAI-style messages whose `extra` holds, for an assistant message, its
`actions` (`[{"command": ...}]`), `cost` and the provider `response` (with `usage`), and for an
observation its `raw_output` and `returncode`; a last `exit` message ends it. Our export adds
`info.harness` (the whole row, as a row field is named, and the exact file opens) and `extra.stderr`
(mini-swe-agent merges stderr into the output); peers' files are read without them.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from harness.core.status import Status
from harness.interop.imported import ImportedEpisode, checked_opens, message_text, recorded_opens, row_fields
from harness.records.conversation import LoggedCall, conversation
from harness.records.events import ActionEvent, FormatErrorEvent, ModelCallEvent, ObservationEvent
from harness.records.reading import LoggedEvent, invalid_event
from harness.records.results import ROW_FIELDS

FORMAT = "mini-swe-agent-1.1"
_EXIT_STATUSES = {
    Status.ANSWERED: "Submitted",
    Status.TURN_LIMIT: "LimitsExceeded",
    Status.TIME_LIMIT: "TimeExceeded",
    Status.CONTEXT_LIMIT: "ContextWindowExceededError",
    Status.COST_LIMIT: "LimitsExceeded",
    Status.SANDBOX_LIMIT: "SandboxLimitExceeded",
    Status.FORMAT_ERRORS: "RepeatedFormatError",
    Status.MODEL_ERROR: "ModelError",
    Status.SANDBOX_ERROR: "SandboxError",
    Status.HARNESS_ERROR: "HarnessError",
    Status.CANCELLED: "UserInterruption",
}
_STATUSES = {name: status for status, name in _EXIT_STATUSES.items()} | {
    "FormatError": Status.FORMAT_ERRORS,
    "KeyboardInterrupt": Status.CANCELLED,
    "TimeoutExpired": Status.TIME_LIMIT,
    "LimitsExceeded": Status.TURN_LIMIT,  # mini's one name for its step and its cost limit
}


def _status_of(exit_status: str) -> Status:
    """Our status for a mini-swe-agent exit status; an unknown one (an uncaught exception's name) is a model error."""
    return _STATUSES.get(exit_status, Status.MODEL_ERROR)


# --- export -------------------------------------------------------------------------------------------------


def export_episode(events: list[LoggedEvent], config: dict[str, Any]) -> dict[str, Any]:
    """One finished episode of ours (run with `config`, run.yaml's) as a mini-swe-agent trajectory."""
    start, end = events[0].line, events[-1].line  # the episode's start and row, copied as logged
    messages: list[dict[str, Any]] = []
    calls = [call for call in conversation(events).calls if isinstance(call.call, ModelCallEvent)]
    for call in calls:
        messages += _earlier_messages(call)
        messages.append(_assistant(call))
    status = Status(end["status"])
    submission = end.get("submission") or ""
    messages.append(
        {
            "role": "exit",
            "content": submission,
            "extra": {"exit_status": _EXIT_STATUSES[status], "submission": submission},
        }
    )
    return {
        "info": {
            "exit_status": _EXIT_STATUSES[status],
            "submission": submission,
            "model_stats": {"instance_cost": end.get("cost_usd") or 0.0, "api_calls": len(calls)},
            "config": {
                "model": {"model_name": start.get("model")},
                "agent": {
                    "step_limit": config.get("max_turns", 0),
                    "wall_time_limit_seconds": int(config.get("time_limit", 0)),
                },
            },
            "harness": {name: end[name] for name in ROW_FIELDS if name in end} | {"opens": recorded_opens(events)},
        },
        "messages": messages,
        "trajectory_format": FORMAT,
        "instance_id": start["task_id"],
    }


def _earlier_messages(call: LoggedCall) -> list[dict[str, Any]]:
    """The messages the loop added since the last reply; an observation gets the command's output as `extra`."""
    out = []
    shown = call.shown
    for logged in call.call.messages:
        message: dict[str, Any] = dict(logged)  # mini-swe-agent's own message, with its `extra`
        if message["role"] in ("user", "tool") and shown is not None:
            if isinstance(shown, ObservationEvent):
                message["extra"] = {
                    "raw_output": shown.stdout,
                    "stderr": shown.stderr,
                    "returncode": shown.exit_code,
                    "timed_out": shown.timed_out,
                }
            else:
                message["extra"] = {"interrupt_type": "FormatError", "problem": shown.problem}
        out.append(message)
    return out


def _assistant(logged: LoggedCall) -> dict[str, Any]:
    event = logged.call
    assert isinstance(event, ModelCallEvent)
    response = event.response
    usage = response.usage
    message: dict[str, Any] = {"role": "assistant", "content": response.text}
    if response.tool_calls:
        message["tool_calls"] = [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
            for call in response.tool_calls
        ]
    message["extra"] = {
        "actions": [{"command": command} for command in logged.commands],
        "cost": response.cost_usd or 0.0,
        "timestamp": logged.time,
        "response": {
            "usage": {
                "prompt_tokens": usage.input_tokens,
                "completion_tokens": usage.output_tokens,
                "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
                "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
            }
        },
    }
    return message


# --- import -------------------------------------------------------------------------------------------------


def instance_id(data: dict[str, Any]) -> str | None:
    info = data.get("info") or {}
    found = data.get("instance_id") or info.get("instance_id") or (info.get("harness") or {}).get("task_id")
    return str(found) if found else None


def import_messages(data: dict[str, Any]) -> ImportedEpisode:
    """Our events, outcome and row fields from a mini-swe-agent trajectory's messages and info: the row's
    fields from `info.harness` (our export writes them all), else from the format's own fields."""
    info = data.get("info") or {}
    extension = info.get("harness") or {}
    episode = ImportedEpisode()
    try:
        turn, tokens = _read_messages(data.get("messages") or [], episode)
    except ValidationError as error:  # the file is input: a value of the wrong type is named, in one line
        raise invalid_event(error) from None
    exit_status = str(info.get("exit_status") or "")
    episode.status = Status(extension["status"]) if extension.get("status") else _status_of(exit_status)
    episode.submission = info.get("submission") if episode.status is Status.ANSWERED else None
    episode.detail = extension.get("detail") if "detail" in extension else _detail(exit_status, episode.status)
    episode.opens = checked_opens(extension.get("opens"))
    stats = info.get("model_stats") or {}
    own = tokens | {"turns": stats.get("api_calls") or turn, "cost_usd": stats.get("instance_cost")}
    episode.row = row_fields(own | extension)
    return episode


def _read_messages(messages: list[Any], episode: ImportedEpisode) -> tuple[int, dict[str, int]]:
    """The messages as our events, added to EPISODE; the turns and the tokens they add up to."""
    pending: list[dict[str, Any]] = []
    turn = 0
    tokens = {"input_tokens": 0, "output_tokens": 0, "cached_tokens": 0, "reasoning_tokens": 0}
    for message in messages:
        role, extra = message.get("role"), message.get("extra") or {}
        if role == "assistant":
            turn += 1
            usage = _usage(extra)
            tokens = {key: tokens[key] + usage[key] for key in tokens}
            response = {
                "text": message_text(message.get("content")),
                "tool_calls": _tool_calls(message),
                "usage": usage,
                "cost_usd": extra.get("cost"),
                "attempts": [],
            }
            episode.events.append(
                ModelCallEvent.model_validate({"turn": turn, "messages": pending, "response": response})
            )
            pending = []
            for action in extra.get("actions") or []:
                episode.events.append(ActionEvent(turn=turn, command=action.get("command", "")))
        elif role == "exit":
            break
        else:
            pending.append({key: value for key, value in message.items() if key != "extra"})
            if extra.get("interrupt_type") == "FormatError":
                problem = extra.get("problem") or message_text(message.get("content"))
                episode.events.append(FormatErrorEvent(turn=turn, problem=problem))
            elif turn and ("raw_output" in extra or "returncode" in extra):
                episode.events.append(_observation(turn, message, extra))
    return turn, tokens


def epoch_of(data: dict[str, Any]) -> Any:
    """The epoch our export wrote (a peer's file is epoch 1)."""
    return ((data.get("info") or {}).get("harness") or {}).get("epoch", 1)


def _detail(exit_status: str, status: Status) -> str | None:
    return None if status is Status.ANSWERED else f"mini-swe-agent exit_status {exit_status or '(none)'}"


def _observation(turn: int, message: dict[str, Any], extra: dict[str, Any]) -> ObservationEvent:
    stdout = extra.get("raw_output")
    return ObservationEvent(
        turn=turn,
        exit_code=extra.get("returncode"),
        stdout=message_text(message.get("content")) if stdout is None else stdout,
        stderr=extra.get("stderr") or "",
        timed_out=bool(extra.get("timed_out")),
        truncated=False,
        raw_bytes=None,
        duration_s=None,
        text=message_text(message.get("content")),
    )


def _usage(extra: dict[str, Any]) -> dict[str, int]:
    response = extra.get("response")
    usage = (response.get("usage") if isinstance(response, dict) else None) or {}
    return {
        "input_tokens": int(usage.get("prompt_tokens") or 0),
        "output_tokens": int(usage.get("completion_tokens") or 0),
        "cached_tokens": int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0),
        "reasoning_tokens": int((usage.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0),
    }


def _tool_calls(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "id": call.get("id", ""),
            "name": call.get("function", {}).get("name", ""),
            "arguments": call.get("function", {}).get("arguments", ""),
        }
        for call in message.get("tool_calls") or []
    ]
