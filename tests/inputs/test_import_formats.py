"""`tasks import` is one engine over a table of formats: a format written here, added by one table line, imports
end to end through the command line (its own flag included) with no edit to the package."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

from harness.cli.main import main
from harness.core.errors import InputError, read_text_input
from harness.inputs.importers import formats
from harness.inputs.importers.formats import CollectionSettings, TaskFormat, option
from harness.inputs.importers.rows import CollectionPlan, TaskPlan, TaskRow, document_files
from harness.inputs.tasks import load_task_file


@dataclass(frozen=True)
class ToyItem:
    document: str
    question: str
    answer: str


@dataclass(frozen=True)
class ToyOptions:
    shout: bool = field(default=False, metadata=option("--shout", "ask in capitals"))

    def check(self) -> None:
        pass

    def collection_settings(self) -> CollectionSettings:
        return CollectionSettings()

    def describe(self) -> str:
        return "shouted" if self.shout else ""


def read_toy(path: Path) -> list[ToyItem]:
    """`document|question|answer` lines."""
    items = []
    for number, line in enumerate(read_text_input(path, "data").splitlines(), start=1):
        parts = line.split("|")
        if len(parts) != 3:
            raise InputError(f"{path}:{number}: expected document|question|answer")
        items.append(ToyItem(*parts))
    return items


def plan_toy(domain: str, items: list[ToyItem], options: ToyOptions) -> TaskPlan:
    plan = TaskPlan()
    for number, item in enumerate(items, start=1):
        name = f"{domain}-{item.document}"
        plan.collections[name] = CollectionPlan((item.document,))
        question = item.question.upper() if options.shout else item.question
        evidence = [document_files([item.document])[item.document]]
        plan.tasks.append(TaskRow(f"q{number}", domain, question, item.answer, "numeric", "toy", name, evidence))
    return plan


FORMAT = TaskFormat("toy", "toy items", "toy data files", "<document>.pdf", ToyOptions, read_toy, plan_toy)


def test_a_format_added_by_one_table_line_imports_end_to_end(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(formats.FORMATS, "toy", __name__)
    monkeypatch.chdir(tmp_path)  # a relative --pdf-dir: the staging folder's links must still resolve
    Path("pdfs").mkdir()
    document = pymupdf.open()
    document.new_page().insert_text((72, 72), "Units in total: 42. Units in 2021: 2.")
    document.save("pdfs/ledger.pdf")
    Path("toy.txt").write_text("ledger|Units in total?|42\nledger|Units in 2021?|2\n", encoding="utf-8")
    folders = ["--tasks-dir", "tasks", "--collections-dir", "collections"]
    code = main(["tasks", "import", "toy", "toy.txt", "--pdf-dir", "pdfs", "--domain", "toy", *folders, "--shout"])
    output = capsys.readouterr().out
    assert code == 0, output
    assert "tasks/toy.jsonl: 2 tasks over 1 collections; 1 PDFs converted (each once); shouted" in output
    tasks = load_task_file(tmp_path / "tasks" / "toy.jsonl")
    assert [(task.question, task.answer, task.collection) for task in tasks] == [
        ("UNITS IN TOTAL?", "42", "toy-ledger"),
        ("UNITS IN 2021?", "2", "toy-ledger"),
    ]
    converted = tmp_path / "collections" / "toy-ledger" / tasks[0].evidence[0]
    assert "Units in total: 42." in converted.read_text(encoding="utf-8")
