"""When a fact's value counts as seen in a document's output (harness/diagnostics/fact_coverage.py)."""

from __future__ import annotations

import re

import pytest

from harness.core.facts import FactRow
from harness.diagnostics.fact_coverage import seen_cells
from harness.records.events import ActionEvent, ObservationEvent

ROW = FactRow("documents_a.md", {"cost": 37363070000.0, "ratio": 15.44, "share": 0.1544, "auditor": "Deloitte"})


def shown(output: str, command: str = "cat documents/documents_a.md") -> dict[str, bool]:
    observation = ObservationEvent(
        turn=1,
        exit_code=0,
        stdout=output,
        stderr="",
        timed_out=False,
        truncated=False,
        raw_bytes=len(output),
        duration_s=0.1,
        text=output,
    )
    [cells] = seen_cells([ActionEvent(turn=1, command=command), observation], [ROW])
    return {name for name, seen in cells.items() if seen}


@pytest.mark.parametrize(
    ("output", "seen"),
    [
        ("营业总成本 37,363,070,000.00 元", {"cost"}),
        ("营业总成本 373.63亿元", {"cost"}),  # 10^8, 5 significant digits
        ("(in thousands) 37,363,070", {"cost"}),
        ("373.6亿", set()),  # 4 digits at a scale: too loose to count
        ("ratio 15.44%", {"ratio", "share"}),
        ("ratio 15.4%", set()),
        ("auditor: DELOITTE LLP", {"auditor"}),
    ],
)
def test_a_value_is_seen_as_written_rounded_or_scaled(output, seen):
    assert shown(output) == seen


def test_only_the_output_of_a_command_that_read_the_row_s_document_counts():
    assert shown("15.44% 37,363,070,000", command="cat documents/documents_b.md") == set()
    assert shown("documents_a.md:| ratio | 15.44% |", command="grep -r ratio documents") == {"ratio", "share"}


def test_the_output_of_a_glob_the_shell_expands_over_the_document_counts():
    """`cat /workspace/documents/*.md` read the row's document: its values were seen (they counted as not)."""
    assert shown("ratio 15.44%", command="cat /workspace/documents/*.md") == {"ratio", "share"}
    assert shown("ratio 15.44%", command="cat /workspace/documents/*.csv") == set()


def test_booleans_and_nulls_are_not_counted():
    row = FactRow("documents_a.md", {"gri": True, "none": None, "name": "KPMG"})
    observation = ObservationEvent(
        turn=1,
        exit_code=0,
        stdout="KPMG true",
        stderr="",
        timed_out=False,
        truncated=False,
        raw_bytes=9,
        duration_s=0.1,
        text="KPMG true",
    )
    assert seen_cells([ActionEvent(turn=1, command="cat documents_a.md"), observation], [row]) == [{"name": True}]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"domain": "d"}', "field 'task_id': missing"),
        (
            '{"domain": "d", "task_id": "t", "epoch": 1, "status": "judged", "stated": {"cells": 1}, "rows": [], '
            '"prompt": "p"}',
            "field 'stated.cells_total': missing",
        ),
        ("[1]", "not a fact judgment"),
    ],
)
def test_a_hand_edited_fact_judgments_line_is_a_one_line_error(tmp_path, line, message):
    from harness.core.errors import InputError
    from harness.records.fact_judgments import read_fact_judgments

    path = tmp_path / "fact_judgments.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(InputError, match=f"fact_judgments.jsonl:1: {re.escape(message)}"):
        read_fact_judgments(path)
