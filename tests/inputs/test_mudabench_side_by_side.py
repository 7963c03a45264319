"""MuDABench scored as its own evaluator scores it. A fixture in the release's shapes (a list-of-objects cell, an
identical item, a document listed twice, a `detail_*` field, an entry without `value_*` fields) is imported with a
relative `--pdf-dir`, run by a scripted agent, and judged through a loopback judge that misbehaves as real judges
do, under MuDABench's own protocol file (packaged: `--judge-prompt mudabench`). The report's cell, row, column, solid
and final accuracy must equal what MuDABench's eval/evaluate.py computes from the same judge replies: its rules
are transcribed by hand below (the `_mb_*` functions, each citing its lines in the public repository
Zhanli-Li/MuDABench at eval/evaluate.py and common/json_utils.py), never through our own readers."""

from __future__ import annotations

import ast
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from harness.cli.main import main
from harness.grading.judge_protocol import PACKAGED
from harness.inputs.tasks import load_task_file
from harness.records.results import read_rows
from tests.helpers.openai_server import Step, fault, reply

PROTOCOL = PACKAGED / "mudabench.yaml"  # `--judge-prompt mudabench`
EVENTS = [{"month": 3, "meeting_type": "临时股东大会"}, {"month": 6, "meeting_type": "年度股东大会"}]
DOCS = {  # id -> the entry's fields besides id and doctype
    "d1": {"symbol": "000001", "year": 2021, "value_revenue": 10.5, "value_profit": 1.2},
    "d2": {"symbol": "000002", "year": 2021, "value_revenue": 20.1, "value_profit": 2.2, "detail_currency": "CNY"},
    "d3": {"symbol": "000003", "year": 2021, "value_shareholder_meeting_events": EVENTS},
    "d4": {"symbol": "000004", "year": 2021},  # no value_* field: MuDABench's `fact_type` row
}
Q = {
    "qa": "Which company had the higher revenue in 2021?",
    "qb": "What was the total profit in 2021?",
    "qc": "How many shareholder meetings did 000003 hold?",
    "qe": "Which company reported its revenue?",
    "qf": "In which month was the first meeting?",
}
ITEMS = [  # (question id, documents, final answer)
    ("qa", ["d1", "d2", "d3"], "000002"),
    ("qa", ["d1", "d2", "d3"], "000002"),  # identical: MuDABench's evaluation loop counts it twice
    ("qb", ["d1", "d2", "d1"], "3.4"),  # d1 listed twice: two fact rows
    ("qc", ["d2", "d3"], "2"),
    ("qe", ["d1", "d4"], "000001"),
    ("qf", ["d3"], "March"),
]
FINAL_REPLIES = {  # the judge's reply to each question's final answer
    "qa": '{"is_correct": "True.", "explanation": "same company"}',
    "qb": '{"is_correct": "no", "explanation": "wrong sum"}',
    "qc": 'Looks right to me. {"is_correct": True, "explanation": "two meetings",}',  # prose, Python, comma
    "qe": '{"is_correct": 2}',
    "qf": "The model's answer is correct.",  # a verdict in prose, no JSON: asked five times, then wrong
}
FACT_REPLIES: dict[tuple[str, int], str | None] = {  # (question, row index) -> reply; None: HTTP 500 every time
    ("qa", 0): 'I checked the dialog. {"correct_metric_fields": ["values.profit", "values.revenue"]} Done.',
    ("qa", 1): '{"correct_metric_fields": "values.revenue, values.bogus"}',
    ("qa", 2): "{'correct_metric_fields': ['values.shareholder_meeting_events'],}",
    ("qb", 0): None,
    ("qb", 1): '{"correct_metric_fields": ["values.profit", "values.revenue", "details.currency"]}',
    ("qb", 2): '{"correct_metric_fields": ["values.revenue"]}',
    ("qc", 0): '```json\n{"correct_metric_fields": ["values.revenue", "values.profit"]}\n```',
    ("qc", 1): "I cannot tell.",
    ("qe", 0): '{"correct_metric_fields": ["values.revenue", "values.profit"]}',
    ("qe", 1): '{"correct_metric_fields": ["fact_type"]}',
    ("qf", 0): '{"correct_metric_fields": ["values.shareholder_meeting_events"], "explanation": "seen"}',
}
SCRIPTS = {
    "simple-qa": [
        *({"bash": f"cat documents/documents_{d}.md"} for d in ("d1", "d2", "d3")),
        "<answer>000002</answer>",
    ],
    "simple-qb": [{"bash": "grep -r profit documents/"}, "<answer>3.3</answer>"],  # reads only by grep -r
    "simple-qc": [{"bash": "cat documents/documents_d3.md"}, "The company held 2 meetings."],  # no answer tag
    "simple-qe": [{"bash": "cat documents/documents_d1.md"}, "<answer>000001</answer>"],
    "simple-qf": [{"bash": "cat documents/documents_d3.md"}, "<answer>March</answer>"],
}
SCRIPTS["simple-qa-2"] = SCRIPTS["simple-qa"]


def dataset() -> list[dict[str, Any]]:
    def entry(doc: str) -> dict[str, Any]:
        fields = DOCS[doc]
        schema = {name: f"the {name[6:]}" for name in fields if name.startswith(("value_", "detail_"))}
        return fields | {"schema": schema, "id": doc, "doctype": "A股年报"}

    return [
        {
            "question": Q[qid],
            "metadata": [entry(doc) for doc in docs],
            "source_answer": [],
            "final_answer": answer,
            "question_id": qid,
        }
        for qid, docs, answer in ITEMS
    ]


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "simple.json").write_text(json.dumps(dataset(), ensure_ascii=False), encoding="utf-8")
    (tmp_path / "pdfs").mkdir()
    for doc, fields in DOCS.items():
        values = "; ".join(f"{name} {json.dumps(value, ensure_ascii=False)}" for name, value in fields.items())
        document = pymupdf.open()
        document.new_page().insert_text((72, 72), f"Report {doc}. {values}.")
        document.save(tmp_path / "pdfs" / f"{doc}.pdf")
    monkeypatch.chdir(tmp_path)  # the guide's own `--pdf-dir pdfs/`: relative to the working directory
    return tmp_path


def import_fixture(capsys) -> tuple[int, str]:
    code = main(
        [
            "tasks",
            "import",
            "mudabench",
            "simple.json",
            "--pdf-dir",
            "pdfs/",
            "--domain",
            "mudabench",
            "--tasks-dir",
            "tasks",
            "--collections-dir",
            "collections",
        ]
    )
    captured = capsys.readouterr()
    return code, captured.out + captured.err


# --- MuDABench's rules, transcribed by hand (Zhanli-Li/MuDABench) ---------------------------------------------


def _mb_metric_fields(meta: dict[str, Any]) -> list[str]:
    """eval/evaluate.py 116-123 (`_pick_atomic_fact_keys`), 145-155 (values/details split), 367-377
    (`build_row_metric_columns`: values sorted, details sorted but the excluded keys, else `fact_type`)."""
    schema = meta.get("schema")
    keys = [k for k in schema if k.startswith(("value_", "detail_"))] if isinstance(schema, dict) else []
    keys = sorted(set(keys or [k for k in meta if k.startswith(("value_", "detail_"))]))
    values = sorted(k[6:] for k in keys if k in meta and k.startswith("value_"))
    details = sorted(k[7:] for k in keys if k in meta and k.startswith("detail_"))
    columns = [f"values.{k}" for k in values] + [f"details.{k}" for k in details]
    return columns or ["fact_type"]


def _mb_parse(raw: str) -> dict[str, Any] | None:
    """common/json_utils.py 50-97 (`robust_parse_json`, expected_type="dict"), with 7-16 (fences), 19-34
    (first balanced brace) and 37-47 (repairs); eval/evaluate.py 472 strips the reply first."""
    text = raw.strip()
    if not text:
        return None
    try:
        obj = json.loads(text)
        return obj if isinstance(obj, dict) else None
    except Exception:
        pass
    m = re.search(r"```json\s*(.*?)```", text, flags=re.S | re.I) or re.search(r"```\s*(.*?)```", text, flags=re.S)
    fenced = m.group(1).strip() if m else None
    braced = None
    start = text.find("{")
    if start != -1:
        depth = 0
        for i in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if text[i] == "}" and depth == 0:
                braced = text[start : i + 1]
                break

    def repair(s: str) -> str:
        s = re.sub(r"\bTrue\b", "true", s)
        s = re.sub(r"\bFalse\b", "false", s)
        s = re.sub(r"\bNone\b", "null", s)
        s = re.sub(r"'([A-Za-z0-9_\- ]+)'\s*:", r'"\1":', s)
        s = re.sub(r":\s*'([^']*)'", r': "\1"', s)
        return re.sub(r",\s*([}\]])", r"\1", s)

    for found in (fenced, braced):
        for cand in (found, repair(found)) if found else ():
            try:
                obj = json.loads(cand)
            except Exception:
                continue
            if isinstance(obj, dict):
                return obj
    try:
        obj = ast.literal_eval(fenced or braced or text)
    except Exception:
        return None
    return obj if isinstance(obj, dict) else None


def _mb_judge(raw: str | None, default: dict[str, Any]) -> dict[str, Any]:
    """eval/evaluate.py 477-521 (`run_judge_with_rescue`): five attempts (max_retries=4); an exception (the
    HTTP 500) or a reply with no object each time gives the default. The replies here are the same on every
    attempt, so one reading stands for five."""
    parsed = None if raw is None else _mb_parse(raw)
    return parsed if isinstance(parsed, dict) else default


def _mb_row_correct_fields(parsed: dict[str, Any], fields: list[str]) -> list[str]:
    """eval/evaluate.py 531-552 (`normalize_row_judgment`): a list, a JSON list in a string, or a string split
    at , ; and newlines; names not among the row's metric fields dropped."""
    v = parsed.get("correct_metric_fields")
    if isinstance(v, list):
        names = [str(x).strip() for x in v if str(x).strip()]
    elif isinstance(v, str):
        try:
            obj = json.loads(v)
        except Exception:
            obj = None
        if isinstance(obj, list):
            names = [str(x).strip() for x in obj if str(x).strip()]
        else:
            names = [x.strip() for x in re.split(r"[,;\n]+", v) if x.strip()]
    else:
        names = []
    return sorted({name for name in names if name in fields})


def _mb_is_correct(parsed: dict[str, Any]) -> bool:
    """eval/evaluate.py 719-730 (`normalize_final_dict`)."""
    val = parsed.get("is_correct")
    if isinstance(val, str):
        return val.strip().lower().rstrip(".") in {"true", "yes", "y", "1", "correct", "right", "是", "对", "正确"}
    if isinstance(val, (int, float, bool)):
        return bool(val)
    return False


def mudabench_scores(data: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """eval/evaluate.py 909-1074 (`process_dataset`): every listed item (an identical one again), its rows
    judged one by one (733-906: cells summed, a row correct when every metric field is, a column per field
    name correct when correct in every row holding it), the final answer judged, solid = final correct and
    every row correct."""
    totals: dict[str, list[int]] = {m: [0, 0] for m in ("cell", "row", "column", "final", "solid")}
    for item in data:
        qid = item["question_id"]
        rows_ok = 0
        columns: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for index, meta in enumerate(item["metadata"]):
            fields = _mb_metric_fields(meta)
            parsed = _mb_judge(FACT_REPLIES[(qid, index)], {"correct_metric_fields": []})
            correct = _mb_row_correct_fields(parsed, fields)
            totals["cell"][0] += len(correct)
            totals["cell"][1] += max(1, len(fields))
            rows_ok += len(correct) == max(1, len(fields))
            for name in fields:
                columns[name][0] += name in correct
                columns[name][1] += 1
        totals["row"][0] += rows_ok
        totals["row"][1] += len(item["metadata"])
        totals["column"][0] += sum(ok == total for ok, total in columns.values())
        totals["column"][1] += len(columns)
        final = _mb_is_correct(_mb_judge(FINAL_REPLIES[qid], {"is_correct": False}))
        totals["final"][0] += final
        totals["final"][1] += 1
        totals["solid"][0] += final and rows_ok == len(item["metadata"])
        totals["solid"][1] += 1
    return {name: (ok, total) for name, (ok, total) in totals.items()}


# --- the tests -------------------------------------------------------------------------------------------------


def test_the_release_shapes_import_as_mudabench_counts_them(project, capsys):
    code, output = import_fixture(capsys)
    assert code == 0, output
    tasks = load_task_file(project / "tasks" / "mudabench.jsonl")
    data = dataset()
    assert [task.id for task in tasks] == [
        "simple-qa",
        "simple-qa-2",
        "simple-qb",
        "simple-qc",
        "simple-qe",
        "simple-qf",
    ]
    assert "identical items kept as tasks of their own (MuDABench's evaluation counts each): 1" in output
    assert "documents listed twice in one item (one file, a fact row per listing): 1" in output
    for task, item in zip(tasks, data, strict=True):  # a row per metadata entry, MuDABench's columns and values
        assert [sorted(row.cells) for row in task.facts] == [sorted(_mb_metric_fields(m)) for m in item["metadata"]]
    qa, _, qb, _, qe, _ = tasks
    assert qa.facts[2].cells == {"values.shareholder_meeting_events": EVENTS}  # a list of objects, kept whole
    assert qb.facts[1].cells["details.currency"] == "CNY" and qb.facts[0].document == qb.facts[2].document
    assert qe.facts[1].cells == {"fact_type": "atomic_metadata"}
    assert sum(len(task.facts) for task in tasks) == sum(len(item["metadata"]) for item in data) == 14
    folder = project / "collections" / qa.collection
    assert "revenue 20.1" in (folder / "documents_d2.md").read_text(encoding="utf-8")  # the relative PDFs read


def judge(request: dict[str, Any]) -> Step:
    prompt = request["messages"][-1]["content"]
    assert request["messages"][0] == {"role": "system", "content": "You are a helpful Judge."}
    assert request["response_format"] == {"type": "json_object"}
    qid = next(q for q, text in Q.items() if f"- Multi-document question: {text}\n" in prompt)
    if "- Multi-document reference answer:" in prompt:
        return reply(FINAL_REPLIES[qid])
    index = int(re.search(r"`row_index = (\d+)`", prompt).group(1))
    found = FACT_REPLIES[(qid, index)]
    return fault(500, "upstream failed", {"retry-after": "0"}) if found is None else reply(found)


def test_report_equals_mudabench_s_own_scores_under_a_misbehaving_judge(project, capsys, openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert import_fixture(capsys)[0] == 0
    (project / "script.json").write_text(json.dumps({"tasks": SCRIPTS}), encoding="utf-8")
    openai_server.respond = judge
    code = main(
        [
            "--model",
            "scripted:script.json",
            "--domain",
            "mudabench",
            "--tasks-dir",
            "tasks",
            "--collections-dir",
            "collections",
            "--results-dir",
            "results",
            "--run-id",
            "r",
            "--judge",
            "openai/judge",
            "--judge-api-base",
            openai_server.url,
            "--judge-prompt",
            str(PROTOCOL),
        ]
    )
    assert code in (0, 1), capsys.readouterr().out
    assert main(["report", "results/r", "--out", "report"]) == 0
    capsys.readouterr()
    expected = mudabench_scores(dataset())
    rows = read_rows(project / "results" / "r" / "results.jsonl")
    final = (sum(row.is_correct() for row in rows), len(rows))
    assert final == expected["final"], (final, expected)
    report = (project / "report" / "report.md").read_text(encoding="utf-8")
    stated = re.search(r"\| mudabench \| stated \| 6 \| (.*) \|", report).group(1).split(" | ")
    ours = dict(zip(("cell", "row", "column", "solid"), (float(cell.split(" ")[0]) for cell in stated), strict=False))
    for measure in ("cell", "row", "column", "solid"):
        ok, total = expected[measure]
        assert ours[measure] == round(100 * ok / total, 1), (measure, ours, expected)
    assert stated[-1] == "2"  # the HTTP 500 row and the reply without JSON: failed, counted as not stated
    counts = [row.facts_stated for row in rows]
    assert (
        sum(c.cells for c in counts) == expected["cell"][0]
        and sum(c.cells_total for c in counts) == expected["cell"][1]
    )
    assert sum(c.rows for c in counts) == expected["row"][0] and sum(c.rows_total for c in counts) == expected["row"][1]
    assert (sum(c.columns for c in counts), sum(c.columns_total for c in counts)) == expected["column"]
    assert expected == {
        "cell": (18, 27),
        "row": (8, 14),
        "column": (11, 19),
        "final": (4, 6),
        "solid": (1, 6),
    }  # the transcription's own numbers, worked by hand from the tables above
