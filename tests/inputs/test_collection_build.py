"""`collection build` and `collection stats` on small real files of each format, made here (the old binary
.xls is a fixture: nothing in our dependencies writes one)."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import threading
from pathlib import Path

import pymupdf
import pytest
import yaml
from rich.console import Console

from harness.cli.main import main
from harness.inputs.collections.build import CollectionBuildRequest, build_collection
from harness.inputs.collections.hashing import collection_hash
from harness.inputs.collections.manifest import manifest_path, read_manifest
from tests.helpers.collection_files import make_pdf, make_scanned_pdf, make_xlsx

FIXTURES = Path(__file__).parents[1] / "fixtures"


def build(source: Path, out: Path, **options: object):
    request = CollectionBuildRequest(source_dir=source, domain=out.name, out=out, **options)
    return build_collection(request, Console(quiet=True))


def test_pdf_becomes_markdown_with_a_page_marker_per_page_and_tables(tmp_path):
    path = tmp_path / "src" / "agency" / "Annual Report 2023.pdf"
    make_pdf(path, pages=2)
    document = pymupdf.open(path)
    document.new_page(1).insert_text((72, 72), "A page of prose between the tables, no drawings.")
    document.saveIncr()
    report = build(tmp_path / "src", tmp_path / "out" / "d")
    text = (tmp_path / "out" / "d" / "agency_annual-report-2023.md").read_text()
    markers = [text.index(f"--- page {number} of 3 ---") for number in (1, 2, 3)]
    assert report.converted == ["agency_annual-report-2023.md"]
    assert markers[0] < text.index("Annual report page 1") < markers[1]
    assert markers[1] < text.index("A page of prose between the tables") < markers[2]
    assert markers[2] < text.index("Annual report page 2")
    assert text.replace(" ", "").count("|North|1,200|1,350|") == 2
    assert read_manifest(manifest_path(tmp_path / "out" / "d")).documents[0].pages == 3


def test_xlsx_sheets_are_tables_under_their_names_with_title_merged_header_and_formats_as_displayed(tmp_path):
    make_xlsx(tmp_path / "src" / "stats" / "Umsätze Straße.xlsx")
    build(tmp_path / "src", tmp_path / "out" / "d")
    text = (tmp_path / "out" / "d" / "stats_umsatze-strasse.md").read_text()
    assert text.startswith(
        "## Revenue\n\nTable 1. Revenue by region\n\n"
        "| Region | Revenue (EUR) 2022 | Revenue (EUR) 2023 |\n|---|---|---|\n"
        "| North | 1,234,567 | 1,350,000 |\n| South | 980,000 | 1,010,000 |\n"
    )
    assert "## Shares" in text and "| North | 55.7% |" in text
    assert "## Empty" not in text
    assert read_manifest(manifest_path(tmp_path / "out" / "d")).documents[0].sheets == 2


def test_old_binary_xls_is_read(tmp_path):
    (tmp_path / "src").mkdir()
    shutil.copy(FIXTURES / "nowcast-spec.xls", tmp_path / "src" / "spec.xls")
    build(tmp_path / "src", tmp_path / "out" / "d")
    text = (tmp_path / "out" / "d" / "src_spec.md").read_text()
    assert text.startswith("## spec\n\n| Model | SeriesID | SeriesName |")
    assert "| 1 | GDPC1 | Real Gross Domestic Product | q |" in text


def test_csv_and_tsv_become_complete_tables(tmp_path):
    source = tmp_path / "src" / "bureau"
    source.mkdir(parents=True)
    (source / "semicolons.csv").write_text("Jahr;Wert|x\n2020;1,5\n2021;2,5\n", encoding="utf-8")
    (source / "big.csv").write_text("id,value\n" + "".join(f"{i},{i * 3}\n" for i in range(20000)))
    (source / "tabs.tsv").write_text("a\tb\n1\t2\n")
    build(tmp_path / "src", tmp_path / "out" / "d")
    out = tmp_path / "out" / "d"
    assert (
        out / "bureau_semicolons.md"
    ).read_text() == "| Jahr | Wert\\|x |\n|---|---|\n| 2020 | 1,5 |\n| 2021 | 2,5 |\n"
    big = (out / "bureau_big.md").read_text().splitlines()
    assert len(big) == 20002 and big[-1] == "| 19999 | 59997 |"
    assert (out / "bureau_tabs.md").read_text() == "| a | b |\n|---|---|\n| 1 | 2 |\n"


def test_docx_pptx_and_html_go_through_markitdown(tmp_path):
    import docx
    import pptx

    source = tmp_path / "src" / "office"
    source.mkdir(parents=True)
    memo = docx.Document()
    memo.add_heading("Budget memo", 1)
    memo.add_paragraph("The 2024 budget is 4.2 million.")
    memo.save(source / "memo.docx")
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Quarterly results"
    slide.placeholders[1].text = "Sales rose 7%"
    deck.save(source / "deck.pptx")
    (source / "page.html").write_text(
        "<html><body><h1>Tariffs</h1><table><tr><th>item</th><th>rate</th></tr>"
        "<tr><td>steel</td><td>25%</td></tr></table></body></html>"
    )
    build(tmp_path / "src", tmp_path / "out" / "d")
    out = tmp_path / "out" / "d"
    assert "# Budget memo" in (out / "office_memo.md").read_text()
    assert "The 2024 budget is 4.2 million." in (out / "office_memo.md").read_text()
    assert "Quarterly results" in (out / "office_deck.md").read_text()
    assert "Sales rose 7%" in (out / "office_deck.md").read_text()
    html = (out / "office_page.md").read_text()
    assert "# Tariffs" in html and "| steel | 25% |" in html
    converters = {entry.format: entry.converter for entry in read_manifest(manifest_path(out)).documents}
    assert converters == {"docx": "markitdown", "pptx": "markitdown", "html": "markitdown"}


def test_markdown_and_text_are_copied_as_is(tmp_path):
    source = tmp_path / "src"
    (source / "notes").mkdir(parents=True)
    markdown = "# Notizen\n\nÜber | alles\n\n\ttabbed line  \n".encode()
    (source / "notes" / "Notizen.md").write_bytes(markdown)
    (source / "top.txt").write_bytes(b"plain\r\ntext without newline")
    build(source, tmp_path / "out" / "d")
    assert (tmp_path / "out" / "d" / "notes_notizen.md").read_bytes() == markdown
    assert (tmp_path / "out" / "d" / "src_top.md").read_bytes() == b"plain\r\ntext without newline"


def test_colliding_names_get_a_hash_suffix_whatever_the_order(tmp_path):
    source = tmp_path / "src"
    for relative in ("a/x/data.csv", "a/y/data.csv", "a/data.tsv", "a/other.csv"):
        (source / relative).parent.mkdir(parents=True, exist_ok=True)
        (source / relative).write_text("k,v\n1,2\n")
    build(source, tmp_path / "out" / "d")
    names = sorted(path.name for path in (tmp_path / "out" / "d").iterdir())
    assert "a_other.md" in names
    suffixed = [name for name in names if name.startswith("a_data-")]
    assert len(suffixed) == 3 and all(len(name) == len("a_data-123456.md") for name in suffixed)
    again = build(source, tmp_path / "out2" / "d")
    assert sorted(again.unchanged + again.converted) == names


def test_names_that_read_or_fold_the_same_are_built_apart_and_said_so(tmp_path, capsys):
    source = tmp_path / "src"
    source.mkdir()
    (source / "café.txt").write_text("utf-8 composed")
    (source / "cafe\u0301.txt").write_text("utf-8 decomposed")  # folds to the same output name
    (source / os.fsdecode(b"caf\xe9.txt")).write_text("latin-1")  # reads `café.txt` in cp1252
    out = tmp_path / "out" / "d"
    arguments = ["collection", "build", str(source), "--domain", "d", "--out", str(out)]
    assert main(arguments) == 0
    note = "its name is not UTF-8 and reads 'café.txt', as another file's does: shown with its bytes escaped"
    assert f"note caf\\xe9.txt: {note}" in capsys.readouterr().out
    documents = read_manifest(manifest_path(out)).documents
    built = {entry.source: (out / entry.name).read_text() for entry in documents}
    assert built == {"café.txt": "utf-8 composed", "cafe\u0301.txt": "utf-8 decomposed", "caf\\xe9.txt": "latin-1"}
    assert [entry.notes for entry in documents if entry.source == "caf\\xe9.txt"] == [[note]]
    names = sorted(entry.name for entry in documents)
    assert names[0] == "src_caf-xe9.md" and all(re.fullmatch(r"src_cafe-[0-9a-f]{6}\.md", n) for n in names[1:])
    assert main(arguments) == 0
    assert sorted(read_manifest(manifest_path(out)).documents, key=lambda e: e.name) == documents


def test_a_name_spelt_like_an_escaped_one_is_skipped_not_written_over(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "café.txt").write_text("utf-8")
    (source / os.fsdecode(b"caf\xe9.txt")).write_text("latin-1")
    (source / "caf\\xe9.txt").write_text("backslash")  # its name is the Latin-1 one's as shown
    report = build(source, tmp_path / "out" / "d")
    assert sorted(report.converted) == ["src_caf-xe9.md", "src_cafe.md"]
    assert [(s.source, s.reason) for s in report.skipped] == [
        ("caf\\xe9.txt", "another file's name is shown the same (rename one)")
    ]
    assert (tmp_path / "out" / "d" / "src_caf-xe9.md").read_text() == "backslash"  # listed first: `\\` < 0xe9


def test_corrupt_encrypted_and_unsupported_files_are_listed_and_the_rest_is_built(tmp_path, capsys):
    from msoffcrypto.format.ooxml import OOXMLFile

    source = tmp_path / "src" / "mixed"
    source.mkdir(parents=True)
    make_pdf(source / "good.pdf", pages=1)
    (source / "broken.pdf").write_bytes(b"%PDF-1.4 this is not a pdf")
    locked = pymupdf.open()
    locked.new_page().insert_text((72, 72), "secret")
    locked.save(source / "locked.pdf", encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="user", owner_pw="owner")
    make_xlsx(tmp_path / "plain.xlsx")
    with (tmp_path / "plain.xlsx").open("rb") as plain, (source / "locked.xlsx").open("wb") as encrypted:
        OOXMLFile(plain).encrypt("secret", encrypted)
    (source / "broken.xlsx").write_bytes(b"PK\x03\x04 truncated zip")
    (source / "image.bin").write_bytes(b"\x00\x01")
    (source / ".DS_Store").write_bytes(b"\x00")
    code = main(["collection", "build", str(tmp_path / "src"), "--domain", "d", "--out", str(tmp_path / "out" / "d")])
    output = capsys.readouterr().out
    assert code == 1
    assert sorted(path.name for path in (tmp_path / "out" / "d").iterdir()) == ["mixed_good.md"]
    skipped = {item.source: item.reason for item in read_manifest(manifest_path(tmp_path / "out" / "d")).skipped}
    assert skipped == {
        "mixed/broken.pdf": skipped["mixed/broken.pdf"],
        "mixed/broken.xlsx": skipped["mixed/broken.xlsx"],
        "mixed/image.bin": "unsupported format (.bin)",
        "mixed/locked.pdf": "encrypted PDF (needs a password)",
        "mixed/locked.xlsx": "encrypted Office file (password-protected)",
    }
    assert skipped["mixed/broken.pdf"].startswith("corrupt PDF")
    assert skipped["mixed/broken.xlsx"].startswith("corrupt or unreadable workbook")
    assert "skipped mixed/locked.pdf: encrypted PDF (needs a password)" in output


def test_pdf_without_text_layer_is_reported_and_read_by_ocr_when_asked(tmp_path):
    if shutil.which("tesseract") is None:
        pytest.skip("the optional OCR engine's language data (Debian tesseract-ocr) is not installed")
    make_scanned_pdf(tmp_path / "src" / "scans" / "harvest.pdf")
    plain = build(tmp_path / "src", tmp_path / "out" / "d")
    assert [(item.source, item.reason.split(":")[0]) for item in plain.skipped] == [
        ("scans/harvest.pdf", "PDF without a text layer (scanned?)")
    ]
    with_ocr = build(tmp_path / "src", tmp_path / "out" / "d", ocr=True)
    assert with_ocr.converted == ["scans_harvest.md"] and not with_ocr.skipped
    assert "Harvest volume 4821 tonnes" in (tmp_path / "out" / "d" / "scans_harvest.md").read_text()
    entry = read_manifest(manifest_path(tmp_path / "out" / "d")).documents[0]
    assert entry.ocr and entry.textless_pages == 1


def test_unchanged_sources_are_not_converted_again(tmp_path):
    make_pdf(tmp_path / "src" / "a" / "report.pdf")
    make_xlsx(tmp_path / "src" / "b" / "table.xlsx")
    (tmp_path / "src" / "b" / "notes.md").write_text("# n\n")
    out = tmp_path / "out" / "d"
    first = build(tmp_path / "src", out)
    stamps = {path.name: path.stat().st_mtime_ns for path in out.iterdir()}
    manifest_before = manifest_path(out).read_text()
    second = build(tmp_path / "src", out)
    assert len(first.converted) == 3
    assert second.converted == [] and sorted(second.unchanged) == sorted(first.converted)
    assert {path.name: path.stat().st_mtime_ns for path in out.iterdir()} == stamps
    assert manifest_path(out).read_text() == manifest_before


def test_a_changed_source_is_converted_again_and_a_removed_one_kept_until_prune(tmp_path):
    source, out = tmp_path / "src", tmp_path / "out" / "d"
    (source / "a").mkdir(parents=True)
    (source / "a" / "one.csv").write_text("k,v\n1,2\n")
    (source / "a" / "two.csv").write_text("k,v\n3,4\n")
    build(source, out)
    (source / "a" / "one.csv").write_text("k,v\n1,20\n")
    (source / "a" / "two.csv").unlink()
    rebuilt = build(source, out)
    assert rebuilt.converted == ["a_one.md"] and "| 1 | 20 |" in (out / "a_one.md").read_text()
    assert (out / "a_two.md").exists()
    assert {entry.name for entry in read_manifest(manifest_path(out)).documents} == {"a_one.md", "a_two.md"}
    pruned = build(source, out, prune=True)
    assert pruned.pruned == ["a_two.md"] and sorted(path.name for path in out.iterdir()) == ["a_one.md"]


def test_parallel_build_equals_serial_build(tmp_path):
    for index in range(3):
        make_pdf(tmp_path / "src" / "p" / f"r{index}.pdf", pages=1)
    (tmp_path / "src" / "q").mkdir()
    (tmp_path / "src" / "q" / "t.csv").write_text("a,b\n1,2\n")
    serial = build(tmp_path / "src", tmp_path / "serial" / "d", workers=1)
    parallel = build(tmp_path / "src", tmp_path / "parallel" / "d", workers=2)
    assert len(parallel.converted) == 4 and parallel.hash == serial.hash


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["MISSING", "--domain", "d"], "source folder not found"),
        (["SRC", "--domain", "bad name"], "is not a domain name"),
        (["SRC", "--domain", "d", "--out", "SRC/inside"], "must not nest"),
        (["SRC", "--domain", "d", "--workers", "0"], "--workers: 0"),
        (["EMPTY", "--domain", "d"], "no files to build from"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, capsys, arguments, message):
    source = tmp_path / "src"
    (source / "a").mkdir(parents=True)
    (source / "a" / "x.md").write_text("x\n")
    (tmp_path / "empty" / ".git").mkdir(parents=True)  # hidden: ignored
    (tmp_path / "empty" / ".git" / "HEAD").write_text("ref\n")
    replacements = {"SRC": source, "MISSING": tmp_path / "nope", "EMPTY": tmp_path / "empty"}
    for key, value in replacements.items():
        arguments = [argument.replace(key, str(value)) for argument in arguments]
    collections = tmp_path / "collections"
    code = main(["collection", "build", *arguments, "--collections-dir", str(collections)])
    error = capsys.readouterr().err.strip()
    assert code == 2 and message in error and len(error.splitlines()) == 1
    assert not collections.exists() and sorted(p.name for p in source.rglob("*")) == ["a", "x.md"]


@pytest.mark.parametrize("sandbox", ["local", "docker"])
def test_manifest_hash_equals_the_hash_run_yaml_records_and_the_manifest_stays_outside(
    tmp_path, capsys, request, sandbox
):
    if sandbox == "docker":
        request.getfixturevalue("docker_image")  # skips, saying why, where there is no engine or image
    make_pdf(tmp_path / "raw" / "agency" / "report.pdf")
    make_xlsx(tmp_path / "raw" / "agency" / "table.xlsx")
    (tmp_path / "raw" / "other").mkdir()
    (tmp_path / "raw" / "other" / "data.csv").write_text("a,b\n1,2\n")
    collections, tasks = tmp_path / "collections", tmp_path / "tasks"
    assert (
        main(["collection", "build", str(tmp_path / "raw"), "--domain", "built", "--collections-dir", str(collections)])
        == 0
    )
    tasks.mkdir()
    task = {
        "id": "count",
        "domain": "built",
        "question": "How many files?",
        "answer": "3",
        "answer_format": "integer",
        "solution": "ls -A /workspace/documents | wc -l",
    }
    (tasks / "built.jsonl").write_text(json.dumps(task) + "\n")
    results = tmp_path / "results"
    code = main(
        [
            "--model",
            "oracle",
            "--domain",
            "built",
            "--tasks-dir",
            str(tasks),
            "--collections-dir",
            str(collections),
            "--results-dir",
            str(results),
            "--run-id",
            "r",
            "--sandbox",
            sandbox,
        ]
    )
    capsys.readouterr()
    manifest = read_manifest(manifest_path(collections / "built"))
    recorded = yaml.safe_load((tmp_path / "results" / "r" / "run.yaml").read_text())["collections"]["built"]
    row = json.loads((tmp_path / "results" / "r" / "results.jsonl").read_text())
    assert code == 0 and row["verdict"] == "correct"  # the sandbox sees the 3 documents, not the manifest
    assert manifest.hash == recorded["hash"] == collection_hash(collections / "built")
    assert (collections / "built.manifest.json").is_file()


def test_stats_reads_the_manifest_or_counts_the_files(tmp_path, capsys):
    make_pdf(tmp_path / "src" / "a" / "r.pdf")
    (tmp_path / "src" / "a" / "t.csv").write_text("a,b\n1,2\n")
    collections = tmp_path / "collections"
    build(tmp_path / "src", collections / "built")
    (collections / "plain").mkdir()
    (collections / "plain" / "doc.md").write_text("hello world\n")
    code = main(["collection", "stats", "all", "--collections-dir", str(collections)])
    lines = capsys.readouterr().out.splitlines()
    built = next(line for line in lines if "built" in line)
    plain = next(line for line in lines if "plain" in line)
    tokens = sum(entry.tokens for entry in read_manifest(manifest_path(collections / "built")).documents)
    assert code == 0
    assert "csv 1, pdf 1" in built and f"{tokens:,}" in built and "manifest" in built
    assert "md 1" in plain and "files" in plain
    assert main(["collection", "stats", "nope", "--collections-dir", str(collections)]) == 2


def test_the_collection_goes_under_harness_collections_dir_like_the_runners(tmp_path, monkeypatch):
    (tmp_path / "src" / "a").mkdir(parents=True)
    (tmp_path / "src" / "a" / "x.csv").write_text("k,v\n1,2\n")
    monkeypatch.setenv("HARNESS_COLLECTIONS_DIR", str(tmp_path / "elsewhere"))
    assert main(["collection", "build", str(tmp_path / "src"), "--domain", "d", "--workers", "1"]) == 0
    assert (tmp_path / "elsewhere" / "d" / "a_x.md").is_file()
    assert (tmp_path / "elsewhere" / "d.manifest.json").is_file()


def test_file_names_that_look_like_markup_do_not_break_the_progress_bar(tmp_path, monkeypatch):
    errors: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda hook: errors.append(hook.exc_value))
    (tmp_path / "src" / "x" / "a[").mkdir(parents=True)
    (tmp_path / "src" / "x" / "a[" / "]b.csv").write_text("k,v\n1,2\n")
    request = CollectionBuildRequest(source_dir=tmp_path / "src", domain="d", out=tmp_path / "out" / "d")
    report = build_collection(request, Console(file=io.StringIO(), force_terminal=True))
    assert report.converted == ["x_b.md"] and errors == []


def test_an_output_changed_by_hand_is_converted_again_and_a_hand_placed_file_is_recorded(tmp_path):
    (tmp_path / "src" / "a").mkdir(parents=True)
    (tmp_path / "src" / "a" / "t.csv").write_text("k,v\n1,2\n")
    out = tmp_path / "out" / "d"
    build(tmp_path / "src", out)
    (out / "a_t.md").write_text("edited\n")
    (out / "extra.md").write_text("put here by hand\n")
    again = build(tmp_path / "src", out)
    entries = {entry.name: entry for entry in read_manifest(manifest_path(out)).documents}
    assert again.converted == ["a_t.md"] and (out / "a_t.md").read_text().startswith("| k | v |")
    assert entries["extra.md"].source is None and entries["extra.md"].bytes == len("put here by hand\n")
    assert again.hash == collection_hash(out)


def test_ocr_without_the_language_data_says_what_to_install(tmp_path, monkeypatch):
    make_scanned_pdf(tmp_path / "src" / "scans" / "harvest.pdf")
    monkeypatch.setenv("PATH", str(tmp_path))  # no tesseract on it
    monkeypatch.delenv("TESSDATA_PREFIX", raising=False)
    report = build(tmp_path / "src", tmp_path / "out" / "d", ocr=True)
    assert [(item.source, item.reason) for item in report.skipped] == [
        ("scans/harvest.pdf", "--ocr: no Tesseract language data found (install Debian's tesseract-ocr)")
    ]


def test_legacy_encodings_are_read_and_written_as_utf8(tmp_path):
    (tmp_path / "src" / "old").mkdir(parents=True)
    (tmp_path / "src" / "old" / "es.csv").write_bytes("Año;Población\nEspaña;47.000.000\n".encode("latin-1"))
    (tmp_path / "src" / "old" / "ru.txt").write_bytes("Привет, как дела? Это тест кодировки.\n".encode("cp1251"))
    build(tmp_path / "src", tmp_path / "out" / "d")
    out = tmp_path / "out" / "d"
    assert (out / "old_es.md").read_text(
        encoding="utf-8"
    ) == "| Año | Población |\n|---|---|\n| España | 47.000.000 |\n"
    assert (out / "old_ru.md").read_text(encoding="utf-8") == "Привет, как дела? Это тест кодировки.\n"


def test_a_formula_without_a_computed_value_shows_the_formula(tmp_path):
    """Libraries write formulas without the value a spreadsheet program would have saved beside them."""
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["item", "value"])
    sheet.append(["a", 2])
    sheet.append(["b", 3])
    sheet.append(["total", "=SUM(B2:B3)"])
    (tmp_path / "src" / "x").mkdir(parents=True)
    workbook.save(tmp_path / "src" / "x" / "book.xlsx")
    build(tmp_path / "src", tmp_path / "out" / "d")
    assert "| total | =SUM(B2:B3) |" in (tmp_path / "out" / "d" / "x_book.md").read_text()


def test_xlsx_with_a_wrong_saved_size_is_read_to_its_last_cell(tmp_path):
    """Some writers save `<dimension ref="A1"/>` whatever the sheet holds; every cell is read all the same."""
    import zipfile

    make_xlsx(tmp_path / "book.xlsx")
    (tmp_path / "src" / "x").mkdir(parents=True)
    with zipfile.ZipFile(tmp_path / "book.xlsx") as old, zipfile.ZipFile(tmp_path / "src" / "x" / "b.xlsx", "w") as new:
        for item in old.infolist():
            data = old.read(item)
            if item.filename.startswith("xl/worksheets/"):
                data = re.sub(rb'<dimension ref="[^"]*"', b'<dimension ref="A1"', data)
            new.writestr(item, data)
    build(tmp_path / "src", tmp_path / "out" / "d")
    text = (tmp_path / "out" / "d" / "x_b.md").read_text()
    assert "| South | 980,000 | 1,010,000 |" in text and "| North | 55.7% |" in text


def test_built_files_are_readable_by_the_sandbox_user(tmp_path):
    """The sandbox runs commands as an unprivileged user: a 0600 collection file would be unreadable there."""
    source = tmp_path / "src" / "notes"
    source.mkdir(parents=True)
    (source / "a.md").write_text("# a\n")
    build(tmp_path / "src", tmp_path / "out" / "d")
    modes = {path.name: path.stat().st_mode & 0o777 for path in (tmp_path / "out").rglob("*") if path.is_file()}
    assert modes and all(mode & 0o044 == 0o044 for mode in modes.values()), modes
