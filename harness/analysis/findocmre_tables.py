"""The FinDocMRE paper's tables from a run's rows, in its layout (docs/guide/findocmre.md §5).

Table 3: per type, accuracy (%) for the objective types and the open-ended mean score raw (0-5) with its x20 in
brackets, and the Overall Score: their unweighted mean with the open-ended score on 0-100 (Section 4.2); Tables
10-11 the same per language. Tables 4, 5 and 12-13: "accuracy / score" per reasoning type, chart count and
financial domain, the accuracy over the group's objective questions and the score the mean over its open-ended
ones (accuracy only where the group has none, as Table 4's Quant. Calc.). Table 9: each judge's mean score per run
and the run's rank by it. Figures 4 and 6: findocmre_figures.py; Figure 7: findocmre_resolution.py. An open-ended answer
without a score (no answer, or `judge_error`: fewer judges than the quorum gave one) counts as 0, as in the overall
score; the report says how many were judge errors.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from harness.analysis.findocmre_scores import OPEN, TYPES, raw_score, table3_cells
from harness.analysis.paper_table import PaperTable, paper_latex_table
from harness.analysis.runs import ModelRow, PageResolution
from harness.core.safe_text import markdown_cell
from harness.grading.record import Verdict
from harness.records.results import ResultRow

__all__ = ["PaperTable", "findocmre_sections"]

_GROUP_TABLES = (
    ("reasoning type", "Table 4", 1),
    ("charts", "Table 5", 2),
    ("financial domain", "Tables 12-13", 1),
)
"""A task grouping, the paper's table of it, and the decimals it prints."""
_CHART_ORDER = {"S": 0, "M": 1, "L": 2}


def _table3_line(cells: dict[str, float | None]) -> list[str]:
    shown = []
    for name in TYPES:
        value = cells[name]
        if value is None:
            shown.append("–")
        elif name == OPEN:
            shown.append(f"{value:.2f} ({cells['open_ended_100']:.1f})")
        else:
            shown.append(f"{value:.2f}")
    overall = cells["overall"]
    return [*shown, "–" if overall is None else f"{overall:.2f}"]


def _paper_rows(rows: list[ModelRow]) -> list[ModelRow]:
    return [entry for entry in rows if entry.row.task_type in TYPES]


def _table3(rows: list[ModelRow], models: list[str], title: str, file: str) -> PaperTable:
    """One line per run label, best overall first."""
    cells = {model: table3_cells([r.row for r in rows if r.model == model]) for model in models}
    ordered = sorted((m for m in models if cells[m]["overall"] is not None), key=lambda m: -(cells[m]["overall"] or 0))
    body = [[model, *_table3_line(cells[model])] for model in ordered]
    return PaperTable(title, ["model", *TYPES.values(), "Overall Score"], body, file)


def _accuracy_score(rows: Sequence[ResultRow], digits: int) -> str:
    """The paper's cell: objective accuracy %, and the open-ended mean score (0-5) when the group has any."""
    objective = [row for row in rows if row.task_type in TYPES and row.task_type != OPEN]
    scored = [row for row in rows if row.task_type == OPEN]
    if not objective and not scored:
        return "–"
    accuracy = f"{100 * sum(row.is_correct() for row in objective) / len(objective):.{digits}f}" if objective else "–"
    if not scored:
        return accuracy
    return f"{accuracy} / {sum(map(raw_score, scored)) / len(scored):.{digits}f}"


def _group_table(rows: list[ModelRow], models: list[str], grouping: str, paper: str, digits: int) -> PaperTable | None:
    values = sorted(
        {r.row.task_groups[grouping] for r in rows if grouping in r.row.task_groups},
        key=lambda value: (_CHART_ORDER.get(value, 3), value),
    )
    if not values:
        return None
    body = []
    for model in models:
        mine = [r.row for r in rows if r.model == model]
        body.append(
            [model, *(_accuracy_score([r for r in mine if r.task_groups.get(grouping) == v], digits) for v in values)]
        )
    title = f"### {grouping.capitalize()} ({paper}): accuracy (%) / score (0-5)"
    return PaperTable(title, ["model", *values], body, _file_name(paper))


def _file_name(paper: str) -> str:
    """`Tables 12-13` -> `tables12_13`: a LaTeX file's stem."""
    return re.sub(r"[^a-z0-9]+", "_", paper.lower().replace(" ", "")).strip("_")


def judge_table(rows: list[ModelRow], models: list[str], panels: dict[str, list[str]]) -> PaperTable | None:
    """Table 9: per judge (the panel's models, from each run's protocol) its mean score of each run's open-ended
    answers and the run's rank by it (1: highest; ties share the better rank)."""
    means: dict[str, dict[str, float]] = {}
    for model in models:
        judges = panels.get(model, [])
        scored = [r.row.judge_scores or [] for r in rows if r.model == model and r.row.task_type == OPEN]
        for index, judge in enumerate(judges):
            given = [scores[index] for scores in scored if len(scores) > index]
            valid = [score for score in given if score is not None]
            if valid:
                means.setdefault(judge, {})[model] = sum(valid) / len(valid)
    if not means:
        return None
    body = []
    for judge, by_model in means.items():
        cells = [judge]
        for model in models:
            if model not in by_model:
                cells.append("–")
                continue
            rank = 1 + sum(other > by_model[model] for other in by_model.values())
            cells.append(f"{by_model[model]:.2f} / {rank}")
        body.append(cells)
    title = "### Per judge (Table 9): each judge's mean score (0-5) / the run's rank by it"
    return PaperTable(title, ["judge", *models], body, "table9")


def _judge_errors(rows: list[ModelRow], models: list[str]) -> list[str]:
    counts = {
        model: sum(r.model == model and r.row.task_type == OPEN and r.row.verdict is Verdict.JUDGE_ERROR for r in rows)
        for model in models
    }
    if not any(counts.values()):
        return []
    said = "; ".join(f"{markdown_cell(model)}: {count}" for model, count in counts.items() if count)
    return [
        f"Open-ended answers the judges could not score (`judge_error`: fewer than the quorum gave a score), counted "
        f"0 above until a resume asks the judges again: {said}.",
        "",
    ]


def findocmre_sections(
    rows: list[ModelRow],
    models: list[str],
    panels: dict[str, list[str]],
    out: Path,
    resolutions: dict[str, PageResolution] | None = None,
) -> str:
    """The paper's tables, when some rows are of its five types ('' otherwise), each also as LaTeX in OUT
    (`findocmre_table3.tex`, ...); its figures, Figure 7 from the zero-shot runs' RESOLUTIONS."""
    paper = _paper_rows(rows)
    if not paper:
        return ""
    title = (
        "## FinDocMRE as its paper reports it: Table 3 (accuracy % for objective types; open-ended: mean score "
        "0-5, ×20 in brackets; Overall Score: the unweighted mean of the five on 0-100)"
    )
    table3 = _table3(paper, models, title, "table3")
    lines = [*table3.markdown(), *_judge_errors(paper, models)]
    tables: list[PaperTable | None] = [table3]
    languages = sorted({r.row.task_groups["language"] for r in paper if "language" in r.row.task_groups})
    for language in languages if len(languages) > 1 else []:
        mine = [r for r in paper if r.row.task_groups.get("language") == language]
        heading = f"### Language {language} (Tables 10-11)"
        tables.append(_table3(mine, models, heading, "table3_" + re.sub(r"[^A-Za-z0-9]+", "_", language)))
    tables += [_group_table(paper, models, grouping, table, digits) for grouping, table, digits in _GROUP_TABLES]
    tables.append(judge_table(paper, models, panels))
    for table in tables[1:]:
        lines += table.markdown() if table else []
    for table in tables:
        if table:
            (out / f"findocmre_{table.file}.tex").write_text(
                paper_latex_table(table.header, table.body), encoding="utf-8"
            )
    if any("pages" in r.row.task_groups or "(zero-shot " in r.model for r in paper):  # matplotlib: only to draw
        from harness.analysis.findocmre_figures import inputs_figure, page_count_figure

        lines += [inputs_figure(paper, models, out), page_count_figure(paper, models, out)]
    if resolutions:
        from harness.analysis.findocmre_resolution import dpi_figure

        figure, table = dpi_figure(paper, resolutions, out)
        lines += [figure, *(table.markdown() if table else [])]
    return "\n".join(lines) + "\n"
