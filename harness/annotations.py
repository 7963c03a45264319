"""What an episode's log says beyond its grade: documents touched, evidence recall, failure mode, refused
escape attempts. Computed from the logged events at the end of an episode, and again on import."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from harness.evidence import DocumentIndex, touched_documents
from harness.failure_modes import failure_mode
from harness.leakage import METHOD as LEAKAGE_METHOD
from harness.leakage import refused_attempts
from harness.results_store import ResultRow
from harness.tasks import Task


def annotate(
    row: ResultRow,
    events: list[dict[str, Any]],
    task: Task,
    collection: Path | None,
    opens: dict[str, int] | None = None,
) -> tuple[ResultRow, dict[str, Any] | None]:
    """The row with its evidence, failure-mode and leakage fields, and the trajectory's `evidence` event fields.

    Without the collection folder only the task's evidence files can be recognised. `opens` are the exact
    file opens the host saw (harness/file_opens.py), when it could see them. An episode whose
    sandbox never started has no evidence record (no recall: the agent never ran).
    """
    if not any(event.get("event") == "sandbox_ready" for event in events):
        return dataclasses.replace(row, canary=task.canary), None
    index = DocumentIndex.of_folder(collection, task.evidence) if collection else DocumentIndex(task.evidence)
    record = touched_documents(events, index, task.evidence, opens)
    fields = record.row_fields() | refused_attempts(events) | {"canary": task.canary}
    fields["failure_mode"] = failure_mode(row.status, row.is_correct(), fields["evidence_recall"])
    event = {"method": record.method, "leakage_method": LEAKAGE_METHOD, "evidence": record.evidence,
             "touches": [touch.to_dict() for touch in record.touches], "opens": opens}  # fmt: skip
    return dataclasses.replace(row, **fields), event
