"""The paper's table and figures from runs: bold/underlined table (Markdown, LaTeX), heatmap, radar, turns."""

from __future__ import annotations

import json

from PIL import Image

from harness.analysis.accuracy_table import latex_table, markdown_table, ranks
from harness.cli.main import main
from tests.analysis.test_report_and_viewer import two_domain_project


def panels(path) -> dict:
    """What the PNG's panels show, as the report wrote it from the figure (plots.describe)."""
    image = Image.open(path)
    assert image.format == "PNG"
    return json.loads(image.text["Description"])


def test_the_best_of_each_column_is_bold_and_the_second_underlined():
    table = {
        ("a", "law"): 0.5,
        ("b", "law"): 0.7,
        ("c", "law"): 0.6,
        ("a", "all"): 0.9,
        ("b", "all"): 0.9,
        ("c", "all"): 0.1,
    }
    assert ranks({"a": 0.5, "b": 0.7, "c": 0.6}) == {"a": 0, "b": 1, "c": 2}
    markdown = markdown_table(table, ["b", "a", "c"])
    assert "| b | **70.0** | **90.0** |" in markdown and "| c | <u>60.0</u> | <u>10.0</u> |" in markdown
    assert "| a | 50.0 | **90.0** |" in markdown  # a tie shares the rank
    latex = latex_table({("gpt_5 & co", "all"): 0.25}, ["gpt_5 & co"])
    assert latex.startswith("\\begin{tabular}{lr}") and "gpt\\_5 \\& co & \\textbf{25.0} \\\\" in latex


def test_report_on_two_runs_with_three_epochs_draws_the_papers_figures(mini):
    two_domain_project(mini)
    good = mini.run(
        "--model", mini.script(["<answer>42</answer>"]), "--domain", "mini,misc", "--epochs", "3", run_id="good"
    )
    bad = mini.run(
        "--model",
        mini.script([{"bash": "true"}, "<answer>41</answer>"]),
        "--domain",
        "mini,misc",
        "--epochs",
        "3",
        "--max-turns",
        "5",
        run_id="bad",
    )
    assert good.exit_code == bad.exit_code == 0 and len(good.rows) == len(bad.rows) == 9
    out = mini.root / "report"
    assert main(["report", str(bad.run_dir), str(good.run_dir), "--out", str(out)]) == 0
    mini.capsys.readouterr()
    # the runs' labels: the bad one's shorter turn budget names it apart
    good_name, bad_name = f"scripted:{mini.root}/script-0.yaml", f"scripted:{mini.root}/script-1.yaml (max_turns=5)"
    table = (out / "accuracy_table.md").read_text()
    assert table.index(good_name) < table.index(bad_name)  # best overall first
    assert f"| {good_name} | **100.0** | **0.0** | **66.7** |" in table  # columns: mini, misc, all
    assert f"| {bad_name} | <u>0.0</u> | **0.0** | <u>0.0</u> |" in table  # misc: both 0, a tie for best
    assert "\\textbf{100.0}" in (out / "accuracy_table.tex").read_text()
    heatmap = panels(out / "residuals.png")["panels"]
    assert heatmap[0]["yticks"] == [f"{good_name} (66.7%)", f"{bad_name} (0.0%)"]
    assert heatmap[0]["xticks"] == ["mini", "misc"] and heatmap[0]["texts"] == 8  # residual + accuracy per cell
    assert heatmap[1]["xlabel"] == "domain accuracy − overall (pp)"  # the colour bar, across under the cells
    assert not (out / "failure_radar.png").exists()  # two models: bars, not a radar of two polygons
    bars = panels(out / "failure_bars.png")
    assert bars["panels"][0]["title"].startswith("Share of questions implicated in each failure mode")
    assert bars["panels"][0]["yticks"] == [  # horizontal bars: the names read across; the rule's three modes only
        "incomplete inspection",
        "evidence misidentification",
        "resource exhaustion",
    ]
    assert bars["legend"] == [good_name, bad_name]
    assert bars["panels"][0]["texts"] == 6  # every bar labelled, 0% ones too
    turns = panels(out / "submission_turns.png")
    assert [p["title"] for p in turns["panels"]] == [f"{good_name}\n9 submitted", f"{bad_name}\n9 submitted"]
    assert turns["panels"][0]["legend"] == ["correct", "incorrect"]
    assert [p["xlabel"] for p in turns["panels"]] == [  # the axis from the answers, each run's budget named
        "turn of the answer (budget 200 turns)",
        "turn of the answer (budget 5 turns)",
    ]
    assert turns["panels"][0]["xlim"] == [0.4, 5.6]  # answers at turns 1 and 2: turns 1-5 shown, not 1-200
    assert panels(out / "accuracy_per_domain.png")["panels"][0]["title"] == "Accuracy per domain (default mode)"
    markdown = (out / "report.md").read_text()
    assert "![failure modes](failure_bars.png)" in markdown and "Also as LaTeX" in markdown
    assert all(path.with_suffix(".pdf").read_bytes().startswith(b"%PDF") for path in out.glob("*.png"))


def test_the_radar_scale_never_passes_one_hundred_percent(tmp_path):
    from harness.analysis.paper_plots import failure_radar
    from harness.diagnostics.failure_modes import PAPER_MODES

    shares = {"a": dict.fromkeys(PAPER_MODES, 1.0), "b": dict.fromkeys(PAPER_MODES, 0.02)}
    failure_radar(shares, list(PAPER_MODES), [["a"], ["b"]], tmp_path / "radar.png")
    frontier, lower = panels(tmp_path / "radar.png")["panels"]
    assert frontier["title"] == "frontier tier (radial scale 0–100%)" and frontier["yticks"][-1] == "100%"
    assert lower["title"] == "lower tiers (radial scale 0–5%)"  # each group on its own scale
