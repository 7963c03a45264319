"""`report` and `view` given a sweep folder or any folder of runs: where the report goes (never where a glob of
the runs catches it), `--label`, the short console summary, and the note on different task sets."""

from __future__ import annotations

import glob

import yaml

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


def test_show_of_a_sweep_folder_names_its_runs_in_one_line_and_shows_one_of_them(mini):
    folder = sweep(mini)
    runs = [folder / run["run_id"] for run in yaml.safe_load((folder / "sweep.yaml").read_text())["runs"]]
    code, output = command(mini, "show", str(folder), "t1")
    assert code == 2 and output.strip().count("\n") == 0 and all(str(run) in output for run in runs)
    code, output = command(mini, "show", str(runs[0]), "t1")
    assert code == 0 and "<answer>42</answer>" in output


def test_replay_and_export_of_a_sweep_folder_take_each_of_its_runs(mini):
    folder = sweep(mini)
    code, output = command(mini, "replay", str(folder), "--regrade")
    assert code == 0, output
    runs = [run for run in folder.iterdir() if (run / "run.yaml").is_file()]
    assert len(runs) == 2 and all((run / "results.regraded.jsonl").is_file() for run in runs)
    code, output = command(mini, "export", "mini-swe-agent", str(folder), str(mini.root / "out"))
    assert code == 2 and output.strip().count("\n") == 0 and all(str(run) in output for run in runs)


def test_report_of_a_results_folder_takes_its_sweeps_and_says_what_it_merged_or_left_out(mini):
    folder = sweep(mini)
    mini.run("--model", "oracle", "--task-id", "t1", "--task-id", "t2", run_id="a")
    mini.run("--model", "oracle", "--task-id", "t2", "--task-id", "t3", run_id="b")
    (mini.results_dir / "notes").mkdir()
    code, output = command(mini, "report", str(mini.results_dir))
    assert code == 0, output
    assert f"left out: {mini.results_dir / 'notes'}: neither a run folder" in output
    merged = next(line for line in output.splitlines() if line.startswith("merged"))
    assert "2 runs as 'oracle'" in merged and "1 episode in both" in merged and "b's kept" in merged
    report = (mini.root / "results-report" / "report.md").read_text()
    assert "b's kept" in report and "left out:" in report
    runs = yaml.safe_load((folder / "sweep.yaml").read_text())["runs"]
    assert all(f"{run['label']}:" in output for run in runs)  # the sweep's runs are in the tables
