"""MuDABench's agentic workflow (`--solver workflow`) end to end through `python -m harness` on imported MuDABench
tasks: a loopback model plays the planner, the per-document reader, the normalizer, the coder and the answerer;
each document's question is answered from its own retrieved chunks, and the generated program runs in the task's
sandbox on the whole normalized list, where it cannot reach the host's network or files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from harness.cli.main import main
from harness.records.events import ActionEvent, ModelCallEvent, ObservationEvent, RetrievalEvent
from harness.records.jsonl import read_jsonl
from harness.records.reading import read_events
from tests.helpers.openai_server import Step, reply
from tests.run.test_mudabench_table2 import COMPLEX
from tests.run.test_rag_baseline import ENGLISH, project  # noqa: F401 (the imported set, built once)

PLAN = [{"subtask": "What were the total assets of {symbol} in {year} ({doctype})?", "restriction": {"year": ["2021"]}}]
SORT = (
    "import json\n"
    "rows = json.load(open('/tmp/workflow/data_1.json'))\n"
    "rows.sort(key=lambda row: -row['total_assets_usd'])\n"
    "print('TOP3:', ', '.join(row['symbol'] for row in rows[:3]))\n"
)
ESCAPE = (
    "import json, urllib.request\n"
    "try:\n"
    "    urllib.request.urlopen(urllib.request.Request('{url}/chat/completions', data=json.dumps("
    "{{'model': 'exfiltrated'}}).encode(), headers={{'Content-Type': 'application/json'}}), timeout=5)\n"
    "    print('NETWORK reached')\n"
    "except Exception as error:\n"
    "    print('NETWORK refused:', type(error).__name__)\n"
    "try:\n"
    "    print('HOST', open('{secret}').read())\n"
    "except Exception as error:\n"
    "    print('HOST refused:', type(error).__name__)\n"
)


def stage_player(code: str):
    """Each stage's reply, made from what its prompt holds; the judge says correct when the answer names the top 3."""

    def respond(request: dict) -> Step:
        prompt = request["messages"][-1]["content"]
        if request["model"] == "judge":
            return reply(json.dumps({"verdict": "CORRECT" if "PLAY, DY, CMCO" in prompt else "INCORRECT"}))
        if prompt.startswith("You split a question"):
            return reply(json.dumps(PLAN))
        if prompt.startswith("You answer a question about one document"):
            symbol, value = re.search(r"Report 2021 of (\S+)\. total_assets_usd (\d+(?:\.\d+)?)", prompt).groups()
            return reply(f"{symbol}'s total assets in 2021 were {value} USD.")
        if prompt.startswith("You turn question-and-answer records"):
            found = re.findall(r"A: (\S+)'s total assets in (\d+) were (\d+(?:\.\d+)?)", prompt)
            rows = [{"symbol": s, "year": int(y), "total_assets_usd": float(v)} for s, y, v in found]
            return reply(f"<json>{json.dumps(rows)}</json><des>symbol; year; total_assets_usd (USD)</des>")
        if prompt.startswith("You answer a task by writing Python"):
            return reply(f"The program:\n<execute>\n```python\n{code}```\n</execute>")
        if prompt.startswith("You answer a task from an analysis"):
            top = re.search(r"TOP3: (.*)", prompt)
            return reply(f"<answer>{top.group(1) if top else 'unknown'}</answer>")
        return reply("?")

    return respond


def run(project: Path, tmp_path: Path, server, *extra: str) -> tuple[int, Path]:  # noqa: F811
    code = main(
        [
            *("--model", "openai/player", "--api-base", server.url, "--domain", "mudabench"),
            *("--tasks-dir", str(project / "tasks"), "--collections-dir", str(project / "collections")),
            *("--results-dir", str(tmp_path), "--run-id", "w", "--solver", "workflow", "--task-id", ENGLISH),
            *("--judge", "openai/judge", "--judge-api-base", server.url),
            *extra,
        ]
    )
    return code, tmp_path / "w"


@pytest.fixture
def served(openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    return openai_server


def test_the_workflow_plans_asks_each_document_normalizes_and_aggregates_in_the_sandbox(project, tmp_path, served):  # noqa: F811
    served.respond = stage_player(SORT)
    code, run_dir = run(project, tmp_path, served, "--solver-arg", "chunks=1")
    [row] = read_jsonl(run_dir / "results.jsonl")
    assert (
        code == 0 and row["status"] == "answered" and row["answer"] == "PLAY, DY, CMCO" and row["verdict"] == "correct"
    )
    events = [logged.event for logged in read_events(run_dir / "episodes" / "mudabench" / f"{ENGLISH}.jsonl")]
    searches = [event for event in events if isinstance(event, RetrievalEvent)]
    assert len(searches) == 5 and all(event.k == 1 and event.document for event in searches)
    assert all({chunk.file for chunk in event.chunks} == {event.document} for event in searches)
    calls = [event for event in events if isinstance(event, ModelCallEvent)]
    assert len(calls) == 1 + 5 + 1 + 1 + 1  # plan, a question per document, normalization, code, answer
    [action] = [event for event in events if isinstance(event, ActionEvent)]
    [observed] = [event for event in events if isinstance(event, ObservationEvent)]
    assert "python3 analysis.py" in action.command and observed.stdout.strip() == "TOP3: PLAY, DY, CMCO"
    assert "facts_retrieved" not in row  # the RAG baseline's coverage is not the workflow's measure
    record = yaml.safe_load((run_dir / "run.yaml").read_text())
    assert record["protocol"]["workflow"]["chunks_per_question"] == 1
    assert record["protocol"]["workflow"]["retriever"]["backend"] == "local"


@pytest.mark.parametrize("backend", ["local", "docker"])
def test_generated_code_cannot_reach_the_host_network_or_files(project, tmp_path, served, request, backend):  # noqa: F811
    if backend == "docker":
        request.getfixturevalue("docker_image")
    secret = tmp_path / "host-secret.txt"
    secret.write_text("the host's secret")
    served.respond = stage_player(ESCAPE.format(url=served.url, secret=secret))
    code, run_dir = run(project, tmp_path, served, "--sandbox", backend)
    events = [logged.event for logged in read_events(run_dir / "episodes" / "mudabench" / f"{ENGLISH}.jsonl")]
    [observed] = [event for event in events if isinstance(event, ObservationEvent)]
    assert code == 0 and "NETWORK refused" in observed.stdout and "HOST refused" in observed.stdout
    assert "the host's secret" not in observed.stdout
    assert all(body.get("model") != "exfiltrated" for body in served.requests)


def test_a_bad_workflow_argument_is_one_line_and_writes_nothing(project, tmp_path, served, capsys):  # noqa: F811
    code, run_dir = run(project, tmp_path, served, "--solver-arg", "chunks=0")
    [line] = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and "chunks='0': from 1 to 50" in line and not run_dir.exists() and served.requests == []


def test_file_search_without_its_key_is_refused_before_the_run(project, tmp_path, served, monkeypatch, capsys):  # noqa: F811
    monkeypatch.delenv("OPENAI_API_KEY")
    code = main(
        [
            *(
                "--model",
                "hosted_vllm/player",
                "--api-base",
                served.url,
                "--domain",
                "mudabench",
            ),  # a model with no key
            *("--tasks-dir", str(project / "tasks"), "--collections-dir", str(project / "collections")),
            *("--results-dir", str(tmp_path), "--run-id", "w", "--solver", "workflow", "--task-id", ENGLISH),
            *("--judge", "hosted_vllm/judge", "--judge-api-base", served.url, "--solver-arg", "retriever=openai"),
        ]
    )
    [line] = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and "retriever=openai needs OPENAI_API_KEY" in line and not (tmp_path / "w").exists(), line
    assert served.requests == []


def test_the_fact_judge_reads_each_document_s_questions_and_answers(project, tmp_path, served):  # noqa: F811
    """MuDABench's cell-wise process judge over the workflow (eq. 6-8): each fact row is judged on its document's
    sub-questions and answers (`Q: ...` / `A: ...`, as the released evaluator reads its runner's log), not on
    commands; the reader answers four of the five documents."""
    play = stage_player(SORT)
    asked: dict[str, str] = {}

    def respond(request: dict) -> Step:
        prompt = request["messages"][-1]["content"]
        if request["model"] == "judge" and prompt.startswith("You check which facts"):
            entity = re.search(r"\(entity (\S+), period", prompt).group(1)
            asked[entity] = prompt
            stated = f"A: {entity}'s total assets in 2021 were" in prompt
            return reply(json.dumps({"supported": ["values.total_assets_usd"] if stated else []}))
        if prompt.startswith("You answer a question about one document") and "Report 2021 of OPTT" in prompt:
            return reply("The excerpts do not say.")
        return play(request)

    served.respond = respond
    code, run_dir = run(project, tmp_path, served, "--solver-arg", "chunks=1")
    [row] = read_jsonl(run_dir / "results.jsonl")
    assert code == 0 and sorted(asked) == ["CMCO", "DY", "OPTT", "PLAY", "QMCO"]
    # by hand: five rows of one cell each; four documents' answers state their value: 4 of 5 cells and rows, and
    # the one column not covered in every row
    assert row["facts_stated"] == {
        "cells": 4,
        "cells_total": 5,
        "rows": 4,
        "rows_total": 5,
        "columns": 0,
        "columns_total": 1,
        "failed": 0,
    }
    record = asked["DY"].split("(between the two fence lines", 1)[1]
    assert "Q: What were the total assets of DY in 2021 (US Stock Annual Report)?\nA: DY's total assets" in record
    assert "PLAY's" not in record and "$ " not in record and "## final reply" not in record
    assert (
        "Q: What were the total assets of OPTT in 2021" in asked["OPTT"]
        and "A: The excerpts do not say." in asked["OPTT"]
    )
    # Table 3 by hand: one kind of document (the index's doctype), 4 of its 5 cells stated; Figure 4 drawn, its
    # fit left out with one set size
    assert main(["report", str(run_dir)]) == 0
    report = (run_dir / "report" / "report.md").read_text(encoding="utf-8")
    table = report.split("(Table 3, %)")[1].split("\n\n")[2].splitlines()
    assert [cell.strip() for cell in table[0].strip("|").split("|")] == [
        "document kind",
        "tokens / document",
        "Workflow 1 chunk (openai/player (solver=workflow, chunks=1)) Simple",
    ]
    [line] = [[cell.strip() for cell in line.strip("|").split("|")] for line in table[2:]]
    assert line[0] == "US Stock Annual Report" and int(line[1].replace(",", "")) > 0 and line[2] == "80.0"
    assert "(not fitted: fewer than two set sizes, or every share 0 or 1)" in report
    assert {path.name for path in (run_dir / "report").glob("mudabench_t*")} >= {
        "mudabench_table3.tex",
        "mudabench_tokens.png",
        "mudabench_tokens.pdf",
    }


@pytest.mark.slow  # two episodes in the sandbox and a report: 20 s on a 2-core machine
def test_each_stage_is_scored_from_the_trajectory_and_table4_reports_them(project, tmp_path, served):  # noqa: F811
    """MuDABench's Table 4 from records, on a set where the stages differ: the simple question's reader misses
    OPTT (its extraction wrong); the complex question's normalizer drops QMCO and its program fails (its
    normalization and code wrong)."""
    play = stage_player(SORT)
    complex_plan = [{"subtask": "Total assets of {symbol} for {year}?", "restriction": {"year": ["2021"]}}]

    def respond(request: dict) -> Step:
        prompt = request["messages"][-1]["content"]
        complex_task = "Report the top three companies by total assets" in prompt
        if prompt.startswith("You split a question") and complex_task:
            return reply(json.dumps(complex_plan))
        if prompt.startswith("You answer a question about one document") and "assets of OPTT in 2021" in prompt:
            return reply("The excerpts do not say.")  # the simple question's sub-question only
        if prompt.startswith("You turn question-and-answer records") and complex_task:
            found = re.findall(r"A: (\S+)'s total assets in (\d+) were (\d+(?:\.\d+)?)", prompt)
            rows = [{"symbol": s, "year": int(y), "total_assets_usd": float(v)} for s, y, v in found if s != "QMCO"]
            return reply(f"<json>{json.dumps(rows)}</json><des>symbol; year; total_assets_usd (USD)</des>")
        if prompt.startswith("You answer a task by writing Python") and complex_task:
            return reply("<execute>\n```python\nimport sys\nsys.exit(3)\n```\n</execute>")
        return play(request)

    served.respond = respond
    code, run_dir = run(project, tmp_path, served, "--solver-arg", "chunks=1", "--task-id", COMPLEX)
    rows = {row["task_id"]: row for row in read_jsonl(run_dir / "results.jsonl")}
    assert code == 0
    assert rows[ENGLISH]["workflow_stages"] == {
        "planning": True,
        "extraction": False,
        "normalization": True,
        "code": True,
    }
    assert rows[COMPLEX]["workflow_stages"] == {
        "planning": True,
        "extraction": True,
        "normalization": False,
        "code": False,
    }
    assert main(["report", str(run_dir)]) == 0
    report = (run_dir / "report" / "report.md").read_text(encoding="utf-8")
    table = report.split("### The workflow's stages (Table 4, %)")[1].split("\n\n")[2].splitlines()
    # by hand: Simple, Complex, all (one episode each); given earlier: over the episodes whose earlier stages
    # were all correct (normalization: only the complex one; code: none)
    assert [[cell.strip() for cell in line.strip("|").split("|")][1:] for line in table[2:]] == [
        ["independent", "planning", "100.0", "100.0", "100.0"],
        ["independent", "extraction", "0.0", "100.0", "50.0"],
        ["independent", "normalization", "100.0", "0.0", "50.0"],
        ["independent", "code", "100.0", "0.0", "50.0"],
        ["given earlier", "planning", "100.0", "100.0", "100.0"],
        ["given earlier", "extraction", "0.0", "100.0", "50.0"],
        ["given earlier", "normalization", "–", "0.0", "0.0"],
        ["given earlier", "code", "–", "–", "–"],
    ]
    assert (run_dir / "report" / "mudabench_table4.tex").is_file()
