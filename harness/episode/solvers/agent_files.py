"""What an installed agent leaves in its sandbox for the runner to read: its home there and its own transcript (a
file of JSON, or a stream of events, one JSON object a line, as Gemini CLI's and Claude Code's `--output-format
stream-json` write it), read bounded and kept as the agent's word (any bytes, any JSON), never our error."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from pydantic import JsonValue, ValidationError

from harness.core.status import EpisodeFailure, EpisodeFinished, Outcome, Status, outcome_of
from harness.core.untrusted_json import json_or_none
from harness.episode.solvers.base import EpisodeInputs
from harness.records.events import AgentTranscriptEvent
from harness.sandboxes.base import ExecResult, SandboxError
from harness.sandboxes.file_read import FileUnreadable

INSTALLED_AGENT_HOME = "/tmp/harness-agent"
"""The agent's home in its sandbox: its settings, its own files, its transcript."""
MAX_TRANSCRIPT_BYTES = 8 * 1024 * 1024
"""A longer transcript is not kept (the agent wrote it: its size is the agent's)."""
READ_SECONDS = 30


def agent_file_text(episode: EpisodeInputs, path: str) -> str | None:
    """The file the agent left at PATH, as text (undecodable bytes replaced); None where it left none, or one over
    `MAX_TRANSCRIPT_BYTES`."""
    assert episode.sandbox is not None
    try:
        data = episode.sandbox.read_bytes(path, MAX_TRANSCRIPT_BYTES, READ_SECONDS)
    except (FileUnreadable, SandboxError):
        return None
    return data.decode("utf-8", "replace")


def keep_transcript(episode: EpisodeInputs, agent: str, version: str, parsed: JsonValue, text: str) -> None:
    """Log the agent's transcript, PARSED, or its TEXT where the parse is more than a record holds (JSON nested
    deeper than the record's reader takes: the model's commands can write the file too)."""
    try:
        event = AgentTranscriptEvent(agent=agent, version=version, transcript=parsed)
    except ValidationError:
        event = AgentTranscriptEvent(agent=agent, version=version, transcript=text)
    episode.log.write(event)


def kept_transcript(episode: EpisodeInputs, path: str, agent: str, version: str) -> list[Any]:
    """The stream of events the agent wrote at PATH, kept in ours (an `agent_transcript` event) as it wrote them;
    its lines that are not JSON objects are left out."""
    text = agent_file_text(episode, path)
    lines = (json_or_none(line, MAX_TRANSCRIPT_BYTES) for line in (text or "").splitlines())
    events: list[Any] = [line for line in lines if isinstance(line, dict)]
    if events and text is not None:
        keep_transcript(episode, agent, version, list(events), text)
    return events


def budget_ending(refused: EpisodeFinished | EpisodeFailure | None, result: ExecResult) -> Outcome | None:
    """How the episode ended when the runner ended the agent: the proxy refused its calls (REFUSED: a budget ran out,
    the run was cancelled, the provider failed), or its time ran out while it was still running; None when it
    ended by itself, to be judged by how it ended, as our agent's last reply is."""
    if refused is not None:
        return outcome_of(refused)
    if result.timed_out:
        return outcome_of(EpisodeFinished(Status.TIME_LIMIT, detail="the agent was still running at the time limit"))
    return None


def quoted_task(episode: EpisodeInputs) -> str:
    """The task's prompt (the run's `task` template, as our agent is given it), quoted for the agent's command."""
    task = episode.prompts.render("task", question=episode.task.question, answer_format=episode.task.answer_format)
    return shlex.quote(task)


def environment_words(environment: Mapping[str, str]) -> str:
    """ENVIRONMENT as `env`'s NAME=VALUE arguments (the values are ours: words with no quoting needed)."""
    return " ".join(f"{name}={value}" for name, value in environment.items())


def no_answer(detail: str, result: ExecResult, said: str = "") -> Outcome:
    """An agent that ended by itself without an answer: `format_errors`, DETAIL followed by the last line of what it
    said last (SAID, else its command's stderr, else its stdout)."""
    lines = (result.stderr or said or result.stdout).strip().splitlines()
    return Outcome(Status.FORMAT_ERRORS, None, f"{detail}: {lines[-1][:300]}" if lines else detail)
