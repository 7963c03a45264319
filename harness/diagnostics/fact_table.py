"""A fact row rendered as MuDABench's evaluator renders a gold row for its row judge (eval/evaluate.py:
`metadata_entry_to_source_row`, `format_source_table_for_judge`, `build_row_metric_columns`,
`format_columns_for_judge`, `_compact_doc_meta`), so a protocol file can hold its prompt word for word.

A row's cells are named as MuDABench's metric columns (`values.<name>`, `details.<name>`, or `fact_type`:
harness/inputs/importers/mudabench.py); a cell of another name is shown as a value of that name.
"""

from __future__ import annotations

import json
from typing import Any

from harness.core.facts import FactRow

SOURCE_HEADERS = ["row_index", "entity_id", "year", "fact_type", "values", "details", "raw_text"]
_META_KEYS = ("symbol", "year", "doctype", "chatdoc_upload_id", "toBid", "id")


def compact(value: Any) -> str:
    """MuDABench's `_json_compact`: sorted keys, no spaces, text unescaped."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _cell(text: Any) -> str:
    return str(text).replace("\n", " ").strip().replace("|", "\\|")


def _year(value: Any) -> Any:
    try:
        return None if value is None or value == "" else int(str(value))
    except ValueError:
        return value


def columns(row: FactRow) -> list[tuple[str, Any]]:
    """The row's metric columns in MuDABench's order: values by name, then details by name."""
    values = sorted(name for name in row.cells if not name.startswith("details."))
    details = sorted(name for name in row.cells if name.startswith("details."))
    return [(name, row.cells[name]) for name in [*values, *details]]


def placeholders(row: FactRow, index: int) -> dict[str, str]:
    """The row's placeholders for a protocol's fact template (besides <<QUESTION>> and <<RECORD>>)."""
    values = {
        name.removeprefix("values."): value
        for name, value in row.cells.items()
        if not name.startswith("details.") and name != "fact_type"
    }
    details = {name.removeprefix("details."): value for name, value in row.cells.items() if name.startswith("details.")}
    symbol = row.source.get("symbol", row.entity)
    year = _year(row.source.get("year", row.period))
    metric = values.get("metric_name")
    fact_type = str(metric) if metric not in (None, "") else (sorted(values)[0] if values else "atomic_metadata")
    raw_text = (
        "Synthetic row reconstructed from atomic metadata: "
        f"symbol={symbol}, year={year}, fact_type={fact_type}, values={compact(values)}, details={compact(details)}"
    )
    shown = [index, symbol, "" if year is None else year, fact_type, compact(values), compact(details), raw_text]
    source_row = "\n".join(
        [
            "| " + " | ".join(SOURCE_HEADERS) + " |",
            "|---:|---|---:|---|---|---|---|",
            "| " + " | ".join(_cell(part) for part in shown) + " |",
        ]
    )
    metric_columns = columns(row)
    table = ["| field | expected_value |", "|---|---|"]
    table += [f"| {_cell(name)} | {_cell(compact(value))} |" for name, value in metric_columns]
    meta = {key: row.source[key] for key in _META_KEYS if row.source.get(key) is not None}
    return {
        "<<SOURCE_HEADERS>>": compact(SOURCE_HEADERS),
        "<<ROW_INDEX>>": str(index),
        "<<SOURCE_ROW>>": source_row,
        "<<DOCUMENT_META>>": compact(meta) if meta else "{}",
        "<<METRIC_TOTAL>>": str(len(metric_columns)),
        "<<METRIC_COLUMNS>>": "\n".join(table) if metric_columns else "(empty columns)",
    }
