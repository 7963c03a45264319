"""`python -m harness show RUN [TASK]`: a trajectory turn by turn in the terminal, with its verdict, timing
split and evidence; `read_trajectory` takes a str path."""

from __future__ import annotations

import subprocess
import sys

from harness.cli.main import main
from harness.records.trajectory import read_trajectory
from tests.conftest import REPO


def test_show_prints_a_trajectory_turn_by_turn_with_its_verdict_and_timing(mini):
    script = mini.script([{"text": "Reading the ledger.", "bash": "cat documents/ledger.md"}, "<answer>42</answer>"])
    run = mini.run("--model", script)
    shown = subprocess.run(
        [sys.executable, "-m", "harness", "show", str(run.run_dir), "t1"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert "mini/t1 (epoch 1)" in out and "How many units in 2020 and 2021 together?" in out
    assert out.index("turn 1 · reply") < out.index("$ cat documents/ledger.md") < out.index("| 2020 | 40 |")
    assert out.index("| 2020 | 40 |") < out.index("turn 2 · reply") < out.index("answered · correct · answer '42'")
    assert "agent " in out and "queued " in out and "sandbox start " in out
    assert "evidence (" in out


def test_show_without_a_task_lists_the_runs_episodes(mini, capsys):
    run = mini.run("--model", mini.script(["<answer>42</answer>"]))
    assert main(["show", str(run.run_dir)]) == 0
    out = capsys.readouterr().out
    assert "t1" in out and "answered" in out and "show one with" in out


def test_show_names_a_task_the_run_does_not_have(mini, capsys):
    run = mini.run("--model", mini.script(["<answer>42</answer>"]))
    assert main(["show", str(run.run_dir), "nope"]) == 2
    assert "no episode of task 'nope'" in capsys.readouterr().err


def test_read_trajectory_takes_a_str_path(mini):
    run = mini.run("--model", mini.script(["<answer>42</answer>"]))
    events = read_trajectory(str(run.run_dir / "episodes" / "mini" / "t1.jsonl"))
    assert events[0]["event"] == "episode_start" and events[-1]["event"] == "episode_end"
