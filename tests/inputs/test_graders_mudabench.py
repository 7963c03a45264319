"""`tasks import mudabench`: synthetic data in MuDABench's exact schema and generated PDFs."""

from __future__ import annotations

import json
from pathlib import Path

import pymupdf
import pytest

from harness.cli.main import main
from harness.inputs.tasks import load_task_file
from harness.records.trajectory import read_jsonl, read_trajectory
from tests.conftest import REPO
from tests.helpers.openai_server import Step, reply

DOCS = {
    "7560dc54-81cb-4d28-bbb1-205f060ad678": ("002142", 2021, 15.44),
    "08bb9178-7daa-40d3-b8df-601920a6df2c": ("002839", 2021, 14.3),
    "a61cfe75-666a-422f-a32f-7a28c40a2621": ("600908", 2021, 14.35),
}
D1, D2, D3 = DOCS


def meta(doc_id: str) -> dict:
    symbol, year, value = DOCS[doc_id]
    schema = {"value_capital_adequacy_ratio_pct": "资本充足率。"}
    return {
        "symbol": symbol,
        "year": year,
        "value_capital_adequacy_ratio_pct": value,
        "schema": schema,
        "id": doc_id,
        "doctype": "A股年报",
    }


def item(question: str, docs: list[str], answer: str, question_id: str | None = None) -> dict:
    row = {
        "question": question,
        "metadata": [meta(d) for d in docs],
        "source_answer": [f"股票代码{DOCS[d][0]}的资本充足率为{DOCS[d][2]:.2f}%" for d in docs],
        "final_answer": answer,
        "openai_vectors_id": "vs_x",
    }
    return row | ({"question_id": question_id} if question_id else {})


Q = "针对中国A股市场，请你给出你知识库中2021年资本充足率最高的公司股票代码"


@pytest.fixture
def mudabench(tmp_path: Path) -> Path:
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    for doc_id, (symbol, year, value) in DOCS.items():
        document = pymupdf.open()
        document.new_page().insert_text((72, 72), f"Annual report {year} of {symbol}. Capital adequacy ratio {value}%.")
        document.save(pdfs / f"{doc_id}.pdf")
    simple = [
        item(Q, [D1, D2], "002142", "1"),
        item(Q, [D1, D2], "002142", "1"),  # identical: a task of its own, as MuDABench's evaluation counts it
        item(Q, [D1, D3], "002142", "2"),  # the same question over another document set
        item("2021年资本充足率最低的公司？", [D2, D1], "002839", "1"),  # question_id 1 again, other content
        item("2021年资本充足率的极差？", [D1, D2, D3, D1], "1.14%"),  # no question_id; D1 listed twice
    ]
    complex_ = [item("2021年两家公司资本充足率的平均值？", [D1, D2], "14.87%", "1")]  # id 1 in both splits
    (tmp_path / "simple.json").write_text(json.dumps(simple, ensure_ascii=False, indent=2))
    (tmp_path / "complex.json").write_text(json.dumps(complex_, ensure_ascii=False, indent=2))
    return tmp_path


def run_import(root: Path, capsys, *data: str, pdf_dir: str = "pdfs") -> tuple[int, str]:
    code = main(
        [
            "tasks",
            "import",
            "mudabench",
            *[str(root / d) for d in data],
            "--pdf-dir",
            str(root / pdf_dir),
            "--domain",
            "muda",
            "--tasks-dir",
            str(root / "tasks"),
            "--collections-dir",
            str(root / "collections"),
        ]
    )
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_import_writes_judge_tasks_with_their_own_collections(mudabench, capsys):
    code, output = run_import(mudabench, capsys, "simple.json", "complex.json")
    assert code == 0, output
    tasks = load_task_file(mudabench / "tasks" / "muda.jsonl")
    ids = ["simple-1", "simple-1-2", "simple-2", "simple-1-3", tasks[4].id, "complex-1"]
    assert [task.id for task in tasks] == ids
    assert tasks[4].id.startswith("simple-q") and len(tasks[4].id) == len("simple-q") + 12
    assert {task.grader for task in tasks} == {"judge"} and [t.type for t in tasks] == ["simple"] * 5 + ["complex"]
    assert tasks[1].metadata["identical_to"] == "simple-1" and "identical_to" not in tasks[0].metadata
    # and both pages say so (docs/GRADERS.md said identical items are dropped)
    for page in (REPO / "docs" / "GRADERS.md", REPO / "docs" / "guide" / "mudabench.md"):
        text = " ".join(page.read_text(encoding="utf-8").split())
        at = text.index("identical")
        said = text[max(at - 300, 0) : at + 300]
        assert "`<id>-2`" in said and "identical_to" in said and "dropped" not in said, page
    # One collection per distinct document set: {D1,D2} (four tasks), {D1,D3}, {D1,D2,D3}.
    assert len({task.collection for task in tasks}) == 3
    assert tasks[0].collection == tasks[1].collection == tasks[3].collection == tasks[5].collection
    assert tasks[0].collection != tasks[2].collection and tasks[0].collection.startswith("muda-2021-2docs-")
    for note in (
        "identical items kept as tasks of their own (MuDABench's evaluation counts each): 1",
        "repeated question_id with other content (suffixed -2, -3, ...): 1",
        "question ids in more than one split (kept apart by the split prefix): 1",
        "same question over different document sets (separate tasks and collections): 1",
        "documents listed twice in one item (one file, a fact row per listing): 1",
    ):
        assert note in output


def test_collection_holds_the_documents_and_an_index_without_gold_facts(mudabench, capsys):
    run_import(mudabench, capsys, "simple.json")
    task = load_task_file(mudabench / "tasks" / "muda.jsonl")[0]
    folder = mudabench / "collections" / task.collection
    files = sorted(path.name for path in folder.iterdir() if not path.name.startswith("."))
    assert files == [f"documents_{D2}.md", f"documents_{D1}.md", "documents_index.md"]
    index = (folder / "documents_index.md").read_text()
    assert "| documents_7560dc54-81cb-4d28-bbb1-205f060ad678.md | 002142 | 2021 | A股年报 |" in index
    assert "15.44" not in index and "资本充足率" not in index and "value_" not in index
    assert "Capital adequacy ratio 15.44%" in (folder / files[1]).read_text()


def test_missing_pdf_skips_only_the_tasks_of_its_document_set(mudabench, capsys):
    (mudabench / "pdfs" / f"{D3}.pdf").unlink()
    code, output = run_import(mudabench, capsys, "simple.json")
    assert code == 1
    kept = ["simple-1", "simple-1-2", "simple-1-3"]
    assert [task.id for task in load_task_file(mudabench / "tasks" / "muda.jsonl")] == kept
    assert f"missing {D3}.pdf" in output


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda rows: rows[0].pop("final_answer"), "simple.json: item 1: field 'final_answer': must be a non-empty"),
        (lambda rows: rows[1]["metadata"][0].pop("symbol"), "item 2: field 'metadata[0]': field 'symbol': must be"),
        (lambda rows: rows[0]["metadata"][0].update(id="../x"), "field 'id': must be a file stem"),
        (lambda rows: rows.__setitem__(0, "text"), "item 1: an item must be a JSON object"),
    ],
)
def test_bad_data_is_a_one_line_error_and_writes_nothing(mudabench, capsys, mutate, message):
    rows = json.loads((mudabench / "simple.json").read_text())
    mutate(rows)
    (mudabench / "simple.json").write_text(json.dumps(rows, ensure_ascii=False))
    code, output = run_import(mudabench, capsys, "simple.json")
    assert code == 2 and message in output and len(output.strip().splitlines()) == 1
    assert not (mudabench / "tasks").exists() and not (mudabench / "collections").exists()


def grading_then_fact_judge(request: dict) -> Step:
    """The grading judge says CORRECT; the fact-coverage judge finds no field stated."""
    if "Reference answer:" in request["messages"][-1]["content"]:
        return reply(json.dumps({"verdict": "CORRECT", "reason": "same code"}))
    return reply(json.dumps({"supported": []}))


def test_imported_task_runs_over_its_own_collection_with_the_judge(mudabench, capsys, openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    run_import(mudabench, capsys, "simple.json")
    script = mudabench / "script.yaml"
    script.write_text(json.dumps([{"bash": "cat documents/documents_index.md"}, "<answer>002142</answer>"]))
    openai_server.respond = grading_then_fact_judge
    code = main(
        [
            "--model",
            f"scripted:{script}",
            "--domain",
            "muda",
            "--task-id",
            "simple-2",
            "--tasks-dir",
            str(mudabench / "tasks"),
            "--collections-dir",
            str(mudabench / "collections"),
            "--results-dir",
            str(mudabench / "results"),
            "--run-id",
            "r",
            "--judge",
            "openai/judge",
            "--judge-api-base",
            openai_server.url,
        ]
    )
    assert code == 0, capsys.readouterr().out
    [row] = read_jsonl(mudabench / "results" / "r" / "results.jsonl")
    assert (row["verdict"], row["task_type"]) == ("correct", "simple")
    events = read_trajectory(mudabench / "results" / "r" / "episodes" / "muda" / "simple-2.jsonl")
    observation = next(e for e in events if e["event"] == "observation")
    assert "600908" in observation["stdout"] and "002839" not in observation["stdout"]  # {D1, D3} only
    prompt = openai_server.requests[0]["messages"][0]["content"]
    assert Q in prompt and "Reference answer:\n002142" in prompt  # the judge sees the question and the gold
    facts = row["facts_stated"]  # the fact-coverage diagnostic judged every row of the task's facts
    assert facts["rows_total"] > 0 and facts["failed"] == 0 and facts["cells"] == 0, facts
