"""A trajectory read back as written: each line as its event class (events.py), found by its kind.

A line whose kind this harness does not know, or whose fields are not its class's (a log of another
schema), reads as an `UnknownEvent` holding its fields: every committed run folder still reads, and a
reader that needs a kind's fields sees at once that this line does not give them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from harness.records.events import (
    ActionEvent,
    EpisodeEndEvent,
    EpisodeStartEvent,
    Event,
    EvidenceEvent,
    FormatErrorEvent,
    HarnessErrorEvent,
    JudgeCallEvent,
    ModelCallEvent,
    ModelErrorEvent,
    ObservationEvent,
    SandboxReadyEvent,
)
from harness.records.results import ResultRow
from harness.records.trajectory import read_trajectory

EVENT_CLASSES: dict[str, type[Event]] = {
    event_class.kind: event_class
    for event_class in (
        EpisodeStartEvent,
        SandboxReadyEvent,
        ModelCallEvent,
        ModelErrorEvent,
        ActionEvent,
        ObservationEvent,
        FormatErrorEvent,
        HarnessErrorEvent,
        JudgeCallEvent,
        EvidenceEvent,
        EpisodeEndEvent,
    )
}
"""Each kind a log's line names, and the class it reads as."""


@dataclass(frozen=True, kw_only=True)
class UnknownEvent(Event):
    """A line of a kind this harness does not know, or whose fields are not its class's (another schema)."""

    kind: ClassVar[str] = "unknown"
    logged_kind: str
    """The kind the line names."""
    fields: dict[str, Any]
    """The line's fields, as logged (without its kind and time)."""


@dataclass(frozen=True)
class LoggedEvent:
    """One line of a trajectory, read back."""

    event: Event
    """The line as its event class (an `UnknownEvent` where it does not read as one)."""
    time: float | None
    """When it happened (seconds since the epoch); None where the line has no time."""
    line: Mapping[str, Any] = field(repr=False, compare=False)
    """The whole line, in full: for those that show or convert the log as written (viewer, exports)."""


def read_events(path: Path) -> list[LoggedEvent]:
    """Every complete event of an episode's trajectory, each as its class, its outputs in full."""
    return logged_events(read_trajectory(path))


def logged_events(lines: Iterable[Mapping[str, Any]]) -> list[LoggedEvent]:
    """Lines already read (in full, see compact.py), each as its event: what a log being written holds so far."""
    return [logged_event(line) for line in lines]


def is_finished(events: Sequence[LoggedEvent]) -> bool:
    """The log ends with its results row. An `episode_end` that does not read as a row (another schema) does
    not finish it: there is no row to regrade, replay or show."""
    return bool(events) and isinstance(events[-1].event, EpisodeEndEvent)


def logged_event(line: Mapping[str, Any]) -> LoggedEvent:
    """One line (in full, see compact.py) as its event."""
    kind = str(line.get("event"))
    fields = {key: value for key, value in line.items() if key not in ("event", "time")}
    time = line.get("time")
    return LoggedEvent(_typed(kind, fields), float(time) if isinstance(time, int | float) else None, line)


def kind_of(event: Event) -> str:
    """The kind the line was logged as, whether or not it read as its class."""
    return event.logged_kind if isinstance(event, UnknownEvent) else event.kind


def row_as_logged(end: LoggedEvent) -> dict[str, Any]:
    """An `episode_end` line's fields but its kind, time and submission, exactly as logged: an older schema's
    row has fewer than `ResultRow` (which reads them with defaults), and a copy of it keeps it as it was."""
    return {key: value for key, value in end.line.items() if key not in ("event", "time", "submission")}


def _typed(kind: str, fields: dict[str, Any]) -> Event:
    event_class = EVENT_CLASSES.get(kind)
    if event_class is None:
        return UnknownEvent(logged_kind=kind, fields=fields)
    try:
        if event_class is EpisodeEndEvent:
            return _episode_end(fields)
        names = {spec.name for spec in dataclasses.fields(event_class)}
        if not set(fields) <= names:
            return UnknownEvent(logged_kind=kind, fields=fields)
        return event_class(**fields)
    except (TypeError, ValueError, KeyError):
        return UnknownEvent(logged_kind=kind, fields=fields)


def _episode_end(fields: dict[str, Any]) -> EpisodeEndEvent:
    row = {key: value for key, value in fields.items() if key not in ("submission", "regraded")}
    return EpisodeEndEvent(
        row=ResultRow.from_dict(row), submission=fields.get("submission"), regraded=bool(fields.get("regraded"))
    )
