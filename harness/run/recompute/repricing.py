"""`report --prices FILE`: a run's costs again, from its recorded tokens and other prices.

A row's cost is the sum over its model calls of each call's price (a long-context tier applies per call), so
the calls are read from the episode's trajectory, one episode at a time; a model the file does not price keeps
the cost it was run with.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from harness.analysis.runs import RowChange
from harness.models.prices import Price, load_prices, price_in
from harness.records.events import ModelCallEvent
from harness.records.reading import read_events
from harness.records.results import ResultRow
from harness.records.run_folder import RunFolder


def repricing(path: Path) -> RowChange:
    """Each row's cost under the prices of PATH (a `--prices` file)."""
    prices = load_prices(path)
    by_run: dict[Path, Price | None] = {}

    def repriced(folder: RunFolder, row: ResultRow) -> ResultRow:
        if folder.path not in by_run:
            by_run[folder.path] = _run_price(folder, prices)
        price = by_run[folder.path]
        if price is None:
            return row
        events = read_events(folder.trajectory_path(row.domain, row.task_id, row.epoch))
        usages = [logged.event.response.usage for logged in events if isinstance(logged.event, ModelCallEvent)]
        return dataclasses.replace(row, cost_usd=round(sum(price.cost(usage) for usage in usages), 6))

    return repriced


def _run_price(folder: RunFolder, prices: dict[str, Price]) -> Price | None:
    """The file's price for the run's model: by the name it was run under, then its provider string."""
    record = folder.read_record()
    provider = None if record.model is None else record.model.model
    names = tuple(str(name) for name in (record.config.model, provider) if name)
    return price_in(names, prices)
