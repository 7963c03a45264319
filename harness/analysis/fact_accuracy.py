"""The report's intermediate-fact section: MuDABench's cell, row, column and solid accuracy, per run and domain,
for the facts each episode *seen* (the row's `facts_seen`) and *stated* (`annotate --facts`, or the row's
`facts_stated` when the run judged them at each episode's end).

Cell, row and column accuracy are sums over episodes before dividing (micro over questions, as MuDABench's
released evaluation sums them); cell accuracy is also given as the paper prints Acc_process (MuDABench, eq. 6-8):
the mean over episodes of each one's share of its cells (an episode whose task has no cells left out); solid
accuracy is the share of episodes that are correct and cover every row. Every
interval is clustered by task, as accuracy's: the ratio's linearised sandwich estimator (_ratio_interval), which
is the clustered mean's own when every denominator is 1. A fact row whose judgment failed counts as not stated
(MuDABench's rule) and is shown apart as a count of failed judgments; `annotate --facts --facts-named-only`
judgments are named as such.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.analysis.runs import ModelRow, run_key
from harness.analysis.stats import Z_95
from harness.analysis.summary import ALL
from harness.analysis.uncertainty import Estimate
from harness.core.episode_key import EpisodeKey
from harness.records.fact_counts import FactCounts, RetrievedCoverage
from harness.records.fact_judgments import JUDGED, NAMED_ROWS, read_fact_judgments
from harness.records.results import ResultRow
from harness.records.run_folder import RunFolder

_SIGNALS = ("seen", "stated", "retrieved")
_MEASURES = ("cell", "row", "column", "solid", "cell_mean")
_HEADERS = {
    "cell": "cell sum (released code)",
    "row": "row",
    "column": "column",
    "solid": "solid",
    "cell_mean": "cell per-question mean (paper, eq. 8)",
}


@dataclass
class StatedFacts:
    """What `annotate --facts` found, per run label."""

    counts: dict[str, dict[EpisodeKey, FactCounts]] = field(default_factory=dict)
    """Run label -> episode -> the stated counts."""
    named_only: set[str] = field(default_factory=set)
    """Run labels judged with `--facts-named-only`."""


@dataclass(frozen=True)
class _FactEstimates:
    """One (run, domain, signal)'s four accuracies over the episodes that have the signal."""

    episodes: int
    by_measure: dict[str, Estimate]
    failed: int = 0
    """Fact rows whose judgment failed (counted as not stated)."""


def load_stated(paths: list[Path]) -> StatedFacts:
    """Per label: episode -> stated counts, from each run's fact_judgments.jsonl (older files' judge errors left
    out), and which labels were judged on named documents only."""
    found = StatedFacts()
    for path in paths:
        folder = RunFolder(path)
        judged = read_fact_judgments(folder.fact_judgments_path)
        if judged:
            key = run_key(folder.read_record())
            label = found.counts.setdefault(key, {})
            label |= {one.episode: one.stated for one in judged if one.status == JUDGED and one.stated is not None}
            if any(one.rows_asked == NAMED_ROWS for one in judged):
                found.named_only.add(key)
    return found


def _ratio_interval(clusters: Mapping[Any, Sequence[tuple[float, int]]], z: float = Z_95) -> Estimate:
    """Σ numerators / Σ denominators with its 95% interval clustered by task (G/(G-1) corrected), clipped to
    [0, 1]; an empty or zero-denominator input is 0 with no width."""
    groups = [list(pairs) for pairs in clusters.values() if pairs]
    total = sum(d for pairs in groups for _, d in pairs)
    episodes = sum(len(pairs) for pairs in groups)
    if not total:
        return Estimate(0.0, 0.0, 0.0, 0.0, len(groups), episodes)
    ratio = sum(n for pairs in groups for n, _ in pairs) / total
    if len(groups) < 2:
        return Estimate(ratio, ratio, ratio, 0.0, len(groups), episodes)
    meat = sum(sum(n - ratio * d for n, d in pairs) ** 2 for pairs in groups)
    error = math.sqrt(meat * len(groups) / (len(groups) - 1)) / total
    return Estimate(ratio, max(0.0, ratio - z * error), min(1.0, ratio + z * error), error, len(groups), episodes)


def _fact_estimates(rows: list[ModelRow], stated: StatedFacts) -> dict[tuple[str, str, str], _FactEstimates]:
    """(label, domain or `all`, signal) -> its accuracies; only where some episode has the signal."""
    table: dict[tuple[str, str, str], _FactEstimates] = {}
    for model in dict.fromkeys(entry.model for entry in rows):
        mine = [entry.row for entry in rows if entry.model == model]
        for domain in [*sorted({row.domain for row in mine}), ALL]:
            for signal in _SIGNALS:
                pairs = []
                for row in mine:
                    if domain not in (ALL, row.domain):
                        continue
                    found = signal_counts(signal, row, stated.counts.get(model, {}))
                    if found is not None:
                        pairs.append((row.key, found, row.is_correct()))
                if pairs:
                    failed = sum(counts.failed for _, counts, _ in pairs)
                    table[(model, domain, signal)] = _FactEstimates(len(pairs), _measures(pairs), failed)
    return table


def signal_counts(signal: str, row: ResultRow, stated: Mapping[EpisodeKey, FactCounts]) -> FactCounts | None:
    """ROW's counts for SIGNAL (`seen`, `stated`, `retrieved`); STATED: its run's `annotate --facts` counts, which
    win over the row's own judged ones."""
    if signal == "retrieved":
        return _retrieved_counts(row.facts_retrieved)
    if signal == "seen":
        return row.facts_seen
    return stated.get(row.episode) or row.facts_stated


def process_counts(row: ResultRow, stated: Mapping[EpisodeKey, FactCounts]) -> FactCounts | None:
    """The counts behind ROW's Acc_process: the RAG baseline's retrieved facts, else the judged (stated) ones."""
    return signal_counts("retrieved", row, stated) or signal_counts("stated", row, stated)


def _retrieved_counts(coverage: RetrievedCoverage | None) -> FactCounts | None:
    """The RAG baseline's coverage as counts: each fact in words is a cell and a row (as MuDABench's released code
    counts a RAG judgment as rows), with no columns."""
    if coverage is None:
        return None
    covered, total = coverage.covered, coverage.total
    return FactCounts(covered, total, covered, total, 0, 0, coverage.failed)


def _measures(pairs: list[tuple[tuple[str, str], FactCounts, bool]]) -> dict[str, Estimate]:
    def clustered(of: str) -> Estimate:
        clusters: dict[tuple[str, str], list[tuple[float, int]]] = {}
        for key, counts, correct in pairs:
            value: tuple[float, int]
            if of == "solid":
                value = (int(correct and counts.complete), 1)
            elif of == "cell_mean":
                if not counts.cells_total:
                    continue
                value = (counts.cells / counts.cells_total, 1)
            else:
                value = {
                    "cell": (counts.cells, counts.cells_total),
                    "row": (counts.rows, counts.rows_total),
                    "column": (counts.columns, counts.columns_total),
                }[of]
            clusters.setdefault(key, []).append(value)
        return _ratio_interval(clusters)

    return {measure: clustered(measure) for measure in _MEASURES}


def fact_section(rows: list[ModelRow], stated: StatedFacts) -> str:
    """The report's section; "" when no episode's task has facts."""
    table = _fact_estimates(rows, stated)
    if not table:
        return ""
    lines = [
        "## Intermediate facts: cell, row, column and solid accuracy, % with a 95% interval clustered by task",
        "",
        "*seen*: the values showed in the output of a command that read their document (deterministic); *stated*: "
        "a judge found them in the agent's record of the document (`annotate --facts`). Cell, row and column "
        "counts are summed over episodes (micro over questions, as MuDABench's released code computes them); "
        "*cell per-question mean* is Acc_process as the MuDABench paper prints it (eq. 8): the mean over episodes "
        "of each one's share of its cells. Solid = correct and every row. "
        "Every fact row is judged; a row whose judgment failed counts as not stated (MuDABench's rule) and is "
        "counted under *failed judgments*. *retrieved*: the RAG baseline's chunks against the task's facts in words "
        "(`source_answer`), the conservative count of two judges (MuDABench eq. 3-5), each fact a cell and a row: "
        "its sum is the released code's RAG process accuracy, its per-question mean the paper's (eq. 8), solid its "
        "Acc_full (eq. 9); a judge side that failed is counted under *failed judgments*.",
        "",
        "| model | domain | signal | episodes | "
        + " | ".join(_HEADERS[measure] for measure in _MEASURES)
        + " | failed judgments |",
        "|---|---|---|---|" + "---|" * (len(_MEASURES) + 1),
    ]
    for (model, domain, signal), found in table.items():
        shown = [
            "–" if signal == "retrieved" and measure == "column" else _pct(found.by_measure[measure])
            for measure in _MEASURES
        ]
        label = f"{signal} (named documents only)" if signal == "stated" and model in stated.named_only else signal
        failed = str(found.failed) if signal in ("stated", "retrieved") else "–"
        lines.append(f"| {model} | {domain} | {label} | {found.episodes} | " + " | ".join(shown) + f" | {failed} |")
    if stated.named_only:
        lines += [
            "",
            "*named documents only*: `annotate --facts --facts-named-only` asked only about rows whose document the "
            "episode touched; the others count as not stated without a call (MuDABench asks about every row).",
        ]
    return "\n".join(lines) + "\n\n"


def _pct(estimate: Estimate) -> str:
    return f"{100 * estimate.mean:.1f} [{100 * estimate.low:.1f}, {100 * estimate.high:.1f}]"
