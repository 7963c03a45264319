"""What an installed agent leaves in its sandbox for the runner to read: its home there and its own transcript,
read bounded and kept as the agent's word (any bytes, any JSON) without ever becoming our error."""

from __future__ import annotations

from pydantic import JsonValue, ValidationError

from harness.episode.solvers.base import EpisodeInputs
from harness.records.events import AgentTranscriptEvent
from harness.sandboxes.base import SandboxError
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
