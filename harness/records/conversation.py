"""An episode's conversation rebuilt from its log, the one way every reader of it (exports, tests) walks it.

A model call's event holds only the messages added since the call before; its reply follows as the call's
`response`. Each call here comes with the output its new messages show (the observation or format error
logged last before it) and the commands its reply ran, so a format can attach what it keeps of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.records.events import (
    ActionEvent,
    FormatErrorEvent,
    ImageViewEvent,
    ModelCallEvent,
    ModelErrorEvent,
    ObservationEvent,
)
from harness.records.reading import LoggedEvent

Output = ObservationEvent | FormatErrorEvent | ImageViewEvent
"""What the model was shown of a command, of an image it asked to see, or of a reply it could not act on."""


@dataclass(frozen=True)
class LoggedCall:
    """One model call: the messages it added, its reply (or failure), and what surrounds it in the log."""

    call: ModelCallEvent | ModelErrorEvent
    time: float | None
    shown: Output | None
    """The output logged last before the call: what its new user or tool message shows (None before any)."""
    commands: list[str] = field(default_factory=list)
    """The commands its turn ran (none for a failed call)."""


@dataclass(frozen=True)
class _Conversation:
    calls: list[LoggedCall]
    unsent: Output | None
    """An output logged after the last reply, which no call was sent (the command that printed the answer)."""


def conversation(events: Sequence[LoggedEvent]) -> _Conversation:
    """Every model call in order with the output each shows and the commands its reply ran."""
    commands: dict[int, list[str]] = {}
    for logged in events:
        if isinstance(logged.event, ActionEvent):
            commands.setdefault(logged.event.turn, []).append(logged.event.command)
    calls: list[LoggedCall] = []
    last: Output | None = None
    unsent: Output | None = None
    for logged in events:
        event = logged.event
        if isinstance(event, ModelCallEvent):
            calls.append(LoggedCall(event, logged.time, last, commands.get(event.turn, [])))
            unsent = None
        elif isinstance(event, ModelErrorEvent):
            calls.append(LoggedCall(event, logged.time, last))
        elif isinstance(event, ObservationEvent | FormatErrorEvent | ImageViewEvent):
            last = unsent = event
    return _Conversation(calls, unsent)
