"""An installed agent's own stream of events (one JSON object a line, as Gemini CLI's and Claude Code's
`--output-format stream-json` write it) read from its sandbox and kept in the episode's trajectory."""

from __future__ import annotations

from typing import Any

from harness.core.untrusted_json import json_or_none
from harness.episode.solvers.base import EpisodeInputs
from harness.records.events import AgentTranscriptEvent
from harness.sandboxes.base import SandboxError
from harness.sandboxes.file_read import FileUnreadable

MAX_TRANSCRIPT_BYTES = 8 * 1024 * 1024
"""A longer transcript is not kept (the agent wrote it: its size is the agent's)."""


def kept_transcript(episode: EpisodeInputs, path: str, agent: str, version: str) -> list[Any]:
    """The events the agent wrote at PATH in its sandbox, kept in ours (an `agent_transcript` event) as it wrote
    them; its lines that are not JSON objects are left out."""
    assert episode.sandbox is not None
    try:
        data = episode.sandbox.read_bytes(path, MAX_TRANSCRIPT_BYTES, 30)
    except (FileUnreadable, SandboxError):
        return []
    lines = (json_or_none(line, MAX_TRANSCRIPT_BYTES) for line in data.decode("utf-8", "replace").splitlines())
    events: list[Any] = [line for line in lines if isinstance(line, dict)]
    if events:
        episode.log.write(AgentTranscriptEvent(agent=agent, version=version, transcript=list(events)))
    return events
