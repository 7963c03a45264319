"""A document's questions in batches, as FinDocMRE's paper asks them (Appendix B.1.1, "Batching"): the questions of
one document together in one request, in the order of the task file, split into requests of at most ten."""

from __future__ import annotations

from dataclasses import dataclass

from harness.inputs.tasks import Task

__all__ = ["BATCH_SIZE", "QuestionBatch", "question_batches"]

BATCH_SIZE = 10
"""The most questions one request carries ("for documents with numerous questions (exceeding 10), we split them
into separate batches")."""


@dataclass(frozen=True)
class QuestionBatch:
    """Questions asked together: one document's (its `evidence`), at most `BATCH_SIZE`, in task-file order."""

    id: str
    """`<domain>/<first document>#<n>`: unique in a run, the same on every resume of it."""
    tasks: tuple[Task, ...]

    def position(self, task: Task) -> int:
        """TASK's place in the request, from 1."""
        return next(
            n for n, member in enumerate(self.tasks, start=1) if (member.domain, member.id) == (task.domain, task.id)
        )


def question_batches(tasks: list[Task], size: int = BATCH_SIZE) -> dict[tuple[str, str], QuestionBatch]:
    """Each task's batch, by (domain, task id): the tasks grouped by domain and documents in the order they come,
    each group cut into batches of at most SIZE."""
    grouped: dict[tuple[str, tuple[str, ...]], list[Task]] = {}
    for task in tasks:
        grouped.setdefault((task.domain, tuple(task.evidence)), []).append(task)
    batches: dict[tuple[str, str], QuestionBatch] = {}
    for (domain, documents), members in grouped.items():
        for start in range(0, len(members), size):
            number = start // size + 1
            batch = QuestionBatch(f"{domain}/{'+'.join(documents)}#{number}", tuple(members[start : start + size]))
            batches.update({(task.domain, task.id): batch for task in batch.tasks})
    return batches
