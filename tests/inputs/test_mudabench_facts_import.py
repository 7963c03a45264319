"""`tasks import mudabench` over a fixture shaped like MuDABench's released data/simple.json and data/complex.json
(both splits, a two-year item, an item repeated as in the real simple.json, a question_id in both splits, Chinese and
English items, a PDF missing and one scanned): facts, evidence and source answers land where they belong."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pymupdf
import pytest

from harness.cli.main import main
from harness.inputs.tasks import load_task_file, task_digest

FIXTURE = Path(__file__).parents[1] / "fixtures" / "mudabench"
MISSING = "0d0e0a0d-0000-4000-8000-00000000beef"
SCANNED = "669c5065-b0ed-4014-a0f3-13d68b855917"


def metadata_entries() -> list[dict]:
    return [entry for split in ("simple", "complex") for item in _items(split) for entry in item["metadata"]]


def _items(split: str) -> list[dict]:
    return json.loads((FIXTURE / f"{split}.json").read_text(encoding="utf-8"))


def write_pdfs(folder: Path) -> None:
    """A text PDF per document (its values printed as a report would), a page image for the scanned one, and
    none for the missing one."""
    folder.mkdir()
    for entry in {entry["id"]: entry for entry in metadata_entries()}.values():
        if entry["id"] == MISSING:
            continue
        values = "; ".join(f"{k[len('value_') :]} {v}" for k, v in entry.items() if k.startswith("value_"))
        text = f"Report {entry['year']} of {entry['symbol']}. {values}."
        document = pymupdf.open()
        page = document.new_page()
        if entry["id"] == SCANNED:
            scratch = pymupdf.open()
            scratch.new_page().insert_text((72, 72), text, fontsize=14)
            page.insert_image(page.rect, pixmap=scratch[0].get_pixmap(dpi=200))
        else:
            page.insert_text((72, 72), text)
        document.save(folder / f"{entry['id']}.pdf")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for split in ("simple", "complex"):
        shutil.copy(FIXTURE / f"{split}.json", tmp_path / f"{split}.json")
    write_pdfs(tmp_path / "pdfs")
    return tmp_path


def run_import(root: Path, capsys, *extra: str) -> tuple[int, str]:
    code = main(
        [
            "tasks",
            "import",
            "mudabench",
            str(root / "simple.json"),
            str(root / "complex.json"),
            "--pdf-dir",
            str(root / "pdfs"),
            "--domain",
            "mudabench",
            "--tasks-dir",
            str(root / "tasks"),
            "--collections-dir",
            str(root / "collections"),
            *extra,
        ]
    )
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_facts_evidence_and_source_answers_land_in_the_task(project, capsys):
    code, output = run_import(project, capsys)
    assert code == 1, output  # the missing and the scanned PDF cost their items
    tasks = {task.id: task for task in load_task_file(project / "tasks" / "mudabench.jsonl")}
    assert sorted(tasks) == [
        "complex-q_3c6e1f0a9b2d4e58",
        "complex-q_94d121e79aa245a6",
        "simple-q_257d9e7369a2a4c1",
        "simple-q_3c6e1f0a9b2d4e58",
        "simple-q_3c6e1f0a9b2d4e58-2",  # the repeated item, counted twice as MuDABench's evaluation counts it
    ]
    two_year = tasks["simple-q_257d9e7369a2a4c1"]
    assert [(row.entity, row.period) for row in two_year.facts] == [
        ("600919", "2021"),
        ("600919", "2022"),
        ("000001", "2021"),
        ("000001", "2022"),
    ]
    first = two_year.facts[0]
    assert first.document == "documents_ecb07c1f-0a3b-4d98-a3ba-1079c40d9374.md"
    assert first.cells == {"values.total_operating_cost_cny": 37363070000.0}
    assert first.schema == {"values.total_operating_cost_cny": "营业总成本。"}
    assert first.source == {
        "symbol": "600919",
        "year": 2021,
        "doctype": first.source["doctype"],
        "id": first.document[10:-3],
    }
    assert sorted(two_year.evidence) == sorted(row.document for row in two_year.facts)
    folder = project / "collections" / two_year.collection
    assert all((folder / name).is_file() for name in two_year.evidence)
    english = tasks["simple-q_3c6e1f0a9b2d4e58"]
    assert english.metadata["source_answer"][0] == "Company [DY] had total assets of $1,944,165,000.00 in 2021"
    assert len(english.facts) == 5 and english.facts[0].cells == {"values.total_assets_usd": 1944165000.0}
    assert "identical items kept as tasks of their own (MuDABench's evaluation counts each): 1" in output


def test_each_pdf_is_converted_once_and_a_scan_says_why_it_was_not(project, capsys):
    """Conversions run in bounded worker processes, so they are counted by what they leave: one Markdown file
    per PDF, the same file (one inode) in every set that holds the PDF."""
    code, output = run_import(project, capsys)
    distinct = {entry["id"] for entry in metadata_entries()} - {MISSING, SCANNED}
    inodes: dict[str, set[int]] = {}
    for markdown in (project / "collections").glob("*/documents_*.md"):
        if markdown.name == "documents_index.md":  # each set's own index, written per set
            continue
        inodes.setdefault(markdown.stem.removeprefix("documents_"), set()).add(markdown.stat().st_ino)
    assert code == 1 and set(inodes) == distinct  # 10 converted PDFs of the 11 in 4 sets, the scan not
    assert all(len(found) == 1 for found in inodes.values()), inodes
    assert f"{len(distinct) + 1} PDFs converted (each once)" in output
    lines = output.splitlines()
    assert [line for line in lines if "could not convert" in line] == [
        f"  could not convert {SCANNED}.pdf: PDF without a text layer (scanned?): build with --ocr to read it by OCR"
    ]
    assert f"  missing {MISSING}.pdf" in lines
    assert "  skipped 2 tasks of 2 document sets: 1 PDFs missing, 1 not converted" in lines


def test_ocr_reads_the_scanned_report(project, capsys):
    code, output = run_import(project, capsys, "--ocr", "--ocr-lang", "eng")
    assert code == 1  # the missing PDF still costs its item
    tasks = {task.id: task for task in load_task_file(project / "tasks" / "mudabench.jsonl")}
    esg = tasks["simple-q_8a1d2c3b4e5f6071"]
    scanned = (project / "collections" / esg.collection / f"documents_{SCANNED}.md").read_text(encoding="utf-8")
    assert "601128" in scanned and "Deloitte" in scanned and "could not convert" not in output


def test_an_ocr_language_without_data_is_refused_before_anything_is_written(project, capsys):
    code, output = run_import(project, capsys, "--ocr", "--ocr-lang", "xx_nolang")
    assert code == 2 and "--ocr-lang: no Tesseract data for xx_nolang" in output
    assert not (project / "tasks").exists() and not (project / "collections").exists()


def test_facts_never_reach_the_collection(project, capsys):
    run_import(project, capsys)
    for task in load_task_file(project / "tasks" / "mudabench.jsonl"):
        index = (project / "collections" / task.collection / "documents_index.md").read_text(encoding="utf-8")
        assert "value_" not in index and "total assets." not in index and "营业总成本" not in index


def test_leakage_follows_each_task_s_own_collection(project, capsys):
    run_import(project, capsys)
    arguments = ["--tasks-dir", str(project / "tasks"), "--collections-dir", str(project / "collections")]
    code = main(["leakage", "--domain", "mudabench", *arguments])
    output = capsys.readouterr().out
    assert code == 0, output
    assert "5 tasks checked: 0 with a leak" in output


def test_a_leak_in_a_task_s_own_collection_is_found(project, capsys):
    run_import(project, capsys)
    task = load_task_file(project / "tasks" / "mudabench.jsonl")[0]
    (project / "collections" / task.collection / task.evidence[0]).write_text(f"answer: {task.answer}\n")
    arguments = ["--tasks-dir", str(project / "tasks"), "--collections-dir", str(project / "collections")]
    code = main(["leakage", "--domain", "mudabench", *arguments])
    output = capsys.readouterr().out
    assert code == 1 and f"mudabench/{task.id}: gold printed in {task.evidence[0]}" in output


@pytest.mark.parametrize(
    ("facts", "message"),
    [
        ("[1]", "field 'facts[0]': must be a JSON object"),
        ('[{"document": "a.md", "cells": {}}]', "field 'facts[0].cells': must be a non-empty object"),
        ('[{"document": "a.md", "cells": {"x": [{"y": Infinity}]}}]', "field 'facts[0].cells.x': must be a JSON value"),
        ('[{"cells": {"x": 1}}]', "field 'facts[0].document': must be a non-empty string"),
        ('[{"document": "a.md", "cells": {"x": NaN}}]', "field 'facts[0].cells.x'"),
    ],
)
def test_a_bad_fact_is_a_one_line_error_naming_file_line_and_field(tmp_path, capsys, facts, message):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    line = '{"id": "t1", "domain": "d", "question": "q?", "answer": "1", "facts": ' + facts + "}\n"
    (tasks / "d.jsonl").write_text("\n" + line)
    code = main(["leakage", "--tasks-dir", str(tasks), "--collections-dir", str(tmp_path), "--domain", "d"])
    output = capsys.readouterr()
    text = (output.out + output.err).strip()
    assert code == 2 and f"d.jsonl:2: {message}" in text and len(text.splitlines()) == 1, text


def test_facts_are_part_of_the_task_digest(tmp_path):
    tasks = tmp_path / "d.jsonl"
    base = '{"id": "t1", "domain": "d", "question": "q?", "answer": "1"'
    facts = ', "facts": [{"document": "a.md", "cells": {"x": 1}}]}\n'
    tasks.write_text(base + "}\n" + base.replace("t1", "t2") + facts)
    plain, with_facts = load_task_file(tasks)
    assert task_digest(plain) != task_digest(dataclasses.replace(with_facts, id="t1"))
    assert task_digest(dataclasses.replace(with_facts, facts=())) == task_digest(dataclasses.replace(plain, id="t2"))
