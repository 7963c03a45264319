"""Per-domain accuracy and status tables from results rows (the end-of-run summary)."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.analysis.stats import wilson_interval
from harness.core.status import Status
from harness.records.results import ResultRow

ALL = "all"


@dataclass(frozen=True)
class Cell:
    """A group of results rows: one model on one domain (or on `all`), with what tables show of it."""

    model: str
    domain: str
    rows: list[ResultRow]

    @property
    def n(self) -> int:
        return len(self.rows)

    def correct(self, mode: str = "default") -> int:
        return sum(row.is_correct(mode) for row in self.rows)

    def accuracy(self, mode: str = "default") -> float:
        return self.correct(mode) / self.n if self.n else 0.0

    def interval(self, mode: str = "default") -> tuple[float, float]:
        return wilson_interval(self.correct(mode), self.n)

    def accuracy_at_tolerance(self) -> float | None:
        """Over the tasks that set `rel_tol` (docs/GRADING.md §2.7, accuracy@tol); None when none does."""
        graded = [row.correct_at_tolerance for row in self.rows if row.correct_at_tolerance is not None]
        return sum(graded) / len(graded) if graded else None

    def by_type(self, mode: str = "default") -> dict[str, tuple[int, int]]:
        """Task type -> (correct, episodes), over the rows whose task has a `type`."""
        types: dict[str, tuple[int, int]] = {}
        for row in self.rows:
            if row.task_type is not None:
                correct, n = types.get(row.task_type, (0, 0))
                types[row.task_type] = (correct + row.is_correct(mode), n + 1)
        return dict(sorted(types.items()))

    def macro_accuracy(self, mode: str = "default") -> float | None:
        """The mean of the per-type accuracies (each type weighs the same); None when no task has a type."""
        types = self.by_type(mode)
        return sum(correct / n for correct, n in types.values()) / len(types) if types else None

    def judge_cost(self) -> float | None:
        """What the judges cost (never part of `cost`, the agent's); None when no judge call was paid."""
        known = [row.judge_cost_usd for row in self.rows if row.judge_cost_usd is not None]
        return sum(known) if known else None

    def statuses(self) -> Counter[str]:
        return Counter(row.status.value for row in self.rows)

    def mean_turns(self) -> float:
        return sum(row.turns for row in self.rows) / self.n if self.n else 0.0

    def input_tokens(self) -> int:
        return sum(row.input_tokens for row in self.rows)

    def output_tokens(self) -> int:
        return sum(row.output_tokens for row in self.rows)

    def cost(self) -> float | None:
        """Sum of the known costs; None when no row had a known price."""
        known = [row.cost_usd for row in self.rows if row.cost_usd is not None]
        return sum(known) if known else None


@dataclass(frozen=True)
class DomainSummary:
    domain: str
    tasks: int
    """Tasks with a row (finished, or ended by a failure)."""
    pending: int
    """Selected tasks without a row yet (the run was interrupted or stopped at --max-cost)."""
    correct: int
    accuracy_strict: float
    accuracy_default: float
    accuracy_lenient: float
    statuses: dict[str, int]
    mean_turns: float
    total_time_s: float
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    accuracy_by_type: dict[str, float] = field(default_factory=dict)
    """Default-mode accuracy per task type (tasks with a `type` only)."""
    macro_accuracy: float | None = None
    """The mean of `accuracy_by_type`; None when no task has a type."""
    judge_cost_usd: float | None = None


def summarize(rows: list[ResultRow], pending: dict[str, int] | None = None) -> list[DomainSummary]:
    """One summary per domain, in name order, then `all` when there is more than one domain."""
    pending = pending or {}
    domains = sorted({row.domain for row in rows} | set(pending))
    summaries = [
        _summarize(domain, [row for row in rows if row.domain == domain], pending.get(domain, 0)) for domain in domains
    ]
    if len(domains) > 1:
        summaries.append(_summarize(ALL, rows, sum(pending.values())))
    return summaries


def _summarize(domain: str, rows: list[ResultRow], pending: int) -> DomainSummary:
    cell = Cell("", domain, rows)
    statuses = cell.statuses()
    cost = cell.cost()
    return DomainSummary(
        domain=domain,
        tasks=cell.n,
        pending=pending,
        correct=cell.correct(),
        accuracy_strict=cell.accuracy("strict"),
        accuracy_default=cell.accuracy(),
        accuracy_lenient=cell.accuracy("lenient"),
        statuses={status.value: statuses[status.value] for status in Status if statuses[status.value]},
        mean_turns=cell.mean_turns(),
        total_time_s=round(sum(row.duration_s for row in rows), 3),
        input_tokens=cell.input_tokens(),
        output_tokens=cell.output_tokens(),
        cost_usd=None if cost is None else round(cost, 6),
        accuracy_by_type={name: round(correct / n, 6) for name, (correct, n) in cell.by_type().items()},
        macro_accuracy=_rounded(cell.macro_accuracy()),
        judge_cost_usd=_rounded(cell.judge_cost()),
    )


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def summary_to_dict(summaries: list[DomainSummary]) -> dict[str, Any]:
    return {"domains": [asdict(summary) for summary in summaries]}


def print_table(summaries: list[DomainSummary], console: Console, title: str) -> None:
    table = Table(title=Text(title))  # names are user data, never rich markup
    columns = (
        "domain",
        "tasks",
        "pending",
        "correct",
        "strict",
        "default",
        "lenient",
        "statuses",
        "mean turns",
        "tokens",
        "cost",
        "time",
    )
    for column in columns:
        table.add_column(column, justify="left" if column in ("domain", "statuses") else "right")
    for summary in summaries:
        table.add_row(
            Text(summary.domain),
            str(summary.tasks),
            str(summary.pending),
            str(summary.correct),
            f"{summary.accuracy_strict:.1%}",
            f"{summary.accuracy_default:.1%}",
            f"{summary.accuracy_lenient:.1%}",
            ", ".join(f"{name} {count}" for name, count in summary.statuses.items()),
            f"{summary.mean_turns:.1f}",
            f"{summary.input_tokens + summary.output_tokens:,}",
            "–" if summary.cost_usd is None else f"${summary.cost_usd:.4f}",
            f"{summary.total_time_s:.1f} s",
        )
    console.print(table)
    typed = [summary for summary in summaries if summary.accuracy_by_type]
    if typed:
        _print_types(typed, console)


def _print_types(summaries: list[DomainSummary], console: Console) -> None:
    """Per-type accuracy and the macro average, for task files whose tasks carry a `type`."""
    types = sorted({name for summary in summaries for name in summary.accuracy_by_type})
    table = Table(title=Text("accuracy by task type (default mode)"))
    for column in ("domain", *types, "macro average", "judge cost"):
        table.add_column(Text(column), justify="left" if column == "domain" else "right")
    for summary in summaries:
        by_type = summary.accuracy_by_type
        judge = "–" if summary.judge_cost_usd is None else f"${summary.judge_cost_usd:.4f}"
        table.add_row(
            Text(summary.domain),
            *[f"{by_type[t]:.1%}" if t in by_type else "–" for t in types],
            f"{summary.macro_accuracy:.1%}",
            judge,
        )
    console.print(table)
