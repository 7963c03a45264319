"""The cost–accuracy frontier (as HAL's leaderboard draws it): every run placed by what a task costs it and how
often it is right, and the runs no other run beats on both: pure functions.

A run (a report label: an agent or solver, a model and its settings) is a point: its accuracy over all episodes
and the mean of a measure per episode (the cost in USD, the tokens, or the agent's seconds), each with its 95%
interval clustered by task (`uncertainty`). A run is on the frontier when no other run is at most as dear and at
least as accurate, and better on one of the two (Pareto); ties are all on it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.analysis.report_statistics import outcomes
from harness.analysis.runs import ModelRow, run_key
from harness.analysis.uncertainty import Estimate, clustered_mean, clustered_value_mean
from harness.records.results import ResultRow
from harness.records.run_folder import RunFolder


@dataclass(frozen=True)
class Axis:
    """A measure of what a task takes, the frontier's x axis."""

    name: str
    title: str
    """The axis label: what is measured per task, and in what unit."""
    measure: Callable[[ResultRow], float | None]
    """The episode's value; None when the run did not record it (a model without a price)."""
    missing: str
    """Why a run without the measure is not placed, as the report says it."""
    recorded_if_zero: bool = True
    """False: a run whose every episode measures 0 did not record the measure (a scripted model's tokens)."""


def _cost(row: ResultRow) -> float | None:
    return None if row.cost_usd is None else float(row.cost_usd)


def _tokens(row: ResultRow) -> float | None:
    return float(row.input_tokens + row.output_tokens)


def _seconds(row: ResultRow) -> float | None:
    return float(row.duration_s)


AXES = (
    Axis("cost", "cost per task (USD)", _cost, "no price for an episode's model calls (`--prices`)"),
    Axis(
        "tokens",
        "tokens per task (input + output)",
        _tokens,
        "no tokens recorded (a scripted or replayed model)",
        False,
    ),
    Axis("time", "agent time per task (s)", _seconds, "no time recorded"),
)
"""Cost first (the leaderboard's axis), then tokens (for runs without a price) and the agent's time."""


@dataclass(frozen=True)
class RunIdentity:
    """What a report label ran: its solver (agent) and model."""

    solver: str
    model: str


@dataclass(frozen=True)
class FrontierPoint:
    """A run on one axis: its accuracy and its measure per task, each with its interval."""

    label: str
    accuracy: Estimate
    per_task: Estimate


@dataclass(frozen=True)
class Frontier:
    """The runs placed on one axis (by the label's order given), those on the frontier, and those left off."""

    axis: Axis
    points: list[FrontierPoint]
    members: list[FrontierPoint]
    """The frontier, cheapest first."""
    not_placed: list[str]


def frontier(rows: Sequence[ModelRow], labels: Sequence[str], axis: Axis) -> Frontier:
    """LABELS' runs on AXIS: a run is placed when each of its episodes has the measure (and, for tokens, some
    episode used any)."""
    points: list[FrontierPoint] = []
    not_placed: list[str] = []
    for label in labels:
        values: dict[tuple[str, str], list[float]] = {}
        for entry in rows:
            if entry.model == label:
                values.setdefault(entry.row.key, []).append(_measured(axis, entry.row))
        measured = [value for group in values.values() for value in group]
        unrecorded = any(math.isnan(value) for value in measured) or not (axis.recorded_if_zero or any(measured))
        if not measured or unrecorded:
            not_placed.append(label)
            continue
        accuracy = clustered_mean(outcomes(list(rows), label))
        points.append(FrontierPoint(label, accuracy, clustered_value_mean(values)))
    return Frontier(axis, points, pareto_members(points), not_placed)


def _measured(axis: Axis, row: ResultRow) -> float:
    value = axis.measure(row)
    return math.nan if value is None else value  # NaN: the episode did not record it


def pareto_members(points: Sequence[FrontierPoint]) -> list[FrontierPoint]:
    """The points no other point dominates (at most as dear and at least as accurate, better on one), cheapest
    first."""
    members = [
        point
        for point in points
        if not any(
            other.per_task.mean <= point.per_task.mean
            and other.accuracy.mean >= point.accuracy.mean
            and (other.per_task.mean < point.per_task.mean or other.accuracy.mean > point.accuracy.mean)
            for other in points
        )
    ]
    return sorted(members, key=lambda point: (point.per_task.mean, -point.accuracy.mean, point.label))


def run_identities(paths: Sequence[Path], names: Mapping[Path, str] | None = None) -> dict[str, RunIdentity]:
    """Label -> its solver and model, from the run folders' run.yaml (an older run or an import: the bash agent,
    or the solver it names). NAMES: as `load_runs`' labels."""
    found: dict[str, RunIdentity] = {}
    for path in paths:
        record = RunFolder(path).read_record()
        label = (names or {}).get(path) or run_key(record)
        found.setdefault(label, RunIdentity(record.config.solver or "bash-agent", str(record.config.model)))
    return found
