"""Accuracy with honest uncertainty when tasks are run several times (epochs): pure functions.

An evaluation's episodes are not independent draws: the epochs of one task share its difficulty. Intervals
here treat the task as the unit of sampling (a cluster), as Miller (2024), "Adding Error Bars to Evals: A
Statistical Approach to Language Model Evaluations" (arXiv:2411.00640) recommends.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.analysis.stats import Z_95, wilson_interval

CLUSTERED_SE = (
    "clustered standard error (clusters = tasks; the sandwich estimator of an intercept-only regression with "
    "the G/(G-1) correction, as statsmodels' cov_type='cluster'; Cameron & Miller 2015, 'A Practitioner's "
    "Guide to Cluster-Robust Inference'; Miller 2024, arXiv:2411.00640), mean ± 1.96 SE, clipped to [0, 1]; "
    "where that standard error is zero (one task, or every task with the same share correct, as at 0% or "
    "100%) the 95% Wilson interval with the tasks as the trials instead, which stays wide for few tasks"
)
PASS_AT_K = (
    "pass@k: the unbiased estimator 1 - C(n-c, k) / C(n, k) per task, averaged (Chen et al. 2021, arXiv:2107.03374)"
)
PASS_HAT_K = (
    "pass^k: C(c, k) / C(n, k) per task (all k of k draws correct), averaged (Yao et al. 2024, τ-bench, "
    "arXiv:2406.12045)"
)

Outcomes = Mapping[Any, Sequence[bool]]
"""Task key -> the correctness of each of its episodes (one per epoch)."""


@dataclass(frozen=True)
class Estimate:
    """A mean over episodes with its clustered 95% interval."""

    mean: float
    low: float
    high: float
    standard_error: float
    tasks: int
    """Clusters: tasks with at least one episode."""
    episodes: int


def clustered_mean(outcomes: Outcomes, z: float = Z_95) -> Estimate:
    """The mean over all episodes, its interval clustered by task (CLUSTERED_SE)."""
    groups = [list(values) for values in outcomes.values() if values]
    episodes = sum(len(values) for values in groups)
    if not episodes:
        return Estimate(0.0, 0.0, 0.0, 0.0, 0, 0)
    mean = sum(sum(values) for values in groups) / episodes
    tasks = len(groups)
    error = _clustered_error(groups, mean)
    if error == 0.0:
        # no spread to estimate from: a zero-width interval would claim certainty that few tasks cannot give
        low, high = wilson_interval(mean * tasks, tasks, z)
        return Estimate(mean, low, high, error, tasks, episodes)
    return Estimate(mean, max(0.0, mean - z * error), min(1.0, mean + z * error), error, tasks, episodes)


def clustered_value_mean(values: Mapping[Any, Sequence[float]], z: float = Z_95) -> Estimate:
    """The mean of a measure per episode (cost, tokens, seconds; never negative) over all episodes, its interval
    clustered by task as `clustered_mean`'s, clipped at 0; zero width where every task measured the same."""
    groups = [[float(value) for value in group] for group in values.values() if group]
    episodes = sum(len(group) for group in groups)
    if not episodes:
        return Estimate(0.0, 0.0, 0.0, 0.0, 0, 0)
    mean = sum(sum(group) for group in groups) / episodes
    error = _clustered_error(groups, mean)
    return Estimate(mean, max(0.0, mean - z * error), mean + z * error, error, len(groups), episodes)


def _clustered_error(groups: Sequence[Sequence[float]], mean: float) -> float:
    """CLUSTERED_SE's standard error of MEAN, the mean over every value of GROUPS (one group per task)."""
    tasks, episodes = len(groups), sum(len(group) for group in groups)
    if tasks < 2:
        return 0.0
    meat = sum((sum(group) - mean * len(group)) ** 2 for group in groups)
    return math.sqrt(meat * tasks / (tasks - 1)) / episodes


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of k draws without replacement from n episodes (c correct) is correct."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The chance that all k draws without replacement from n episodes (c correct) are correct."""
    return math.comb(c, k) / math.comb(n, k)


def mean_pass_at_k(outcomes: Outcomes, k: int) -> float | None:
    """pass@k averaged over the tasks with at least k episodes; None when none has."""
    counts = [(len(v), sum(v)) for v in outcomes.values() if len(v) >= k]
    return sum(pass_at_k(n, c, k) for n, c in counts) / len(counts) if counts else None


def mean_pass_hat_k(outcomes: Outcomes, k: int) -> float | None:
    """pass^k averaged over the tasks with at least k episodes; None when none has."""
    counts = [(len(v), sum(v)) for v in outcomes.values() if len(v) >= k]
    return sum(pass_hat_k(n, c, k) for n, c in counts) / len(counts) if counts else None


def verdict_flip_share(outcomes: Outcomes) -> float | None:
    """The share of tasks with two or more episodes whose epochs disagree (some correct, some not)."""
    repeated = [v for v in outcomes.values() if len(v) >= 2]
    if not repeated:
        return None
    return sum(0 < sum(v) < len(v) for v in repeated) / len(repeated)


def per_task_means(outcomes: Outcomes) -> dict[Any, float]:
    """Task -> the share of its episodes that are correct."""
    return {key: sum(values) / len(values) for key, values in outcomes.items() if values}
