"""The report's evidence, failure-mode and leakage sections (markdown, CSV and the failure-mode chart)."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

from harness.analysis.runs import ModelRow
from harness.analysis.summary import ALL, Cell
from harness.core.safe_text import markdown_cell
from harness.diagnostics.escapes import METHOD as ESCAPES_METHOD
from harness.diagnostics.evidence import METHOD
from harness.diagnostics.failure_modes import MODES, RULE
from harness.records.results import ResultRow


def evidence_sections(table: dict[tuple[str, str], Cell], models: list[str], rows: list[ModelRow], out: Path) -> str:
    """Markdown for evidence use, failure modes and leakage; writes failure_modes.csv and its chart."""
    from harness.analysis.plots import failure_mode_plot

    counts = _failure_mode_counts(rows, models)
    _write_failure_csv(out / "failure_modes.csv", counts, models)
    failure_mode_plot(counts, models, out / "failure_modes.png")
    lines = [*_recall_table(table), *_reached_all(table, models), *_possible_guesses(rows)]
    lines += _failure_table(counts, models) + _leakage(rows)
    return "\n".join(lines) + "\n"


def _with_evidence(rows: list[ResultRow]) -> list[ResultRow]:
    return [row for row in rows if row.evidence_recall is not None]


def _recall_table(table: dict[tuple[str, str], Cell]) -> list[str]:
    lines = [
        "## Evidence recall (evidence files reached / evidence files), mean %",
        "",
        f"Method: {METHOD}: a document is reached when a command names it or an output shows its content "
        "under its name (docs/guide/reports.md, Evidence records).",
        "",
        "| model | domain | episodes with evidence | mean recall | all evidence reached |",
        "|---|---|---|---|---|",
    ]
    for (model, domain), cell in table.items():
        scored = _with_evidence(cell.rows)
        if not scored:
            continue
        mean = sum(row.evidence_recall or 0.0 for row in scored) / len(scored)
        complete = sum(row.evidence_recall == 1 for row in scored)
        lines.append(f"| {markdown_cell(model)} | {domain} | {len(scored)} | {100 * mean:.1f} | {complete} |")
    return [*lines, ""]


def _reached_all(table: dict[tuple[str, str], Cell], models: list[str]) -> list[str]:
    lines = [
        "## Accuracy by evidence reached",
        "",
        "| model | reached all evidence: correct / n | did not: correct / n |",
        "|---|---|---|",
    ]
    for model in models:
        scored = _with_evidence(table[(model, ALL)].rows)
        parts = []
        for group in ([r for r in scored if r.evidence_recall == 1], [r for r in scored if r.evidence_recall != 1]):
            correct = sum(row.is_correct() for row in group)
            parts.append(f"{correct} / {len(group)}" + (f" ({100 * correct / len(group):.1f}%)" if group else ""))
        lines.append(f"| {markdown_cell(model)} | {parts[0]} | {parts[1]} |")
    return [*lines, ""]


def _possible_guesses(rows: list[ModelRow]) -> list[str]:
    guesses = [r for r in rows if r.row.is_correct() and r.row.evidence_recall == 0]
    lines = ["## Correct without touching any evidence file (possible guess or leak)", ""]
    if not guesses:
        return [*lines, "None.", ""]
    lines += ["| model | domain | task |", "|---|---|---|"]
    lines += [
        f"| {markdown_cell(r.model)} | {r.row.domain} | {markdown_cell(r.row.task_id)} |"
        for r in sorted(guesses, key=_order)
    ]
    return [*lines, ""]


def _order(row: ModelRow) -> tuple[str, str, str]:
    return row.model, row.row.domain, row.row.task_id


def _failure_mode_counts(rows: list[ModelRow], models: list[str]) -> dict[str, Counter[str]]:
    """Model -> failure mode -> wrong episodes."""
    counts: dict[str, Counter[str]] = {model: Counter() for model in models}
    for entry in rows:
        if entry.row.failure_mode:
            counts[entry.model][entry.row.failure_mode] += 1
    return counts


def _failure_table(counts: dict[str, Counter[str]], models: list[str]) -> list[str]:
    lines = [
        "## Failure modes of wrong episodes",
        "",
        "| failure mode | " + " | ".join(map(markdown_cell, models)) + " |",
        "|---|" + "---|" * len(models),
    ]
    lines += [f"| {mode} | " + " | ".join(str(counts[m][mode]) for m in models) + " |" for mode in MODES]
    return [*lines, "", RULE, "", "![failure modes](failure_modes.png)", ""]


def _write_failure_csv(path: Path, counts: dict[str, Counter[str]], models: list[str]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["model", "failure_mode", "episodes"])
        for model in models:
            writer.writerows([model, mode, counts[model][mode]] for mode in MODES)


def _leakage(rows: list[ModelRow]) -> list[str]:
    lines = ["## Containment", "", f"Refused attempts: {ESCAPES_METHOD}.", ""]
    attempts = sorted((r for r in rows if r.row.refused_network or r.row.refused_writes), key=_order)
    if attempts:
        lines += ["| model | domain | task | refused network connects | refused writes |", "|---|---|---|---|---|"]
        lines += [
            f"| {markdown_cell(r.model)} | {r.row.domain} | {markdown_cell(r.row.task_id)} | "
            f"{r.row.refused_network} | {r.row.refused_writes} |"
            for r in attempts
        ]
    else:
        lines.append("No episode shows a refused network connect or write.")
    canaries = [r for r in rows if r.row.canary]
    leaked = sorted((r for r in canaries if r.row.is_correct()), key=_order)
    lines += ["", f"Canary tasks: {len(canaries)} episodes, {len(leaked)} answered correctly."]
    lines += [
        f"- CONTAINMENT FAILURE: {markdown_cell(r.model)} answered canary "
        f"{r.row.domain}/{markdown_cell(r.row.task_id)} correctly"
        for r in leaked
    ]
    return [*lines, ""]
