"""`tasks stats`: a task set's counts as FinDocMRE's paper gives its own (Table 2, Section 3.4, Figure 3), on the
generated set, each number against a hand count of tests/helpers/findocmre_set.py's twelve items."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from harness.cli.main import main


def test_the_papers_dataset_counts_from_a_task_set(findocmre_project: Path, tmp_path: Path, capsys):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    lines = (findocmre_project / "tasks" / "findocmre.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    traces = {"acme-2024-exact": ["Read the bar,", "then subtract."], "huaxia-2023-exact": ["先读图。", "再 计算。"]}
    for row in rows:
        if row["id"] in traces:
            row["metadata"]["reasoning_trace"] = traces[row["id"]]
    (tasks / "findocmre.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")

    out = tmp_path / "stats"
    assert main(["tasks", "stats", "--domain", "findocmre", "--tasks-dir", str(tasks), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    table = (out / "dataset.md").read_text(encoding="utf-8")
    expected = [
        "| Total questions | 12 |",
        "| – Chinese | 6 |",
        "| – English | 6 |",
        "| Total PDFs | 2 |",
        "| Single Choice | 4 |",
        "| Multiple Choice | 2 |",
        "| Numerical Precise | 2 |",
        "| Numerical Approximate | 2 |",
        "| Open Ended | 2 |",
        "| Mean charts per question | 1.67 |",  # (1 + 2 + 1 + 1 + 2 + 3) x 2 / 12
        "| Questions over several charts | 6 (50.0%) |",  # ratio, above, summary of each report
        "| Mean pages per PDF | 4.0 |",  # a cover and three chart pages
        "| Mean trace length, Chinese (characters) | 8 |",  # 先读图。再计算。, the space left out
        "| Mean trace length, other languages (words) | 5 |",
        "| banking | 6 | 50.0% |",
        "| comparison | 4 | 33.3% |",
        "| numerical | 4 | 33.3% |",
        "| synthesis | 2 | 16.7% |",
    ]
    assert [line for line in expected if line not in table] == [] and table.splitlines()[0] in printed
    tex = (out / "findocmre_table2.tex").read_text(encoding="utf-8")
    assert r"Total questions & 12 \\" in tex and r"Questions over several charts & 6 (50.0\%) \\" in tex
    assert r"banking & 6 & 50.0\% \\" in (out / "findocmre_figure3.tex").read_text(encoding="utf-8")
    drawn = json.loads(Image.open(out / "findocmre_figure3.png").info["Description"])
    assert drawn["title"] == "12 questions (the paper's Figure 3)"
    assert [panel["yticks"] for panel in drawn["panels"]] == [
        ["industrials", "banking"],
        ["trend", "synthesis", "numerical", "comparison"],
    ]
    assert (out / "findocmre_figure3.pdf").stat().st_size > 0


def test_an_empty_or_missing_task_set_is_one_line(tmp_path: Path, capsys):
    assert main(["tasks", "stats", "--domain", "none", "--tasks-dir", str(tmp_path), "--out", str(tmp_path / "s")]) == 2
    assert not (tmp_path / "s").exists() and f"tasks stats: no {tmp_path / 'none.jsonl'}" in capsys.readouterr().err
    (tmp_path / "none.jsonl").write_text("")
    assert main(["tasks", "stats", "--domain", "none", "--tasks-dir", str(tmp_path), "--out", str(tmp_path / "s")]) == 2
    assert "none.jsonl holds no tasks" in capsys.readouterr().err and not (tmp_path / "s").exists()
