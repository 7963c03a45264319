"""How episodes end, with scripted models through the real loop, sandbox, grading and logs."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("action_format", ["toolcall", "text"])
def test_answer_in_prose_ends_the_episode_as_answered(mini, action_format):
    model = mini.script([{"bash": "cat documents/ledger.md"}, "Adding 40 and 2: <answer>42</answer>"])
    outcome = mini.run("--model", model, "--action-format", action_format)
    assert outcome.exit_code == 0
    [row] = outcome.rows
    assert (row["status"], row["answer"], row["verdict"], row["turns"]) == ("answered", "42", "correct", 2)


def test_echo_command_printing_a_tag_is_a_submission(mini):
    outcome = mini.run("--model", mini.script([{"bash": "echo '<answer>41</answer>'"}]))
    [row] = outcome.rows
    assert (row["status"], row["answer"], row["verdict"]) == ("answered", "41", "wrong_value")


def test_tag_printed_from_a_document_never_ends_the_episode(mini):
    model = mini.script([{"bash": "cat documents/decoy.md"}, "<answer>42</answer>"])
    [row] = mini.run("--model", model).rows
    assert (row["status"], row["turns"], row["answer"]) == ("answered", 2, "42")


def test_tag_inside_a_code_block_of_the_reply_does_not_end_the_episode(mini):
    model = mini.script([{"text": "Template:\n```\n<answer>7</answer>\n```", "bash": "true"}, "<answer>42</answer>"])
    [row] = mini.run("--model", model).rows
    assert (row["turns"], row["answer"]) == (2, "42")


def test_turn_budget_ends_the_episode_as_turn_limit(mini):
    model = mini.script([{"bash": "true"}] * 5)
    [row] = mini.run("--model", model, "--max-turns", "3").rows
    assert (row["status"], row["turns"], row["verdict"], row["answer"]) == ("turn_limit", 3, "no_answer", None)


def test_command_cut_off_by_the_episode_clock_ends_it_as_time_limit(mini):
    model = mini.script([{"bash": "sleep 30"}, "<answer>42</answer>"])
    outcome = mini.run("--model", model, "--time-limit", "2")
    [row] = outcome.rows
    assert row["status"] == "time_limit"
    assert row["duration_s"] < 15
    observation = next(e for e in outcome.trajectory("t1") if e["event"] == "observation")
    assert observation["timed_out"] is True


def test_command_timeout_alone_lets_the_episode_continue(mini):
    model = mini.script([{"bash": "sleep 30"}, "<answer>42</answer>"])
    [row] = mini.run("--model", model, "--command-timeout", "1").rows
    assert (row["status"], row["verdict"]) == ("answered", "correct")


def test_consecutive_replies_without_action_end_as_format_errors(mini):
    model = mini.script(["hmm", "let me think", "still thinking", "<answer>42</answer>"])
    outcome = mini.run("--model", model, "--max-format-errors", "3")
    [row] = outcome.rows
    assert (row["status"], row["turns"]) == ("format_errors", 3)
    assert sum(e["event"] == "format_error" for e in outcome.trajectory("t1")) == 3


def test_a_valid_action_resets_the_format_error_count(mini):
    model = mini.script(["hmm", {"bash": "true"}, "hmm", "<answer>42</answer>"])
    [row] = mini.run("--model", model, "--max-format-errors", "2").rows
    assert (row["status"], row["verdict"]) == ("answered", "correct")


def test_context_budget_ends_the_episode_before_the_call(mini):
    model = mini.script([{"bash": "seq 1 3000"}, "<answer>42</answer>"])
    [row] = mini.run("--model", model, "--context-window", "4000", "--output-reserve", "100").rows
    assert (row["status"], row["turns"]) == ("context_limit", 1)


def test_trajectory_records_every_event_in_order(mini):
    model = mini.script([{"bash": "echo hi"}, "<answer>42</answer>"])
    outcome = mini.run("--model", model)
    events = [e["event"] for e in outcome.trajectory("t1")]
    assert events == [
        "episode_start",
        "sandbox_ready",
        "model_call",
        "action",
        "observation",
        "model_call",
        "evidence",
        "episode_end",
    ]
    observation = outcome.trajectory("t1")[4]
    assert (observation["stdout"], observation["exit_code"]) == ("hi\n", 0)
    end = outcome.trajectory("t1")[-1]
    assert end["verdict"] == "correct" and end["status"] == "answered"


def test_oracle_runs_the_reference_solution(mini):
    [row] = mini.run("--model", "oracle").rows
    assert (row["status"], row["answer"], row["verdict"], row["turns"]) == ("answered", "42", "correct", 1)


def test_a_multiple_choice_task_runs_through_the_same_loop(mini):
    import json

    task = {"id": "c1", "domain": "mini", "question": "Which? (A) 40 (B) 42", "answer": "B", "grader": "choice"}
    (mini.tasks_dir / "mini.jsonl").write_text(json.dumps(task) + "\n")
    [row] = mini.run("--model", mini.script(["<answer>(B)</answer>"])).rows
    assert (row["verdict"], row["verdict_strict"], row["grader_version"]) == (
        "correct",
        "format_violation",
        "choice-1.0",
    )


def test_the_tool_list_runs_in_a_local_episode_and_is_recorded(mini):
    import yaml

    model = mini.script(
        [{"bash": "cd documents && fd ledger && tree --noreport . && rg -c 2020 ledger.md"}, "<answer>42</answer>"]
    )
    outcome = mini.run("--model", model)
    observation = next(e for e in outcome.trajectory("t1") if e["event"] == "observation")
    assert (observation["exit_code"], observation["stderr"]) == (0, "")
    assert observation["stdout"] == "ledger.md\n.\n├── decoy.md\n└── ledger.md\n1\n"
    recorded = yaml.safe_load((outcome.run_dir / "run.yaml").read_text())["sandbox"]["tools"]
    assert set(recorded) == {"bash", "python3", "jq", "rg", "fd", "tree", "less"}
    system = next(e for e in outcome.trajectory("t1") if e["event"] == "model_call")["messages"][0]["content"]
    assert "jq, rg, fd, tree, less, grep" in system


def test_a_tool_missing_from_the_sandbox_refuses_the_run_in_one_line(mini, monkeypatch):
    from harness.sandboxes import tools

    listed = tools.tools()
    monkeypatch.setattr(tools, "tools", lambda: (*listed, tools.Tool("nosuchtool", "no-such-package", "nosuchtool")))
    outcome = mini.run("--model", mini.script(["<answer>42</answer>"]))
    assert outcome.exit_code == 2
    [line] = [text for text in outcome.output.splitlines() if text.strip()]
    assert "the local sandbox lacks nosuchtool" in line and "apt-get install no-such-package" in line
    assert not mini.results_dir.exists()
