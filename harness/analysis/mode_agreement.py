"""Judge labels in the report: the failure modes of each question by a judge panel, and how well the offline
rule agrees with the judges on the modes both give (Cohen's kappa)."""

from __future__ import annotations

from collections.abc import Mapping

from harness.analysis.report_figures import QuestionModes
from harness.core.safe_text import markdown_cell
from harness.diagnostics.failure_modes import PAPER_MODES, RULE_MODES
from harness.records.failure_labels import LABELLED, EpisodeLabels

_KAPPA = "Cohen's kappa (Cohen 1960, 'A Coefficient of Agreement for Nominal Scales'): (p_o - p_e) / (1 - p_e)"


def cohen_kappa(first: list[bool], second: list[bool]) -> float | None:
    """Agreement of two raters' yes/no labels beyond chance; None when chance agreement is certain."""
    n = len(first)
    if not n:
        return None
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    p_first, p_second = sum(first) / n, sum(second) / n
    expected = p_first * p_second + (1 - p_first) * (1 - p_second)
    return None if expected == 1 else (observed - expected) / (1 - expected)


def judge_modes(labels: Mapping[str, list[EpisodeLabels]]) -> QuestionModes:
    """Model -> question -> the modes the judges gave any of its wrong episodes (labelled ones only)."""
    found: QuestionModes = {}
    for model, entries in labels.items():
        for entry in entries:
            modes = found.setdefault(model, {}).setdefault((entry.domain, entry.task_id), set())
            if entry.status == LABELLED:
                modes.update(entry.modes)
    return found


def agreement_section(labels: Mapping[str, list[EpisodeLabels]], models: list[str]) -> str:
    lines = [
        "## Failure modes by a judge panel (`annotate`)",
        "",
        "| model | " + " | ".join(PAPER_MODES) + " | labelled | judge errors | judge cost (USD) |",
        "|---|" + "---|" * (len(PAPER_MODES) + 3),
    ]
    for model in models:
        entries = labels.get(model, [])
        labelled = [e for e in entries if e.status == LABELLED]
        counts = [str(sum(mode in e.modes for e in labelled)) for mode in PAPER_MODES]
        costs = [e.cost_usd for e in entries if e.cost_usd is not None]
        cost = f"{sum(costs):.4f}" if costs else "–"
        lines.append(
            f"| {markdown_cell(model)} | " + " | ".join(counts) + f" | {len(labelled)} | "
            f"{len(entries) - len(labelled)} | {cost} |"
        )
    compared = [e for entries in labels.values() for e in entries if e.status == LABELLED]
    lines += [
        "",
        f"Agreement of the offline rule with the judges on the modes both give, over the {len(compared)} "
        f"labelled episodes: {_KAPPA}.",
        "",
        "| mode | both | rule only | judges only | neither | kappa |",
        "|---|---|---|---|---|---|",
    ]
    for mode in RULE_MODES:
        rule = [e.rule_mode == mode for e in compared]
        judged = [mode in e.modes for e in compared]
        pairs = list(zip(rule, judged, strict=True))
        kappa = cohen_kappa(rule, judged)
        lines.append(
            f"| {mode} | {pairs.count((True, True))} | {pairs.count((True, False))} | "
            f"{pairs.count((False, True))} | {pairs.count((False, False))} | "
            f"{'–' if kappa is None else f'{kappa:.3f}'} |"
        )
    return "\n".join([*lines, ""]) + "\n"
