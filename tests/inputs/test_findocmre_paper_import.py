"""`tasks import findocmre-paper`: FinDocMRE items in its paper's own schema (Table 7), one file per document, their
chart ids naming the embedded images (`page_2_image_1.png`) located in the PDF with no box given."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from harness.cli.main import main
from harness.inputs.importers.findocmre import read_items, task_row
from harness.inputs.tasks import load_task_file
from tests.helpers.findocmre_set import chart_box

_PAPER_FORMATS = {"numeric_exact": "numerical_precise", "numeric_approx": "numerical_approximate"}


def paper_item(item: dict[str, Any]) -> dict[str, Any]:
    """One item of the generated set (the renamed schema) written as Table 7 writes it."""
    pages = {chart["id"]: chart["page"] for chart in item["charts"]}
    answer, options = item["answer"], item.get("options") or []
    return {
        "question_id": item["id"],
        "source_chart_ids": [f"page_{pages[chart]}_image_1.png" for chart in item["chart_ids"]],
        "question_format": _PAPER_FORMATS.get(item["question_type"], item["question_type"]),
        "reasoning_type": item["reasoning_type"],
        "domain": item["financial_domain"],
        "question_content": {"stem": item["question"], "options": dict(zip("ABCDEFGH", options, strict=False))},
        "answer": "".join(answer) if isinstance(answer, list) else str(answer),
        "reasoning_trace": ["Step 1: read the chart.", "Step 2: answer."],
    }


def write_paper_files(findocmre_set: Path, folder: Path) -> list[Path]:
    """The set's items as one Table 7 file per document, `<stem>.json`."""
    items = [json.loads(line) for line in (findocmre_set / "findocmre.jsonl").read_text().splitlines()]
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for stem in sorted({item["source_document"] for item in items}):
        path = folder / f"{stem}.json"
        mine = [paper_item(item) for item in items if item["source_document"] == stem]
        path.write_text(json.dumps(mine, ensure_ascii=False), encoding="utf-8")
        files.append(path)
    return files


def run_import(files: list[Path], pdfs: Path, root: Path, capsys) -> tuple[int, str]:
    code = main(
        [
            *("tasks", "import", "findocmre-paper", *map(str, files), "--pdf-dir", str(pdfs), "--domain", "paper"),
            *("--tasks-dir", str(root / "tasks"), "--collections-dir", str(root / "collections")),
            *("--page-images", "50"),
        ]
    )
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_the_papers_schema_imports_as_written_with_chart_boxes_read_from_the_pdf(
    findocmre_set: Path, tmp_path: Path, capsys
):
    files = write_paper_files(findocmre_set, tmp_path / "items")
    code, output = run_import(files, findocmre_set / "pdfs", tmp_path, capsys)
    assert code == 0, output
    tasks = {task.id: task for task in load_task_file(tmp_path / "tasks" / "paper.jsonl")}
    renamed = {item.id: task_row("paper", item) for item in read_items(findocmre_set / "findocmre.jsonl")}
    assert set(tasks) == set(renamed)
    for task_id, row in renamed.items():  # the same tasks as the renamed schema's import
        task = tasks[task_id]
        assert (task.question, task.answer, task.grader, task.type) == (row.question, row.answer, row.grader, row.type)
        assert (task.rel_tol, task.answer_format) == (row.rel_tol, row.answer_format)
        assert task.groups == (row.groups or {}) | {"pages": "1-10"}  # 4 pages: read from the PDF as it is located
        figures = [int(chart.removeprefix("fig")) for chart in row.metadata["chart_ids"]]  # figN: page N+1's image
        boxes = [(chart["page"], chart["bbox"]) for chart in task.metadata["charts"]]
        assert boxes == [(figure + 1, list(chart_box())) for figure in figures]
        assert task.metadata["reasoning_trace"] == ["Step 1: read the chart.", "Step 2: answer."]


def test_a_chart_id_naming_an_image_the_pdf_lacks_is_one_line_and_nothing_is_written(
    findocmre_set: Path, tmp_path: Path, capsys
):
    [first, *_] = write_paper_files(findocmre_set, tmp_path / "items")
    items = json.loads(first.read_text())
    items[2]["source_chart_ids"] = ["page_9_image_1.png"]
    first.write_text(json.dumps(items, ensure_ascii=False))
    shutil.copytree(findocmre_set / "pdfs", tmp_path / "pdfs")
    code, output = run_import([first], tmp_path / "pdfs", tmp_path, capsys)
    assert code == 2 and len(output.strip().splitlines()) == 1
    assert f"{first}: item 3: field 'source_chart_ids': 'page_9_image_1.png': {first.stem}.pdf has no page 9" in output
    assert not (tmp_path / "tasks").exists() and not (tmp_path / "collections").exists()


def test_a_paper_field_wrong_is_named_by_the_papers_name(findocmre_set: Path, tmp_path: Path, capsys):
    [first, *_] = write_paper_files(findocmre_set, tmp_path / "items")
    items = json.loads(first.read_text())
    items[0]["question_content"]["stem"] = ""
    first.write_text(json.dumps(items, ensure_ascii=False))
    code, output = run_import([first], findocmre_set / "pdfs", tmp_path, capsys)
    assert code == 2 and f"{first}: item 1: field 'question_content.stem': must be a non-empty string" in output
