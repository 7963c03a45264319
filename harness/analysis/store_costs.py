"""The report's retrieval storage section: what each run's File Search stores held and their estimated cost, from
run.yaml's `retrieval_stores` (written when the run deleted or kept them). Apart from the model's cost: it is
billed by storage, not by tokens."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from harness.analysis.runs import run_key
from harness.core.safe_text import markdown_cell
from harness.records.run_folder import RunFolder


def store_cost_section(paths: list[Path], names: Mapping[Path, str] | None = None) -> str:
    """A row per store per run folder, and the total; "" when no run recorded a store."""
    lines = []
    total = 0.0
    for path in paths:
        record = RunFolder(path).read_record()
        label = (names or {}).get(path) or run_key(record)
        for store in record.retrieval_stores:
            total += store.estimated_usd
            lines.append(
                f"| {markdown_cell(label)} | {markdown_cell(store.store_id)} | {markdown_cell(store.collection)} | "
                f"{store.bytes} | {store.held_s / 3600:.2f} | {store.estimated_usd:.3g} | "
                f"{'kept' if store.kept else 'deleted'} |"
            )
    if not lines:
        return ""
    price = "OpenAI's list price, $0.10 a GB-day; an account's free first GB is not seen"
    return "\n".join(
        [
            "## Retrieval storage (File Search)",
            "",
            f"The vector stores each run held at its end, and their estimated storage cost ({price}), apart from "
            "the model's cost above.",
            "",
            "| run | store | collection | bytes | hours | estimated cost (USD) | at the end |",
            "|---|---|---|---|---|---|---|",
            *lines,
            f"| all | | | | | {total:.3g} | |",
            "",
        ]
    )
