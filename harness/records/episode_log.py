"""What every maker of an episode's log writes alike (a run, a re-grade, an import): its start, with the task's
record (its judges' calls: `judge_log` in trajectory.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from harness.inputs.tasks import Task, task_digest
from harness.records.events import EpisodeStartEvent, SandboxFacts, TaskRecord


@dataclass(frozen=True)
class RunFacts:
    """What a run records in every episode_start beside the task: its protocol's hash, the harness's version, and
    on Ray the node that ran the episode."""

    config_hash: str | None = None
    harness_version: str | None = None
    ray_node: str | None = None


def task_record(task: Task) -> TaskRecord:
    """What regrading needs from the logs alone (the trajectory is a host file; it never enters the sandbox), and
    the task's facts when it has any (what `annotate --facts` judges against)."""
    facts = {"facts": [row.to_dict() for row in task.facts]} if task.facts else {}
    return TaskRecord.model_validate(
        {
            "question": task.question,
            "answer": task.answer,
            "answer_format": task.answer_format,
            "grader": task.grader,
            "rel_tol": task.rel_tol,
            "abs_tol": task.abs_tol,
            "type": task.type,
            "collection": task.collection,
        }
        | facts
    )


def start_event(
    task: Task,
    model: str | None,
    *,
    sandbox: Mapping[str, object] | None = None,
    collection_hash: str | None = None,
    run_facts: RunFacts = RunFacts(),
    imported_from: str | None = None,
) -> EpisodeStartEvent:
    """The episode_start of TASK: a run's (with its sandbox and run facts) or an import's (with its file)."""
    return EpisodeStartEvent(
        task_id=task.id,
        domain=task.domain,
        task=task_record(task),
        task_digest=task_digest(task),
        model=model,
        sandbox=None if sandbox is None else SandboxFacts.model_validate(dict(sandbox)),
        collection_hash=collection_hash,
        config_hash=run_facts.config_hash,
        harness_version=run_facts.harness_version,
        ray_node=run_facts.ray_node,
        imported_from=imported_from,
        epoch=task.epoch if task.epoch > 1 else None,
    )
