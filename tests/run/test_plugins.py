"""Solvers and sandbox backends as plug-ins named by import path, and benchmark profiles: a solver defined here
runs real episodes end to end with no edit to the package; the shipped example runs from a folder outside the
checkout; a profile's digest is recorded and a resume under another is refused."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from typing import ClassVar

import yaml

from harness.cli.main import main
from harness.episode.solvers import AgentLoop, BashAgent, Solver
from harness.models.base import ModelReply
from harness.sandboxes.base import ExecResult
from tests.conftest import REPO

MARK = "[seen by the marking agent]"


class MarkingLoop(AgentLoop):
    """The bash agent with one step overridden: every command's output reaches the model marked."""

    def execute(self, reply: ModelReply, command: str) -> None:
        super().execute(reply, command)
        self.messages[-1]["content"] += "\n" + MARK


class MarkingAgent(BashAgent):
    name = "marking-agent"
    loop = MarkingLoop
    arguments: ClassVar[Mapping[str, str]] = {"flavour": "any text, recorded"}


def shown_everywhere(mini, outcome, capsys, seen: str) -> None:
    """The plug-in's run read back by every reader: the report's table counts its episode correct, the viewer's
    data (what `view --static` writes, the page's own input) shows SEEN in the episode, a regrade agrees and a
    re-execution reproduces every observation under the run's own solver and sandbox."""
    run = str(outcome.run_dir)
    assert main(["report", run, "--out", str(mini.root / "report")]) == 0
    table = list(csv.DictReader((mini.root / "report" / "accuracy.csv").open()))
    assert [(row["domain"], row["n"], row["accuracy_default"]) for row in table] == [
        ("mini", "1", "1.0"),
        ("all", "1", "1.0"),
    ]
    assert main(["view", run, "--static", str(mini.root / "site")]) == 0
    index = json.loads((mini.root / "site" / "index.json").read_text())
    assert [(e["task_id"], e["verdict"]) for e in index["episodes"]] == [("t1", "correct")]
    assert seen in (mini.root / "site" / "episodes" / "0.json").read_text()
    assert main(["replay", run, "--regrade"]) == 0
    assert main(["replay", run]) == 0  # exit 1 when an observation or the verdict differs
    assert "reproduced exactly" in capsys.readouterr().out
    [replayed] = (outcome.run_dir / "replays").glob("*/run.yaml")
    original, again = (yaml.safe_load(path.read_text()) for path in (outcome.run_dir / "run.yaml", replayed))
    assert [(record["protocol"].get("solver"), record["sandbox"]["backend"]) for record in (again, original)] == [
        (original["protocol"].get("solver"), original["sandbox"]["backend"])
    ] * 2


def test_a_solver_named_by_its_import_path_runs_an_episode_end_to_end(mini, capsys):
    script = mini.script([{"bash": "cat documents/ledger.md"}, "<answer>42</answer>"])
    solver = f"{__name__}:MarkingAgent"
    outcome = mini.run("--model", script, "--solver", solver, "--solver-arg", "flavour=plain")
    assert outcome.exit_code == 0, outcome.output
    assert (outcome.rows[0]["status"], outcome.rows[0]["verdict"]) == ("answered", "correct")
    calls = [event for event in outcome.trajectory("t1") if event["event"] == "model_call"]
    assert MARK in str(calls[1]["messages"])  # the overridden step's text reached the model's second call
    record = yaml.safe_load((outcome.run_dir / "run.yaml").read_text())
    assert record["protocol"]["solver"] == {"name": solver, "args": {"flavour": "plain"}}
    assert record["profile"]["name"] == "agora" and record["profile"]["digest"].startswith("sha256:")
    assert main(["show", str(outcome.run_dir), "t1"]) == 0
    assert "cat documents/ledger.md" in capsys.readouterr().out
    shown_everywhere(mini, outcome, capsys, seen="| 2020 | 40 |")


def test_a_sandbox_backend_named_by_its_import_path_runs_an_episode_end_to_end(mini, capsys):
    script = mini.script([{"bash": "cat documents/ledger.md"}, "<answer>42</answer>"])
    outcome = mini.run("--model", script, "--sandbox", "tests.helpers.fake_backend:FakeBackend")
    assert outcome.exit_code == 0, outcome.output
    assert outcome.rows[0]["verdict"] == "correct"
    observation = next(e for e in outcome.trajectory("t1") if e["event"] == "observation")
    assert "| 2020 | 40 |" in observation["stdout"]
    assert yaml.safe_load((outcome.run_dir / "run.yaml").read_text())["sandbox"]["backend"] == "fake"
    shown_everywhere(mini, outcome, capsys, seen="| 2020 | 40 |")


def test_a_plugin_that_cannot_be_loaded_is_one_line_naming_what_to_install(mini):
    refusals = {
        ("--solver", "nosuch_package.solvers:Agent"): "no module 'nosuch_package'",
        ("--solver", "harness.episode.solvers:Nothing"): "has no 'Nothing'",
        ("--solver", "harness.sandboxes.base:ExecResult"): "not a Solver",
        ("--sandbox", "nosuch_package.backend:Backend"): "no module 'nosuch_package'",
        ("--solver-arg", "colour=red"): "'colour' is not an argument of this solver",
    }
    for flags, refusal in refusals.items():
        outcome = mini.run("--model", "oracle", *flags)
        lines = [line for line in outcome.output.splitlines() if line.strip()]
        assert outcome.exit_code == 2 and len(lines) == 1 and refusal in lines[0], (flags, outcome.output)
        assert not mini.results_dir.exists()
    assert issubclass(MarkingAgent, Solver) and ExecResult  # the classes the refusals name exist


def test_a_profile_s_digest_is_recorded_and_a_resume_under_an_edited_prompt_is_refused(mini, tmp_path):
    shipped = REPO / "harness" / "inputs" / "profiles"
    mine = tmp_path / "my-profile"
    shutil.copytree(shipped / "findocmre", mine / "findocmre")
    shutil.copy(shipped / "findocmre.yaml", mine / "findocmre.yaml")
    profile = mine / "findocmre.yaml"
    profile.write_text(re.sub(r'version: "[^"]*"', 'version: "1.4-mine"', profile.read_text()))
    script = mini.script(["<answer>42</answer>"])
    first = mini.run("--model", script, "--profile", str(profile), "--temperature", "0.5")
    assert first.exit_code == 0, first.output
    recorded = yaml.safe_load((first.run_dir / "run.yaml").read_text())["profile"]
    assert recorded["version"] == "1.4-mine" and recorded["path"] == str(profile.resolve())
    assert recorded["overrides"] == ["temperature"]  # the profile's 0 (the paper's), given over
    (mine / "findocmre" / "standard.txt").write_text("Answer them all: [Insert Questions List]\n")
    resumed = mini.run("--model", script, "--profile", str(profile), "--temperature", "0.5")
    assert resumed.exit_code == 2 and "profile digest" in resumed.output, resumed.output


def test_a_profile_s_settings_apply_unless_given_and_those_given_over_it_are_recorded(mini, tmp_path):
    profile = tmp_path / "strict.yaml"
    profile.write_text(
        'profile: strict\nversion: "2"\nbenchmark: AGORA\nsettings:\n  max_turns: 3\n  temperature: 0.0\n'
    )
    script = mini.script(["<answer>42</answer>"])
    outcome = mini.run("--model", script, "--profile", str(profile), "--temperature", "0.7")
    assert outcome.exit_code == 0, outcome.output
    record = yaml.safe_load((outcome.run_dir / "run.yaml").read_text())
    assert record["config"]["max_turns"] == 3 and record["config"]["temperature"] == 0.7
    assert record["profile"]["overrides"] == ["temperature"]
    profile.write_text('profile: strict\nversion: "2"\nbenchmark: AGORA\nsettings:\n  max_turns: many\n')
    refused = mini.run("--model", script, "--profile", str(profile), run_id="other")
    assert refused.exit_code == 2 and f"{profile}:5: field 'settings.max_turns'" in refused.output


def test_the_example_solver_runs_from_a_folder_outside_the_checkout(tmp_path):
    """examples/solvers/nudging_agent.py, copied beside a user's data, named by `module:Class` with the oracle."""
    shutil.copy(REPO / "examples" / "solvers" / "nudging_agent.py", tmp_path)
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    command = [sys.executable, "-m", "harness", "--model", "oracle", "--domain", "demo", "--limit", "2"]
    folders = ["--tasks-dir", str(REPO / "tasks"), "--collections-dir", str(REPO / "collections")]
    done = subprocess.run(
        [
            *command,
            *folders,
            "--results-dir",
            str(tmp_path / "results"),
            "--run-id",
            "nudged",
            "--solver",
            "nudging_agent:NudgingAgent",
            "--solver-arg",
            "nudge_at=200",
        ],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    record = yaml.safe_load((tmp_path / "results" / "nudged" / "run.yaml").read_text())
    assert record["protocol"]["solver"]["name"] == "nudging_agent:NudgingAgent"
    rows = (tmp_path / "results" / "nudged" / "results.jsonl").read_text().splitlines()
    assert len(rows) == 2 and all('"verdict": "correct"' in row for row in rows)


def test_the_example_solver_s_step_reaches_the_model(mini, monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "examples" / "solvers"))
    script = mini.script([{"bash": "ls documents"}, {"bash": "cat documents/ledger.md"}, "<answer>42</answer>"])
    flags = ["--solver", "nudging_agent:NudgingAgent", "--solver-arg", "nudge_at=8", "--max-turns", "10"]
    outcome = mini.run("--model", script, *flags)
    assert outcome.exit_code == 0 and outcome.rows[0]["verdict"] == "correct", outcome.output
    calls = [str(event["messages"]) for event in outcome.trajectory("t1") if event["event"] == "model_call"]
    assert "Few turns are left" not in calls[1] and "Few turns are left" in calls[2]  # 9 turns left, then 8


def test_a_profile_s_graders_replace_the_task_s_and_a_bad_one_is_one_line(mini, tmp_path):
    profile = tmp_path / "tolerant.yaml"
    profile.write_text('profile: tolerant\nversion: "1"\nbenchmark: AGORA\ngraders:\n  numeric: set\n')
    outcome = mini.run("--model", mini.script(["<answer>42</answer>"]), "--profile", str(profile))
    assert outcome.exit_code == 0 and outcome.rows[0]["verdict"] == "correct", outcome.output
    assert set(yaml.safe_load((outcome.run_dir / "run.yaml").read_text())["protocol"]["graders"]) == {"set"}
    assert outcome.trajectory("t1")[0]["task"]["grader"] == "set"
    profile.write_text('profile: tolerant\nversion: "1"\nbenchmark: AGORA\ngraders:\n  numeric: lenient\n')
    refused = mini.run("--model", "oracle", "--profile", str(profile), run_id="other")
    assert (
        refused.exit_code == 2 and f"{profile}:5: field 'graders.numeric': 'lenient' is not a grader" in refused.output
    )


def test_a_profile_names_the_report_s_sections_and_a_bad_name_is_one_line(mini, tmp_path):
    profile = tmp_path / "lean.yaml"
    profile.write_text('profile: lean\nversion: "1"\nbenchmark: AGORA\nreport: [evidence]\n')
    script = mini.script([{"bash": "cat documents/ledger.md"}, "<answer>42</answer>"])
    lean = mini.run("--model", script, "--profile", str(profile), run_id="lean")
    agora = mini.run("--model", script, run_id="agora")
    assert lean.exit_code == agora.exit_code == 0, lean.output + agora.output
    assert yaml.safe_load((lean.run_dir / "run.yaml").read_text())["profile"]["report"] == ["evidence"]
    assert "report" not in yaml.safe_load((agora.run_dir / "run.yaml").read_text())["profile"]  # AGORA: every one
    reports = {}
    for outcome in (lean, agora):
        assert main(["report", str(outcome.run_dir), "--out", str(tmp_path / outcome.run_dir.name)]) == 0
        reports[outcome.run_dir.name] = (tmp_path / outcome.run_dir.name / "report.md").read_text()
    for heading in ("## Plots", "## Accuracy over all episodes"):
        assert heading in reports["agora"] and heading not in reports["lean"], heading
    for heading in ("## Accuracy (default)", "## Evidence recall"):
        assert heading in reports["agora"] and heading in reports["lean"], heading
    profile.write_text('profile: lean\nversion: "1"\nbenchmark: AGORA\nreport: [evidence, charts]\n')
    refused = mini.run("--model", script, "--profile", str(profile), run_id="other")
    assert refused.exit_code == 2 and f"{profile}:4: field 'report': 'charts' is not a report section" in refused.output
