"""The end-of-run table at 80 columns: columns left out by priority (and named), never a number cut to `…`;
tasks and episodes counted apart; the agent's time beside the time lost to failed model calls."""

from __future__ import annotations

import io
import os
import subprocess
import sys

from rich.console import Console

from harness.analysis.end_table import print_end_table
from harness.analysis.summary import summarize
from harness.core.status import Status
from harness.grading import Verdict
from harness.records.results import ResultRow
from tests.conftest import REPO


def row(domain: str, task_id: str, epoch: int, status: str, failed_s: float = 0.0) -> ResultRow:
    answered = status == "answered"
    return ResultRow(
        task_id=task_id,
        domain=domain,
        status=Status(status),
        answer="1" if answered else None,
        verdict=Verdict.CORRECT if answered else Verdict.NO_ANSWER,
        verdict_strict=Verdict.CORRECT if answered else Verdict.NO_ANSWER,
        verdict_lenient=Verdict.CORRECT if answered else Verdict.NO_ANSWER,
        reasons=[],
        correct_at_tolerance=None,
        parsed_value=None,
        unit=None,
        turns=7,
        duration_s=12.5 if answered else 0.0,
        input_tokens=1_234_567,
        output_tokens=89_012,
        cached_tokens=0,
        reasoning_tokens=0,
        cost_usd=12.3456,
        detail=None,
        grader_version="1",
        epoch=epoch,
        failed_attempts_s=failed_s,
    )


def test_the_end_table_fits_80_columns_without_cutting_a_number():
    rows = [
        row(domain, f"{domain}-00{i}", epoch, "answered")
        for domain in ("agriculture", "law")
        for i in (1, 2, 3)
        for epoch in (1, 2)
    ]
    rows.append(row("law", "law-009", 1, "model_error", failed_s=600.0))  # waited on a dead call, then failed
    console = Console(width=80, file=io.StringIO(), color_system=None)
    print_end_table(summarize(rows, {"law": 1}), console, "run a-rather-long-sweep-run-id_20261201T231700", 95.0)
    shown = console.file.getvalue()
    assert "…" not in shown and max(len(line) for line in shown.splitlines()) <= 80, shown
    law = next(line for line in shown.splitlines() if line.startswith("│ law "))
    cells = [cell.strip() for cell in law.strip("│").split("│")]
    assert cells[1:3] == ["4", "7"]  # 4 tasks, 7 episodes (3 tasks × 2 epochs and one more)
    assert cells[-2:] == ["1m15s", "10m00s"]  # agent time 6 × 12.5 s; the failed call's 600 s shown apart
    assert "wall time 1m35s" in shown and "(left out at 80 columns: " in shown


def test_a_run_at_columns_80_prints_its_table_whole(tmp_path):
    environment = {**os.environ, "COLUMNS": "80", "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "harness", "--model", "oracle", "--domain", "demo", "--epochs", "2"]
    command += ["--limit", "2", "--results-dir", str(tmp_path / "results"), "--run-id", "narrow"]
    done = subprocess.run(command, capture_output=True, text=True, env=environment, cwd=REPO, timeout=600)
    assert done.returncode == 0, done.stderr
    table = done.stdout[done.stdout.index("┏") :]
    assert "…" not in table and max(len(line) for line in table.splitlines()) <= 80, table
    assert "tasks" in table and "episodes" in table and "agent" in table


def test_a_sweeps_tables_have_the_same_columns_though_only_one_run_needs_some():
    from harness.analysis.end_table import print_end_tables

    waited = summarize([row("law", "t1", 1, "model_error", failed_s=30.0)], {"law": 2})  # pending, failed calls
    clean = summarize([row("law", "t1", 1, "answered")], {})
    console = Console(width=200, file=io.StringIO(), color_system=None)
    print_end_tables([(waited, "run a", 1.0), (clean, "run b", 1.0)], console)
    headers = [line.split() for line in console.file.getvalue().splitlines() if "domain" in line]
    assert len(headers) == 2 and headers[0] == headers[1] and "pending" in headers[1], headers
