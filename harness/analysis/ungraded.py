"""Runs without a graded episode: every episode ended in a failure of the provider, the sandbox or ours, or was
cancelled. Such a run measured nothing of its model, so the report gives it no accuracy, no interval and no place
in a figure (it read as a 0.0% model beside the real ones), and says why instead."""

from __future__ import annotations

from collections import Counter

from harness.analysis.runs import ModelRow
from harness.core.status import INTERRUPTED


def ungraded_runs(rows: list[ModelRow]) -> dict[str, Counter[str]]:
    """Run label -> how its episodes ended, for the labels none of whose episodes was graded."""
    ended: dict[str, Counter[str]] = {}
    graded: set[str] = set()
    for entry in rows:
        if entry.row.status in INTERRUPTED:
            ended.setdefault(entry.model, Counter())[entry.row.status.value] += 1
        else:
            graded.add(entry.model)
    return {model: statuses for model, statuses in ended.items() if model not in graded}


def ungraded_line(model: str, statuses: Counter[str]) -> str:
    """`LABEL: no graded episodes: all 3 ended in errors (model_error 3); ...`, for the console and the report."""
    counts = ", ".join(f"{status} {count}" for status, count in sorted(statuses.items()))
    return (
        f"{model}: no graded episodes: all {sum(statuses.values())} ended in errors or were cancelled ({counts}); "
        "no accuracy, no interval, not drawn (see its results.jsonl's `detail`; a resume runs them again)"
    )
