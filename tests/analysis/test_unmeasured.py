"""What a report shows of what a run did not measure: a run whose every episode failed has no accuracy, no interval
and no place in a figure; failure modes no source measured, and runs without failure modes (zero-shot), are not
drawn as zeros."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli.main import main
from tests.analysis.test_report_figures import panels
from tests.helpers.openai_server import fault

pytestmark = pytest.mark.usefixtures("openai_key")


def report(mini, *runs) -> tuple[int, str]:
    code = main(["report", *(str(run.run_dir) for run in runs), "--out", str(mini.root / "report")])
    captured = mini.capsys.readouterr()
    return code, captured.out + captured.err


def test_a_run_whose_every_episode_failed_has_no_accuracy_and_is_not_drawn(mini, openai_server):
    good = mini.run("--model", mini.script(["<answer>42</answer>"]), run_id="good")
    openai_server.push(fault(400, "no such model"))
    failed = mini.run(
        "--model", "openai/test-model", "--api-base", openai_server.url, "--retry-errors", "0", run_id="x"
    )
    assert [row["status"] for row in failed.rows] == ["model_error"]
    # the run's own end table and summary.json give it no accuracy either (they said 0.0%)
    [mini_row] = [line for line in failed.output.splitlines() if line.startswith("│ mini")]
    assert [cell.strip() for cell in mini_row.split("│")[4:7]] == ["–", "–", "–"], (
        failed.output
    )  # strict, default, lenient
    [domain] = json.loads((failed.run_dir / "summary.json").read_text())["domains"]
    assert [domain[f"accuracy_{mode}"] for mode in ("strict", "default", "lenient")] == [None, None, None]
    code, output = report(mini, good, failed)
    assert code == 0, output
    line = "openai/test-model: no graded episodes: all 1 ended in errors or were cancelled (model_error 1)"
    assert line in output
    text = (mini.root / "report" / "report.md").read_text()
    assert line in text
    accuracy = text[text.index("## Accuracy (default)") :].split("\n\n")[1]
    assert "openai/test-model" not in accuracy and "| 0.0 [" not in accuracy
    assert [tick for tick in panels(mini.root / "report" / "residuals.png")["panels"][0]["yticks"]] == [
        f"scripted:{mini.root}/script-0.yaml (100.0%)"
    ]
    assert "openai/test-model" not in str(panels(mini.root / "report" / "accuracy_per_domain.png"))

    code, output = report(mini, failed)
    assert code == 2 and "report: no run has a graded episode: openai/test-model: no graded episodes" in output


def test_the_failure_radar_draws_only_measured_modes_and_runs(findocmre_project: Path, tmp_path: Path, capsys):
    """Three agent runs and a zero-shot one: the offline rule gives three of the five modes, so only those are axes
    (the other two were drawn as 0); the zero-shot run has no evidence record, so no mode, and is named, not
    drawn (it stood in the legend with nothing drawn)."""
    folders = ["--tasks-dir", str(findocmre_project / "tasks"), "--collections-dir"]
    folders += [str(findocmre_project / "collections"), "--results-dir", str(tmp_path), "--task-id", "acme-2024-exact"]
    runs = []
    for number, (reply, extra) in enumerate(
        [
            ({"bash": "ls /workspace/documents"}, ["--max-turns", "1"]),
            ("<answer>64</answer>", []),
            ("<answer>65</answer>", []),
            ("<answer>65</answer>", ["--zero-shot", "full"]),
        ]
    ):
        script = tmp_path / f"script-{number}.yaml"
        script.write_text(json.dumps([reply]))
        run_id = f"run{number}"
        assert (
            main(["--domain", "findocmre", *folders, "--run-id", run_id, "--model", f"scripted:{script}", *extra]) == 0
        )
        runs.append(str(tmp_path / run_id))
    assert main(["report", *runs, "--out", str(tmp_path / "report")]) == 0
    capsys.readouterr()
    radar = panels(tmp_path / "report" / "failure_radar.png")["panels"]
    assert radar[0]["xticks"] == ["incomplete\ninspection", "evidence\nmisidentification", "resource\nexhaustion"]
    drawn = [name for panel in radar for name in panel["legend"]]
    assert len(drawn) == 3 and not any("zero-shot" in name for name in drawn)
    markdown = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "Not measured, so not drawn" in markdown and "(zero-shot full)`" in markdown
