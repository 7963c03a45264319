"""`report` and `view` given a sweep folder or any folder of runs: where the report goes (never where a glob of
the runs catches it), `--label`, the short console summary, and the note on different task sets."""

from __future__ import annotations

import glob

from harness.cli.main import main

ANSWER = ["<answer>42</answer>"]


def sweep(mini, run_id: str = "sweep1"):
    """A sweep of two scripted models (one right, one wrong) over three tasks."""
    mini.task_copies(3)
    models = f"{mini.script(ANSWER)},{mini.script(['<answer>7</answer>'])}"
    outcome = mini.run("--model", models, run_id=run_id)
    assert outcome.exit_code == 0, outcome.output
    return outcome.run_dir


def command(mini, *arguments: str) -> tuple[int, str]:
    code = main(list(arguments))
    captured = mini.capsys.readouterr()
    return code, captured.out + captured.err


def test_report_of_a_sweep_folder_twice_writes_beside_it_and_prints_a_summary(mini):
    folder = sweep(mini)
    for _ in range(2):
        code, output = command(mini, "report", str(folder))
        assert code == 0, output
        lines = output.strip().splitlines()
        assert len(lines) <= 5, output  # a summary, never the whole report.md
        assert lines[-1] == f"report written to {folder.parent / 'sweep1-report' / 'report.md'}"
        assert any("100.0% correct (3/3 episodes, 3 tasks)" in line for line in lines)
    assert not (folder / "report").exists()
    assert "| all |" in (folder.parent / "sweep1-report" / "report.md").read_text()


def test_view_of_a_sweep_folder_twice_lists_every_run(mini):
    folder = sweep(mini)
    for number in range(2):
        code, output = command(mini, "view", str(folder), "--static", str(mini.root / f"site{number}"))
        assert code == 0, output
        page = (mini.root / f"site{number}" / "index.html").read_text()
        runs = [run.name for run in folder.iterdir() if (run / "run.yaml").is_file()]
        assert len(runs) == 2 and all(run in page for run in runs)


def test_a_glob_of_a_sweeps_runs_never_catches_its_report_or_a_replay(mini):
    folder = sweep(mini)
    first_run = next(run for run in sorted(folder.iterdir()) if (run / "run.yaml").exists())
    code, output = command(mini, "replay", str(first_run))
    assert code == 0, output
    for _ in range(2):
        runs = glob.glob(f"{folder}/*/")
        code, output = command(mini, "report", *runs)
        assert code == 0, output
        assert output.strip().splitlines()[-1] == f"report written to {folder.parent / 'sweep1-report' / 'report.md'}"
    assert len(glob.glob(f"{folder}/*/")) == 2  # the two models' runs; the replay is inside its run


def test_label_names_two_runs_of_one_model_apart(mini):
    first = mini.run("--model", "oracle", "--max-turns", "5", "--label", "oracle", run_id="a")
    second = mini.run("--model", "oracle", "--max-turns", "6", "--label", "oracle", run_id="b")
    code, output = command(mini, "report", str(first.run_dir), str(second.run_dir))
    assert code == 2 and "--label RUN=LABEL" in output
    code, output = command(
        mini, "report", str(mini.results_dir), "--label", "a=five turns", "--label", f"{second.run_dir}=six turns"
    )
    assert code == 0, output
    report = (mini.root / "results-report" / "report.md").read_text()
    assert "| domain | five turns | six turns |" in report or "| domain | six turns | five turns |" in report
    code, output = command(mini, "report", str(mini.results_dir), "--label", "c=x")
    assert code == 2 and "'c' names no run folder given" in output


def test_report_says_when_models_ran_different_task_sets(mini):
    mini.task_copies(3)
    mini.run("--model", "oracle", run_id="all3")
    mini.run("--model", mini.script(ANSWER), "--task-id", "t1", "--task-id", "t2", run_id="two")
    code, output = command(mini, "report", str(mini.results_dir))
    assert code == 0, output
    assert "different task sets" in output
    report = (mini.root / "results-report" / "report.md").read_text()
    assert "The models ran different task sets (tasks: " in report and "2 shared" in report
