"""Per-domain accuracy and status tables from results rows (the end-of-run summary)."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from rich.console import Console
from rich.table import Table

from harness.outcome import Status


@dataclass(frozen=True)
class DomainSummary:
    domain: str
    tasks: int
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


def summarize(rows: list[dict[str, Any]]) -> list[DomainSummary]:
    """One summary per domain, in name order, then `all` when there is more than one domain."""
    domains = sorted({row["domain"] for row in rows})
    summaries = [_summarize(domain, [row for row in rows if row["domain"] == domain]) for domain in domains]
    if len(domains) > 1:
        summaries.append(_summarize("all", rows))
    return summaries


def _summarize(domain: str, rows: list[dict[str, Any]]) -> DomainSummary:
    count = len(rows)

    def accuracy(key: str) -> float:
        return sum(row[key] == "correct" for row in rows) / count if count else 0.0

    costs = [row["cost_usd"] for row in rows if row.get("cost_usd") is not None]
    order = [status.value for status in Status]
    statuses = Counter(row["status"] for row in rows)
    return DomainSummary(
        domain=domain,
        tasks=count,
        correct=sum(row["verdict"] == "correct" for row in rows),
        accuracy_strict=accuracy("verdict_strict"),
        accuracy_default=accuracy("verdict"),
        accuracy_lenient=accuracy("verdict_lenient"),
        statuses={status: statuses[status] for status in order if statuses[status]},
        mean_turns=sum(row["turns"] for row in rows) / count if count else 0.0,
        total_time_s=round(sum(row["duration_s"] for row in rows), 3),
        input_tokens=sum(row["input_tokens"] for row in rows),
        output_tokens=sum(row["output_tokens"] for row in rows),
        cost_usd=round(sum(costs), 6) if costs else None,
    )


def summary_to_dict(summaries: list[DomainSummary]) -> dict[str, Any]:
    return {"domains": [asdict(summary) for summary in summaries]}


def print_table(summaries: list[DomainSummary], console: Console, title: str) -> None:
    table = Table(title=title)
    columns = ("domain", "tasks", "correct", "strict", "default", "lenient", "statuses", "mean turns", "tokens", "cost",
               "time")  # fmt: skip
    for column in columns:
        table.add_column(column, justify="left" if column in ("domain", "statuses") else "right")
    for summary in summaries:
        table.add_row(
            summary.domain,
            str(summary.tasks),
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
