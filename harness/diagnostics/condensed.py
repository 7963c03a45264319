"""An episode's trajectory condensed to fit a judge's context: every command in full, the model's prose and
the outputs cut to what fits, each cut saying how much it left out (pure function of the events; a line of
another kind or schema, an UnknownEvent, adds nothing)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from harness.records.events import (
    ActionEvent,
    Event,
    FormatErrorEvent,
    ModelCallEvent,
    ModelErrorEvent,
    ObservationEvent,
)

_OUTPUT_CAPS = (4000, 2000, 1000, 400, 160, 0)
"""Characters kept of each output stream, tried in turn until the whole fits."""
_PROSE_CAP = 600
"""Characters kept of each model reply's prose."""


def cut(text: str, keep: int, what: str) -> str:
    """TEXT whole when it fits KEEP characters, else its head and tail with the size said."""
    if len(text) <= keep:
        return text
    if keep == 0:
        return f"[{what}: {len(text):,} characters, not shown]"
    head, tail = text[: keep * 2 // 3], text[len(text) - keep // 3 :]
    return f"{head}\n[... {what}: {len(text):,} characters, {len(text) - len(head) - len(tail):,} cut ...]\n{tail}"


def condense(events: Sequence[Event], budget_chars: int) -> str:
    """The trajectory as text of at most about BUDGET_CHARS: commands in full; outputs cut as needed."""
    for cap in _OUTPUT_CAPS:
        turns = list(_turns(events, cap))
        text = "\n".join(turns)
        if len(text) <= budget_chars:
            return text
    return _drop_middle(turns, budget_chars)


def _turns(events: Iterable[Event], cap: int) -> Iterable[str]:
    for event in events:
        if isinstance(event, ModelCallEvent):
            prose = event.response.text.strip()
            yield (
                f"## turn {event.turn}\nmodel: {cut(prose, _PROSE_CAP, 'reply')}" if prose else f"## turn {event.turn}"
            )
        elif isinstance(event, ActionEvent):
            yield f"$ {event.command}"
        elif isinstance(event, ObservationEvent):
            raw = event.raw_bytes
            size = f" (raw output {raw:,} bytes)" if isinstance(raw, int) else ""
            lines = [f"exit code {event.exit_code}{' (timed out)' if event.timed_out else ''}{size}"]
            for stream, text in (("stdout", event.stdout), ("stderr", event.stderr)):
                if text:
                    lines.append(f"{stream}:\n{cut(str(text), cap, stream)}")
            yield "\n".join(lines)
        elif isinstance(event, FormatErrorEvent):
            yield f"format error: {cut(str(event.problem or ''), _PROSE_CAP, 'problem')}"
        elif isinstance(event, ModelErrorEvent):
            yield f"model error: {cut(str(event.error or ''), _PROSE_CAP, 'error')}"


def _drop_middle(turns: list[str], budget_chars: int) -> str:
    """Commands alone overflow: entries kept from both ends in turn while they fit, the middle counted."""
    front, back, used = 0, len(turns), 200  # turns[front:back] are left out; 200: room for the note
    take_front = True
    while front < back and used + len(turns[front if take_front else back - 1]) + 1 <= budget_chars:
        used += len(turns[front if take_front else back - 1]) + 1
        front, back = (front + 1, back) if take_front else (front, back - 1)
        take_front = not take_front
    left_out = turns[front:back]
    note = f"[... {len(left_out)} log entries ({sum(len(t) for t in left_out):,} characters) left out ...]"
    return "\n".join([*turns[:front], note, *turns[back:]])
