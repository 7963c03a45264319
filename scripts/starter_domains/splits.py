"""Cutting a data set into table documents (`Split` → `Table`), and the row labels and number format they print."""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from .spec import COMMA_LANGS, Column, Split, Table


def tables(split: Split) -> dict[str, Table]:
    """The split's documents by id, their figures printed with the columns' decimals."""
    data = split.load()
    columns = split.columns(data) if callable(split.columns) else split.columns
    header = [split.key_label] + [label for _, label, _ in columns]
    out = {}
    for index, group in enumerate(split.groups):
        part = data[data[split.by] == group].sort_values(split.key)
        rows: list[list[str]] = []
        seen: dict[str, int] = {}
        for _, r in part.iterrows():
            label = str(r[split.key])
            seen[label] = seen.get(label, 0) + 1
            if seen[label] > 1:  # a repeated name (two cars of one model): keys stay unique
                label = f"{label} #{seen[label]}"
            rows.append([label] + [number(r[c], p, split.lang) if p >= 0 else str(r[c]) for c, _, p in columns])
        kind = split.kind(index) if callable(split.kind) else split.kind
        table = Table(split.source, split.stem(group), kind, split.title(group), split.intro, header, rows, split.lang)
        out[f"{split.id}/{group}"] = table
    return out


def series(
    id: str,
    load: Callable[[], Any],
    label: Callable[[float], str],
    periods: list[tuple[int, int]],
    value: tuple[str, int],
    **layout: Any,
) -> Split:
    """A time series (`time`, `value`) cut into periods (groups `<first>-<last>`), rows keyed by `label(time)`."""

    def frame() -> Any:
        data = load()
        data["key"] = [label(t) for t in data.time]
        data["period"] = [next((f"{a}-{b}" for a, b in periods if a <= int(t + 1e-6) <= b), "") for t in data.time]
        return data

    columns: list[Column] = [("value", *value)]
    return Split(id, frame, "period", [f"{a}-{b}" for a, b in periods], "key", columns, **layout)


def number(value: Any, places: int, lang: str = "en") -> str:
    """A figure as printed: fixed decimals, decimal comma (no grouping) in COMMA_LANGS; NA when missing."""
    if value is None or value != value:
        return "NA"
    text = f"{Decimal(str(value)):.{places}f}" if places else str(round(float(value)))
    return text.replace(".", ",") if lang in COMMA_LANGS else text


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def rotate(*formats: str) -> Callable[[int], str]:
    return lambda index: formats[index % len(formats)]


def quarter(t: float) -> str:
    year = int(t + 1e-6)
    return f"{year} Q{round((t - year) * 4) + 1}"


def month(t: float) -> str:
    year = int(t + 1e-6)
    return f"{year}-{round((t - year) * 12) + 1:02d}"
