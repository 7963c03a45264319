"""FinDocMRE's paper's packaging (Appendix B.1.1, Table 14) under its profile: a document's questions in one
request, the standard prompt around them byte for byte, the reply's JSON list read one answer per question; one
call per batch, shared by the batch's episodes and logged once. The model on the other side measures the pixels
it receives for every question of the list (tests/helpers/findocmre_reader.py), so a right answer is also the
right images."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.cli.main import main
from harness.records.jsonl import read_jsonl
from tests.conftest import REPO
from tests.helpers.findocmre_models import batch_reply, score_judge
from tests.helpers.openai_server import ScriptedOpenAIServer
from tests.helpers.providers.chat_completions import ChatCompletionsProvider, chat_reply
from tests.helpers.providers.chat_rules import SGLANG
from tests.helpers.providers.image_rules import openai_chat_images

LOCAL_MODEL = "hosted_vllm/qwen3-vl"
TABLE_14 = (Path(__file__).parents[1] / "fixtures" / "findocmre" / "table14.txt").read_text(encoding="utf-8")
"""Table 14, "Standard Model Inference Prompt", typed from the paper: the questions go at its placeholder."""
BEFORE_THE_QUESTIONS, AFTER_THE_QUESTIONS = TABLE_14.removesuffix("\n").split("[Insert Questions List]")
COT = "\n\nPlease think step-by-step for the final answer"
"""Table 6's chain-of-thought variant: the standard prompt with this appended."""


def prompt_of(request: dict[str, Any]) -> str:
    [message] = request["messages"]
    return next(part["text"] for part in message["content"] if part["type"] == "text")


@pytest.fixture
def reader(monkeypatch) -> Iterator[ChatCompletionsProvider]:
    """A local server (SGLang's rules) answering a batch's list from the images of each request."""
    monkeypatch.setenv(SGLANG.key_variable, "loopback-key")
    fake = ChatCompletionsProvider(SGLANG)
    fake.respond = lambda request: chat_reply(content=batch_reply(prompt_of(request), _pngs(request)))
    fake.start()
    yield fake
    fake.stop()


def _pngs(request: dict[str, Any]) -> list[bytes]:
    return [image.data for image in openai_chat_images(request)]


def run(project: Path, results: Path, reader: ChatCompletionsProvider, judge: ScriptedOpenAIServer, *more: str):
    folders = ["--tasks-dir", str(project / "tasks"), "--collections-dir", str(project / "collections")]
    code = main(
        [
            *("--domain", "findocmre", *folders, "--results-dir", str(results), "--run-id", "r"),
            *("--model", LOCAL_MODEL, "--api-base", reader.base_url, "--zero-shot", "full"),
            *("--judge", "openai/judge", "--judge-api-base", judge.url, *more),
        ]
    )
    return code, results / "r"


@pytest.mark.parametrize("workers", ["1", "3"])
def test_a_documents_questions_go_in_one_request_with_the_papers_prompt(
    findocmre_project: Path, tmp_path: Path, reader, score_judge_server, workers: str
):
    code, run_dir = run(findocmre_project, tmp_path, reader, score_judge_server, "--workers", workers)
    rows = read_jsonl(run_dir / "results.jsonl")
    assert code == 0 and reader.broken == [] and len(rows) == 12
    assert [row["verdict"] for row in rows] == ["correct"] * 12
    assert len(reader.requests) == 2  # two documents of six questions: one request each
    for request in reader.requests:
        text = prompt_of(request)
        assert text.startswith(BEFORE_THE_QUESTIONS) and text.endswith(AFTER_THE_QUESTIONS)
        listed = json.loads(text[len(BEFORE_THE_QUESTIONS) : len(text) - len(AFTER_THE_QUESTIONS)])
        assert [question["question_type"] for question in listed] == [
            "numerical_precise",
            "numerical_approximate",
            "single_choice",
            "single_choice",
            "multiple_choice",
            "open_ended",
        ]  # the task file's order, in the types' names of the paper's prompt
        assert request["temperature"] == 0 and request["seed"] == 1234  # the profile's decoding
    makers = {row["task_id"] for row in rows if row["turns"] == 1}
    assert len(makers) == 2 and {row["turns"] for row in rows} == {0, 1}
    for row in rows:
        events = read_jsonl(run_dir / "episodes" / "findocmre" / f"{row['task_id']}.jsonl")
        [shared] = [event for event in events if event["event"] == "shared_call"]
        calls = [event for event in events if event["event"] == "model_call"]
        assert shared["made_by"] in makers and shared["questions"][shared["position"] - 1] == row["task_id"]
        assert len(calls) == (1 if row["task_id"] == shared["made_by"] else 0)
    protocol = yaml.safe_load((run_dir / "run.yaml").read_text())["protocol"]["zero_shot"]
    assert protocol["prompt"] == "findocmre-standard-1.0" and protocol["questions"] == "document"
    assert protocol["requests_per_epoch"] == 2


def test_a_garbled_answer_costs_its_question_only(
    findocmre_project: Path, tmp_path: Path, reader, score_judge_server, capsys
):
    def garbling(request: dict[str, Any]) -> Any:
        answers = [json.dumps(item) for item in json.loads(batch_reply(prompt_of(request), _pngs(request)))]
        answers[0] = answers[0].replace('"answer": ', '"answer": ,')  # no JSON: the first question's alone
        return chat_reply(content="```json\n[" + ", ".join(answers) + "]\n```")

    reader.respond = garbling
    code, run_dir = run(
        findocmre_project,
        tmp_path,
        reader,
        score_judge_server,
        "--task-id",
        "acme-2024-exact",
        "--task-id",
        "acme-2024-ratio",
        "--task-id",
        "acme-2024-tallest",
    )
    rows = {row["task_id"]: row for row in read_jsonl(run_dir / "results.jsonl")}
    assert code == 0 and len(reader.requests) == 1
    assert rows["acme-2024-exact"]["status"] == "format_errors"
    assert rows["acme-2024-exact"]["detail"].startswith("answer 1 of 3: not JSON")
    assert [rows[name]["verdict"] for name in ("acme-2024-ratio", "acme-2024-tallest")] == ["correct", "correct"]
    capsys.readouterr()
    assert main(["show", str(run_dir), "acme-2024-tallest"]) == 0
    shown = " ".join(capsys.readouterr().out.split())  # the console wraps long lines
    # the call is made by whichever episode of the batch ran first (workers run them side by side): the one whose
    # row holds its turn
    [maker] = [name for name, row in rows.items() if row["turns"] == 1]
    assert "question 3 of 3 of batch findocmre/" in shown, shown
    assert f"asked in {maker}'s call" in shown, shown


def test_answers_no_file_or_terminal_can_hold_are_the_agents_outcome(
    findocmre_project: Path, tmp_path: Path, reader, score_judge_server, capsys
):
    def hostile(request: dict[str, Any]) -> Any:
        answers = json.loads(batch_reply(prompt_of(request), _pngs(request)))
        answers[0]["answer"] = "\ud800"  # a lone surrogate: no UTF-8 file takes it as it is
        answers[1]["answer"] += "\x00\x1b[2J"  # a NUL byte and a terminal escape after a right number
        return chat_reply(content=json.dumps(answers))

    reader.respond = hostile
    tasks = ("acme-2024-exact", "acme-2024-ratio", "acme-2024-tallest")
    code, run_dir = run(
        findocmre_project, tmp_path, reader, score_judge_server, *(part for t in tasks for part in ("--task-id", t))
    )
    rows = {row["task_id"]: row for row in read_jsonl(run_dir / "results.jsonl")}
    assert code == 0 and sorted(rows) == sorted(tasks)
    assert {row["status"] for row in rows.values()} == {"answered"}, rows
    assert rows["acme-2024-exact"]["answer"] == "\ud800" and rows["acme-2024-exact"]["verdict"] != "correct"
    assert rows["acme-2024-tallest"]["verdict"] == "correct"
    capsys.readouterr()
    assert main(["show", str(run_dir), "acme-2024-ratio"]) == 0
    shown = capsys.readouterr().out
    assert "\x00" not in shown and "\x1b" not in shown


def test_the_chain_of_thought_variant_runs_as_the_second_prompt(
    findocmre_project: Path, tmp_path: Path, reader, score_judge_server
):
    code, run_dir = run(
        findocmre_project,
        tmp_path,
        reader,
        score_judge_server,
        "--solver-arg",
        "prompt=standard-cot",
        "--task-id",
        "acme-2024-exact",
        "--task-id",
        "acme-2024-tallest",
    )
    rows = read_jsonl(run_dir / "results.jsonl")
    assert code == 0 and [row["verdict"] for row in rows] == ["correct", "correct"]
    [request] = reader.requests
    assert prompt_of(request).startswith(BEFORE_THE_QUESTIONS)
    assert prompt_of(request).endswith(AFTER_THE_QUESTIONS + COT)
    protocol = yaml.safe_load((run_dir / "run.yaml").read_text())["protocol"]["zero_shot"]
    assert protocol["prompt"] == "findocmre-standard-cot-1.0"


def test_one_question_a_request_under_the_papers_prompt_is_refused_in_one_line(
    findocmre_project: Path, tmp_path: Path, reader, score_judge_server, capsys
):
    code, run_dir = run(findocmre_project, tmp_path, reader, score_judge_server, "--solver-arg", "questions=one")
    [line] = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and "standard.txt: a prompt for a document's questions ([Insert Questions List])" in line
    code, run_dir = run(findocmre_project, tmp_path, reader, score_judge_server, "--solver-arg", "prompt=zero-shot-cot")
    [line] = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and "with questions=document the prompt holds [Insert Questions List] once" in line
    assert not run_dir.exists() and reader.requests == []


@pytest.mark.slow  # two runs in processes of their own: 14 s
def test_a_resumed_run_answers_a_killed_batch_from_its_recorded_call(
    findocmre_project: Path, tmp_path: Path, reader, score_judge_server
):
    """Killed (SIGKILL) while the judge scored the last question of the first document's batch: five of its six
    episodes finished. The resumed run answers the sixth from the call the first episode made and recorded (it was
    asked again), so the reading model gets one request per document over both runs."""
    asked, release = threading.Event(), threading.Event()

    def hanging_judge(request: dict[str, Any]) -> Any:
        asked.set()
        release.wait(60)
        return score_judge(request)

    score_judge_server.respond = hanging_judge
    results = tmp_path / "results"
    arguments = [sys.executable, "-m", "harness", "--domain", "findocmre", "--workers", "1", "--run-id", "killed"]
    arguments += ["--tasks-dir", str(findocmre_project / "tasks"), "--results-dir", str(results)]
    arguments += ["--collections-dir", str(findocmre_project / "collections"), "--model", LOCAL_MODEL]
    arguments += ["--api-base", reader.base_url, "--zero-shot", "full"]
    arguments += ["--judge", "openai/judge", "--judge-api-base", score_judge_server.url]
    try:
        process = subprocess.Popen(
            arguments, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        assert asked.wait(120)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        finished = [row["task_id"] for row in read_jsonl(results / "killed" / "results.jsonl")]
        assert finished == [f"acme-2024-{name}" for name in ("exact", "ratio", "tallest", "trend", "above")]
        assert len(reader.requests) == 1
        score_judge_server.respond = score_judge
    finally:
        release.set()
    resumed = subprocess.run(arguments, cwd=REPO, capture_output=True, text=True, timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    assert "zero-shot: 1 batch calls of the last run answer their unfinished questions" in resumed.stdout
    assert len(reader.requests) == 2  # the second document's batch only
    rows = {row["task_id"]: row for row in read_jsonl(results / "killed" / "results.jsonl")}
    assert len(rows) == 12 and rows["acme-2024-summary"]["verdict"] == "correct"
    events = read_jsonl(results / "killed" / "episodes" / "findocmre" / "acme-2024-summary.jsonl")
    [shared] = [event for event in events if event["event"] == "shared_call"]
    assert shared["made_by"] == "acme-2024-exact" and not any(event["event"] == "model_call" for event in events)
