"""What an episode's log says beyond its grade: documents touched, evidence recall, failure mode, refused
escape attempts. Computed from the logged events at the end of an episode, and again on import."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from harness.core.facts import FactRow
from harness.diagnostics.escapes import METHOD as ESCAPES_METHOD
from harness.diagnostics.escapes import refused_attempts
from harness.diagnostics.evidence import DocumentIndex, touched_documents
from harness.diagnostics.fact_coverage import seen_cells
from harness.diagnostics.fact_judge import judge_facts
from harness.diagnostics.failure_modes import failure_mode
from harness.diagnostics.workflow_stages import workflow_stages
from harness.grading.judge import JudgePanel
from harness.records.events import Event, EvidenceEvent, SandboxReadyEvent
from harness.records.fact_counts import count_covered
from harness.records.results import ResultRow


def with_diagnostics(
    row: ResultRow,
    events: Sequence[Event],
    evidence: list[str],
    canary: bool,
    collection: Path | None,
    opens: dict[str, int] | None = None,
    facts: Sequence[FactRow] = (),
) -> tuple[ResultRow, EvidenceEvent | None]:
    """The row with its evidence, failure-mode and leakage fields, and the trajectory's `evidence` event fields.

    `evidence` and `canary` are the task's. Without the collection folder only its evidence files can be
    recognised. `opens` are the exact file opens the host saw (harness/sandboxes/file_opens.py), when it could
    see them. `facts` are the task's intermediate facts: which of them the episode saw (fact_coverage.py). An
    episode whose sandbox never started has no evidence record (no recall: the agent never ran).
    """
    if not any(isinstance(event, SandboxReadyEvent) for event in events):
        return dataclasses.replace(row, canary=canary), None
    index = DocumentIndex.of_folder(collection, evidence) if collection else DocumentIndex(evidence)
    record = touched_documents(events, index, evidence, opens)
    fields = record.row_fields() | refused_attempts(events) | {"canary": canary}
    fields["failure_mode"] = failure_mode(row.status, row.is_correct(), fields["evidence_recall"])
    seen = seen_cells(events, facts)
    if facts:
        fields["facts_seen"] = count_covered(seen)
        fields["workflow_stages"] = workflow_stages(events, facts)
    event = EvidenceEvent(
        method=record.method,
        leakage_method=ESCAPES_METHOD,
        evidence=record.evidence,
        touches=[touch.record() for touch in record.touches],
        opens=opens,
        facts_seen=[sorted(name for name, shown in row.items() if shown) for row in seen] if facts else None,
    )
    return dataclasses.replace(row, **fields), event


def with_stated_facts(
    row: ResultRow,
    panel: JudgePanel,
    question: str,
    facts: Sequence[FactRow],
    events: Sequence[Event],
    final_reply: str | None,
) -> tuple[ResultRow, list[list[str] | None]]:
    """The row with the facts the episode stated (fact_judge.py; failed rows counted as not) and their judges' cost
    added to `judge_cost_usd`; and per fact row the supported columns, for the evidence event."""
    judgment = judge_facts(panel, question, facts, events, final_reply)
    cost = row.judge_cost_usd
    if judgment.cost_usd is not None:
        cost = round((cost or 0.0) + judgment.cost_usd, 8)
    supported = [None if one["failed"] else one["supported"] for one in judgment.rows]
    return dataclasses.replace(row, facts_stated=judgment.counts, judge_cost_usd=cost), supported
