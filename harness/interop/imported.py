"""What every format's reader gives the import engine (run_import.py): a foreign file's episodes, each as our
events, its outcome and the row fields the file gives, keyed by the (domain, task id) it names and its epoch;
and what every format's import and export read alike."""

from __future__ import annotations

import functools
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.core.json_text import json_text, sendable
from harness.core.status import Status
from harness.records.events import Event, EvidenceEvent
from harness.records.reading import LoggedEvent
from harness.records.results import ROW_FIELDS, ResultRow


@dataclass
class ImportedEpisode:
    """A peer trajectory as our events (without episode_start and episode_end), its outcome and row fields."""

    events: list[Event] = field(default_factory=list)
    """Typed as they are built: a peer's value of the wrong type fails there (pydantic's ValidationError, a
    ValueError the import names its file with), before anything is written."""
    status: Status = Status.ANSWERED
    submission: str | None = None
    detail: str | None = None
    opens: dict[str, int] | None = None
    """Exact file opens recorded by our export (--watch-opens); None for peers' files."""
    row: dict[str, Any] = field(default_factory=dict)
    """The row fields the file gives, checked (`row_fields`): the import keeps those it does not decide itself
    (run_import.DECIDED_BY_IMPORT); our own export gives them all."""


@dataclass(frozen=True)
class ForeignEpisode:
    """One episode of a foreign file, with what the engine matches it to one of our tasks by."""

    path: Path
    where: str
    """How a message names it: the file, and the sample within it."""
    names: tuple[tuple[str | None, str], ...]
    """The (domain or None, task id) it may name, best first: the engine takes the first that is one task."""
    epoch: int
    model: str | None
    episode: ImportedEpisode


@dataclass(frozen=True)
class ForeignFile:
    """A foreign file read whole (by a format's `read`, possibly in a worker process: all of it pickles)."""

    path: Path
    episodes: list[ForeignEpisode]
    settings: dict[str, Any]
    """The run's settings the file says (`model`, `max_turns`, `time_limit`), for the import's run.yaml."""


def row_fields(given: dict[str, Any]) -> dict[str, Any]:
    """The fields of GIVEN that are a row's, each checked and converted to the type `ResultRow` declares, as a
    row's JSON line would be read (the file is input); other keys are ignored. A ValueError names the first
    that is not."""
    checked = {}
    for name in ROW_FIELDS:
        if name in given:
            try:
                checked[name] = _adapter(name).validate_json(json_text(sendable(given[name])), strict=True)
            except (ValueError, TypeError) as error:  # pydantic's ValidationError: its first line after the count
                reason = str(error).splitlines()[1:2] or [str(error)]
                raise ValueError(f"row field {name!r}: {given[name]!r:.80}: {reason[0].strip()}") from None
    return checked


@functools.cache
def _adapter(name: str) -> Any:
    from pydantic import TypeAdapter  # only imports pay for it

    return TypeAdapter(typing.get_type_hints(ResultRow)[name])


def mapping(value: Any) -> dict[str, Any]:
    """VALUE when a file gave a mapping there, else an empty one (a foreign file's settings are optional)."""
    return value if isinstance(value, dict) else {}


def message_text(content: Any) -> str:
    """Message content as text (multimodal content is a list of parts)."""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def recorded_opens(events: list[LoggedEvent]) -> dict[str, int] | None:
    """The exact file opens the host saw (--watch-opens), from a trajectory's evidence event."""
    return next((logged.event.opens for logged in events if isinstance(logged.event, EvidenceEvent)), None)


def checked_opens(opens: Any) -> dict[str, int] | None:
    """Our export's exact file opens (document -> first turn), checked: the evidence records rest on them."""
    if opens is None:
        return None
    if not isinstance(opens, dict) or not all(isinstance(k, str) and type(v) is int for k, v in opens.items()):
        raise ValueError("field 'opens': not a mapping of document names to turns")
    return opens
