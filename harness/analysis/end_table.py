"""The table a run prints at its end: one line per domain, fitted to the console's width by leaving out the
least needed columns (and saying which), never by cutting a number short."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Console, JustifyMethod
from rich.table import Table
from rich.text import Text

from harness.analysis.summary import DomainSummary


def duration(seconds: float) -> str:
    """A duration in a few characters without a space (a cell that never wraps): 9.5s, 13m27s, 2h03m."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    whole = round(seconds)
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


@dataclass(frozen=True)
class _EndColumn:
    header: str
    """As shown: a line break where it may take two lines."""
    value: Callable[[DomainSummary], str]
    keep: int
    """The higher, the longer it stays when the console is narrow."""
    wraps: bool = False
    """Text that may wrap at its spaces; every other column is one unbroken line."""
    shown: Callable[[list[DomainSummary]], bool] = lambda summaries: True
    """Whether the run needs it at all (a pending column with nothing pending does not)."""


def _statuses(summary: DomainSummary) -> str:
    return ", ".join(f"{name} {count}" for name, count in summary.statuses.items())


def _share(accuracy: float | None) -> str:
    """An accuracy as a percentage; – for a domain none of whose episodes was graded."""
    return "–" if accuracy is None else f"{accuracy:.1%}"


def _cost(summary: DomainSummary) -> str:
    return "–" if summary.cost_usd is None else f"${summary.cost_usd:.4f}"


COLUMNS = (
    _EndColumn("domain", lambda s: s.domain, 100, wraps=True),
    _EndColumn("tasks", lambda s: str(s.tasks), 85),
    _EndColumn("episodes", lambda s: str(s.episodes), 80, shown=lambda ss: any(s.episodes != s.tasks for s in ss)),
    _EndColumn("pending", lambda s: str(s.pending), 60, shown=lambda summaries: any(s.pending for s in summaries)),
    _EndColumn("correct", lambda s: str(s.correct), 68),
    _EndColumn("strict", lambda s: _share(s.accuracy_strict), 40),
    _EndColumn("default", lambda s: _share(s.accuracy_default), 95),
    _EndColumn("lenient", lambda s: _share(s.accuracy_lenient), 35),
    _EndColumn("statuses", _statuses, 75, wraps=True),
    _EndColumn("mean\nturns", lambda s: f"{s.mean_turns:.1f}", 45),
    _EndColumn("tokens", lambda s: f"{s.input_tokens + s.output_tokens:,}", 50),
    _EndColumn("cost", _cost, 55),
    _EndColumn("agent\ntime", lambda s: duration(s.agent_time_s), 70),
    _EndColumn(
        "failed\ncalls", lambda s: duration(s.failed_calls_s), 71, shown=lambda ss: any(s.failed_calls_s for s in ss)
    ),
)
"""In the order shown. docs/guide/reports.md (the end table) says what each one sums."""


def print_end_table(summaries: list[DomainSummary], console: Console, title: str, wall_time_s: float) -> None:
    """The table at the console's width; a line under it names the columns left out for want of room."""
    print_end_tables([(summaries, title, wall_time_s)], console)


def print_end_tables(tables: list[tuple[list[DomainSummary], str, float]], console: Console) -> None:
    """Several runs' tables (a sweep's: summaries, title, wall time each) with the same columns, so that they read
    side by side: a column one run needs is in all, one left out for want of room is left out of all."""
    every = [summary for summaries, _, _ in tables for summary in summaries]
    columns = [column for column in COLUMNS if column.shown(every)]
    widths = [_least_width(column, [column.value(summary) for summary in every]) for column in columns]
    left_out = []
    while sum(widths) + 3 * len(widths) + 1 > console.width and len(columns) > 1:
        drop = min(range(len(columns)), key=lambda index: columns[index].keep)
        left_out.append(columns[drop].header.replace("\n", " "))
        del columns[drop], widths[drop]
    for summaries, title, wall_time_s in tables:
        table = Table(title=Text(f"{title} · wall time {duration(wall_time_s)}"))  # names are user data, never markup
        for column in columns:
            justify: JustifyMethod = "left" if column.wraps else "right"
            table.add_column(Text(column.header), justify=justify, no_wrap=not column.wraps, overflow="fold")
        for summary in summaries:
            table.add_row(*(Text(column.value(summary)) for column in columns))
        console.print(table)
        if left_out:
            console.print(f"(left out at {console.width} columns: {', '.join(left_out)}; summary.json has them)")
        typed = [summary for summary in summaries if summary.accuracy_by_type]
        if typed:
            _print_types(typed, console)


def _least_width(column: _EndColumn, cells: list[str]) -> int:
    """The narrowest the column can be without cutting a cell: its longest word if it wraps, else its widest line."""
    lines = [*column.header.split("\n"), *cells]
    if column.wraps:
        return max((cell_len(word) for line in lines for word in line.split()), default=1)
    return max(cell_len(line) for line in lines)


def _print_types(summaries: list[DomainSummary], console: Console) -> None:
    """Per-type accuracy and the overall number (`type_metrics.overall`), for task files whose tasks carry a `type`."""
    types = sorted({name for summary in summaries for name in summary.accuracy_by_type})
    table = Table(title=Text("accuracy by task type (default mode; a scored type by its mean score)"))
    for column in ("domain", *types, "overall", "judge cost"):
        table.add_column(Text(column), justify="left" if column == "domain" else "right")
    for summary in summaries:
        by_type = summary.accuracy_by_type
        judge = "–" if summary.judge_cost_usd is None else f"${summary.judge_cost_usd:.4f}"
        table.add_row(
            Text(summary.domain),
            *[f"{by_type[t]:.1%}" if t in by_type else "–" for t in types],
            _share(summary.macro_accuracy),
            judge,
        )
    console.print(table)
