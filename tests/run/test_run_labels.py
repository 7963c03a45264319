"""Run labels: recorded in run.yaml, the report's rows, ordered by overall accuracy, never two protocols in one."""

from __future__ import annotations

import csv
import json
import re

import pytest
import yaml

from harness.cli.main import main
from tests.helpers.openai_server import two_step_agent

pytestmark = pytest.mark.usefixtures("openai_key")


def report_rows(mini, *run_dirs):
    out = mini.root / "report"
    code = main(["report", *map(str, run_dirs), "--out", str(out)])
    output = mini.capsys.readouterr()
    rows = list(csv.DictReader((out / "accuracy.csv").open())) if (out / "accuracy.csv").exists() else []
    return code, rows, output.out + output.err, out


def test_two_runs_of_one_model_with_different_model_args_are_two_rows_in_the_report(mini, openai_server):
    openai_server.respond = two_step_agent
    provider = ("--model", "openai/test-model", "--api-base", openai_server.url)
    high = mini.run(*provider, "--model-arg", "reasoning_effort=high", run_id="high")
    low = mini.run(*provider, "--model-arg", "reasoning_effort=low", run_id="low")
    labels = [yaml.safe_load((run.run_dir / "run.yaml").read_text())["label"] for run in (high, low)]
    assert labels == ["openai/test-model (reasoning_effort=high)", "openai/test-model (reasoning_effort=low)"]
    code, rows, _, _ = report_rows(mini, high.run_dir, low.run_dir)
    assert code == 0
    assert sorted(row["model"] for row in rows if row["domain"] == "all") == sorted(labels)


def test_a_plain_run_is_labelled_by_its_model_and_a_label_flag_wins(mini):
    plain = mini.run("--model", "oracle", run_id="plain")
    named = mini.run("--model", "oracle", "--label", "oracle, second try", "--max-turns", "9", run_id="named")
    turns = mini.run("--model", "oracle", "--max-turns", "9", run_id="turns")
    labels = [yaml.safe_load((run.run_dir / "run.yaml").read_text())["label"] for run in (plain, named, turns)]
    assert labels == ["oracle", "oracle, second try", "oracle (max_turns=9)"]


def test_report_orders_runs_by_overall_accuracy(mini):
    wrong = mini.run("--model", mini.script(["<answer>41</answer>"]), "--label", "aaa always wrong", run_id="wrong")
    right = mini.run("--model", "oracle", run_id="right")
    code, rows, _, out = report_rows(mini, wrong.run_dir, right.run_dir)
    assert code == 0
    assert [row["model"] for row in rows if row["domain"] == "all"] == ["oracle", "aaa always wrong"]
    header = next(line for line in (out / "report.md").read_text().splitlines() if line.startswith("| domain |"))
    assert header == "| domain | oracle | aaa always wrong |"


def test_report_refuses_two_protocols_under_one_label(mini):
    first = mini.run("--model", "oracle", "--label", "same", run_id="first")
    second = mini.run("--model", "oracle", "--label", "same", "--max-turns", "9", run_id="second")
    code, _, output, out = report_rows(mini, first.run_dir, second.run_dir)
    assert code == 2 and not out.exists()
    [line] = output.strip().splitlines()
    assert "first" in line and "second" in line and "'same'" in line and "max_turns" in line


def test_shards_of_one_protocol_merge_under_their_label(mini):
    task = json.loads((mini.tasks_dir / "mini.jsonl").read_text())
    both = [task, task | {"id": "t3"}]  # t1 falls in shard 2/2, t3 in 1/2: neither shard is empty
    (mini.tasks_dir / "mini.jsonl").write_text("".join(json.dumps(one) + "\n" for one in both))
    first = mini.run("--model", "oracle", "--shard", "1/2", run_id="shard-1")
    second = mini.run("--model", "oracle", "--shard", "2/2", run_id="shard-2")
    code, rows, _, _ = report_rows(mini, first.run_dir, second.run_dir)
    assert code == 0
    assert [(row["model"], row["n"]) for row in rows if row["domain"] == "all"] == [("oracle", "2")]


def test_a_label_that_is_not_one_line_is_bad_input(mini):
    outcome = mini.run("--model", "oracle", "--label", "two\nlines")
    assert outcome.exit_code == 2 and "--label" in outcome.output
    assert not outcome.run_dir.exists()


def test_the_label_names_every_protocol_setting_that_differs_from_its_default():
    from harness.inputs.config import RunConfig
    from harness.run.planning.labels import label_of
    from harness.run.planning.plan import _PROTOCOL_KEYS

    changed = {
        "max_turns": 7,
        "time_limit": 500.0,
        "command_timeout": 30.0,
        "context_window": 100_000,
        "output_reserve": 100,
        "action_format": "text",
        "max_format_errors": 2,
        "temperature": 0.3,
        "max_output_tokens": 1000,  # the reply cap: in the protocol through the model's settings
    }
    assert set(_PROTOCOL_KEYS) - {"model", "model_args"} <= set(changed)
    label = label_of(RunConfig(model="m", model_args=("seed=1",), **changed))
    assert label.startswith("m (seed=1, ") and all(f"{name}={value}" in label for name, value in changed.items())


def test_the_last_progress_line_in_a_pipe_keeps_every_count_behind_a_long_label(mini):
    """Not a terminal (capsys, like `| tee`): one line at the end, the label cut before any number is."""
    settings = ("--max-turns", "7", "--time-limit", "500", "--command-timeout", "30", "--max-output-tokens", "1000")
    outcome = mini.run("--model", "oracle", "--max-format-errors", "2", "--temperature", "0.3", *settings)
    [line] = [line for line in outcome.output.splitlines() if " on mini" in line or "…" in line]
    assert line.startswith("oracle (temperature=0.3, max_turns=7") and len(line) <= 140  # the console's width
    assert re.search(r"…  ?1/1 · correct 1 · running 0 · 0 tokens · no cost · 0:00:0\d$", line)
    assert "eta" not in line and "$" not in line


def test_two_solvers_on_one_model_are_two_labels_in_one_report(mini, openai_server):
    task = json.loads((mini.tasks_dir / "mini.jsonl").read_text()) | {"evidence": ["ledger.md"]}
    (mini.tasks_dir / "mini.jsonl").write_text(json.dumps(task) + "\n")
    openai_server.respond = two_step_agent
    provider = ("--model", "openai/test-model", "--api-base", openai_server.url)
    agent = mini.run(*provider, run_id="agent")
    rag = mini.run(*provider, "--solver", "rag", "--solver-arg", "chunks=2", run_id="rag")
    labels = [yaml.safe_load((run.run_dir / "run.yaml").read_text())["label"] for run in (agent, rag)]
    assert labels == ["openai/test-model", "openai/test-model (solver=rag, chunks=2)"]
    code, rows, _, _ = report_rows(mini, agent.run_dir, rag.run_dir)
    assert code == 0 and sorted(row["model"] for row in rows if row["domain"] == "all") == sorted(labels)
