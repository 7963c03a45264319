"""`collection build` keeps text as written, and says so where it cannot: a Latin-1 CSV stays `München Büro`, a
formula without a saved value is flagged in the manifest and on the console, a text file without a suffix is
converted, a DOCX table without a header row gets no empty one. Each file is made here, built by the real
command."""

from __future__ import annotations

from pathlib import Path

from harness.cli.main import main
from harness.inputs.collections.manifest import manifest_path, read_manifest


def build(tmp_path: Path, capsys) -> tuple[int, str, Path]:
    out = tmp_path / "out" / "d"
    code = main(["collection", "build", str(tmp_path / "src"), "--domain", "d", "--out", str(out)])
    return code, capsys.readouterr().out, out


def notes_of(out: Path) -> dict[str, list[str]]:
    manifest = read_manifest(manifest_path(out))
    assert manifest is not None
    return {entry.source or "": entry.notes for entry in manifest.documents}


def test_a_latin_1_csv_keeps_its_umlauts(tmp_path, capsys):
    (tmp_path / "src" / "hr").mkdir(parents=True)
    rows = "city,office\nMünchen,München Büro\nKöln,Köln Süd\n"
    (tmp_path / "src" / "hr" / "offices.csv").write_bytes(rows.encode("latin-1"))
    code, output, out = build(tmp_path, capsys)
    assert code == 0, output
    expected = "| city | office |\n|---|---|\n| München | München Büro |\n| Köln | Köln Süd |\n"
    assert (out / "hr_offices.md").read_text(encoding="utf-8") == expected
    assert notes_of(out)["hr/offices.csv"] == ["read as cp1252 (not UTF-8), written as UTF-8"]
    assert "note hr/offices.csv: read as cp1252 (not UTF-8)" in output


def test_a_cp1252_text_with_a_euro_sign_keeps_it_and_says_so_on_every_build(tmp_path, capsys):
    """charset-normalizer rates cp775 the cleaner reading of `Café … 12,5 M€` (`Cafķ … MĆ`); and the note came back
    on the first build only. A Cyrillic text is not taken for a Western one."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "memo.txt").write_bytes("Café … 12,5 M€\n".encode("cp1252"))
    code, output, out = build(tmp_path, capsys)
    assert code == 0, output
    assert (out / "src_memo.md").read_text(encoding="utf-8") == "Café … 12,5 M€\n"
    assert "note memo.txt: read as cp1252 (not UTF-8)" in output
    code, output, out = build(tmp_path, capsys)
    assert code == 0 and "0 converted, 1 unchanged" in output
    assert "note memo.txt: read as cp1252 (not UTF-8)" in output
    # a text in another code page is no plausible Western one: charset-normalizer's own reading stands
    (tmp_path / "src" / "note.txt").write_bytes("Привет, как дела? Это проверка кодировки текста.\n".encode("cp1251"))
    code, output, out = build(tmp_path, capsys)
    assert code == 0 and "как дела?" in (out / "src_note.md").read_text(encoding="utf-8")
    assert "note note.txt: read as cp1252" not in output


def test_a_formula_without_a_saved_value_is_flagged_in_the_manifest_and_on_the_console(tmp_path, capsys):
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "budget"
    sheet.append(["item", "budget", "spent", "left"])
    sheet.append(["rent", 100, 40, 60])
    sheet.append(["travel", 50, 10, 40])
    sheet.append(["staff", 200, 150, "=(B4-C4)/B4"])  # openpyxl saves no computed value beside a formula
    (tmp_path / "src" / "fin").mkdir(parents=True)
    workbook.save(tmp_path / "src" / "fin" / "budget.xlsx")
    code, output, out = build(tmp_path, capsys)
    assert code == 0, output
    assert "| staff | 200 | 150 | =(B4-C4)/B4 |" in (out / "fin_budget.md").read_text()
    note = "sheet 'budget': 1 formulas have no saved value (never computed by a spreadsheet program) and are shown "
    note += "as written: D4"
    assert notes_of(out)["fin/budget.xlsx"] == [note]
    assert f"note fin/budget.xlsx: {note}" in output


def test_a_text_file_without_a_suffix_is_converted_as_text_and_a_binary_one_skipped(tmp_path, capsys):
    (tmp_path / "src" / "tools").mkdir(parents=True)
    readme = "jq is a lightweight and flexible command-line JSON processor.\n\n    jq '.[0]' file.json\n"
    (tmp_path / "src" / "tools" / "jq-README").write_text(readme, encoding="utf-8")
    (tmp_path / "src" / "tools" / "jq").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00")
    code, output, out = build(tmp_path, capsys)
    assert code == 1, output  # the binary is skipped, and said so
    assert (out / "tools_jq-readme.md").read_text(encoding="utf-8") == readme
    manifest = read_manifest(manifest_path(out))
    assert manifest is not None
    assert [(item.source, item.reason) for item in manifest.skipped] == [("tools/jq", "unsupported format (no suffix)")]


def test_a_docx_table_without_a_header_row_gains_no_empty_one(tmp_path, capsys):
    from docx import Document

    document = Document()
    document.add_paragraph("Units sold")
    table = document.add_table(rows=2, cols=2)
    for row, (year, units) in zip(table.rows, (("2020", "40"), ("2021", "2")), strict=True):
        row.cells[0].text, row.cells[1].text = year, units
    (tmp_path / "src" / "sales").mkdir(parents=True)
    document.save(tmp_path / "src" / "sales" / "units.docx")
    code, output, out = build(tmp_path, capsys)
    assert code == 0, output
    assert (out / "sales_units.md").read_text() == "Units sold\n\n| 2020 | 40 |\n| --- | --- |\n| 2021 | 2 |\n"
