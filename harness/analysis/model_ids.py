"""Runs whose calls came back from more than one model id: the provider swapped snapshots behind the alias, so
the run's episodes were not all answered by one model."""

from __future__ import annotations

from collections import Counter

from harness.analysis.runs import ModelRow
from harness.core.safe_text import markdown_cell


def _model_ids_by_label(rows: list[ModelRow]) -> dict[str, tuple[Counter[str], Counter[str]]]:
    """Label -> (calls per returned model id, episodes per returned model id), for labels with any id."""
    found: dict[str, tuple[Counter[str], Counter[str]]] = {}
    for row in rows:
        if not row.row.model_ids:
            continue
        calls, episodes = found.setdefault(row.model, (Counter(), Counter()))
        calls.update(row.row.model_ids)
        episodes.update(row.row.model_ids.keys())
    return found


def mixed_model_warnings(rows: list[ModelRow]) -> list[str]:
    """One line per label whose calls came back from more than one model id, its ids by calls, most first."""
    lines = []
    for label, (calls, episodes) in _model_ids_by_label(rows).items():
        if len(calls) < 2:
            continue
        ids = ", ".join(
            f"`{markdown_cell(model_id)}` ({count} calls, {episodes[model_id]} episodes)"
            for model_id, count in sorted(calls.items(), key=lambda item: (-item[1], item[0]))
        )
        lines.append(f"{markdown_cell(label)}: calls came back from {len(calls)} model ids: {ids}")
    return lines


def mixed_models_section(rows: list[ModelRow]) -> list[str]:
    """The report's warning, near its top: empty when every run's calls came back from one model id."""
    warnings = mixed_model_warnings(rows)
    if not warnings:
        return []
    return [
        "## Warning: more than one model id answered",
        "",
        "The provider named another model in some replies (a snapshot swapped behind the alias); the runs below "
        "mix them (`model_id` of each `model_call` event; `model_ids` of each row).",
        "",
        *(f"- {line}" for line in warnings),
        "",
    ]
