"""The paper's table and figures from runs: the accuracy table (Markdown and LaTeX), the residual heatmap,
the failure-mode radar (bars for fewer than three models) and the submission-turn distribution."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from harness.analysis.accuracy_table import latex_table, markdown_table
from harness.analysis.runs import ModelRow
from harness.analysis.summary import ALL
from harness.analysis.tiers import find_tiers
from harness.core.safe_text import markdown_cell
from harness.core.status import Status
from harness.diagnostics.failure_modes import PAPER_MODES
from harness.records.results import TaskKey

QuestionModes = dict[str, dict[TaskKey, set[str]]]
"""Model -> question (domain, task) -> the failure modes its wrong episodes carry."""


def rule_modes(rows: list[ModelRow]) -> QuestionModes:
    """The modes the offline rule gave (each row's `failure_mode`), per model and question: only rows with an
    evidence record, the rule's input (a zero-shot episode has none: no sandbox, no commands)."""
    found: QuestionModes = {}
    for entry in rows:
        if not entry.row.evidence_method:
            continue
        modes = found.setdefault(entry.model, {}).setdefault(entry.row.key, set())
        if entry.row.failure_mode in PAPER_MODES:
            modes.add(entry.row.failure_mode)
    return found


def _mode_shares(modes: QuestionModes, models: list[str]) -> dict[str, dict[str, float]]:
    """Model -> mode -> the share of its questions implicated in the mode (questions with an episode of it)."""
    shares = {}
    for model in models:
        questions = modes.get(model, {})
        total = len(questions) or 1
        shares[model] = {mode: sum(mode in found for found in questions.values()) / total for mode in PAPER_MODES}
    return shares


def figures_section(
    rows: list[ModelRow],
    accuracy: Mapping[tuple[str, str], float],
    models: list[str],
    out: Path,
    modes: QuestionModes,
    source: str,
    measured: Sequence[str],
    turn_limits: Mapping[str, int] | None = None,
) -> str:
    """Writes accuracy_table.md / .tex, residuals.png, failure_radar.png (failure_bars.png for fewer than three
    models) and submission_turns.png (MODELS best first); returns their Markdown. SOURCE names where the failure
    modes come from, MEASURED the modes it gives (the only ones drawn); a model MODES does not hold has none
    measured and is left out of the failure chart, named under it. TURN_LIMITS: each model's `--max-turns`, the
    turn histogram's axis."""
    from harness.analysis.paper_plots import (
        RADAR_FROM,
        failure_bars,
        failure_radar,
        residual_heatmap,
        turn_distribution,
    )

    tiers = find_tiers({model: accuracy[(model, ALL)] for model in models})
    groups = tiers.groups if tiers is not None else [models]
    markdown = markdown_table(accuracy, models)
    (out / "accuracy_table.md").write_text(markdown, encoding="utf-8")
    (out / "accuracy_table.tex").write_text(latex_table(accuracy, models), encoding="utf-8")
    residual_heatmap(accuracy, models, groups, out / "residuals.png")
    charted = [model for model in models if model in modes]
    tiered = [groups[0], [m for group in groups[1:] for m in group]] if len(groups) > 1 else [models]
    panels = [kept for group in tiered if (kept := [model for model in group if model in modes])]
    failure_lines = []
    if len(charted) >= RADAR_FROM:
        failure_lines.append("![failure modes](failure_radar.png)")
        failure_radar(_mode_shares(modes, charted), list(measured), panels, out / "failure_radar.png")
    elif charted:
        failure_lines.append("![failure modes](failure_bars.png)")
        failure_bars(_mode_shares(modes, charted), list(measured), charted, out / "failure_bars.png")
    if unmeasured := [model for model in models if model not in modes]:
        failure_lines.append(
            "Not measured, so not drawn (no evidence record: a zero-shot run, or every episode failed before its "
            "sandbox; or no judge labels): " + ", ".join(f"`{markdown_cell(model)}`" for model in unmeasured) + "."
        )
    turns = {
        model: [(r.row.turns, r.row.is_correct()) for r in rows if r.model == model and r.row.status is Status.ANSWERED]
        for model in models
    }
    turn_distribution(turns, models, out / "submission_turns.png", turn_limits or {})
    return "\n".join(
        [
            "## Accuracy by domain (% over all episodes; models by overall accuracy; bold best, underlined second)",
            "",
            markdown,
            "Also as LaTeX: `accuracy_table.tex`.",
            "",
            "![residuals](residuals.png)",
            "",
            f"## Failure modes by question ({source})",
            "",
            *(part for line in failure_lines for part in (line, "")),
            "![turn of submission](submission_turns.png)",
            "",
        ]
    )
