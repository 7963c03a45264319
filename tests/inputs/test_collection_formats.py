"""The pure parts of `collection build`: spreadsheet number formats, output names, Markdown tables."""

from __future__ import annotations

import datetime as dt
from pathlib import PurePosixPath

import pytest

from harness.inputs.collections.naming import output_names, slug
from harness.inputs.collections.numformat import display
from harness.inputs.collections.tables import markdown_table


@pytest.mark.parametrize(
    ("value", "number_format", "shown"),
    [
        (0.125, "0.0%", "12.5%"),
        (0.5, "0%", "50%"),
        (1234567, "#,##0", "1,234,567"),
        (1234567.891, "#,##0.00", "1,234,567.89"),
        (2.5, "0.00", "2.50"),
        (2.345, "#,##0.0#", "2.35"),
        (2.5, "#,##0.0#", "2.5"),
        (-1234.5, "#,##0;(#,##0)", "(1,235)"),
        (0.0, '#,##0.00;-#,##0.00;"-"', "-"),
        (-0.001, "0.00", "0.00"),
        (1234.5, '"$"#,##0.00', "$1,234.50"),
        (1234.5, "[$€-407] #,##0.00", "€ 1,234.50"),
        (1.5, '0.0 "kg"', "1.5 kg"),
        (1500000, '#,##0,"k"', "1,500k"),
        (7, "[Red]0.00", "7.00"),
        (12345.678, "0.00E+00", "1.23E+04"),
        (0.1 + 0.2, "General", "0.3"),
        (3.0, "General", "3"),
        (123456789012345678, "General", "123456789012345678"),
        (42, "@", "42"),
        (None, "0.00", ""),
        (True, "General", "TRUE"),
        ("text", "0.00", "text"),
        (dt.datetime(2023, 1, 5), "dd/mm/yyyy", "2023-01-05"),
        (dt.datetime(2023, 1, 5, 13, 30), "dd/mm/yyyy hh:mm", "2023-01-05 13:30:00"),
    ],
)
def test_spreadsheet_values_are_shown_as_the_spreadsheet_displays_them(value, number_format, shown):
    assert display(value, number_format) == shown


@pytest.mark.parametrize(
    ("text", "slugged"),
    [
        ("Annual Report 2023", "annual-report-2023"),
        ("Umsätze Straße", "umsatze-strasse"),
        ("Économie_générale (v2)", "economie-generale-v2"),
        ("统计年鉴 2020", "统计年鉴-2020"),
        ("***", "untitled"),
    ],
)
def test_slug_keeps_letters_and_digits_of_any_script(text, slugged):
    assert slug(text) == slugged


def test_output_names_do_not_depend_on_listing_order():
    paths = [PurePosixPath(p) for p in ("a/x/data.csv", "a/data.tsv", "a/other.pdf", "top.md")]
    names = output_names(paths, "Root Dir")
    assert names == output_names(list(reversed(paths)), "Root Dir")
    assert names[PurePosixPath("a/other.pdf")] == "a_other.md"
    assert names[PurePosixPath("top.md")] == "root-dir_top.md"
    assert names[PurePosixPath("a/x/data.csv")].startswith("a_data-") and len(set(names.values())) == 4


def test_markdown_table_escapes_pipes_keeps_line_breaks_and_pads_short_rows():
    table = markdown_table([["name", ""], ["a|b", "line 1\nline 2"], ["c"]])
    assert table == "| name | column 2 |\n|---|---|\n| a\\|b | line 1<br>line 2 |\n| c |  |\n"
