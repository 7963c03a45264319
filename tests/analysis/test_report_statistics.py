"""The report's statistics: clustered intervals, pass@k and pass^k, paired differences, spread and tiers."""

from __future__ import annotations

import csv
import random

import pytest

from harness.analysis.comparison import paired_difference
from harness.analysis.stats import wilson_interval
from harness.analysis.tiers import find_tiers, spread
from harness.analysis.uncertainty import (
    clustered_mean,
    mean_pass_at_k,
    mean_pass_hat_k,
    pass_at_k,
    pass_hat_k,
    verdict_flip_share,
)
from harness.cli.main import main
from tests.analysis.test_report_and_viewer import run_all, two_domain_project


def test_clustered_interval_equals_statsmodels_cluster_robust_ols():
    import numpy as np
    import statsmodels.api as sm

    generator = random.Random(3)
    outcomes = {
        task: [generator.random() < p for _ in range(generator.randint(1, 4))]
        for task, p in enumerate(generator.random() for _ in range(40))
    }
    y = np.array([float(v) for values in outcomes.values() for v in values])
    groups = np.array([task for task, values in outcomes.items() for _ in values])
    fit = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    estimate = clustered_mean(outcomes)
    assert estimate.mean == pytest.approx(fit.params[0])
    assert estimate.standard_error == pytest.approx(fit.bse[0], rel=1e-9)
    low, high = fit.conf_int(alpha=0.05)[0]
    assert (estimate.low, estimate.high) == (pytest.approx(low), pytest.approx(high))
    assert (estimate.tasks, estimate.episodes) == (40, len(y))


def test_clustered_interval_is_wider_than_one_that_ignores_clustering():
    together = {task: [task % 2 == 0] * 3 for task in range(20)}  # epochs of a task agree: 20 clusters, not 60
    alone = {task: [task % 2 == 0] for task in range(60)}
    assert clustered_mean(together).standard_error > 1.5 * clustered_mean(alone).standard_error


def test_an_interval_without_spread_is_wilsons_over_the_tasks_never_zero_width():
    all_wrong = clustered_mean({"a": [False], "b": [False]})  # the clustered SE is 0: no spread to estimate
    assert all_wrong.mean == all_wrong.low == 0.0 and all_wrong.standard_error == 0.0
    assert all_wrong.high == pytest.approx(wilson_interval(0, 2)[1]) and all_wrong.high > 0.6
    one_task = clustered_mean({"a": [True, True, True]})  # three epochs of one task are one draw, not three
    assert one_task.high == 1.0 and one_task.low == pytest.approx(wilson_interval(1, 1)[0])
    halves = clustered_mean({t: [True, False] for t in range(4)})  # every task at 50%: the SE is 0 again
    assert (halves.low, halves.high) == pytest.approx(wilson_interval(2, 4))
    many = clustered_mean({t: [False] for t in range(400)})
    assert many.high < 0.01  # many tasks all wrong: the interval narrows as it should


def test_pass_at_k_and_pass_hat_k_by_hand():
    assert pass_at_k(3, 1, 1) == pytest.approx(1 / 3)
    assert pass_at_k(3, 1, 2) == pytest.approx(1 - 1 / 3)  # C(2,2)/C(3,2) = 1/3 of pairs miss the correct one
    assert pass_at_k(3, 0, 3) == 0.0 and pass_at_k(3, 2, 2) == 1.0
    assert pass_hat_k(3, 2, 2) == pytest.approx(1 / 3) and pass_hat_k(3, 3, 3) == 1.0 and pass_hat_k(3, 2, 3) == 0.0
    outcomes = {"a": [True, False, False], "b": [True, True, False], "c": [False, False, False]}
    assert mean_pass_at_k(outcomes, 2) == pytest.approx((2 / 3 + 1 + 0) / 3)
    assert mean_pass_hat_k(outcomes, 2) == pytest.approx((0 + 1 / 3 + 0) / 3)
    assert mean_pass_at_k(outcomes, 4) is None
    assert verdict_flip_share(outcomes) == pytest.approx(2 / 3)


def test_paired_difference_permutation_p_is_exact_and_interval_brackets_the_difference():
    first = {"a": [True], "b": [True], "c": [True], "d": [False]}
    second = {"a": [False], "b": [False], "c": [False], "d": [False], "e": [True]}
    result = paired_difference(first, second)
    assert result is not None and result.tasks == 4
    assert result.difference == pytest.approx(0.75)
    # signs of the three non-zero differences: only +++ reaches 0.75: P = 2/16 one-sided, twice that two-sided
    assert result.p_value == pytest.approx(0.25)
    assert result.low <= 0.75 <= result.high and result.low >= -1 and result.high <= 1
    assert paired_difference(first, second) == result  # a fixed seed: the same report twice
    same = paired_difference(first, first)
    assert same is not None and (same.difference, same.p_value, same.low, same.high) == (0.0, 1.0, 0.0, 0.0)
    assert paired_difference(first, {"z": [True]}) is None


def test_spread_and_tiers():
    found = spread({"law": 0.8, "fin": 0.3, "tech": 0.5})
    assert found is not None and (found.best_domain, found.worst_domain) == ("law", "fin")
    assert found.spread == pytest.approx(0.5)
    tiers = find_tiers({"a": 0.80, "b": 0.78, "c": 0.50, "d": 0.47, "e": 0.45})
    assert tiers is not None and tiers.groups == [["a", "b"], ["c", "d", "e"]]
    assert tiers.gaps == [pytest.approx(0.28)]
    three = find_tiers({"a": 0.9, "b": 0.89, "c": 0.6, "d": 0.58, "e": 0.3, "f": 0.29})
    assert three is not None and three.groups == [["a", "b"], ["c", "d"], ["e", "f"]]
    assert find_tiers({"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6}) is None  # equal gaps: no gap stands out
    assert find_tiers({"a": 0.9, "b": 0.1}) is None  # a lone model is no tier


def test_report_names_each_method_and_writes_the_statistics(mini):
    two_domain_project(mini)
    good = run_all(mini, ["<answer>42</answer>"], "good")
    bad = run_all(mini, ["<answer>41</answer>"], "bad")
    out = mini.root / "report"
    assert main(["report", str(good.run_dir), str(bad.run_dir), "--out", str(out)]) == 0
    mini.capsys.readouterr()
    markdown = (out / "report.md").read_text()
    assert "clustered standard error" in markdown and "Cameron & Miller 2015" in markdown
    assert "scipy.stats.permutation_test" in markdown and "Spread over domains and tiers" in markdown
    intervals = list(csv.DictReader((out / "intervals.csv").open()))
    assert {row["tasks"] for row in intervals} == {"1", "2", "3"} and len(intervals) == 6
    [paired] = list(csv.DictReader((out / "paired_means.csv").open()))
    assert abs(float(paired["difference"])) == pytest.approx(2 / 3) and paired["tasks"] == "3"


def test_a_paired_comparison_on_one_shared_task_has_no_test_but_no_error():
    from harness.analysis.comparison import paired_difference

    first = {("d", "t1"): [True]}  # task -> its epochs' correctness
    second = {("d", "t1"): [False]}
    found = paired_difference(first, second)
    assert found is not None and (found.tasks, found.difference, found.p_value) == (1, 1.0, 1.0)
