"""MuDABench's Figure 4: each episode's process accuracy against its document set's tokens, with a binomial logit
fit on the log tokens and the split as a fixed effect (the paper's "logit model with fixed question type effects",
Section 5.3) and its 95% band."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt

from harness.analysis.figure_style import save_figure
from harness.analysis.judged_episode import JudgedEpisode
from harness.analysis.mudabench_tables import SPLITS

_POINTS = 50


def logit_fit(episodes: Sequence[JudgedEpisode]) -> tuple[list[float], object] | None:
    """The fit's coefficients (intercept, log tokens, one per split after the first) and its result; None when it
    cannot be fitted (fewer than three episodes, one set size, or a separating fit: every share 0 or 1)."""
    import numpy as np
    import statsmodels.api as sm

    kept = [e for e in episodes if e.share is not None and e.tokens > 0]
    splits = [split for split in SPLITS if any(e.split == split for e in kept)]
    if len(kept) < 3 or len({e.tokens for e in kept}) < 2:
        return None
    design = np.array([[1.0, math.log(e.tokens), *(float(e.split == s) for s in splits[1:])] for e in kept])
    shares = np.array([e.share for e in kept])
    weights = np.array([sum(cells for _, _, cells in e.rows) for e in kept], dtype=float)
    separation = sm.tools.sm_exceptions.PerfectSeparationWarning
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", separation)  # every share 0 or 1, or split apart: no curve to draw
            warnings.simplefilter("ignore", RuntimeWarning)
            result = sm.GLM(shares, design, family=sm.families.Binomial(), var_weights=weights).fit()
    except (ValueError, np.linalg.LinAlgError, separation, sm.tools.sm_exceptions.PerfectSeparationError):
        return None
    coefficients = [float(value) for value in result.params]
    if not result.converged or not all(math.isfinite(value) for value in coefficients):
        return None
    return coefficients, result


def tokens_figure(episodes: Sequence[JudgedEpisode], out: Path) -> str:
    """mudabench_tokens.png (and .pdf) and its Markdown."""
    import numpy as np

    figure, axes = plt.subplots(figsize=(6.4, 3.8))
    splits = [split for split in SPLITS if any(e.split == split for e in episodes)]
    for split, colour in zip(splits, ("tab:blue", "tab:orange"), strict=False):
        mine = [e for e in episodes if e.split == split and e.share is not None and e.tokens > 0]
        axes.scatter(
            [e.tokens for e in mine], [e.share or 0.0 for e in mine], s=14, alpha=0.6, color=colour, label=split
        )
    fit = logit_fit(episodes)
    said = "not fitted: fewer than two set sizes, or every share 0 or 1"
    if fit is not None:
        coefficients, result = fit
        tokens = [e.tokens for e in episodes if e.tokens > 0]
        grid = np.exp(np.linspace(math.log(min(tokens)), math.log(max(tokens)), _POINTS))
        for place, (split, colour) in enumerate(zip(splits, ("tab:blue", "tab:orange"), strict=False)):
            rows = np.array([[1.0, math.log(t), *(float(place == k) for k in range(1, len(splits)))] for t in grid])
            band = result.get_prediction(rows).summary_frame(alpha=0.05)  # type: ignore[attr-defined]
            axes.plot(grid, band["mean"], color=colour, label=f"logit fit, {split}")
            axes.fill_between(grid, band["mean_ci_lower"], band["mean_ci_upper"], color=colour, alpha=0.15)
        said = f"log-tokens coefficient {coefficients[1]:+.3f}"
    axes.set_xscale("log")
    axes.set_ylim(0, 1)
    axes.set_xlabel("document set's tokens")
    axes.set_ylabel("process accuracy")
    axes.set_title("Process accuracy against the set's tokens (the paper's Figure 4)")
    axes.legend(fontsize="small")
    save_figure(figure, out / "mudabench_tokens.png")
    return (
        "### Process accuracy against the document set's tokens (Figure 4)\n\n"
        f"Each episode's stated cells over its cells; the curves a binomial logit fit on the log tokens with the "
        f"split as a fixed effect, 95% band ({said}).\n\n![process accuracy against tokens](mudabench_tokens.png)\n\n"
    )
