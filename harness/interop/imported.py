"""An episode read from another tool's log, as our events and row fields, and what every format's import and
export read alike."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.core.status import Status
from harness.records.episode_row import Spend, Timings
from harness.records.events import Event, EvidenceEvent
from harness.records.reading import LoggedEvent


@dataclass
class ImportedEpisode:
    """A peer trajectory as our events (without episode_start and episode_end) and the row fields it gives."""

    events: list[Event] = field(default_factory=list)
    """Typed as they are built: a peer's value of the wrong type fails there (pydantic's ValidationError, a
    ValueError the import names its file with), before anything is written."""
    status: Status = Status.ANSWERED
    submission: str | None = None
    detail: str | None = None
    spend: Spend = field(default_factory=Spend)
    timings: Timings = field(default_factory=Timings)
    epoch: int = 1
    opens: dict[str, int] | None = None
    """Exact file opens recorded by our export (--watch-opens); None for peers' files."""
    judge_cost_usd: float | None = None
    """What judging the answer cost when our export was graded; kept when the import's judges all hit the cache."""


def imported_timings(extension: dict[str, Any]) -> Timings:
    """The timings our own export kept in the file's extension (a peer's file has none: zero)."""
    return Timings(float(extension.get("queue_s") or 0.0), float(extension.get("sandbox_start_s") or 0.0))


def message_text(content: Any) -> str:
    """Message content as text (multimodal content is a list of parts)."""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def recorded_opens(events: list[LoggedEvent]) -> dict[str, int] | None:
    """The exact file opens the host saw (--watch-opens), from a trajectory's evidence event."""
    return next((logged.event.opens for logged in events if isinstance(logged.event, EvidenceEvent)), None)
