"""The paper's Figure 7 (accuracy against resolution) from zero-shot runs at two resolutions: each run's resolution
read from its run.yaml, the figure (PNG and PDF) and its table checked against a count of each run's rows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from PIL import Image

from harness.cli.main import main
from harness.records.jsonl import read_jsonl
from tests.run import test_zero_shot
from tests.run.test_zero_shot import LOCAL_MODEL, run

reader = test_zero_shot.local_reader
"""The image-reading model on a local server (a fixture of test_zero_shot.py)."""

TASKS = ("--task-id", "acme-2024-exact", "--task-id", "acme-2024-ratio", "--task-id", "acme-2024-tallest")


def _accuracy(run_dir: Path) -> tuple[float, int]:
    objective = [row for row in read_jsonl(run_dir / "results.jsonl") if row["task_type"] != "open_ended"]
    return 100 * sum(row["verdict"] == "correct" for row in objective) / len(objective), len(objective)


@pytest.mark.slow  # a run and a report: 11 s
def test_accuracy_against_resolution_from_runs_at_two(findocmre_project: Path, tmp_path: Path, reader):
    """One real run at the collection's 100 dpi; a copy of it stands for a run from the set imported again at 50
    dpi (`tasks import ... --page-images 50 --collections-dir other`): its run.yaml says 50 dpi and one of its
    answers is wrong, so the two resolutions differ (a second import and run would add 20 s of CI)."""
    chosen = ("--model", LOCAL_MODEL, "--api-base", reader.base_url, "--zero-shot", "full", *TASKS)
    runs = tmp_path / "runs"
    assert run(findocmre_project, runs, "at-100", *chosen, "--label", "reader 100")[0] == 0
    assert yaml.safe_load((runs / "at-100" / "run.yaml").read_text())["protocol"]["zero_shot"]["page_dpi"] == 100
    shutil.copytree(runs / "at-100", runs / "at-50")
    record = (runs / "at-50" / "run.yaml").read_text()
    (runs / "at-50" / "run.yaml").write_text(
        record.replace("page_dpi: 100", "page_dpi: 50").replace("reader 100", "reader 50")
    )
    rows = read_jsonl(runs / "at-50" / "results.jsonl")
    rows[0] |= {"verdict": "wrong_value", "correct": False}
    (runs / "at-50" / "results.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))

    out = tmp_path / "report"
    assert main(["report", str(runs / "at-100"), str(runs / "at-50"), "--out", str(out)]) == 0
    report = (out / "report.md").read_text(encoding="utf-8")
    (a50, n50), (a100, n100) = _accuracy(runs / "at-50"), _accuracy(runs / "at-100")
    assert (a50, n50, a100, n100) == (100 * 2 / 3, 3, 100.0, 3)  # the reader reads all three at 100 dpi
    line = f"| {LOCAL_MODEL} (full) | {a50:.2f} ({n50}) | {a100:.2f} ({n100}) |"
    assert "| model (input) | 50 DPI | 100 DPI |" in report and line in report, report
    tex = (out / "findocmre_figure7.tex").read_text(encoding="utf-8")
    assert r"50 DPI & 100 DPI \\" in tex and f"{a50:.2f} ({n50}) & {a100:.2f} ({n100})" in tex
    drawn = json.loads(Image.open(out / "findocmre_dpi.png").info["Description"])
    assert drawn["panels"][0]["xticks"] == ["50", "100"] and drawn["panels"][0]["legend"] == [f"{LOCAL_MODEL} (full)"]
    assert (out / "findocmre_dpi.pdf").stat().st_size > 0
