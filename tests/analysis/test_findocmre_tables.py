"""The FinDocMRE paper's tables (analysis/findocmre_tables.py) against hand computations: Table 3 and its overall
score (Section 4.2), the "accuracy / score" tables by group (Tables 4, 5, 12-13), per language (Tables 10-11) and
per judge with ranks (Table 9)."""

from __future__ import annotations

import dataclasses
import json
import random

from PIL import Image

from harness.analysis.findocmre_figures import accuracy_by_pages, inputs_by_type
from harness.analysis.findocmre_scores import table3_cells
from harness.analysis.findocmre_tables import findocmre_sections
from harness.analysis.runs import ModelRow
from tests.analysis.test_report_and_viewer import result_row


def typed(task_id: str, kind: str, correct: bool = False, score: float | None = None, **groups: str):
    """A row of the paper's type KIND; an open-ended one with its score (None: the judges gave none)."""
    verdict = "correct" if correct else "wrong_value"
    extra: dict = {}
    if kind == "open_ended":
        verdict = "judge_error" if score is None else "wrong_value"
        extra = {"score": score, "score_range": [0, 5], "judge_scores": [None if score is None else round(score)]}
    made = result_row(task_id, verdict)
    named = {key.replace("_", " "): value for key, value in groups.items()}
    return dataclasses.replace(made, task_type=kind, task_groups=named, **extra)


def hand_set() -> list:
    rows = [typed(f"s{n}", "single_choice", c) for n, c in enumerate((True, True, True, False))]  # 75
    rows += [typed(f"m{n}", "multiple_choice", c) for n, c in enumerate((True, False))]  # 50
    rows += [typed(f"p{n}", "numeric_exact", c) for n, c in enumerate((True, True, False))]  # 66.67
    rows += [typed(f"a{n}", "numeric_approx", c) for n, c in enumerate((True, False, False, False, False))]  # 20
    rows += [typed(f"o{n}", "open_ended", score=s) for n, s in enumerate((4.0, 3.0, 5.0, None))]  # 12/4 = 3.00
    return rows


def test_table_3_and_the_overall_score_equal_a_hand_computation(tmp_path):
    rows = [ModelRow("m", row) for row in hand_set()]
    text = findocmre_sections(rows, ["m"], {}, tmp_path)
    # overall = (75 + 50 + 66.667 + 20 + 3.00 x 20) / 5 = 271.667 / 5 = 54.33
    assert "| m | 75.00 | 50.00 | 66.67 | 20.00 | 3.00 (60.0) | 54.33 |" in text
    assert "counted 0 above until a resume asks the judges again: m: 1." in text
    latex = (tmp_path / "findocmre_table3.tex").read_text()
    assert r"m & 75.00 & 50.00 & 66.67 & 20.00 & 3.00 (60.0) & 54.33 \\" in latex


def test_on_a_generated_set_the_overall_score_is_the_mean_of_the_five_with_the_open_score_times_twenty():
    draw = random.Random(48)
    rows, correct, total, scores = [], {}, {}, []
    for number in range(300):
        kind = draw.choice(["single_choice", "multiple_choice", "numeric_exact", "numeric_approx", "open_ended"])
        if kind == "open_ended":
            score = draw.choice([0.0, 1.0, 2.5, 3.0, 4.0, 5.0, None])
            scores.append(score or 0.0)
            rows.append(typed(f"t{number}", kind, score=score))
        else:
            right = draw.random() < 0.6
            correct[kind] = correct.get(kind, 0) + right
            total[kind] = total.get(kind, 0) + 1
            rows.append(typed(f"t{number}", kind, right))
    accuracies = [100 * correct[kind] / total[kind] for kind in total]
    expected = (sum(accuracies) + 20 * sum(scores) / len(scores)) / 5
    cells = table3_cells(rows)
    assert abs(cells["overall"] - expected) < 1e-9 and abs(cells["open_ended"] - sum(scores) / len(scores)) < 1e-9


def test_the_accuracy_score_tables_by_reasoning_type_charts_and_domain(tmp_path):
    rows = [
        ModelRow("m", typed("a", "numeric_exact", True, reasoning_type="Quantitative Calculation", charts="S")),
        ModelRow("m", typed("b", "single_choice", False, reasoning_type="Quantitative Calculation", charts="L")),
        ModelRow("m", typed("c", "single_choice", True, reasoning_type="Logical Deduction", charts="S")),
        ModelRow("m", typed("d", "open_ended", score=4.0, reasoning_type="Logical Deduction", charts="S")),
        ModelRow("m", typed("e", "open_ended", score=3.0, reasoning_type="Logical Deduction", charts="M")),
    ]
    text = findocmre_sections(rows, ["m"], {}, tmp_path)
    table4 = text.split("### Reasoning type (Table 4)")[1].split("###")[0]
    assert "| model | Logical Deduction | Quantitative Calculation |" in table4
    assert "| m | 100.0 / 3.5 | 50.0 |" in table4  # Quant. Calc. has no open-ended question: accuracy only
    table5 = text.split("### Charts (Table 5)")[1].split("###")[0]
    assert "| model | S | M | L |" in table5 and "| m | 100.00 / 4.00 | – / 3.00 | 0.00 |" in table5
    assert r"m & 100.0 / 3.5 & 50.0 \\" in (tmp_path / "findocmre_table4.tex").read_text()  # each also as LaTeX
    assert r"m & 100.00 / 4.00 & -- / 3.00 & 0.00 \\" in (tmp_path / "findocmre_table5.tex").read_text()


def test_per_language_tables_and_per_judge_ranks(tmp_path):
    rows = []
    for model, scores in (("x", [(5, 4), (4, 4)]), ("y", [(3, 5), (2, 5)])):
        for number, given in enumerate(scores):
            row = typed(f"{model}{number}", "open_ended", score=sum(given) / 2, language="en" if number else "zh")
            rows.append(ModelRow(model, dataclasses.replace(row, judge_scores=list(given))))
    panels = {"x": ["judge/a", "judge/b"], "y": ["judge/a", "judge/b"]}
    text = findocmre_sections(rows, ["x", "y"], panels, tmp_path)
    judges = text.split("### Per judge (Table 9)")[1]
    assert "| judge/a | 4.50 / 1 | 2.50 / 2 |" in judges  # x: (5 + 4) / 2; y: (3 + 2) / 2
    assert "| judge/b | 4.00 / 2 | 5.00 / 1 |" in judges
    english = text.split("### Language en (Tables 10-11)")[1].split("###")[0]
    assert "| y | – | – | – | – | 3.50 (70.0) | 70.00 |" in english  # (2 + 5) / 2
    assert r"judge/a & 4.50 / 1 & 2.50 / 2 \\" in (tmp_path / "findocmre_table9.tex").read_text()
    assert r"y & -- & -- & -- & -- & 3.50 (70.0) & 70.00 \\" in (tmp_path / "findocmre_table3_en.tex").read_text()


def test_figure_6_plots_the_accuracy_of_objective_questions_against_the_page_range(tmp_path):
    rows = [
        ModelRow("m", typed("a", "single_choice", True, pages="11-20")),
        ModelRow("m", typed("b", "single_choice", False, pages="11-20")),
        ModelRow("m", typed("c", "numeric_exact", True, pages="101+")),
        ModelRow("m", typed("d", "open_ended", score=1.0, pages="101+")),  # not an objective question
        ModelRow("m", typed("e", "numeric_exact", True, pages="1-10")),
    ]
    assert accuracy_by_pages(rows, ["m"]) == {"m": {"1-10": (100.0, 1), "11-20": (50.0, 2), "101+": (100.0, 1)}}
    text = findocmre_sections(rows, ["m"], {}, tmp_path)
    assert "![accuracy against page count](findocmre_pages.png)" in text
    assert (tmp_path / "findocmre_pages.pdf").is_file()
    with Image.open(tmp_path / "findocmre_pages.png") as image:
        [panel] = json.loads(image.info["Description"])["panels"]
    assert panel["xticks"] == ["1-10", "11-20", "101+"] and panel["lines"] == 1 and panel["legend"] == ["m"]


def test_figure_4_sets_the_three_inputs_side_by_side_per_type(tmp_path):
    rows = [
        ModelRow("m (zero-shot full)", typed("a", "single_choice", False)),
        ModelRow("m (zero-shot full)", typed("b", "open_ended", score=2.0)),
        ModelRow("m (zero-shot cropped)", typed("a", "single_choice", True)),
        ModelRow("m (zero-shot cropped)", typed("b", "open_ended", score=4.0)),
        ModelRow("m (zero-shot bbox)", typed("a", "single_choice", False)),
        ModelRow("solo (zero-shot full)", typed("a", "single_choice", True)),  # one input only: no panel
    ]
    models = ["m (zero-shot cropped)", "m (zero-shot full)", "m (zero-shot bbox)", "solo (zero-shot full)"]
    assert inputs_by_type(rows, models) == {
        "m": {
            "full": {"single_choice": 0.0, "open_ended": 40.0},  # 2 of 5, x20
            "bbox": {"single_choice": 0.0},
            "cropped": {"single_choice": 100.0, "open_ended": 80.0},
        }
    }
    assert "![the three inputs per type](findocmre_inputs.png)" in findocmre_sections(rows, models, {}, tmp_path)
    with Image.open(tmp_path / "findocmre_inputs.png") as image:
        [panel] = json.loads(image.info["Description"])["panels"]
    assert panel["title"] == "m" and panel["legend"] == ["Full PDF", "PDF + BBox", "Cropped Image"]
    assert panel["xticks"] == ["Single-Ch.", "Multi-Ch.", "Num. (Pre.)", "Num. (App.)", "Open-Ended"]
