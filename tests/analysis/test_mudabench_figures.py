"""MuDABench's Figure 4 fit: a binomial logit on the log tokens with the split as a fixed effect recovers the
coefficients of shares drawn exactly from such a curve."""

from __future__ import annotations

import math

import pytest

from harness.analysis.mudabench_documents import JudgedEpisode
from harness.analysis.mudabench_figures import logit_fit

TRUE = (3.0, -0.4, -0.7)
"""Intercept, log-tokens slope, the complex split's effect."""


def episode(tokens: int, split: str) -> JudgedEpisode:
    share = 1 / (1 + math.exp(-(TRUE[0] + TRUE[1] * math.log(tokens) + TRUE[2] * (split == "complex"))))
    cells = 1000
    return JudgedEpisode("run", "Workflow 5 chunks", split, (("kind", round(share * cells), cells),), tokens)


def test_the_logit_fit_recovers_the_curve_its_shares_came_from():
    episodes = [
        episode(tokens, split) for tokens in (20_000, 80_000, 400_000, 2_000_000) for split in ("simple", "complex")
    ]
    fit = logit_fit(episodes)
    assert fit is not None
    assert fit[0] == pytest.approx(TRUE, abs=0.02)


def test_one_set_size_or_a_separating_set_is_not_fitted():
    assert logit_fit([episode(50_000, "simple"), episode(50_000, "complex"), episode(50_000, "simple")]) is None
    every = [JudgedEpisode("run", "-", "simple", (("kind", 4, 4),), tokens) for tokens in (10_000, 90_000, 700_000)]
    assert logit_fit(every) is None
