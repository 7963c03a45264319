"""A Harbor job's trials as episodes for the import engine (run_import.py), from the files Harbor 0.26.0 writes
(`harbor.models.trial.result.TrialResult` and `harbor.models.trajectories.Trajectory`, ATIF):

    JOB/result.json                    # the job's totals: no episode
    JOB/<trial>/result.json            # TrialResult: task name, agent and model, exception, timings, tokens, cost
    JOB/<trial>/agent/trajectory.json  # the agent's steps (ATIF), when its agent writes one
    JOB/<trial>/verifier/grade.json    # our grade and the submission, when the task is one `export harbor` wrote

A trial names its task `<domain>__<id>` (our export's folder name). Its submission is what our test read
from the answer file (grade.json), graded again by our graders; its status is Harbor's exception mapped to
ours (no exception: answered); each agent step of the trajectory is a model call (its tool calls actions,
their results observations). Trials of one task are its epochs, in the order they started.
"""

from __future__ import annotations

import glob
import json
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness.core.errors import InputError
from harness.core.status import Status
from harness.interop.imported import ForeignEpisode, ForeignFile, ImportedEpisode, mapping, row_fields
from harness.records.events import ActionEvent, Event, ModelCallEvent, ObservationEvent

FORMAT = "Harbor trial"
PATTERN = "result.json"
UNIT = "trial"
_STATUSES = {
    "AgentTimeoutError": Status.TIME_LIMIT,
    "ContextLengthExceededError": Status.CONTEXT_LIMIT,
    "OutputLengthExceededError": Status.FORMAT_ERRORS,
    "AgentSetupTimeoutError": Status.SANDBOX_ERROR,
    "EnvironmentStartTimeoutError": Status.SANDBOX_ERROR,
    "SandboxBuildFailedError": Status.SANDBOX_ERROR,
    "HealthcheckError": Status.SANDBOX_ERROR,
    "NonZeroAgentExitCodeError": Status.FORMAT_ERRORS,
    **dict.fromkeys(
        ("APIConnectionError", "APIError", "AuthenticationError", "BadRequestError", "InternalServerError"),
        Status.MODEL_ERROR,
    ),
    **dict.fromkeys(("RateLimitError", "ServiceUnavailableError", "Timeout"), Status.MODEL_ERROR),
}
"""Harbor's exception (its class name; litellm's for the model's) -> our status; any other is `sandbox_error`
(Harbor's own machinery failed, its message the detail), never ours. An exception of the verifier's still
grades the submission."""
_COMMAND_ARGUMENTS = ("command", "cmd", "keystrokes")
"""A tool call's argument that is its command (bash tools, Terminus' keystrokes)."""


def read(path: Path) -> ForeignFile:
    """A trial's result.json as one episode; the job's own result.json as none."""
    data = _json(path)
    if "trial_name" not in data:
        return ForeignFile(path, [], _job_settings(path.parent))
    try:
        episode = _episode(path.parent, data)
    except ValidationError as error:
        first = error.errors()[0]
        raise InputError(f"{path}: field {'.'.join(map(str, first['loc']))}: {first['msg']}") from None
    except (ValueError, TypeError, KeyError) as error:
        raise InputError(f"{path}: {error}") from None
    task_name = str(data["task_name"])
    splits = [(d, t) for d, _, t in (task_name.partition("__"), task_name.rpartition("__")) if d and t]
    names = (*dict.fromkeys(splits), (None, task_name))  # a domain or an id may hold `__` itself
    where = f"{path} (trial {data['trial_name']})"
    return ForeignFile(
        path, [ForeignEpisode(path, where, names, _epoch(path, data), _model(data), episode)], _settings(data)
    )


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"{path}: not a Harbor result (JSON): {error}") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: not a Harbor result (a JSON object)")
    return data


def _model(data: dict[str, Any]) -> str:
    """`harbor:<agent>`, with `/<model>` when the agent named one."""
    agent = mapping(data.get("agent_info"))
    model = mapping(agent.get("model_info")).get("name")
    return f"harbor:{agent.get('name', 'agent')}" + (f"/{model}" if model else "")


def _settings(data: dict[str, Any]) -> dict[str, Any]:
    timeout = mapping(mapping(mapping(data.get("config")).get("agent"))).get("override_timeout_sec")
    return {"model": _model(data), **({"time_limit": timeout} if isinstance(timeout, (int, float)) else {})}


def _job_settings(job: Path) -> dict[str, Any]:
    """The settings of the job's first trial (the engine takes the first file's)."""
    for trial in sorted(job.glob("*/result.json")):
        data = _json(trial)
        if "trial_name" in data:
            return _settings(data)
    return {}


def _epoch(path: Path, data: dict[str, Any]) -> int:
    """The trial's place among the job's trials of its task, by start time (then name), from 1: its siblings
    whose folder Harbor named after the task are read, no others (`<first 32 characters of the task name>__<suffix>`,
    Harbor's `TrialConfig.generate_trial_name`)."""
    task = str(data["task_name"])
    own = (str(data.get("started_at") or ""), str(data["trial_name"]))
    earlier = 0
    for sibling in path.parent.parent.glob(f"{glob.escape(task[:32].rstrip('_-'))}__*/result.json"):
        other = data if sibling == path else _json(sibling)
        if other.get("task_name") == task and "trial_name" in other:
            earlier += (str(other.get("started_at") or ""), str(other["trial_name"])) < own
    return earlier + 1


def _seconds(timing: Any) -> float:
    span = mapping(timing)
    if not span.get("started_at") or not span.get("finished_at"):
        return 0.0
    started, finished = (datetime.fromisoformat(str(span[key])) for key in ("started_at", "finished_at"))
    return max(0.0, (finished - started).total_seconds())


def _episode(trial: Path, data: dict[str, Any]) -> ImportedEpisode:
    grade_path = trial / "verifier" / "grade.json"
    grade = _json(grade_path) if grade_path.is_file() else {}
    submission = grade.get("submission")
    if submission is not None and not isinstance(submission, str):
        raise ValueError(f"{grade_path}: field 'submission': not a string")
    exception = mapping(data.get("exception_info"))
    name = str(exception.get("exception_type") or "")
    status = Status.ANSWERED if not name or name.startswith("Verifier") else _STATUSES.get(name, Status.SANDBOX_ERROR)
    trajectory = trial / "agent" / "trajectory.json"
    try:
        events = _events(_json(trajectory)) if trajectory.is_file() else []
    except (ValueError, TypeError) as error:  # pydantic's ValidationError is a ValueError
        raise ValueError(f"{trajectory}: {str(error).splitlines()[0]}") from None
    usage = mapping(data.get("agent_result"))
    given_input, cached = usage.get("n_input_tokens") or 0, usage.get("n_cache_tokens") or 0
    row = {
        "input_tokens": max(0, given_input - cached),  # Harbor's input count includes the cached tokens
        "cached_tokens": cached,
        "output_tokens": usage.get("n_output_tokens") or 0,
        "cost_usd": usage.get("cost_usd"),
        "turns": sum(isinstance(event, ModelCallEvent) for event in events),
        "duration_s": round(_seconds(data.get("agent_execution")), 3),
        "sandbox_start_s": round(_seconds(data.get("environment_setup")), 3),
    }
    detail = None if status is Status.ANSWERED else f"Harbor {name}: {exception.get('exception_message', '')}"[:2000]
    return ImportedEpisode(
        events=events,
        status=status,
        submission=submission if status is Status.ANSWERED else None,
        detail=detail,
        row=row_fields(row),
    )


def _events(trajectory: dict[str, Any]) -> list[Event]:
    """ATIF steps as our events: system and user steps are the messages of the next agent step's call."""
    events: list[Event] = []
    pending: list[dict[str, Any]] = []
    turn = 0
    for number, step in enumerate(trajectory.get("steps") or []):
        step = mapping(step)
        text = _text(step.get("message"))
        if step.get("source") != "agent":
            pending.append({"role": "system" if step.get("source") == "system" else "user", "content": text})
            continue
        turn += 1
        calls = [mapping(call) for call in step.get("tool_calls") or []]
        metrics = mapping(step.get("metrics"))
        where = f"steps[{number}].metrics"
        prompt, cached = _count(metrics, "prompt_tokens", where), _count(metrics, "cached_tokens", where)
        response = {
            "text": text,
            "tool_calls": [
                {
                    "id": str(c.get("tool_call_id")),
                    "name": str(c.get("function_name")),
                    "arguments": json.dumps(c.get("arguments")),
                }
                for c in calls
            ],
            "attempts": [],
            "reasoning": step.get("reasoning_content"),
            "usage": {
                "input_tokens": max(0, prompt - cached),
                "output_tokens": _count(metrics, "completion_tokens", where),
                "cached_tokens": cached,
                "reasoning_tokens": 0,
            },
            "cost_usd": metrics.get("cost_usd"),
        }
        model = step.get("model_name")
        events.append(
            ModelCallEvent.model_validate({"turn": turn, "messages": pending, "response": response, "model_id": model})
        )
        pending = []
        events += [ActionEvent(turn=turn, command=_command(mapping(c.get("arguments")))) for c in calls]
        for result in mapping(step.get("observation")).get("results") or []:
            shown = _text(mapping(result).get("content"))
            events.append(ObservationEvent.reported(turn, shown))
            pending.append({"role": "tool", "content": shown})
    return events


def _count(fields: dict[str, Any], name: str, where: str) -> int:
    value = fields.get(name) or 0
    if type(value) is not int or value < 0:
        raise ValueError(f"field '{where}.{name}': {value!r:.40} is not a count")
    return value


def _text(content: Any) -> str:
    """An ATIF message or result: a string, or content parts whose text parts are kept."""
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def _command(arguments: dict[str, Any]) -> str:
    found = next((arguments[name] for name in _COMMAND_ARGUMENTS if isinstance(arguments.get(name), str)), None)
    return found if found is not None else json.dumps(arguments)
