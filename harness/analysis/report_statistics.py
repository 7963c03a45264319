"""The report's statistics: clustered intervals, pass@k and pass^k, paired differences, spread and tiers."""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

from harness.analysis.comparison import METHOD as PAIRED_METHOD
from harness.analysis.comparison import paired_difference
from harness.analysis.runs import ModelRow
from harness.analysis.summary import ALL
from harness.analysis.tiers import TIER_RULE, find_tiers, spread
from harness.analysis.uncertainty import (
    CLUSTERED_SE,
    PASS_AT_K,
    PASS_HAT_K,
    Estimate,
    clustered_mean,
    mean_pass_at_k,
    mean_pass_hat_k,
    verdict_flip_share,
)
from harness.core.safe_text import markdown_cell

_TaskOutcomes = dict[tuple[str, str], list[bool]]


def outcomes(rows: list[ModelRow], model: str, domain: str = ALL) -> _TaskOutcomes:
    """(domain, task) -> default-mode correctness of each of the model's episodes (epochs) of it."""
    grouped: _TaskOutcomes = {}
    for entry in rows:
        if entry.model == model and domain in (ALL, entry.row.domain):
            grouped.setdefault(entry.row.key, []).append(entry.row.is_correct())
    return grouped


def estimates(rows: list[ModelRow], models: list[str]) -> dict[tuple[str, str], Estimate]:
    """(model, domain or `all`) -> the mean over episodes with its clustered interval."""
    table: dict[tuple[str, str], Estimate] = {}
    for model in models:
        domains = sorted({r.row.domain for r in rows if r.model == model})
        for domain in [*domains, ALL]:
            table[(model, domain)] = clustered_mean(outcomes(rows, model, domain))
    return table


def statistics_section(
    rows: list[ModelRow], models: list[str], table: dict[tuple[str, str], Estimate], out: Path
) -> str:
    """Markdown for the statistics (`table`: the `estimates` of `models`, best first); writes intervals.csv,
    pass_at_k.csv and paired_means.csv."""
    lines = _interval_lines(table, models) + _repeat_lines(rows, models, out)
    lines += _paired_lines(rows, models, out) + _spread_and_tiers(table, models)
    with (out / "intervals.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["model", "domain", "tasks", "episodes", "accuracy", "ci95_low", "ci95_high", "se"])
        for (model, domain), e in table.items():
            writer.writerow(
                [model, domain, e.tasks, e.episodes, *(round(v, 6) for v in (e.mean, e.low, e.high, e.standard_error))]
            )
    return "\n".join(lines) + "\n"


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def _interval_lines(table: dict[tuple[str, str], Estimate], models: list[str]) -> list[str]:
    domains = [*sorted({d for _, d in table if d != ALL}), ALL]
    lines = [
        "## Accuracy over all episodes, % with a 95% interval clustered by task",
        "",
        f"Method: {CLUSTERED_SE}.",
        "",
        "| domain | " + " | ".join(map(markdown_cell, models)) + " |",
        "|---|" + "---|" * len(models),
    ]
    for domain in domains:
        texts = []
        for model in models:
            e = table.get((model, domain))
            texts.append("–" if e is None else f"{_pct(e.mean)} [{_pct(e.low)}, {_pct(e.high)}]")
        lines.append(f"| {domain} | " + " | ".join(texts) + " |")
    counts = [f"{table[(m, ALL)].tasks} / {table[(m, ALL)].episodes}" for m in models]
    lines.append("| tasks / episodes | " + " | ".join(counts) + " |")
    return [*lines, "", "Per domain and model: `intervals.csv` (with tasks, episodes and the standard error).", ""]


def _repeat_lines(rows: list[ModelRow], models: list[str], out: Path) -> list[str]:
    epochs = {model: max((len(v) for v in outcomes(rows, model).values()), default=0) for model in models}
    top = max(epochs.values(), default=0)
    with (out / "pass_at_k.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["model", "k", "pass_at_k", "pass_hat_k"])
        for model in models:
            grouped = outcomes(rows, model)
            for k in range(1, epochs[model] + 1):
                writer.writerow(
                    [
                        model,
                        k,
                        round(mean_pass_at_k(grouped, k) or 0.0, 6),
                        round(mean_pass_hat_k(grouped, k) or 0.0, 6),
                    ]
                )
    if top < 2:
        return []
    lines = [
        "## Repeated epochs: pass@k, pass^k, verdicts that change",
        "",
        f"Methods: {PASS_AT_K}; {PASS_HAT_K}; "
        "verdict changes = share of tasks with two or more epochs whose epochs are not all alike.",
        "",
        "| model | epochs | "
        + " | ".join(f"pass@{k}" for k in range(1, top + 1))
        + " | "
        + " | ".join(f"pass^{k}" for k in range(1, top + 1))
        + " | tasks whose verdict changes |",
        "|---|---|" + "---|" * (2 * top + 1),
    ]
    for model in models:
        grouped = outcomes(rows, model)
        at = [mean_pass_at_k(grouped, k) for k in range(1, top + 1)]
        hat = [mean_pass_hat_k(grouped, k) for k in range(1, top + 1)]
        flips = verdict_flip_share(grouped)
        cells = ["–" if v is None else _pct(v) for v in [*at, *hat]]
        flip_text = "–" if flips is None else _pct(flips)
        lines.append(f"| {markdown_cell(model)} | {epochs[model]} | " + " | ".join(cells) + f" | {flip_text} |")
    return [*lines, ""]


def _paired_lines(rows: list[ModelRow], models: list[str], out: Path) -> list[str]:
    if len(models) < 2:
        return []
    lines = [
        "## Paired differences (per-task mean correctness)",
        "",
        f"Method: {PAIRED_METHOD}.",
        "",
        "| first | second | shared tasks | first % | second % | difference (pp) | 95% interval | p |",
        "|---|---|---|---|---|---|---|---|",
    ]
    with (out / "paired_means.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            [
                "first",
                "second",
                "tasks",
                "first_mean",
                "second_mean",
                "difference",
                "ci95_low",
                "ci95_high",
                "permutation_p",
            ]
        )
        for first, second in itertools.combinations(models, 2):
            result = paired_difference(outcomes(rows, first), outcomes(rows, second))
            if result is None:
                continue
            figures = (
                result.first_mean,
                result.second_mean,
                result.difference,
                result.low,
                result.high,
                result.p_value,
            )
            writer.writerow([first, second, result.tasks, *(round(v, 6) for v in figures)])
            lines.append(
                f"| {markdown_cell(first)} | {markdown_cell(second)} | {result.tasks} | "
                f"{_pct(result.first_mean)} | "
                f"{_pct(result.second_mean)} | {100 * result.difference:+.1f} | "
                f"[{100 * result.low:+.1f}, {100 * result.high:+.1f}] | {result.p_value:.4f} |"
            )
    return [*lines, ""]


def _spread_and_tiers(table: dict[tuple[str, str], Estimate], models: list[str]) -> list[str]:
    lines = [
        "## Spread over domains and tiers",
        "",
        "| model | overall % | best domain | worst domain | spread (pp) |",
        "|---|---|---|---|---|",
    ]
    for model in models:
        found = spread({d: e.mean for (m, d), e in table.items() if m == model and d != ALL})
        if found is None:
            lines.append(f"| {markdown_cell(model)} | {_pct(table[(model, ALL)].mean)} | – | – | – |")
            continue
        lines.append(
            f"| {markdown_cell(model)} | {_pct(table[(model, ALL)].mean)} | "
            f"{found.best_domain} {_pct(found.best)} | "
            f"{found.worst_domain} {_pct(found.worst)} | {100 * found.spread:.1f} |"
        )
    tiers = find_tiers({model: table[(model, ALL)].mean for model in models})
    lines += ["", f"Tiers: {TIER_RULE}."]
    if tiers is None:
        lines.append("No tier boundary qualifies.")
    else:
        for index, group in enumerate(tiers.groups):
            gap = f"; gap to the next tier {100 * tiers.gaps[index]:.2f} pp" if index < len(tiers.gaps) else ""
            lines.append(f"- tier {index + 1}: {', '.join(map(markdown_cell, group))}{gap}")
    return [*lines, ""]
