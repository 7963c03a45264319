"""`tasks import findocmre` over the generated set (tests/helpers/findocmre_set.py): the five answer types to their
graders, the report's groupings, one collection per report with its pages and figures kept as images, and bad
items refused with file, line and field before anything is written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.inputs.collections.manifest import manifest_path, read_manifest
from harness.inputs.importers.findocmre import read_items, task_row
from harness.inputs.tasks import load_task_file


def test_the_five_types_get_their_graders_and_the_report_its_groups(findocmre_project: Path):
    tasks = {task.id: task for task in load_task_file(findocmre_project / "tasks" / "findocmre.jsonl")}
    graders = {task.type: task.grader for task in tasks.values()}
    assert graders == {
        "single_choice": "choice",
        "multiple_choice": "multi_choice",
        "numeric_exact": "numeric",
        "numeric_approx": "numeric_tol",
        "open_ended": "score",
    }
    assert tasks["acme-2024-ratio"].rel_tol == 0.05
    assert {task.groups["charts"] for task in tasks.values()} == {"S", "M", "L"}
    assert {task.groups["language"] for task in tasks.values()} == {"en", "zh"}
    assert tasks["huaxia-2023-tallest"].groups == {
        "financial domain": "banking",
        "reasoning type": "comparison",  # the paper's Table 4 groups by it
        "language": "zh",
        "charts": "S",
        "pages": "1-10",  # the paper's Figure 6 plots accuracy against it
    }
    assert tasks["huaxia-2023-tallest"].metadata["pages"] == 4  # a cover and three charts
    assert tasks["huaxia-2023-tallest"].question.endswith("选项：\nA. 第1根柱\nB. 第2根柱\nC. 第3根柱\nD. 第4根柱")
    assert tasks["acme-2024-above"].answer == "D" and tasks["acme-2024-above"].answer_format.startswith("every")
    assert tasks["acme-2024-summary"].metadata["chart_ids"] == ["fig1", "fig2", "fig3"]


def test_each_report_is_a_collection_whose_pages_and_figures_are_kept_as_images(findocmre_project: Path):
    task = next(
        t for t in load_task_file(findocmre_project / "tasks" / "findocmre.jsonl") if t.id == "huaxia-2023-exact"
    )
    collection = findocmre_project / "collections" / str(task.collection)
    markdown = (collection / task.evidence[0]).read_text(encoding="utf-8")
    assert "图 1" in markdown and "15" not in markdown  # the caption is text; the chart's values are only pixels
    (entry,) = read_manifest(manifest_path(collection)).documents  # type: ignore[union-attr]
    assert entry.image_dpi == 100
    pages = [image for image in entry.images if image["kind"] == "page"]
    figures = [image for image in entry.images if image["kind"] == "figure"]
    assert [page["page"] for page in pages] == [1, 2, 3, 4] and (pages[0]["width"], pages[0]["height"]) == (500, 417)
    assert [(f["page"], f["caption"], f["width"]) for f in figures] == [
        (2, "图 1", 400),
        (3, "图 2", 400),
        (4, "图 3", 400),
    ]
    for image in entry.images:
        assert (collection / image["file"]).read_bytes()[:4] in (b"\x89PNG", b"\xff\xd8\xff\xe0")


def _run(root: Path, data: Path, pdfs: Path, capsys) -> tuple[int, str]:
    code = main(
        [
            *("tasks", "import", "findocmre", str(data), "--pdf-dir", str(pdfs), "--domain", "fin"),
            *("--tasks-dir", str(root / "tasks"), "--collections-dir", str(root / "collections")),
        ]
    )
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"question_type": "true_false"}, "field 'question_type': 'true_false' is not one of single_choice"),
        ({"answer": "E"}, "field 'answer'"),
        ({"question_type": "multiple_choice", "answer": "A and C"}, "field 'answer': 'A and C' is not option letters"),
        ({"language": "fr"}, "field 'language': 'fr'"),
        ({"chart_ids": []}, "field 'chart_ids': must be a non-empty list"),
        ({"charts": [{"id": "fig1", "page": 2, "bbox": [10, 10, 5, 5]}]}, "field 'charts[0]': field 'bbox'"),
        # issue 45: finite, yet past any page: Pillow's bomb error or an OverflowError when cropped
        ({"charts": [{"id": "fig1", "page": 2, "bbox": [0, 0, 1e308, 1e308]}]}, "field 'charts[0]': field 'bbox'"),
        ({"charts": [{"id": "fig1", "page": 2, "bbox": [0, 0, 20_000, 50]}]}, "field 'charts[0]': field 'bbox'"),
        ({"options": None}, "field 'options': a single_choice question needs its options"),
        ({"source_document": "../etc/passwd"}, "field 'source_document'"),
    ],
)
def test_a_bad_item_is_one_line_naming_file_line_and_field_and_nothing_is_written(
    findocmre_set: Path, tmp_path: Path, capsys, change: dict, message: str
):
    lines = (findocmre_set / "findocmre.jsonl").read_text(encoding="utf-8").splitlines()
    third = json.loads(lines[2]) | change  # acme-2024-tallest: a single choice question
    lines[2] = json.dumps(third)
    data = tmp_path / "items.jsonl"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, output = _run(tmp_path, data, findocmre_set / "pdfs", capsys)
    assert code == 2
    assert f"{data}:3: " in output and message in output
    assert len(output.strip().splitlines()) == 1
    assert not (tmp_path / "tasks").exists() and not (tmp_path / "collections").exists()


def test_a_missing_report_skips_its_tasks_and_says_so(findocmre_set: Path, tmp_path: Path, capsys):
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    shutil.copy(findocmre_set / "pdfs" / "acme-2024.pdf", pdfs)
    code, output = _run(tmp_path, findocmre_set / "findocmre.jsonl", pdfs, capsys)
    assert code == 1 and "missing huaxia-2023.pdf" in output
    assert {task.id.split("-")[0] for task in load_task_file(tmp_path / "tasks" / "fin.jsonl")} == {"acme"}
    [collection] = [path for path in (tmp_path / "collections").iterdir() if path.is_dir()]
    manifest = read_manifest(manifest_path(collection))
    assert manifest is not None and [entry.image_dpi for entry in manifest.documents] == [110]  # the paper's


def test_an_approximate_gold_of_zero_imports_and_is_graded_exactly(findocmre_set: Path, tmp_path: Path):
    """Refused before, the whole set (a relative tolerance around 0 is empty): now graded exactly, the paper's rule."""
    items = [json.loads(line) for line in (findocmre_set / "findocmre.jsonl").read_text(encoding="utf-8").splitlines()]
    index = next(i for i, item in enumerate(items) if item["question_type"] == "numeric_approx")
    items[index]["answer"] = "0"
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items), encoding="utf-8")
    read = read_items(data)
    assert len(read) == len(items)
    zero = task_row("fin", read[index])
    assert (zero.answer, zero.type, zero.grader, zero.rel_tol) == ("0", "numeric_approx", "numeric", 0.05)
    others = [task_row("fin", item) for item in read[index + 1 :] if item.question_type == "numeric_approx"]
    assert [row.grader for row in others] == ["numeric_tol"]  # the other report's approximate item is unchanged
