"""Per-domain accuracy and status tables from results rows (the end-of-run summary)."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from harness.analysis.stats import wilson_interval
from harness.analysis.type_metrics import overall, type_metrics
from harness.core.status import INTERRUPTED, Status
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

    def macro_accuracy(self, mode: str = "default") -> float | None:
        """The one overall number of a typed task set (`type_metrics.overall`: the mean over types, a scored
        type by its mean scaled score, as FinDocMRE); None when no task has a type."""
        return overall(self.rows, mode)

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
    """Tasks with a row (finished, or ended by a failure), each counted once whatever its epochs."""
    episodes: int
    """Episodes with a row: tasks × their epochs (`--epochs`)."""
    pending: int
    """Selected episodes without a row yet (the run was interrupted or stopped at --max-cost)."""
    correct: int
    accuracy_strict: float | None
    """None (shown as –, written as null) when no episode of the domain was graded: every one ended in a failure of
    the provider, the sandbox or ours, or was cancelled, so the run measured nothing (it read as 0.0%)."""
    accuracy_default: float | None
    accuracy_lenient: float | None
    statuses: dict[str, int]
    mean_turns: float
    agent_time_s: float
    """The episodes' own time (`duration_s`) summed: more than the wall time when episodes ran side by side."""
    failed_calls_s: float
    """The failed model-call attempts and the backoff waits after them, summed (not the agent's time)."""
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    accuracy_by_type: dict[str, float] = field(default_factory=dict)
    """Per task type (tasks with a `type` only) its 0-1 metric as `macro_accuracy` counts it: an objective type's
    default-mode accuracy, a scored type's mean score scaled by its range (`type_metrics.type_metrics`)."""
    macro_accuracy: float | None = None
    """The overall number over task types (`type_metrics.overall`): the mean of `accuracy_by_type` when no type is
    scored; a scored type counts by its mean scaled score, as in report.md's overall score. None without types."""
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
    graded = any(row.status not in INTERRUPTED for row in rows)
    return DomainSummary(
        domain=domain,
        tasks=len({row.key for row in rows}),
        episodes=cell.n,
        pending=pending,
        correct=cell.correct(),
        accuracy_strict=cell.accuracy("strict") if graded else None,
        accuracy_default=cell.accuracy() if graded else None,
        accuracy_lenient=cell.accuracy("lenient") if graded else None,
        statuses={status.value: statuses[status.value] for status in Status if statuses[status.value]},
        mean_turns=cell.mean_turns(),
        agent_time_s=round(sum(row.duration_s for row in rows), 3),
        failed_calls_s=round(sum(row.failed_attempts_s + row.retry_wait_s for row in rows), 3),
        input_tokens=cell.input_tokens(),
        output_tokens=cell.output_tokens(),
        cost_usd=None if cost is None else round(cost, 6),
        accuracy_by_type={name: round(value, 6) for name, (_, value, _) in type_metrics(rows).items()},
        macro_accuracy=_rounded(cell.macro_accuracy()) if graded else None,
        judge_cost_usd=_rounded(cell.judge_cost()),
    )


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def summary_to_dict(summaries: list[DomainSummary]) -> dict[str, Any]:
    return {"domains": [asdict(summary) for summary in summaries]}
