"""The starter-domain builder (scripts/starter_domains/) and its contract with the collection builder: a figure
printed into a raw CSV, XLSX, HTML or Markdown table reads back, through `collection build` and the solutions'
table reader, as the same number (decimal commas included); the raw XLSX files are byte-reproducible; and each
domain's task table (domains/<name>.yaml) gives the committed task file, golds read from the committed collection.

A full rebuild needs the `domains-build` extra, Debian packages and a minute; these tests need neither."""

from __future__ import annotations

import importlib
import json
import re
import zipfile
from decimal import Decimal
from pathlib import Path
from types import ModuleType

import pytest

from harness.cli.main import main

REPO = Path(__file__).resolve().parents[2]
DOMAINS = ["agri", "arch", "biz", "edu", "fin", "health", "law", "tech"]
DOCS = "/workspace/documents/"


@pytest.fixture(scope="module")
def scripts() -> ModuleType:
    """The scripts' import root, as `python scripts/build_domains.py` sees it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(REPO / "scripts"))
        return importlib.import_module("starter_domains")


def module(scripts: ModuleType, name: str) -> ModuleType:
    return importlib.import_module(f"{scripts.__name__}.{name}")


@pytest.fixture
def reader_on(scripts: ModuleType, monkeypatch: pytest.MonkeyPatch):
    """The reader, reading the documents of a folder instead of the sandbox's /workspace/documents."""
    reader = module(scripts, "reader")

    def on(folder: Path) -> ModuleType:
        def redirected(path: str, *args, **kwargs):
            return open(path.replace(DOCS, f"{folder}/"), *args, **kwargs)

        monkeypatch.setattr(reader, "open", redirected, raising=False)
        return reader

    return on


def tables(scripts: ModuleType) -> list:
    table = module(scripts, "spec").Table
    header = ["Key", "Amount", "Count", "Share (%)"]
    rows = [
        ["2001", "1234.500", "7", "0.125"],
        ["2002", "-3.250", "12", "99.900"],
        ["Zürich AG", "0.001", "0", "1.000"],
    ]
    made = [
        table("src-a", f"table-{kind}", kind, "A title", "An intro.", header, rows)
        for kind in ("csv", "xlsx", "html", "md")
    ]
    comma_rows = [[row[0]] + [cell.replace(".", ",") for cell in row[1:]] for row in rows]
    made += [
        table("src-b", f"tabelle-{kind}", kind, "Titel", "Text.", header, comma_rows, "de") for kind in ("html", "md")
    ]
    return made


def test_printed_figures_read_back_unchanged_after_conversion(scripts, reader_on, tmp_path: Path) -> None:
    raw, out = tmp_path / "raw", tmp_path / "out"
    made = tables(scripts)
    for table in made:
        module(scripts, "writers").write_raw(table, raw)
    assert main(["collection", "build", str(raw), "--domain", "roundtrip", "--out", str(out)]) == 0
    reader = reader_on(out)
    for table in made:
        for row in table.rows:
            for col in table.header[1:]:
                assert reader.cell(table.name, row[0], col, table.comma) == table.value(row[0], col), (table, col)
        assert reader.cell(table.name, "*", "Amount", table.comma) == Decimal("1231.251")


def test_raw_xlsx_files_carry_no_save_time(scripts, tmp_path: Path) -> None:
    """openpyxl stamps the current time into the file; a fixed one makes a rebuild byte-identical."""
    table = next(t for t in tables(scripts) if t.fmt == "xlsx")
    module(scripts, "writers").write_raw(table, tmp_path)
    with zipfile.ZipFile(tmp_path / "src-a" / "table-xlsx.xlsx") as archive:
        assert {info.date_time for info in archive.infolist()} == {(2000, 1, 1, 0, 0, 0)}
        core = archive.read("docProps/core.xml").decode()
    assert re.findall(r"<dcterms:(?:created|modified)[^>]*>([^<]*)<", core) == ["2000-01-01T00:00:00Z"] * 2


def test_answers_are_formatted_as_their_format_asks(scripts) -> None:
    fmt = module(scripts, "reader").fmt
    assert fmt(Decimal("-36.2549"), "[sign]x.xx pp") == "-36.25 pp"
    assert fmt(Decimal("2.1165"), "x.xxx x") == "2.116 x"  # half-even
    assert fmt(Decimal("117256.5"), "integer") == "117256"
    assert fmt(Decimal("3.00"), "[sign]x.xx pp") == "+3.00 pp"


def test_an_answer_expression_is_arithmetic_over_the_figures_only(scripts) -> None:
    evaluate = module(scripts, "tasks").evaluate
    assert evaluate("((v[1] / v[0]) ** (D(1) / D(2)) - 1) * 100", [Decimal(4), Decimal(9)]) == Decimal(50)
    assert evaluate("sum(v[1:]) / v[0]", [Decimal(2), Decimal(3), Decimal(5)]) == Decimal(4)
    for bad in ["__import__('os')", "v.__class__", "open('x')", "[x for x in v]"]:
        with pytest.raises(ValueError, match="not allowed"):
            evaluate(bad, [Decimal(1)])


@pytest.mark.parametrize("name", DOMAINS)
def test_task_table_gives_the_committed_tasks_on_the_committed_collection(scripts, reader_on, name: str) -> None:
    """Golds from the committed collection's Markdown (not from the data sets, which need the build extra):
    ids, questions, answers, formats, solutions and evidence as committed, byte for byte."""
    domain = module(scripts, "domains").DOMAINS[name]
    documents = domain.documents()
    reader = reader_on(REPO / "collections" / name)
    text_type = module(scripts, "spec").Text

    def committed(ref) -> Decimal:
        if isinstance(ref, text_type):
            return reader.grab(ref.name, ref.pattern)
        document = documents[ref.doc]
        return reader.cell(document.name, ref.key, ref.col, document.comma)

    rows = module(scripts, "tasks").task_rows(domain, committed)
    lines = (REPO / "tasks" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.dumps(row, ensure_ascii=False) for row in rows] == lines


def test_demo_solutions_carry_the_shared_reader(scripts) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(REPO / "scripts"))
        demo = importlib.import_module("build_demo")
    solution = module(scripts, "solution")
    assert solution.reader_source("table", "q") == demo.READER
    rows = [json.loads(line) for line in (REPO / "tasks" / "demo.jsonl").read_text(encoding="utf-8").splitlines()]
    assert rows and all(row["solution"].startswith("python3 - <<'PY'\n" + demo.READER) for row in rows)


@pytest.mark.parametrize(
    ("row", "malformed", "message"),
    [
        (
            '- [fatal/tx, "1988", Traffic fatalities]',
            "- [fatal/tx, 1988, Traffic fatalities]",
            "field 'refs[1]': row key 1988 is not a string (quote a number)",
        ),
        (
            '- [fatal/tx, "1988", Traffic fatalities]',
            '- [fatal/tz, "1988", Traffic fatalities]',
            "field 'refs[1]': 'fatal/tz' is not a document of the splits",
        ),
        ("    answer_format: x.xxx x", "    answer: x.xxx x", "field 'answer': is not a field of a task"),
        ("    kind: xlsx", "    kind: pdf", "field 'kind': 'pdf' is not csv, xlsx, html, md"),
    ],
)
def test_a_malformed_row_of_a_data_file_is_named_by_its_line_and_field(
    scripts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, row: str, malformed: str, message: str
) -> None:
    domain_file, law = module(scripts, "domain_file"), module(scripts, "domains.law")
    lines = (domain_file.FOLDER / "law.yaml").read_text(encoding="utf-8").splitlines()
    line = next(number for number, text in enumerate(lines, start=1) if text.endswith(row))
    lines[line - 1] = lines[line - 1].replace(row, malformed)
    (tmp_path / "law.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setattr(domain_file, "FOLDER", tmp_path)
    with pytest.raises(SystemExit) as stop:
        domain_file.read_domain("law", law.copies, law.fatalities, law.state_crime)
    assert str(stop.value) == f"{tmp_path / 'law.yaml'}:{line}: {message}"
