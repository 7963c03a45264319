"""The progress line's own columns: what rich's do not say as we want it (the run's name cut before a number, no
`eta` once the batch is done, one plain line where output is not a terminal)."""

from __future__ import annotations

from datetime import timedelta

from rich.cells import cell_len
from rich.progress import ProgressColumn, TimeRemainingColumn
from rich.progress import Task as ProgressTask
from rich.table import Column
from rich.text import Text

__all__ = ["NarrowLine", "PlainLine", "Remaining"]


def _named(name: str, counts: str, width: int) -> Text:
    """NAME, cut short to leave COUNTS whole on a line of WIDTH cells."""
    room = width - cell_len(counts) - 1
    shown = name if cell_len(name) <= room else name[: max(room - 1, 0)] + "…"
    return Text.assemble((shown, "bold"), " " if shown else "", counts)


class NarrowLine(ProgressColumn):
    """The progress line of a narrow console: what a person waits on (done/total, correct, running, retries, the
    oldest call) and the run's name before it, cut short to fit, never a number."""

    def __init__(self, width: int):
        super().__init__(table_column=Column(no_wrap=True))
        self.width = width

    def render(self, task: ProgressTask) -> Text:
        fields = task.fields
        counts = f"{task.completed:.0f}/{task.total or 0:.0f} · correct {fields['correct']} · "
        counts += f"running {fields['running']}{fields['calls']}"
        return _named(task.description, counts, self.width)


class PlainLine(ProgressColumn):
    """The line of a console that is not a terminal (a pipe, a log file), printed once when the batch ends:
    every count the live bar shows and the time taken, the run's name cut short to fit, never a number."""

    def __init__(self, width: int):
        super().__init__(table_column=Column(no_wrap=True))
        self.width = width

    def render(self, task: ProgressTask) -> Text:
        fields = task.fields
        elapsed = timedelta(seconds=int(task.finished_time or task.elapsed or 0))
        counts = (
            f"{task.completed:.0f}/{task.total or 0:.0f} · correct {fields['correct']} · running "
            f"{fields['running']}{fields['calls']} · {fields['tokens']} tokens · {fields['cost']}"
            f"{fields['providers']} · {elapsed}"
        )
        return _named(task.description, counts, self.width)


class Remaining(TimeRemainingColumn):
    """`eta` and the time left while the batch runs; nothing once it is done."""

    def render(self, task: ProgressTask) -> Text:
        if task.finished:
            return Text("")
        return Text.assemble("eta ", super().render(task))
