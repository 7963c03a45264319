"""mini-swe-agent trajectories both ways, with files written by the real package (pinned in the `test` extra)."""

from __future__ import annotations

import asyncio
import json

import pytest

from harness.cli.main import main
from harness.records.trajectory import read_jsonl


@pytest.fixture
def minisweagent(monkeypatch, tmp_path):
    """The real package, kept from writing its global config under the home folder or printing a banner."""
    monkeypatch.setenv("MSWEA_GLOBAL_CONFIG_DIR", str(tmp_path / "mswea-config"))
    monkeypatch.setenv("MSWEA_SILENT_STARTUP", "1")
    import minisweagent

    return minisweagent


def two_tasks(mini):
    tasks = [
        {"id": "t1", "domain": "mini", "question": "Units in total?", "answer": "42", "evidence": ["ledger.md"]},
        {"id": "t2", "domain": "mini", "question": "Units in 2021?", "answer": "2", "evidence": ["ledger.md"]},
    ]
    (mini.tasks_dir / "mini.jsonl").write_text("".join(json.dumps(task) + "\n" for task in tasks))


def run_mini_swe_agent(mini, task_id, question, commands, step_limit):
    """One episode of the real DefaultAgent with its deterministic test model over its local environment."""
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.environments.local import LocalEnvironment
    from minisweagent.models.test_models import DeterministicModel, make_output

    outputs = [make_output(f"step {i}", [{"command": command}]) for i, command in enumerate(commands)]
    path = mini.root / "mswea" / task_id / f"{task_id}.traj.json"
    agent = DefaultAgent(
        DeterministicModel(outputs=outputs),
        LocalEnvironment(cwd=str(mini.root / "collections" / "mini")),
        system_template="Answer from the documents.",
        instance_template="{{task}}",
        step_limit=step_limit,
        output_path=path,
    )
    agent.run(task=question)
    return path


def import_args(mini, run_id, *paths):
    return [
        "import",
        "mini-swe-agent",
        *map(str, paths),
        *mini.folder_arguments(run_id),
    ]


def comparable(rows):
    return sorted(rows, key=lambda row: (row["domain"], row["task_id"]))


def test_import_of_real_mini_swe_agent_trajectories_grades_and_records_evidence(mini, minisweagent):
    two_tasks(mini)
    submit = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT; echo '<answer>42</answer>'"
    first = run_mini_swe_agent(mini, "t1", "Units?", ["cat ledger.md", submit], step_limit=5)
    run_mini_swe_agent(mini, "t2", "Units?", ["grep 2021 ledger.md", "true"], step_limit=2)
    stray = mini.root / "mswea" / "zz" / "zz.traj.json"
    stray.parent.mkdir()
    stray.write_text(first.read_text())
    data = json.loads(first.read_text())
    assert data["trajectory_format"] == "mini-swe-agent-1.1" and data["info"]["exit_status"] == "Submitted"
    assert main(import_args(mini, "imported", mini.root / "mswea")) == 0
    output = mini.capsys.readouterr().out
    assert "imported 2 episodes" in output and "unmatched:" in output and "zz.traj.json" in output
    rows = {row["task_id"]: row for row in read_jsonl(mini.results_dir / "imported" / "results.jsonl")}
    assert (rows["t1"]["status"], rows["t1"]["verdict"], rows["t1"]["turns"], rows["t1"]["cost_usd"]) == (
        "answered",
        "correct",
        2,
        2.0,
    )
    assert (rows["t1"]["evidence_recall"], rows["t1"]["evidence_reached"]) == (1.0, {"ledger.md": 1})
    assert (rows["t2"]["status"], rows["t2"]["failure_mode"]) == ("turn_limit", "resource_exhaustion")
    run_dir = mini.results_dir / "imported"
    assert main(["report", str(run_dir)]) == 0
    assert main(["view", str(run_dir), "--static", str(mini.root / "site")]) == 0
    assert "ledger.md" in (mini.root / "site" / "episodes" / "0.json").read_text()
    assert main(["replay", "--regrade", str(run_dir)]) == 0
    assert "regraded 2 episodes: 0 verdicts changed" in mini.capsys.readouterr().out


def test_an_imported_row_records_the_task_type_as_a_run_does(mini, minisweagent):
    task = {"id": "t1", "domain": "mini", "question": "Units in total?", "answer": "42", "type": "lookup"}
    (mini.tasks_dir / "mini.jsonl").write_text(json.dumps(task) + "\n")
    submit = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT; echo '<answer>42</answer>'"
    path = run_mini_swe_agent(mini, "t1", "Units?", [submit], step_limit=3)
    assert main(import_args(mini, "typed", path)) == 0
    (row,) = read_jsonl(mini.results_dir / "typed" / "results.jsonl")
    assert (row["verdict"], row["task_type"]) == ("correct", "lookup")


def test_export_then_import_gives_the_same_rows(mini, minisweagent):
    two_tasks(mini)
    replies = [{"bash": "cat /workspace/documents/ledger.md; echo x > /workspace/documents/y"}, "<answer>42</answer>"]
    ours = mini.run("--model", mini.script(replies), "--max-turns", "5", "--watch-opens")
    assert ours.exit_code == 0 and len(ours.rows) == 2
    assert {row["evidence_method"] for row in ours.rows} == {"inotify on the collection folder (exact opens)"}
    out = mini.root / "exported"
    assert main(["export", "mini-swe-agent", str(ours.run_dir), str(out)]) == 0
    assert main(import_args(mini, "back", out)) == 0
    back = read_jsonl(mini.results_dir / "back" / "results.jsonl")
    assert comparable(back) == comparable(ours.rows)
    assert {row["refused_writes"] for row in back} == {1}
    assert main(["export", "mini-swe-agent", str(mini.results_dir / "back"), str(mini.root / "again")]) == 0
    assert main(import_args(mini, "again", mini.root / "again")) == 0
    assert comparable(read_jsonl(mini.results_dir / "again" / "results.jsonl")) == comparable(back)


def test_the_peer_inspector_opens_exported_files(mini, minisweagent):
    from minisweagent.run.utilities.inspector import TrajectoryInspector

    two_tasks(mini)
    ours = mini.run("--model", mini.script([{"bash": "echo seen-by-inspector"}, "<answer>42</answer>"]))
    out = mini.root / "exported"
    assert main(["export", "mini-swe-agent", str(ours.run_dir), str(out)]) == 0
    files = sorted(out.rglob("*.traj.json"))
    assert len(files) == 2

    async def shown_steps():
        app = TrajectoryInspector(files)
        async with app.run_test() as pilot:
            shown = []
            for _ in range(app.n_steps):
                shown.append(" ".join(str(static.render()) for static in app.query(".message-content")))
                app.action_next_step()
                await pilot.pause()
            return app.n_steps, shown

    steps, shown = asyncio.run(shown_steps())
    assert steps == 3  # the prompt; the command and its output; the answer and the exit
    assert "echo seen-by-inspector" in shown[1] and "<stdout>\nseen-by-inspector\n" in shown[1]
    assert "<answer>42</answer>" in shown[2]


def test_import_rejects_a_file_that_is_not_a_trajectory_and_writes_nothing(mini, minisweagent):
    two_tasks(mini)
    bad = mini.root / "t1.traj.json"
    bad.write_text('{"messages": []}')
    assert main(import_args(mini, "bad", bad)) == 2
    assert "t1.traj.json: field 'trajectory_format'" in mini.capsys.readouterr().err
    assert not (mini.results_dir / "bad").exists()


def test_import_rejects_malformed_messages_and_writes_nothing(mini, minisweagent):
    two_tasks(mini)
    bad = mini.root / "t1.traj.json"
    bad.write_text(json.dumps({"trajectory_format": "mini-swe-agent-1.1", "info": {}, "messages": ["not a message"]}))
    assert main(import_args(mini, "bad", bad)) == 2
    assert "t1.traj.json: field 'messages': malformed" in mini.capsys.readouterr().err
    assert not (mini.results_dir / "bad").exists()


def test_import_refuses_a_file_whose_parse_goes_over_the_memory_cap_and_writes_nothing(mini, minisweagent):
    """8 million empty messages: 24 MB of JSON that parses to over 500 MB of objects."""
    two_tasks(mini)
    bomb = mini.root / "t1.traj.json"
    bomb.write_text(
        '{"trajectory_format": "mini-swe-agent-1.1", "info": {}, "messages": [' + "{}," * 8_000_000 + "{}]}"
    )
    assert main([*import_args(mini, "bomb", bomb), "--max-memory", "300"]) == 2
    error = mini.capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "t1.traj.json: memory: reading it needs more than 300 MB (--max-memory)" in error
    assert not (mini.results_dir / "bomb").exists()


def test_import_of_a_judge_graded_task_without_judges_is_one_line_exit_2_and_writes_nothing(mini, minisweagent):
    task = {"id": "t1", "domain": "mini", "question": "Units in total?", "answer": "forty-two", "grader": "judge"}
    (mini.tasks_dir / "mini.jsonl").write_text(json.dumps(task) + "\n")
    path = run_mini_swe_agent(mini, "t1", task["question"], ["echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT; echo 42"], 3)
    assert main(import_args(mini, "judged", path)) == 2
    error = mini.capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "mini/t1 is graded by 'judge': --judge is required" in error
    assert not (mini.results_dir / "judged").exists()


def test_import_of_a_judge_graded_task_asks_the_given_judges(mini, minisweagent, openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    from tests.helpers.openai_server import reply

    openai_server.push(reply(json.dumps({"verdict": "CORRECT", "reason": "same number"})))
    task = {"id": "t1", "domain": "mini", "question": "Units in total?", "answer": "forty-two", "grader": "judge"}
    (mini.tasks_dir / "mini.jsonl").write_text(json.dumps(task) + "\n")
    submit = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT; echo '<answer>42</answer>'"
    path = run_mini_swe_agent(mini, "t1", task["question"], [submit], 3)
    arguments = [*import_args(mini, "judged", path), "--judge", "openai/judge-a", "--judge-api-base", openai_server.url]
    assert main(arguments) == 0
    [row] = read_jsonl(mini.results_dir / "judged" / "results.jsonl")
    assert row["verdict"] == "correct"


def test_import_of_an_absurd_answer_beside_a_lone_surrogate_grades_it_and_completes_the_folder(mini, minisweagent):
    """The agent's own output: `1e99999999` raised in the grader and a lone surrogate in the log writer, which
    aborted the import with a traceback and left a half-written run folder."""
    two_tasks(mini)
    ours = mini.run("--model", mini.script(["Sum \ud800: <answer>1e99999999</answer>"]))
    out = mini.root / "exported"
    assert main(["export", "mini-swe-agent", str(ours.run_dir), str(out)]) == 0
    assert main(import_args(mini, "back", out)) == 0
    back = read_jsonl(mini.results_dir / "back" / "results.jsonl")
    assert {(row["status"], row["verdict"], tuple(row["reasons"])) for row in back} == {
        ("answered", "unparseable", ("OUT_OF_RANGE",))
    }


def test_an_import_builds_typed_events_from_a_peers_messages():
    from harness.interop.mini_swe_agent import import_messages
    from harness.records.events import ActionEvent, ModelCallEvent, ObservationEvent

    call = {"id": "c1", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
    usage = {"prompt_tokens": 7, "completion_tokens": 2}
    messages = [
        {"role": "user", "content": "Units in total?"},
        {"role": "assistant", "content": "look", "tool_calls": [call], "extra": {"actions": [{"command": "ls"}]}},
        {"role": "tool", "content": "ledger.md\n", "extra": {"raw_output": "ledger.md\n", "returncode": 0}},
    ]
    messages[1]["extra"]["response"] = {"usage": usage}
    episode = import_messages({"messages": messages, "info": {}})
    model_call, action, observation = episode.events
    assert isinstance(model_call, ModelCallEvent) and model_call.response.text == "look"
    assert model_call.response.tool_calls[0].arguments == '{"command": "ls"}'
    assert (model_call.response.usage.input_tokens, model_call.response.usage.output_tokens) == (7, 2)
    assert isinstance(action, ActionEvent) and action.command == "ls"
    assert isinstance(observation, ObservationEvent) and observation.exit_code == 0


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ({"actions": [{"command": ["rm", "-rf"]}]}, "action field 'command': Input should be a valid string"),
        ({"cost": "free"}, "model_call field 'response.cost_usd': Input should be a valid number"),
    ],
)
def test_an_import_whose_values_are_of_the_wrong_type_is_one_line_exit_2_and_writes_nothing(mini, extra, problem):
    """The file is input: a peer's command that is a list was written into our trajectory as a list."""
    two_tasks(mini)
    bad = mini.root / "t1.traj.json"
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a", "extra": extra}]
    bad.write_text(json.dumps({"trajectory_format": "mini-swe-agent-1.1", "info": {}, "messages": messages}))
    assert main(import_args(mini, "bad", bad)) == 2
    error = mini.capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "t1.traj.json: field 'messages': malformed" in error and problem in error
    assert not (mini.results_dir / "bad").exists()
