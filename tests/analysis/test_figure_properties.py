"""What a reviewer checks by eye, checked on the drawn figures: no two texts overlap at the default size, counts
on whole-number axes from zero, intervals drawn and written, one colour per model in every figure, an axis
from the data, PDF beside PNG. Scenarios: one model, many models, all-zero data, all answers at turn 1."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pytest

from harness.analysis import paper_plots, plots
from harness.analysis.figure_style import save_figure
from harness.analysis.uncertainty import clustered_mean
from harness.diagnostics.failure_modes import MODES, PAPER_MODES

ONE = ["qwen2.5-7b-instruct"]
MANY = ["gpt-5", "claude-sonnet-4.5", "gemini-2.5-pro", "deepseek-v3.1", "qwen3-235b-a22b", "llama-3.3-70b"]
DOMAINS = ["finance", "law", "medicine", "energy", "education", "government"]


@pytest.fixture
def drawn(monkeypatch) -> list[Any]:
    """The figures the plot functions draw, kept open (drawn at their saved size) instead of saved."""
    figures: list[Any] = []

    def keep(figure: Any, path: Path) -> None:
        figure.canvas.draw()
        figures.append(figure)

    monkeypatch.setattr(plots, "save_figure", keep)
    monkeypatch.setattr(paper_plots, "save_figure", keep)
    yield figures
    for figure in figures:
        plt.close(figure)


def _accuracies(models: list[str], domains: list[str], right: int) -> dict:
    return {(m, d): clustered_mean({t: [t < right, t < right] for t in range(12)}) for m in models for d in domains}


def _shares(models: list[str], value: float) -> dict:
    return {m: dict.fromkeys(PAPER_MODES, value) for m in models}


def _residual_table(models: list[str], domains: list[str]) -> dict:
    table = {(m, d): (i + j) % 5 / 5 for i, m in enumerate(models) for j, d in enumerate(domains)}
    return {**table, **{(m, "all"): 0.4 for m in models}}


SCENARIOS = {
    "accuracy, one model": lambda: plots.accuracy_plot(_accuracies(ONE, DOMAINS[:2], 5), ONE, DOMAINS[:2], Path("x")),
    "accuracy, many models": lambda: plots.accuracy_plot(_accuracies(MANY, DOMAINS, 7), MANY, DOMAINS, Path("x")),
    "accuracy, all wrong": lambda: plots.accuracy_plot(  # two tasks per domain, both wrong
        {(ONE[0], d): clustered_mean({"a": [False], "b": [False]}) for d in DOMAINS}, ONE, DOMAINS, Path("x")
    ),
    "failure modes, none": lambda: plots.failure_mode_plot({ONE[0]: Counter()}, ONE, Path("x")),
    "failure modes, many models": lambda: plots.failure_mode_plot(
        {m: Counter({mode: 3 * i + 1 for i, mode in enumerate(MODES)}) for m in MANY}, MANY, Path("x")
    ),
    "residuals, one model": lambda: paper_plots.residual_heatmap(
        _residual_table(ONE, DOMAINS[:2]), ONE, [ONE], Path("x")
    ),
    "residuals, many models": lambda: paper_plots.residual_heatmap(
        _residual_table(MANY, DOMAINS), MANY, [MANY[:2], MANY[2:]], Path("x")
    ),
    "radar, many models": lambda: paper_plots.failure_radar(
        _shares(MANY, 0.3), list(PAPER_MODES), [MANY[:2], MANY[2:]], Path("x")
    ),
    "failure bars, all zero": lambda: paper_plots.failure_bars(_shares(ONE, 0.0), list(PAPER_MODES), ONE, Path("x")),
    "failure bars, two models": lambda: paper_plots.failure_bars(
        _shares(MANY[:2], 0.5), list(PAPER_MODES), MANY[:2], Path("x")
    ),
    "turns, all at turn 1": lambda: paper_plots.turn_distribution(
        {ONE[0]: [(1, True), (1, False), (1, True)]}, ONE, Path("x"), {ONE[0]: 200}
    ),
    "turns, many models": lambda: paper_plots.turn_distribution(
        {m: [(t % 17 + 1, t % 3 == 0) for t in range(40)] for m in MANY}, MANY, Path("x"), {}
    ),
}


def _shown_texts(figure: Any) -> list[Any]:
    """Every text the figure draws: titles, axis labels, tick labels inside the view, annotations, legends."""
    texts = [figure._suptitle] if figure._suptitle is not None else []
    texts += [t for legend in figure.legends for t in legend.get_texts()]
    for axes in figure.axes:
        if not axes.get_visible():
            continue
        texts += [axes.title, axes.xaxis.label, axes.yaxis.label, *axes.texts]
        for axis in (axes.xaxis, axes.yaxis):
            low, high = sorted(axis.get_view_interval())
            texts += [tick.label1 for tick in axis.get_major_ticks() if low - 1e-9 <= tick.get_loc() <= high + 1e-9]
        if axes.get_legend() is not None:
            texts += axes.get_legend().get_texts()
    return [t for t in texts if t.get_visible() and t.get_text().strip()]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_no_two_texts_overlap_at_the_default_size(drawn, scenario):
    SCENARIOS[scenario]()
    (figure,) = drawn
    renderer = figure.canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer).shrunk(0.98, 0.98)) for t in _shown_texts(figure)]
    overlapping = [(a, b) for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2) if box_a.overlaps(box_b)]
    assert not overlapping


@pytest.mark.parametrize("scenario", ["failure modes, none", "failure modes, many models"])
def test_failure_counts_are_on_a_whole_number_axis_from_zero(drawn, scenario):
    SCENARIOS[scenario]()
    axes = drawn[0].axes[0]
    low, high = axes.get_xlim()
    shown = [tick for tick in axes.get_xticks() if low <= tick <= high]
    assert low == 0 and high >= 1 and shown[0] == 0 and len(shown) >= 2
    assert all(float(tick).is_integer() for tick in shown)


def test_a_turn_histogram_with_every_answer_at_turn_1_is_drawn_on_a_short_whole_number_axis(drawn):
    SCENARIOS["turns, all at turn 1"]()
    axes = drawn[0].axes[0]
    assert axes.get_xlim() == (0.4, 5.6)  # turns 1-5, not 1-200: the bar at turn 1 is a fifth of the width
    assert "budget 200 turns" in axes.get_xlabel()
    low, high = axes.get_ylim()
    assert low == 0 and all(float(t).is_integer() for t in axes.get_yticks() if low <= t <= high)
    assert max(patch.get_x() + patch.get_width() for patch in axes.patches) / 5.6 > 0.2


def test_an_all_wrong_domain_shows_an_interval_that_is_drawn_and_written(drawn):
    SCENARIOS["accuracy, all wrong"]()
    axes = drawn[0].axes[0]
    whiskers = [c for c in axes.containers if type(c).__name__ == "ErrorbarContainer"]
    (segments,) = [whisker.lines[2][0].get_segments() for whisker in whiskers]
    assert all(segment[0][1] == 0 and segment[1][1] > 50 for segment in segments)  # two tasks: not [0, 0]
    assert [t.get_text() for t in axes.texts] == ["0%\n[0, 66]"] * len(DOMAINS)
    assert [t.get_text().split("\n")[1] for t in axes.get_xticklabels()] == ["n=2 tasks"] * len(DOMAINS)


def _colour_of(figure: Any, model: str) -> tuple[float, ...]:
    for axes in figure.axes:
        for container in axes.containers:
            if container.get_label() == model:
                return tuple(container.patches[0].get_facecolor()[:3])
        for line in axes.get_lines():
            if line.get_label() == model:
                return tuple(plt.matplotlib.colors.to_rgb(line.get_color()))
    raise AssertionError(f"{model} not drawn")


def test_a_model_has_one_colour_in_every_figure(drawn):
    for scenario in ("accuracy, many models", "failure modes, many models", "radar, many models"):
        SCENARIOS[scenario]()
    paper_plots.failure_bars(_shares(MANY, 0.5), list(PAPER_MODES), MANY, Path("x"))
    for model in MANY:
        assert len({_colour_of(figure, model) for figure in drawn}) == 1, model
    assert len({_colour_of(drawn[0], model) for model in MANY}) == len(MANY)  # and no two models share one
    # the radar's second panel does not start the colours over
    assert _colour_of(drawn[2], MANY[2]) != _colour_of(drawn[2], MANY[0])


def test_every_figure_is_written_as_png_and_pdf(tmp_path):
    figure, axes = plt.subplots()
    axes.set_title("t")
    save_figure(figure, tmp_path / "figure.png")
    assert (tmp_path / "figure.png").read_bytes().startswith(b"\x89PNG")
    assert (tmp_path / "figure.pdf").read_bytes().startswith(b"%PDF")
