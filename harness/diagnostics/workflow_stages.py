"""The agentic workflow's stages scored from its trajectory, for MuDABench's Table 4 (Planning, Extraction,
Normalization, Code): deterministic and free, for an episode of a task with facts.

- planning: every document of the task's fact rows was asked a sub-question (the plan's templates and their
  restrictions reached it);
- extraction: every fact value (those text can show, read as `facts_seen` reads them) appears in its document's
  answers;
- normalization: every fact value that its document's answers hold appears in the normalized lists (the replies
  of the `extract` and `continue` stages);
- code: the generated program ran and exited 0 within its time.

A stage the episode never reached counts as not correct. The paper's Table 4 is a study of 30 examples read by
its authors; these rules stand in for that reading (docs/guide/mudabench.md, "What differs").
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.core.facts import FactRow
from harness.diagnostics.fact_coverage import cells_in_texts
from harness.diagnostics.fact_record import asks_per_document, document_exchanges
from harness.records.events import ActionEvent, Event, ModelCallEvent, ObservationEvent, RetrievalEvent

STAGES = ("planning", "extraction", "normalization", "code")
_NORMALIZING = ("extract", "continue")
"""The workflow's model-call stages whose replies are the normalized lists (episode/solvers/workflow.py)."""


def workflow_stages(events: Sequence[Event], facts: Sequence[FactRow]) -> dict[str, bool] | None:
    """Stage -> whether the episode got it right; None for an episode that did not ask per document or a task
    without facts."""
    if not facts or not asks_per_document(events):
        return None
    asked = {event.document for event in events if isinstance(event, RetrievalEvent) and event.document}
    answers = {
        row.document: "\n".join(answer for _, answer in document_exchanges(events, row.document)) for row in facts
    }
    normalized = "\n".join(
        event.response.text for event in events if isinstance(event, ModelCallEvent) and event.stage in _NORMALIZING
    )
    answered = cells_in_texts(answers, facts)
    kept = cells_in_texts({row.document: normalized for row in facts}, facts)
    return {
        "planning": all(row.document in asked for row in facts),
        "extraction": all(all(row.values()) for row in answered),
        "normalization": all(kept[i][name] for i, row in enumerate(answered) for name, found in row.items() if found),
        "code": _program_succeeded(events),
    }


def _program_succeeded(events: Sequence[Event]) -> bool:
    """The last program run (the workflow's one action) exited 0 within its time."""
    run_turns = {event.turn for event in events if isinstance(event, ActionEvent)}
    outcomes = [event for event in events if isinstance(event, ObservationEvent) and event.turn in run_turns]
    return bool(outcomes) and outcomes[-1].exit_code == 0 and not outcomes[-1].timed_out
