"""Per task type, the metric FinDocMRE reports, and their mean: the one overall number of a typed task set.

An objective type counts by its accuracy; a scored type (the `score` grader) by its mean score scaled to 0-1 by
its range, an episode without a score (no answer, a judge error) at the range's low end. The overall number is
the unweighted mean over the types. Without scored types it is the plain macro average of the accuracies.
"""

from __future__ import annotations

from harness.records.results import ResultRow


def type_metrics(rows: list[ResultRow], mode: str = "default") -> dict[str, tuple[str, float, int]]:
    """Type -> (`accuracy` or `score`, its value on 0-1, episodes), over the rows whose task has a type."""
    by_type: dict[str, list[ResultRow]] = {}
    for row in rows:
        if row.task_type is not None:
            by_type.setdefault(row.task_type, []).append(row)
    metrics: dict[str, tuple[str, float, int]] = {}
    for name, mine in sorted(by_type.items()):
        ranges = [row.score_range for row in mine if row.score_range is not None]
        if ranges:
            scaled = [_scaled(row.score, row.score_range or ranges[0]) for row in mine]
            metrics[name] = ("score", sum(scaled) / len(scaled), len(mine))
        else:
            metrics[name] = ("accuracy", sum(row.is_correct(mode) for row in mine) / len(mine), len(mine))
    return metrics


def overall(rows: list[ResultRow], mode: str = "default") -> float | None:
    """The mean over types of their 0-1 metric; None without typed rows."""
    metrics = type_metrics(rows, mode)
    return sum(value for _, value, _ in metrics.values()) / len(metrics) if metrics else None


def _scaled(score: float | None, bounds: list[int]) -> float:
    low, high = bounds
    return 0.0 if score is None else (score - low) / (high - low)
