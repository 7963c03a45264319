"""A trajectory read back as written: each line as its event class (events.py), found by its kind.

Every line is read with the one union of the events (`events.AnyEvent`), by its `event` field, each field
checked for its type. A line whose kind this harness does not know, or whose fields are not its class's (a log
of another schema, a field of the wrong type), reads as an `UnknownEvent` holding its fields and what is wrong:
every committed run folder still reads, and a reader that needs a kind's fields sees at once that this line
does not give them. Where the log is a user's input (an import's metadata, a log to replay), `event_of` and
`checked_events` make the first such line a one-line error naming its file, line and field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, get_args

from pydantic import TypeAdapter, ValidationError

from harness.core.errors import InputError
from harness.core.record import validation_problem
from harness.records.events import (
    AnyEvent,
    EpisodeEndEvent,
    Event,
)
from harness.records.trajectory import read_trajectory

_EVENT_CLASSES: dict[str, type[Event]] = {
    event_class.kind: event_class for event_class in get_args(get_args(AnyEvent)[0])
}
"""Each kind a log's line names, and the class it reads as."""


_EVENTS: TypeAdapter[Event] = TypeAdapter(AnyEvent)
_KINDS = {event_class.__name__: kind for kind, event_class in _EVENT_CLASSES.items()}


class UnknownEvent(Event):
    """A line of a kind this harness does not know, or whose fields are not its class's (another schema)."""

    kind: ClassVar[str] = "unknown"
    logged_kind: str
    """The kind the line names."""
    fields: dict[str, Any]
    """The line's fields, as logged (without its kind and time)."""
    problem: str = ""
    """What keeps it from reading as its kind: `field 'turn': Input should be a valid integer`."""


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


def checked_events(path: Path) -> list[LoggedEvent]:
    """`read_events` of a log that is a user's input: the first line that does not read as its event is an
    InputError naming the file, its line and its field."""
    events = read_events(path)
    for number, logged in enumerate(events, start=1):
        if isinstance(logged.event, UnknownEvent):
            raise InputError(f"{path}:{number}: {logged.event.logged_kind} {logged.event.problem}")
    return events


def logged_event(line: Mapping[str, Any]) -> LoggedEvent:
    """One line (in full, see compact.py) as its event."""
    kind = str(line.get("event"))
    fields = {key: value for key, value in line.items() if key not in ("event", "time")}
    time = line.get("time")
    return LoggedEvent(_typed(kind, fields), float(time) if isinstance(time, int | float) else None, line)


def event_of(line: Mapping[str, Any]) -> Event:
    """A line (an import's record, the file its input) as its event; else a ValueError saying, in one line, the
    kind and the field that is wrong."""
    event = logged_event(line).event
    if isinstance(event, UnknownEvent):
        raise ValueError(f"{event.logged_kind} {event.problem}")
    return event


def invalid_event(error: ValidationError) -> ValueError:
    """An event that could not be made, as one line: `observation field 'stdout': Input should be a valid
    string` (an import's builders meet a peer's value of the wrong type)."""
    return ValueError(f"{_KINDS.get(error.title, error.title)} {validation_problem(error)}")


def _kind_of(event: Event) -> str:
    """The kind the line was logged as, whether or not it read as its class."""
    return event.logged_kind if isinstance(event, UnknownEvent) else event.kind


def row_as_logged(end: LoggedEvent) -> dict[str, Any]:
    """An `episode_end` line's fields but its kind, time and submission, exactly as logged: an older schema's
    row has fewer than `ResultRow` (which reads them with defaults), and a copy of it keeps it as it was."""
    return {key: value for key, value in end.line.items() if key not in ("event", "time", "submission")}


def _typed(kind: str, fields: dict[str, Any]) -> Event:
    if kind not in _EVENT_CLASSES:
        return UnknownEvent(logged_kind=kind, fields=fields, problem="is not a kind of event this harness logs")
    try:
        return _EVENTS.validate_python({"event": kind, **fields})
    except ValidationError as error:  # the place starts with the union's tag, the kind
        return UnknownEvent(logged_kind=kind, fields=fields, problem=validation_problem(error, skip=1))
    except (TypeError, KeyError, ValueError) as error:  # an episode_end whose row does not read (results.py)
        return UnknownEvent(logged_kind=kind, fields=fields, problem=f"field 'row': {error}")
