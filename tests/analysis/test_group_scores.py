"""The report's tables per task group and its protocols side by side (analysis/group_scores.py): each cell the
overall score over the types of the rows in it, scored types scaled, with accuracy and episodes."""

from __future__ import annotations

import dataclasses

from harness.analysis.group_scores import group_sections
from harness.analysis.runs import ModelRow
from tests.analysis.test_report_and_viewer import result_row


def row(task_id: str, verdict: str, kind: str, charts: str, score: float | None = None):
    made = result_row(task_id, verdict)
    scored = {"score": score, "score_range": [0, 5]} if score is not None else {}
    return dataclasses.replace(made, task_type=kind, task_groups={"charts": charts, "language": "en"}, **scored)


ROWS = [
    ModelRow("paper", row("a", "correct", "numeric_exact", "S")),
    ModelRow("paper", row("b", "wrong_value", "numeric_exact", "M")),
    ModelRow("paper", row("c", "wrong_value", "open_ended", "L", score=2.5)),
    ModelRow("agent", row("a", "correct", "numeric_exact", "S")),
    ModelRow("agent", row("b", "correct", "numeric_exact", "M")),
]


def test_each_group_value_gets_its_overall_score_per_run_and_charts_are_ordered_s_m_l():
    text = group_sections(ROWS, ["agent", "paper"])
    charts = text.split("## Overall score by charts")[1].split("##")[0]
    assert charts.index("| S |") < charts.index("| M |") < charts.index("| L |")
    assert "| L | – | 50.0 (acc 0.0%, n=1) |" in charts  # 2.5 of 0-5 scaled: 50
    # paper in English: numeric_exact 1 of 2 right (50), open_ended scored 2.5 of 5 (50): overall 50, accuracy 1 of 3
    assert "| en | 100.0 (acc 100.0%, n=2) | 50.0 (acc 33.3%, n=3) |" in text


def test_the_side_by_side_table_is_over_the_tasks_every_run_has():
    side = group_sections(ROWS, ["agent", "paper"]).split("## Protocols side by side on the 2 tasks")[1]
    assert "| agent | 100.0 (acc 100.0%, n=2) | 100.0 |" in side
    assert "| paper | 50.0 (acc 50.0%, n=2) | 50.0 |" in side


def test_no_groups_no_section():
    plain = [ModelRow("m", result_row("a", "correct"))]
    assert group_sections(plain, ["m"]) == ""


def test_page_ranges_are_ordered_by_their_first_page():
    rows = [
        ModelRow("m", dataclasses.replace(row(n, "correct", "numeric_exact", "S"), task_groups={"pages": n}))
        for n in ("101+", "11-20", "1-10")
    ]
    pages = group_sections(rows, ["m"]).split("## Overall score by pages")[1].split("##")[0]
    assert pages.index("| 1-10 |") < pages.index("| 11-20 |") < pages.index("| 101+ |")
