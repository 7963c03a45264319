"""`python -m harness report RUN [RUN ...]`: merge run folders (shards, models) into tables and plots."""

from __future__ import annotations

import csv
import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from harness.analysis.closed_book import closed_book_section
from harness.analysis.fact_accuracy import fact_section, load_stated
from harness.analysis.findocmre_tables import findocmre_sections
from harness.analysis.frontier import run_identities
from harness.analysis.frontier_section import frontier_section
from harness.analysis.group_scores import group_sections
from harness.analysis.mode_agreement import agreement_section, judge_modes
from harness.analysis.model_ids import mixed_model_warnings, mixed_models_section
from harness.analysis.mudabench_documents import CollectionReader, mudabench_document_sections
from harness.analysis.mudabench_tables import mudabench_sections, run_settings
from harness.analysis.report_console import print_summary, task_sets_note
from harness.analysis.report_figures import figures_section, rule_modes
from harness.analysis.report_sections import evidence_sections
from harness.analysis.report_statistics import estimates, statistics_section
from harness.analysis.run_selection import default_report_folder
from harness.analysis.runs import (
    ModelRow,
    RowChange,
    judge_panels,
    load_labels,
    load_runs,
    page_resolutions,
    turn_limits,
)
from harness.analysis.stats import mcnemar_exact
from harness.analysis.store_costs import store_cost_section
from harness.analysis.summary import ALL, Cell
from harness.analysis.type_metrics import type_metrics
from harness.analysis.type_scores import overall_section
from harness.analysis.ungraded import ungraded_line, ungraded_runs
from harness.core.errors import InputError
from harness.core.report_sections import REPORT_SECTIONS
from harness.core.safe_text import for_terminal, markdown_cell
from harness.core.status import Status
from harness.core.writable import check_writable_folder
from harness.diagnostics.failure_modes import PAPER_MODES, RULE_MODES
from harness.records.results import MODE_FIELDS
from harness.records.run_folder import RunFolder

_RESOURCE_LIMITS = ("turn_limit", "time_limit", "context_limit", "cost_limit", "sandbox_limit")
STATUSES = tuple(status.value for status in Status)


def _ranked_models(rows: list[ModelRow]) -> list[str]:
    """Run labels by overall accuracy (default mode), best first, as the paper's tables order them."""
    totals: dict[str, list[int]] = {}
    for r in rows:
        counts = totals.setdefault(r.model, [0, 0])
        counts[0] += r.row.is_correct()
        counts[1] += 1
    return sorted(totals, key=lambda model: (-totals[model][0] / totals[model][1], model))


def cells(rows: list[ModelRow], models: list[str]) -> dict[tuple[str, str], Cell]:
    """Cells per (label, domain) and (label, ALL), labels in the order of `models` (`_ranked_models`)."""
    table: dict[tuple[str, str], Cell] = {}
    for model in models:
        mine = [r.row for r in rows if r.model == model]
        for domain in sorted({row.domain for row in mine}):
            table[(model, domain)] = Cell(model, domain, [row for row in mine if row.domain == domain])
        table[(model, ALL)] = Cell(model, ALL, mine)
    return table


def write_report(
    paths: list[Path],
    out: Path | None,
    console: Console,
    change: RowChange | None = None,
    names: Mapping[Path, str] | None = None,
    left_out: Sequence[str] = (),
    read_collection: CollectionReader | None = None,
) -> Path:
    """PATHS: run folders. `change`: what to do to each row first (re-pricing); NAMES: labels given to some runs
    (`--label`); LEFT_OUT: the folders passed over when the runs were found, and why; READ_COLLECTION: a
    collection's documents' kinds and tokens (MuDABench's Table 3 and Figure 4, left out without it). Prints a
    short summary, what was merged or left out, and the report's path."""
    rows, merges = load_runs(paths, change, names)
    ungraded = ungraded_runs(rows)
    rows = [entry for entry in rows if entry.model not in ungraded]
    if not rows:
        raise InputError(
            "report: no run has a graded episode: " + "; ".join(ungraded_line(*u) for u in ungraded.items())
        )
    labels = load_labels(paths, names)  # read before anything is written: a bad label file writes nothing
    stated = load_stated(paths)
    out = out or default_report_folder(paths, paths)
    check_writable_folder(out, "--out")
    out.mkdir(parents=True, exist_ok=True)
    models = _ranked_models(rows)
    table = cells(rows, models)
    domains = [*sorted({domain for _, domain in table if domain != ALL}), ALL]
    _write_csvs(out, table, rows, models)
    note = task_sets_note(rows, models)
    said = [*(f"left out: {line}" for line in left_out), *merges, *(ungraded_line(*u) for u in ungraded.items())]
    shown = shown_sections(paths)
    markdown = _markdown(table, models, domains, rows, note, said, "types" in shown)
    markdown += store_cost_section(paths, names)
    clustered = estimates(rows, models)
    if "statistics" in shown:
        markdown += statistics_section(rows, models, clustered, out)
    if "plots" in shown:
        markdown += _plots(rows, models, domains, clustered, labels, out, turn_limits(paths, names))
    if "frontier" in shown and len(models) > 1:  # a frontier compares runs
        markdown += "\n" + frontier_section(rows, models, run_identities(paths, names), out)
    if labels and "judge_agreement" in shown:
        markdown += agreement_section(labels, models)
    if "evidence" in shown:
        markdown += "\n" + evidence_sections(table, models, rows, out)
    if "facts" in shown:
        markdown += fact_section(rows, stated)
    if "mudabench_tables" in shown:
        markdown += mudabench_sections(rows, models, run_settings(paths, names), stated, out)
        if read_collection is not None:
            markdown += mudabench_document_sections(paths, read_collection, names, out)
    if "closed_book" in shown:
        markdown += closed_book_section(rows, out)
    if "groups" in shown:
        markdown += group_sections(rows, models)
    if "paper_tables" in shown:
        markdown += findocmre_sections(rows, models, judge_panels(paths, names), out, page_resolutions(paths, names))
    (out / "report.md").write_text(markdown, encoding="utf-8")
    for line in said:
        console.print(for_terminal(line), markup=False, highlight=False, soft_wrap=True)
    for warning in mixed_model_warnings(rows):
        console.print(f"warning: {for_terminal(warning)}", markup=False, highlight=False, soft_wrap=True)
    print_summary(table, models, note, out, console)
    return out


def shown_sections(paths: list[Path]) -> frozenset[str]:
    """The report sections the runs' profiles name, together; every section when a run's profile names none (a
    profile without `report:`, a run from before profiles, an import)."""
    shown: set[str] = set()
    for path in paths:
        profile = RunFolder(path).read_record().profile
        if profile is None or not profile.report:
            return frozenset(REPORT_SECTIONS)
        shown.update(profile.report)
    return frozenset(shown)


def _plots(
    rows: list[ModelRow],
    models: list[str],
    domains: list[str],
    clustered: dict[tuple[str, str], Any],
    labels: Any,
    out: Path,
    limits: dict[str, int],
) -> str:
    """The plots section: accuracy per domain and the figures of failure modes and turns."""
    from harness.analysis.plots import accuracy_plot

    accuracy_plot(clustered, models, domains[:-1], out / "accuracy_per_domain.png")
    markdown = "\n## Plots\n\nEvery figure is also a PDF of the same name, for print.\n\n"
    markdown += "![accuracy per domain](accuracy_per_domain.png)\n\n"
    accuracy = {key: estimate.mean for key, estimate in clustered.items()}
    if labels:
        modes, source = judge_modes(labels), "judge labels from `annotate`; the offline rule's are below"
        measured: tuple[str, ...] = PAPER_MODES
    else:
        modes, source = rule_modes(rows), "the offline rule's three modes; `annotate` adds a judge's five"
        measured = RULE_MODES
    return markdown + figures_section(rows, accuracy, models, out, modes, source, measured, limits)


def _percent(value: float) -> str:
    return f"{100 * value:.1f}"


def _markdown(
    table: dict[tuple[str, str], Cell],
    models: list[str],
    domains: list[str],
    rows: list[ModelRow],
    note: str | None,
    said: list[str],
    types: bool = True,
) -> str:
    """SAID: what the report merged or left out, listed first; TYPES: the per-type tables (the profile shows
    them)."""
    lines = ["# Report", "", *(f"- {markdown_cell(line)}" for line in said), *([""] if said else [])]
    lines += [*mixed_models_section(rows), *([note, ""] if note else [])]
    for mode in MODE_FIELDS:
        lines += [f"## Accuracy ({mode}), % with 95% Wilson interval", ""]
        lines += ["| domain | " + " | ".join(map(markdown_cell, models)) + " |", "|---|" + "---|" * len(models)]
        for domain in domains:
            cells_text = []
            for model in models:
                cell = table.get((model, domain))
                if cell is None:
                    cells_text.append("–")
                    continue
                low, high = cell.interval(mode)
                cells_text.append(f"{_percent(cell.accuracy(mode))} [{_percent(low)}, {_percent(high)}] (n={cell.n})")
            lines.append(f"| {domain} | " + " | ".join(cells_text) + " |")
        lines.append("")
    lines += _reason_rates(table, models)
    tolerance = {key: cell.accuracy_at_tolerance() for key, cell in table.items()}
    if any(value is not None for value in tolerance.values()):
        lines += [
            "## accuracy@tol (tasks with rel_tol; never the headline)",
            "",
            "| model | domain | accuracy@tol |",
            "|---|---|---|",
        ]
        lines += [f"| {markdown_cell(m)} | {d} | {_percent(v)} |" for (m, d), v in tolerance.items() if v is not None]
        lines.append("")
    if types:
        lines += _by_type(table) + overall_section(table)
    lines += [
        "## Outcomes",
        "",
        "| model | domain | " + " | ".join(STATUSES) + " | resource limits |",
        "|---|---|" + "---|" * (len(STATUSES) + 1),
    ]
    for (model, domain), cell in table.items():
        counts = cell.statuses()
        exhausted = sum(counts[s] for s in _RESOURCE_LIMITS)
        shown = " | ".join(str(counts[s]) for s in STATUSES)
        lines.append(f"| {markdown_cell(model)} | {domain} | {shown} | {exhausted} |")
    lines += [
        "",
        "## Effort and cost",
        "",
        "| model | domain | mean turns | input tokens | output tokens | cost (USD) | cost per correct |",
        "|---|---|---|---|---|---|---|",
    ]
    for (model, domain), cell in table.items():
        cost, correct = cell.cost(), cell.correct()
        per_correct = f"{cost / correct:.4f}" if cost is not None and correct else "–"
        lines.append(
            f"| {markdown_cell(model)} | {domain} | {cell.mean_turns():.1f} | {cell.input_tokens()} | "
            f"{cell.output_tokens()} | {'–' if cost is None else f'{cost:.4f}'} | {per_correct} |"
        )
    lines.append("")
    for first, second in itertools.combinations(models, 2):
        lines += _paired(rows, first, second)
    return "\n".join(lines) + "\n"


def _by_type(table: dict[tuple[str, str], Cell]) -> list[str]:
    """Per type its metric (default mode; a scored type by its mean score scaled to its range) and the overall number
    (`type_metrics.overall`), when tasks carry a `type`; judge cost apart."""
    typed = {key: metrics for key, cell in table.items() if (metrics := type_metrics(cell.rows))}
    if not typed:
        return []
    types = sorted({name for metrics in typed.values() for name in metrics})
    lines = [
        "## Accuracy by task type (default mode; a scored type by its mean score ×100/range; overall = mean over "
        "types, as the overall score below)",
        "",
        "| model | domain | " + " | ".join(map(markdown_cell, types)) + " | overall | judge cost (USD) |",
        "|---|---|" + "---|" * (len(types) + 2),
    ]
    for (model, domain), metrics in typed.items():
        shares = [f"{_percent(metrics[t][1])} (n={metrics[t][2]})" if t in metrics else "–" for t in types]
        cell = table[(model, domain)]
        macro, judge = cell.macro_accuracy(), cell.judge_cost()
        lines.append(
            f"| {markdown_cell(model)} | {domain} | " + " | ".join(shares) + f" | {_percent(macro or 0.0)} | "
            f"{'–' if judge is None else f'{judge:.4f}'} |"
        )
    return [*lines, ""]


def _reason_counts(cell: Cell) -> Counter[str]:
    """How many of the cell's episodes carry each reason code (a code appears once per episode)."""
    return Counter(code for row in cell.rows for code in set(row.reasons))


def _reason_rates(table: dict[tuple[str, str], Cell], models: list[str]) -> list[str]:
    """docs/GRADING.md §2.7: the rate of each reason code, which shows where the modes' gaps come from."""
    counts = {model: _reason_counts(table[(model, ALL)]) for model in models}
    codes = sorted(set().union(*counts.values()))
    if not codes:
        return []
    lines = [
        "## Reason codes, % of episodes (count)",
        "",
        "| reason | " + " | ".join(map(markdown_cell, models)) + " |",
        "|---|" + "---|" * len(models),
    ]
    for code in codes:
        rates = [f"{_percent(counts[m][code] / table[(m, ALL)].n)} ({counts[m][code]})" for m in models]
        lines.append(f"| {code} | " + " | ".join(rates) + " |")
    return [*lines, ""]


def paired_counts(rows: list[ModelRow], first: str, second: str) -> dict[str, int]:
    """Both / only first / only second / neither correct, over the tasks both models ran (their first epoch)."""
    verdicts = {(r.model, *r.row.key): r.row.is_correct() for r in rows if r.row.epoch == 1}
    shared = {(d, t) for m, d, t in verdicts if m == first} & {(d, t) for m, d, t in verdicts if m == second}
    counts: Counter[str] = Counter()
    for domain, task_id in shared:
        a, b = verdicts[(first, domain, task_id)], verdicts[(second, domain, task_id)]
        counts["both" if a and b else "only_first" if a else "only_second" if b else "neither"] += 1
    return {key: counts[key] for key in ("both", "only_first", "only_second", "neither")}


def _paired(rows: list[ModelRow], first: str, second: str) -> list[str]:
    counts = paired_counts(rows, first, second)
    shared = sum(counts.values())
    p_value = mcnemar_exact(counts["only_first"], counts["only_second"])
    return [
        f"## Paired comparison: {first} vs {second}",
        "",
        f"On the {shared} tasks both ran: both correct {counts['both']}, only {first} {counts['only_first']}, "
        f"only {second} {counts['only_second']}, neither {counts['neither']}; "
        f"exact McNemar p = {p_value:.4f}.",
        "",
    ]


def _write_csvs(out: Path, table: dict[tuple[str, str], Cell], rows: list[ModelRow], models: list[str]) -> None:
    with (out / "accuracy.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        header = ["model", "domain", "n"]
        for mode in MODE_FIELDS:
            header += [f"correct_{mode}", f"accuracy_{mode}", f"ci95_low_{mode}", f"ci95_high_{mode}"]
        writer.writerow(
            [*header, "accuracy_at_tol", *STATUSES, "mean_turns", "input_tokens", "output_tokens", "cost_usd"]
        )
        for (model, domain), cell in table.items():
            line: list[Any] = [model, domain, cell.n]
            for mode in MODE_FIELDS:
                low, high = cell.interval(mode)
                line += [cell.correct(mode), round(cell.accuracy(mode), 6), round(low, 6), round(high, 6)]
            at_tolerance = cell.accuracy_at_tolerance()
            line.append("" if at_tolerance is None else round(at_tolerance, 6))
            counts = cell.statuses()
            line += [counts[s] for s in STATUSES]
            cost = cell.cost()
            line += [
                round(cell.mean_turns(), 3),
                cell.input_tokens(),
                cell.output_tokens(),
                "" if cost is None else round(cost, 6),
            ]
            writer.writerow(line)
    with (out / "reasons.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["model", "domain", "reason", "episodes", "rate"])
        for (model, domain), cell in table.items():
            for code, count in sorted(_reason_counts(cell).items()):
                writer.writerow([model, domain, code, count, round(count / cell.n, 6)])
    with (out / "paired.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["first", "second", "both", "only_first", "only_second", "neither", "mcnemar_p"])
        for first, second in itertools.combinations(models, 2):
            pairs = paired_counts(rows, first, second)
            p_value = mcnemar_exact(pairs["only_first"], pairs["only_second"])
            writer.writerow([first, second, *pairs.values(), round(p_value, 6)])
