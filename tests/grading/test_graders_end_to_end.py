"""A mixed task file, one task per grader, run in the local sandbox with the judge on the local test server:
rows, trajectories, the report by task type, a re-grade from the cache and a resume that retries a judge error."""

from __future__ import annotations

import json

import pytest

from harness.cli.main import main
from harness.grading.judge_prompt import PROMPT_DIGEST
from harness.records.trajectory import read_jsonl
from tests.helpers.openai_server import reply

JUDGE_MODEL = "openai/gpt-4o-mini"  # priced in litellm's bundled map, so the judge's cost is known
MIXED = [
    {
        "id": "num",
        "grader": "numeric",
        "answer": "42",
        "type": "numeric_exact",
        "solution": "awk -F'|' '/^\\| 20/ {s += $3} END {print s}' /workspace/documents/ledger.md",
    },
    {"id": "one", "grader": "choice", "answer": "B", "type": "single_choice", "solution": "echo B"},
    {"id": "multi", "grader": "multi_choice", "answer": "A, C", "type": "multiple_choice", "solution": "echo 'C & A'"},
    {
        "id": "tol",
        "grader": "numeric_tol",
        "answer": "40.0",
        "rel_tol": 0.05,
        "type": "numeric_tolerance",
        "solution": "echo 41",
    },
    {"id": "tickers", "grader": "set", "answer": "AAPL, MSFT", "type": "set", "solution": "echo 'MSFT; AAPL'"},
    {"id": "ranked", "grader": "list", "answer": "AAPL, MSFT", "type": "set", "solution": "echo 'MSFT, AAPL'"},
    {
        "id": "open",
        "grader": "judge",
        "answer": "Units fell from 40 to 2.",
        "type": "open_ended",
        "solution": "echo 'They dropped from 40 units to 2 units'",
    },
]


pytestmark = pytest.mark.usefixtures("openai_key")


@pytest.fixture
def mixed(mini):
    rows = [{"domain": "mini", "question": f"Question {task['id']}?", **task} for task in MIXED]
    (mini.tasks_dir / "mini.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return mini


def judge_args(server) -> tuple[str, ...]:
    return ("--model", "oracle", "--judge", JUDGE_MODEL, "--judge-api-base", server.url)


@pytest.mark.slow
def test_mixed_run_grades_each_family_and_reports_by_type(mixed, openai_server):
    openai_server.push(reply(json.dumps({"verdict": "CORRECT", "reason": "same facts"})))
    outcome = mixed.run(*judge_args(openai_server))
    assert outcome.exit_code == 0, outcome.output
    rows = {row["task_id"]: row for row in outcome.rows}
    assert {task_id: row["verdict"] for task_id, row in rows.items()} == {
        "num": "correct",
        "one": "correct",
        "multi": "correct",
        "tol": "correct",
        "tickers": "correct",
        "ranked": "wrong_value",
        "open": "correct",
    }
    assert (rows["ranked"]["reasons"], rows["ranked"]["item_f1"], rows["multi"]["verdict_strict"]) == (
        ["ORDER"],
        1.0,
        "format_violation",
    )
    assert rows["open"]["judge_cost_usd"] > 0 and rows["open"]["cost_usd"] is None  # the oracle costs nothing
    assert all(row["judge_cost_usd"] is None for task_id, row in rows.items() if task_id != "open")
    [call] = [event for event in outcome.trajectory("open") if event["event"] == "judge_call"]
    assert (call["verdict"], call["cached"], call["input_tokens"], call["output_tokens"]) == ("CORRECT", False, 120, 30)
    assert "accuracy by task type" in outcome.output
    [summary] = json.loads((outcome.run_dir / "summary.json").read_text())["domains"]
    assert summary["accuracy_by_type"]["set"] == 0.5 and summary["macro_accuracy"] == round(5.5 / 6, 6)
    assert summary["judge_cost_usd"] == rows["open"]["judge_cost_usd"] and summary["cost_usd"] is None
    record = (outcome.run_dir / "run.yaml").read_text()
    assert PROMPT_DIGEST in record and JUDGE_MODEL in record  # the judges and their prompt are the protocol
    assert main(["report", str(outcome.run_dir), "--out", str(mixed.root / "report")]) == 0
    report = (mixed.root / "report" / "report.md").read_text()
    # Six types: five at 100%, `set` at 50% (the list in the wrong order); macro = (5 + 0.5) / 6.
    assert "## Accuracy by task type" in report and "| 91.7 |" in report and "50.0 (n=2)" in report


def test_regrade_asks_the_judge_nothing_new(mixed, openai_server):
    openai_server.push(reply(json.dumps({"verdict": "CORRECT"})))
    outcome = mixed.run(*judge_args(openai_server), "--task-id", "open")
    assert outcome.rows[0]["verdict"] == "correct"
    assert main(["replay", str(outcome.run_dir), "--regrade"]) == 0
    assert len(openai_server.requests) == 1
    [row] = read_jsonl(outcome.run_dir / "results.regraded.jsonl")
    assert row["verdict"] == "correct"


def test_resume_asks_the_judges_again_without_running_the_agent_again(mixed, openai_server):
    openai_server.push(reply("I think it is CORRECT"))
    first = mixed.run(*judge_args(openai_server), "--task-id", "open")
    assert (first.rows[0]["verdict"], first.rows[0]["reasons"]) == ("judge_error", ["JUDGE_MALFORMED", "NO_QUORUM"])
    openai_server.push(reply(json.dumps({"verdict": "INCORRECT"})))
    resumed = mixed.run(*judge_args(openai_server), "--task-id", "open")
    assert [row["verdict"] for row in resumed.rows] == ["judge_error", "wrong_value"]
    assert resumed.rows[1]["answer"] == resumed.rows[0]["answer"] and len(openai_server.requests) == 2
    events = resumed.trajectory("open")
    # One episode (one action), then the judges asked again and a second episode_end with the new grade.
    assert [e["event"] for e in events if e["event"] in ("action", "judge_call", "episode_end")] == [
        "action",
        "judge_call",
        "episode_end",
        "judge_call",
        "episode_end",
    ]
    assert events[-1]["regraded"] is True and events[-1]["verdict"] == "wrong_value"
    assert "graded 1 judge errors again: 0 correct" in resumed.output
    assert mixed.run(*judge_args(openai_server), "--task-id", "open").rows[-1]["verdict"] == "wrong_value"
    assert len(openai_server.requests) == 2  # a finished grade is kept: nothing asked a third time


def test_resume_under_other_judges_is_refused(mixed, openai_server):
    openai_server.push(reply(json.dumps({"verdict": "CORRECT"})))
    assert mixed.run(*judge_args(openai_server), "--task-id", "open").exit_code == 0
    other = ("--model", "oracle", "--judge", "openai/other-judge", "--judge-api-base", openai_server.url)
    outcome = mixed.run(*other, "--task-id", "open")
    assert outcome.exit_code == 2 and "judge" in outcome.output and len(openai_server.requests) == 1


def test_unknown_judge_model_is_an_input_error(mixed):
    outcome = mixed.run("--model", "oracle", "--judge", "openai/a,gpt")
    assert outcome.exit_code == 2 and "--judge: unknown model 'gpt'" in outcome.output
    assert not outcome.run_dir.exists()


def test_judged_task_without_judge_is_an_input_error(mixed):
    outcome = mixed.run("--model", "oracle")
    assert outcome.exit_code == 2 and "--judge: required: task mini/open is graded by 'judge'" in outcome.output
    assert not outcome.run_dir.exists()
