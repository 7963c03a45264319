"""What every maker of an episode's log writes alike (a run, a re-grade, an import): its start, with the task's
record (its judges' calls: `judge_log` in trajectory.py)."""

from __future__ import annotations

from typing import Any

from harness.inputs.tasks import Task, task_digest
from harness.records.events import EpisodeStartEvent

_TASK_RECORD = ("question", "answer", "answer_format", "grader", "rel_tol", "abs_tol", "type", "collection")
"""The task's fields the trajectory keeps: what regrading needs from the logs alone (the trajectory is a host
file; it never enters the sandbox)."""


def task_record(task: Task) -> dict[str, Any]:
    """_TASK_RECORD's fields, and the task's facts when it has any (what `annotate --facts` judges against)."""
    record = {name: getattr(task, name) for name in _TASK_RECORD}
    if task.facts:
        record["facts"] = [row.to_dict() for row in task.facts]
    return record


def start_event(
    task: Task,
    model: str | None,
    *,
    sandbox: dict[str, Any] | None = None,
    collection_hash: str | None = None,
    run_facts: dict[str, Any] | None = None,
    imported_from: str | None = None,
) -> EpisodeStartEvent:
    """The episode_start of TASK: a run's (with its sandbox and run facts) or an import's (with its file)."""
    return EpisodeStartEvent(
        task_id=task.id,
        domain=task.domain,
        task=task_record(task),
        task_digest=task_digest(task),
        model=model,
        sandbox=sandbox,
        collection_hash=collection_hash,
        imported_from=imported_from,
        epoch=task.epoch if task.epoch > 1 else None,
        **(run_facts or {}),
    )
