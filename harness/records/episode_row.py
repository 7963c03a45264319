"""The results row of one episode, made one way by a run, a re-grade and an import: from its task, how it ended,
its grade, what it spent and its timings."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from harness.core.status import Outcome
from harness.grading import Grade
from harness.inputs.tasks import Task, task_digest
from harness.records.results import LEFT_OUT_WHEN_NONE, ResultRow

GRADE_FIELDS = tuple(
    spec.name
    for spec in dataclasses.fields(ResultRow)
    if spec.name in {grade_spec.name for grade_spec in dataclasses.fields(Grade)}
)
"""The row's fields that are the grade's own, in the row's order (the grade's answer tag is the row's `answer`)."""


@dataclass(frozen=True)
class Spend:
    """What the agent used; all zero when its sandbox never came up (or the file it was imported from says none)."""

    turns: int = 0
    duration_s: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float | None = None
    cache_write_tokens: int = 0
    retry_wait_s: float = 0.0
    failed_attempts_s: float = 0.0
    model_ids: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Timings:
    """The episode's time outside the agent's clock, and which attempt of it within its run this is."""

    queue_s: float = 0.0
    sandbox_start_s: float = 0.0
    attempt: int = 1


def grade_fields(grade: Grade) -> dict[str, Any]:
    """The row's fields that come from the grade (a re-grade replaces just these): its tag's content as
    `answer`, then the grade's own."""
    fields = {name: getattr(grade, name) for name in GRADE_FIELDS}
    return {"answer": grade.tag_content} | {
        name: value for name, value in fields.items() if not (name in LEFT_OUT_WHEN_NONE and value is None)
    }


def _graded_outcome(outcome: Outcome, grade: Grade) -> Outcome:
    """The outcome as the row records it: a grader that failed on the submission is said in the detail."""
    if grade.grader_failure is None:
        return outcome
    return outcome.with_note(f"the grader failed on the submission: {grade.grader_failure}")


def episode_row(
    task: Task, outcome: Outcome, grade: Grade, spend: Spend = Spend(), timings: Timings = Timings()
) -> ResultRow:
    """TASK's row: how it ended, its grade, what it spent and its timings (annotations come after)."""
    return ResultRow(
        task_id=task.id,
        domain=task.domain,
        status=outcome.status,
        **grade_fields(grade),
        **dataclasses.asdict(spend),
        detail=_graded_outcome(outcome, grade).detail,
        queue_s=timings.queue_s,
        sandbox_start_s=timings.sandbox_start_s,
        task_digest=task_digest(task),
        task_type=task.type,
        task_groups=dict(task.groups),
        epoch=task.epoch,
        attempt=timings.attempt,
    )
