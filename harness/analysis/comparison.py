"""Paired comparison of two models on the tasks both ran, per-task mean correctness (epochs averaged).

The difference of means gets a paired bootstrap interval over tasks and a paired permutation (sign-flip)
p-value, both from scipy.stats; McNemar's exact test (harness/analysis/stats.py) stays for one epoch.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.analysis.uncertainty import Outcomes, per_task_means

_RESAMPLES = 10_000
SEED = 20_261_201
"""Fixed, so the same runs give the same report."""
METHOD = (
    "paired over shared tasks, d = per-task mean correctness of the first minus the second; 95% percentile "
    f"bootstrap over tasks (Efron & Tibshirani 1993; scipy.stats.bootstrap, {_RESAMPLES:,} resamples) and a "
    "two-sided paired permutation test flipping the sign of each task's d (Good 2005, 'Permutation, Parametric "
    "and Bootstrap Tests of Hypotheses'; scipy.stats.permutation_test, exact when 2^tasks <= "
    f"{_RESAMPLES:,}); McNemar's exact test on one-epoch verdicts"
)


@dataclass(frozen=True)
class _PairedDifference:
    """How much better the first model did than the second on the tasks both ran."""

    tasks: int
    first_mean: float
    second_mean: float
    difference: float
    """first_mean - second_mean, the mean over shared tasks of the per-task differences."""
    low: float
    high: float
    p_value: float


def paired_difference(first: Outcomes, second: Outcomes) -> _PairedDifference | None:
    """The paired difference on the shared tasks; None when the models share no task."""
    import numpy as np
    from scipy import stats

    a, b = per_task_means(first), per_task_means(second)
    shared = sorted(set(a) & set(b), key=repr)
    if not shared:
        return None
    differences = np.array([a[key] - b[key] for key in shared])
    mean_first = float(np.mean([a[key] for key in shared]))
    mean_second = float(np.mean([b[key] for key in shared]))
    difference = float(differences.mean())
    if len(shared) < 2 or np.all(differences == differences[0]):
        low = high = difference
    else:
        interval = stats.bootstrap(
            (differences,),
            np.mean,
            n_resamples=_RESAMPLES,
            method="percentile",
            confidence_level=0.95,
            random_state=SEED,
        ).confidence_interval
        low, high = float(interval.low), float(interval.high)
    if not np.any(differences) or len(shared) < 2:  # no difference, or one task: nothing to test
        p_value = 1.0
    else:
        test = stats.permutation_test(
            (differences,),
            np.mean,
            permutation_type="samples",
            n_resamples=_RESAMPLES,
            alternative="two-sided",
            random_state=SEED,
        )
        p_value = float(test.pvalue)
    return _PairedDifference(len(shared), mean_first, mean_second, difference, low, high, min(1.0, p_value))
