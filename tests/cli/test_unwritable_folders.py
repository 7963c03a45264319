"""A results or output folder that cannot be written is bad input: one line naming it and why, exit 2, nothing
written (it was a traceback once a run, a report or a build had started writing)."""

from __future__ import annotations

import shutil
from pathlib import Path

from harness.cli.main import main
from tests.conftest import REPO

RUN = REPO / "tests" / "fixtures" / "schema3_run"


def _one_line(capsys) -> str:
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1, captured.err
    return captured.err.strip()


def test_a_results_folder_that_is_a_file_is_refused(mini):
    mini.results_dir.write_text("not a folder")
    outcome = mini.run("--model", "oracle")
    assert outcome.exit_code == 2
    assert (
        outcome.output.strip()
        == f"error: --results-dir {mini.results_dir}: cannot be written: it is a file, not a folder"
    )
    assert mini.results_dir.read_text() == "not a folder"


def test_a_results_folder_under_a_file_is_refused(mini):
    (mini.root / "file").write_text("x")
    outcome = mini.run("--model", "oracle", "--results-dir", str(mini.root / "file" / "results"))
    assert outcome.exit_code == 2
    assert outcome.output.strip().endswith(f"cannot be written: {mini.root / 'file'} is a file, not a folder")


def test_a_results_folder_the_file_system_refuses_is_one_line(mini):
    """/sys takes no folders, whoever asks: root's permission bits say yes, the kernel says no."""
    outcome = mini.run("--model", "oracle", "--results-dir", "/sys/harness-results")
    assert outcome.exit_code == 2
    [line] = outcome.output.strip().splitlines()
    assert line.startswith("error: --results-dir /sys/harness-results: cannot be written: ")
    assert not Path("/sys/harness-results").exists()


def test_a_report_into_a_file_is_refused(tmp_path, capsys):
    run = shutil.copytree(RUN, tmp_path / "run")
    out = tmp_path / "report"
    out.write_text("x")
    assert main(["report", str(run), "--out", str(out)]) == 2
    assert _one_line(capsys) == f"error: --out {out}: cannot be written: it is a file, not a folder"
    assert out.read_text() == "x" and sorted(path.name for path in tmp_path.iterdir()) == ["report", "run"]


def test_a_collection_built_under_a_file_is_refused(tmp_path: Path, capsys):
    (tmp_path / "src" / "a").mkdir(parents=True)
    (tmp_path / "src" / "a" / "doc.md").write_text("# doc\n")
    (tmp_path / "file").write_text("x")
    out = tmp_path / "file" / "coll"
    assert main(["collection", "build", str(tmp_path / "src"), "--domain", "d", "--out", str(out)]) == 2
    assert _one_line(capsys) == f"error: --out {out}: cannot be written: {tmp_path / 'file'} is a file, not a folder"
