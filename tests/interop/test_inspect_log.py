"""Runs as inspect_ai `.eval` logs through inspect's own log API, read back by inspect, opened in its viewer,
and imported again (the optional extra harness[inspect], installed with the test extra)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from inspect_ai.log import EvalLog, EvalSample, read_eval_log, write_eval_log

from harness.cli.main import main
from harness.core.status import Status
from harness.interop.inspect_export import export_log
from harness.records.jsonl import read_jsonl
from harness.records.reading import logged_events
from harness.records.results import ResultRow
from harness.records.run_folder import RunFolder
from harness.records.trajectory import read_trajectory
from tests.helpers.openai_server import fault, reply

JUDGE = "openai/gpt-4o-mini"  # priced in litellm's bundled map: tokens and cost are known
GRADED = [
    {
        "id": "num",
        "grader": "numeric",
        "answer": "42",
        "solution": "awk -F'|' '/^\\| 20/ {s += $3} END {print s}' /workspace/documents/ledger.md",
    },
    {"id": "one", "grader": "choice", "answer": "B", "solution": "echo B"},
    {"id": "tickers", "grader": "set", "answer": "AAPL, MSFT", "solution": "echo 'MSFT; AAPL'"},
    {"id": "open", "grader": "judge", "answer": "Units fell from 40 to 2.", "solution": "echo 'From 40 to 2'"},
]


pytestmark = pytest.mark.usefixtures("openai_key")


@pytest.fixture
def graded(mini):
    rows = [
        {"domain": "mini", "question": f"Question {task['id']}?", "evidence": ["ledger.md"], **task} for task in GRADED
    ]
    (mini.tasks_dir / "mini.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return mini


def runs_of_every_kind(project, server):
    """An oracle run over one task per grader (the judge on the local server), a litellm run that reasons,
    calls bash and answers (tokens and cost), and a scripted run ended by its turn budget."""
    server.push(reply(json.dumps({"verdict": "CORRECT", "reason": "same facts"})))
    oracle = project.run("--model", "oracle", "--judge", JUDGE, "--judge-api-base", server.url, run_id="oracle")
    server.push(
        reply(bash="cat /workspace/documents/ledger.md", reasoning="The ledger has it."),
        reply("40 + 2 = <answer>42</answer>", reasoning=""),
    )
    model = project.run("--model", JUDGE, "--api-base", server.url, "--task-id", "num", run_id="model")
    limited = project.run(
        "--model",
        project.script([{"bash": "sleep 0"}]),
        "--max-turns",
        "1",
        "--task-id",
        "num",
        "--task-id",
        "one",
        run_id="limited",
    )
    assert (oracle.exit_code, model.exit_code, limited.exit_code) == (0, 0, 0), oracle.output + model.output
    return [oracle, model, limited]


def export(project, *runs):
    out = project.root / "inspect"
    assert main(["export", "inspect", *(str(run.run_dir) for run in runs), str(out)]) == 0
    return out


@pytest.mark.slow
def test_export_reads_back_with_inspect_field_by_field(graded, openai_server):
    runs = runs_of_every_kind(graded, openai_server)
    out = export(graded, *runs)
    for run in runs:
        log = read_eval_log(str(out / f"{run.run_dir.name}.eval"))
        assert log.status == "success" and log.eval.run_id == run.run_dir.name
        assert log.eval.model == RunFolder(run.run_dir).read_record().config.model
        samples = {sample.id: sample for sample in log.samples}
        assert set(samples) == {row["task_id"] for row in run.rows}
        for row in run.rows:
            sample_matches_episode(samples[row["task_id"]], row, run.trajectory(row["task_id"]))
        correct = sum(row["verdict"] == "correct" for row in run.rows)
        assert log.results.scores[0].metrics["accuracy"].value == correct / len(run.rows)
    by_grader = {sample.id: sample for sample in read_eval_log(str(out / "oracle.eval")).samples}
    assert by_grader["tickers"].scores["harness"].metadata["item_f1"] == 1.0
    assert by_grader["open"].metadata["harness"]["judge_cost_usd"] > 0
    [reasoned] = read_eval_log(str(out / "model.eval")).samples
    assert reasoned.messages[2].content[0].reasoning == "The ledger has it."
    assert (reasoned.model_usage[JUDGE].input_tokens, reasoned.model_usage[JUDGE].output_tokens) == (240, 60)
    limits = {sample.id: sample.limit for sample in read_eval_log(str(out / "limited.eval")).samples}
    assert {(limit.type, limit.limit) for limit in limits.values()} == {("turn", 1.0)}


def sample_matches_episode(sample: EvalSample, row: dict, events: list[dict]) -> None:
    start, end = events[0], events[-1]
    assert (sample.input, sample.target, sample.epoch) == (start["task"]["question"], start["task"]["answer"], 1)
    assert sample.output.completion == (end["submission"] or "")
    score = sample.scores["harness"]
    assert score.value == ("C" if row["verdict"] == "correct" else "I") and score.answer == row["answer"]
    assert all(reason in score.explanation for reason in row["reasons"]) and row["verdict"] in score.explanation
    assert [score.metadata[name] for name in ("verdict", "verdict_strict", "verdict_lenient", "reasons")] == [
        row["verdict"],
        row["verdict_strict"],
        row["verdict_lenient"],
        row["reasons"],
    ]
    assert sample.working_time == row["duration_s"]
    assert {name: sample.metadata[name] for name in ("evidence_recall", "evidence_reached", "failure_mode")} == {
        name: row[name] for name in ("evidence_recall", "evidence_reached", "failure_mode")
    }
    assert sample.metadata["harness"]["status"] == row["status"]
    usages = list(sample.model_usage.values())
    assert [(usage.input_tokens, usage.output_tokens, usage.total_cost) for usage in usages] == (
        [(row["input_tokens"], row["output_tokens"], row["cost_usd"])] if row["input_tokens"] else []
    )
    commands = [event["command"] for event in events if event["event"] == "action"]
    calls = [call for message in sample.messages if message.role == "assistant" for call in message.tool_calls or []]
    assert [call.arguments["command"] for call in calls] == commands and {c.function for c in calls} <= {"bash"}
    shown = [event["text"] for event in events if event["event"] == "observation"]
    assert [message.text for message in sample.messages if message.role == "tool"] == shown
    assert sample.messages[0].role == "system" and sample.messages[1].role == "user"
    assert (sample.limit is None) == (
        row["status"]
        not in (
            "turn_limit",
            "time_limit",
            "context_limit",
            "cost_limit",
            "sandbox_limit",
            "format_errors",
            "cancelled",
        )
    )


@pytest.mark.parametrize("status", list(Status))
def test_every_status_is_a_limit_an_error_or_neither(graded, status, tmp_path):
    run = graded.run("--model", "oracle", "--task-id", "num")
    events = run.trajectory("num")
    events[-1] |= {"status": status.value, "detail": f"ended: {status.value}"}
    record = RunFolder(run.run_dir).read_record()
    path = tmp_path / "one.eval"
    write_eval_log(
        export_log(
            "r",
            record.created,
            record.config.model_dump() | {"context_window": 8192, "max_episode_cost": 0.5},
            [logged_events(events)],
        ),
        str(path),
    )
    [sample] = read_eval_log(str(path)).samples
    expected_limit = {
        Status.TURN_LIMIT: "turn",
        Status.TIME_LIMIT: "working",
        Status.CONTEXT_LIMIT: "context",
        Status.COST_LIMIT: "cost",
        Status.SANDBOX_LIMIT: "custom",
        Status.FORMAT_ERRORS: "custom",
        Status.CANCELLED: "operator",
    }.get(status)
    assert (sample.limit.type if sample.limit else None) == expected_limit
    if expected_limit and status is not Status.CANCELLED:
        assert sample.limit.limit > 0 and sample.limit.reason == f"ended: {status.value}"
    failed = status in (Status.MODEL_ERROR, Status.SANDBOX_ERROR, Status.HARNESS_ERROR)
    assert (sample.error is not None) == failed
    assert not failed or f"ended: {status.value}" in sample.error.message
    assert sample.metadata["harness"]["status"] == status.value


def test_a_score_stays_a_number_and_a_judge_error_is_unscored(graded, openai_server):
    scored = {"id": "scored", "domain": "mini", "question": "Summarise the ledger.", "grader": "score"}
    scored |= {"answer": "Units fell from 40 to 2.", "solution": "echo 'From 40 to 2'"}
    with (graded.tasks_dir / "mini.jsonl").open("a") as tasks:
        tasks.write(json.dumps(scored) + "\n")

    def judges(request):  # the score judge gives 4 of 5; the verdict judge refuses every request
        prompt = request["messages"][-1]["content"]
        return fault(400, "judge refused") if '"verdict"' in prompt else reply(json.dumps({"score": 4, "reason": "-"}))

    openai_server.respond = judges
    run = graded.run(
        *("--model", "oracle", "--task-id", "scored", "--task-id", "open", "--task-id", "num"),
        *("--judge", JUDGE, "--judge-api-base", openai_server.url),
    )
    assert {row["task_id"]: row["verdict"] for row in run.rows}["open"] == "judge_error"
    log = read_eval_log(str(export(graded, run) / "run.eval"))
    values = {sample.id: sample.scores["harness"].value for sample in log.samples}
    assert values["scored"] == 4 and values["num"] == "C"
    assert isinstance(values["open"], float) and values["open"] != values["open"]  # NaN: inspect's unscored
    [accuracy] = [score.metrics["accuracy"].value for score in log.results.scores]
    assert accuracy == 0.5  # `num` of the two graded samples (the grade's verdict); the unscored one is left out


def test_a_run_with_unfinished_episodes_is_a_cancelled_evaluation(graded):
    run = graded.run("--model", "oracle", "--task-id", "num", "--task-id", "one")
    path = run.run_dir / "episodes" / "mini" / "one.jsonl"
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:-1]))  # as a kill leaves it
    out = export(graded, run)
    assert "skipped (unfinished)" in graded.capsys.readouterr().out
    log = read_eval_log(str(out / "run.eval"))
    assert (log.status, log.results.total_samples, log.results.completed_samples) == ("cancelled", 2, 1)
    assert [sample.id for sample in log.samples] == ["num"]


def import_args(project, run_id, *paths, judge_url=None):
    judge = ["--judge", JUDGE, "--judge-api-base", judge_url] if judge_url else []
    return [
        "import",
        "inspect",
        *map(str, paths),
        *project.folder_arguments(run_id),
        *judge,
    ]


def comparable(rows):
    return sorted(rows, key=lambda row: (row["domain"], row["task_id"]))


@pytest.mark.slow
def test_export_then_import_gives_the_same_rows(graded, openai_server):
    runs = runs_of_every_kind(graded, openai_server)
    out = export(graded, *runs)
    calls_before = len(openai_server.requests)
    for run in runs:
        path = out / f"{run.run_dir.name}.eval"
        assert main(import_args(graded, f"back-{run.run_dir.name}", path, judge_url=openai_server.url)) == 0
        back = read_jsonl(graded.results_dir / f"back-{run.run_dir.name}" / "results.jsonl")
        assert comparable(back) == comparable(run.rows)
    assert len(openai_server.requests) == calls_before  # the judge's verdict came from the cache
    back_dir = graded.results_dir / "back-model"
    calls = [
        event for event in read_jsonl(back_dir / "episodes" / "mini" / "num.jsonl") if event["event"] == "model_call"
    ]
    assert [call["response"]["reasoning"] for call in calls] == ["The ledger has it.", ""]  # empty stays empty
    assert main(["report", str(back_dir)]) == 0
    assert main(["view", str(back_dir), "--static", str(graded.root / "site")]) == 0
    assert main(["replay", "--regrade", str(back_dir)]) == 0
    assert "regraded 1 episodes: 0 verdicts changed" in graded.capsys.readouterr().out
    assert main(["export", "inspect", str(back_dir), str(graded.root / "again")]) == 0
    assert main(import_args(graded, "again", graded.root / "again")) == 0
    assert comparable(read_jsonl(graded.results_dir / "again" / "results.jsonl")) == comparable(runs[1].rows)


def test_a_foreign_log_naming_our_task_is_imported_and_graded(graded):
    """A log inspect's own bash tool wrote (its argument is `cmd`), without our metadata."""
    from inspect_ai.log import EvalConfig, EvalDataset, EvalSpec
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser, ModelOutput, ModelUsage
    from inspect_ai.tool import ToolCall

    messages = [
        ChatMessageUser(content="Question num?"),
        ChatMessageAssistant(
            content="", tool_calls=[ToolCall(id="c1", function="bash", arguments={"cmd": "cat ledger.md"})]
        ),
        ChatMessageTool(content="| year | units |\n| 2020 | 40 |\n| 2021 | 2 |", tool_call_id="c1", function="bash"),
        ChatMessageAssistant(content="<answer>42</answer>"),
    ]
    sample = EvalSample(
        id="num",
        epoch=1,
        input="Question num?",
        target="42",
        messages=messages,
        output=ModelOutput.from_content("openai/peer", "<answer>42</answer>"),
        working_time=3.5,
        model_usage={"openai/peer": ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)},
    )
    spec = EvalSpec(
        created="2026-01-01T00:00:00+00:00",
        task="peer",
        dataset=EvalDataset(name="peer"),
        model="openai/peer",
        config=EvalConfig(),
    )
    path = graded.root / "peer.eval"
    write_eval_log(EvalLog(status="success", eval=spec, samples=[sample]), str(path))
    assert main(import_args(graded, "peer", path)) == 0
    [row] = read_jsonl(graded.results_dir / "peer" / "results.jsonl")
    assert (row["status"], row["verdict"], row["turns"], row["input_tokens"], row["duration_s"]) == (
        "answered",
        "correct",
        2,
        10,
        3.5,
    )
    assert row["evidence_recall"] == 1.0  # the command named the evidence file
    events = read_trajectory(graded.results_dir / "peer" / "episodes" / "mini" / "num.jsonl")
    assert [event["command"] for event in events if event["event"] == "action"] == ["cat ledger.md"]
    assert ResultRow.from_dict(row).is_correct()


def test_a_log_whose_metadata_rebuilds_a_malformed_event_is_one_line_exit_2_and_writes_nothing(graded):
    run = graded.run("--model", "oracle", "--task-id", "num")
    out = export(graded, run)
    log = read_eval_log(str(out / "run.eval"))
    [tool] = [message for message in log.samples[0].messages if message.role == "tool"]
    tool.metadata["harness"]["stdout"] = 5  # the file is input: a forged observation
    write_eval_log(log, str(out / "run.eval"))
    assert main(import_args(graded, "forged", out / "run.eval")) == 2
    error = graded.capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "sample 'num': malformed" in error and "observation field 'stdout'" in error
    assert not (graded.results_dir / "forged").exists()


@pytest.mark.parametrize("content", [b"not a zip file", b"PK\x03\x04broken", b""])
def test_an_invalid_eval_file_is_one_line_exit_2_and_writes_nothing(graded, content):
    path = graded.root / "bad.eval"
    path.write_bytes(content)
    assert main(import_args(graded, "bad", path)) == 2
    error = graded.capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "bad.eval: not an inspect_ai eval log" in error
    assert not (graded.results_dir / "bad").exists()


def test_a_foreign_log_naming_none_of_our_tasks_is_one_line_exit_2_and_writes_nothing(graded):
    from inspect_ai.log import EvalConfig, EvalDataset, EvalSpec

    spec = EvalSpec(
        created="2026-01-01T00:00:00+00:00",
        task="peer",
        dataset=EvalDataset(name="peer"),
        model="openai/peer",
        config=EvalConfig(),
    )
    path = graded.root / "foreign.eval"
    write_eval_log(
        EvalLog(status="success", eval=spec, samples=[EvalSample(id=7, epoch=1, input="x", target="y")]), str(path)
    )
    assert main(import_args(graded, "foreign", path)) == 2
    error = graded.capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "no sample matched a task" in error and "no task with id '7'" in error
    assert not (graded.results_dir / "foreign").exists()


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.skipif(CHROMIUM is None, reason="the viewer test needs Debian's chromium (apt-get install chromium)")
@pytest.mark.slow
def test_inspect_view_serves_the_export_and_chromium_opens_a_sample(graded, openai_server):
    from playwright.sync_api import sync_playwright

    runs = runs_of_every_kind(graded, openai_server)
    out = export(graded, runs[1])
    port = free_port()
    inspect = Path(sys.executable).with_name("inspect")
    server = subprocess.Popen(
        [str(inspect), "view", "--log-dir", str(out), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{port}/")
            page.get_by_text("cat /workspace/documents/ledger.md").first.wait_for(timeout=30_000)
            body = page.inner_text("body")
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert "Question num?" in body and "| 2020 | 40 |" in body and "40 + 2 =" in body
    assert "harness/mini" in body and JUDGE in body


def test_exporting_a_folder_that_is_no_run_is_one_line_exit_2_and_writes_nothing(graded):
    out = graded.root / "out"
    assert main(["export", "inspect", str(graded.root / "tasks"), str(out)]) == 2
    error = graded.capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "not a run folder (no run.yaml)" in error
    assert not out.exists()


def test_without_inspect_ai_the_export_says_how_to_install_it(graded, monkeypatch):
    run = graded.run("--model", "oracle", "--task-id", "num")
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # importing it raises ImportError
    out = graded.root / "out"
    assert main(["export", "inspect", str(run.run_dir), str(out)]) == 2
    assert "inspect_ai is not installed: pip install 'harness[inspect]'" in graded.capsys.readouterr().err
    assert not out.exists()


def test_a_zipped_log_of_gigabytes_is_refused_for_memory_one_line_exit_2_and_writes_nothing(graded):
    """A 600 MB JSON member zipped to under 1 MB: read under a 400 MB cap, it is refused, not read."""
    path = graded.root / "bomb.eval"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as log, log.open("header.json", "w") as member:
        member.write(b'{"version": 2, "status": "success", "padding": "')
        for _ in range(600):
            member.write(b"x" * (1 << 20))
        member.write(b'"}')
    assert path.stat().st_size < 1_000_000
    assert main([*import_args(graded, "bomb", path), "--max-memory", "400"]) == 2
    error = graded.capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "bomb.eval: memory: reading it needs more than 400 MB (--max-memory)" in error
    assert not (graded.results_dir / "bomb").exists()


def test_a_sweeps_arms_with_epochs_export_from_its_folder_under_distinct_names_counting_tasks_per_epoch(graded):
    sweep = graded.root / "sweep.yaml"
    sweep.write_text("- {model: oracle, label: oracle seed1}\n- {model: oracle, label: oracle seed100}\n")
    run = graded.run("--sweep", str(sweep), "--task-id", "num", "--task-id", "one", "--epochs", "2", run_id="arms")
    assert run.exit_code == 0, run.output
    out = graded.root / "out"
    assert main(["export", "inspect", str(run.run_dir), str(out)]) == 0
    logs = [read_eval_log(str(path)) for path in sorted(out.glob("*.eval"))]
    assert sorted(log.eval.task_display_name for log in logs) == [
        "harness/mini (oracle seed1)",
        "harness/mini (oracle seed100)",
    ]
    for log in logs:
        assert (log.status, log.eval.config.epochs, log.eval.dataset.samples) == ("success", 2, 2)
        assert (log.results.total_samples, log.results.completed_samples, len(log.samples)) == (4, 4, 4)
        assert sorted(log.eval.dataset.sample_ids) == ["num", "one"]


def test_tool_arguments_holding_a_huge_integer_export_with_their_parse_error(graded, openai_server):
    """Issue 45: a tool call's arguments holding an integer of 5,000 digits (the agent's format error in the run)
    made the inspect export raise Python's integer-string ValueError; they export as unreadable, kept as sent."""
    from tests.episode.test_agent_failures import nested_reply

    sent = '{"command": ' + "7" * 5000 + "}"
    openai_server.push(nested_reply("chat", sent), reply("<answer>42</answer>"))
    run = graded.run("--model", JUDGE, "--api-base", openai_server.url, "--task-id", "num")
    assert run.exit_code == 0, run.output
    [log] = (export(graded, run)).glob("*.eval")
    [sample] = read_eval_log(str(log)).samples
    [call] = [call for message in sample.messages if message.role == "assistant" for call in message.tool_calls or []]
    assert call.arguments == {} and "a number has over 4,300 digits" in str(call.parse_error)
