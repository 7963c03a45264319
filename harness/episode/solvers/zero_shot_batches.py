"""The zero-shot solver's `questions=document` (FinDocMRE's paper, Appendix B.1.1): a document's questions asked
together, in task-file order, at most ten a request, with the prompt's `[Insert Questions List]` holding them
(Table 14), and the reply's JSON list read one answer per question (answer_list.py).

A run keeps one episode, one trajectory and one row per question: the batch's one call is made by the first of
its episodes to run (shared_calls.py), logged in that episode's trajectory and counted in its row alone; every
episode of the batch logs a `shared_call` event naming the batch, its own place in it, the episode that made the
call and the answer it read there. The batches are planned from the run's tasks before any episode starts.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from harness.core.episode_key import EpisodeKey
from harness.core.images import CheckedImage, user_message
from harness.core.status import EpisodeFinished, Status
from harness.episode.query import query_model
from harness.episode.solvers.answer_list import AnswerItem, read_answer_list
from harness.episode.solvers.base import EpisodeInputs
from harness.episode.solvers.question_batches import BATCH_SIZE, QuestionBatch, question_batches
from harness.episode.solvers.shared_calls import SharedCalls
from harness.inputs.tasks import Task
from harness.records.compact import compact_messages
from harness.records.events import ModelCallEvent, SharedCallEvent
from harness.records.reading import read_events
from harness.records.run_folder import RunFolder

__all__ = ["QUESTIONS_PLACEHOLDER", "BatchedQuestions"]

QUESTIONS_PLACEHOLDER = "[Insert Questions List]"
"""Where Table 14 puts the questions: the prompt file holds it once, and the batch's questions replace it."""
_PAPER_TYPES = {"numeric_exact": "numerical_precise", "numeric_approx": "numerical_approximate"}
"""Our names of FinDocMRE's types that its prompt names otherwise."""

Images = Callable[[Task, EpisodeInputs], list[CheckedImage]]


@dataclass(frozen=True)
class _BatchReply:
    made_by: str
    """The task id of the episode whose trajectory holds the call (or would have, for a refusal)."""
    text: str | None = None
    refusal: str | None = None
    """Why the request was never sent (past a limit of one request): the same for every episode of the batch."""


class BatchedQuestions:
    """One run's batches and the calls they share."""

    def __init__(self, prompt: str, images: Images) -> None:
        self.prompt = prompt
        self.images = images
        """The solver's images for a task, checked against one request's limits (context_limit when they do not fit)."""
        self.batches: dict[tuple[str, str], QuestionBatch] = {}
        self.calls: SharedCalls[_BatchReply] = SharedCalls()

    def plan(self, tasks: list[Task]) -> int:
        """The run's batches; how many requests an epoch makes."""
        self.batches = question_batches(tasks, BATCH_SIZE)
        return len({batch.id for batch in self.batches.values()})

    def request_text(self, batch: QuestionBatch) -> str:
        """The prompt with the batch's questions in place, as a JSON list (the paper does not print its list's
        form): each question's type as the prompt names the types, and its text with its options."""
        questions = [_question(task) for task in batch.tasks]
        return self.prompt.replace(QUESTIONS_PLACEHOLDER, json.dumps(questions, ensure_ascii=False, indent=2))

    def answer(self, episode: EpisodeInputs) -> NoReturn:
        """The episode's outcome, raised: its answer read out of its batch's reply (made now, or already)."""
        task = episode.task
        batch = self.batches.get((task.domain, task.id))
        if batch is None:
            raise RuntimeError(f"task {task.domain}/{task.id} is in no batch: the run's tasks were not planned")
        reply, _ = self.calls.result((batch.id, task.epoch), lambda: self._ask(batch, episode))
        position = batch.position(task)
        if reply.text is None:
            item = AnswerItem(None, reply.refusal)
        else:
            item = read_answer_list(reply.text, len(batch.tasks))[position - 1]
        episode.log.write(
            SharedCallEvent(
                batch=batch.id,
                position=position,
                questions=[member.id for member in batch.tasks],
                made_by=reply.made_by,
                answer=item.answer,
                problem=item.problem,
            )
        )
        if reply.refusal is not None:
            raise EpisodeFinished(Status.CONTEXT_LIMIT, detail=reply.refusal)
        if item.answer is None:
            raise EpisodeFinished(Status.FORMAT_ERRORS, detail=item.problem)
        raise EpisodeFinished(Status.ANSWERED, submission=f"<answer>{item.answer}</answer>")

    def recall(self, folder: RunFolder, finished: list[EpisodeKey]) -> int:
        """Each batch call a FINISHED episode made (its trajectory holds the `model_call` and a `shared_call` naming
        it as the maker, for the same questions in the same order), kept as its batch's reply for this process, so
        a resumed run does not ask it again; how many."""
        recalled = 0
        for domain, task_id, epoch in finished:
            batch = self.batches.get((domain, task_id))
            if batch is None:
                continue
            text = _recorded_reply(folder.trajectory_path(domain, task_id, epoch), task_id, batch)
            if text is not None and self.calls.keep((batch.id, epoch), _BatchReply(task_id, text=text)):
                recalled += 1
        return recalled

    def _ask(self, batch: QuestionBatch, episode: EpisodeInputs) -> _BatchReply:
        """The batch's one call, made by EPISODE (its model, budget and trajectory)."""
        made_by = episode.task.id
        try:
            images = self.images(_joined(batch), episode)
            messages = [user_message(self.request_text(batch), images)]
            episode.budget.check_before_call(messages)
        except EpisodeFinished as refused:
            if refused.status is not Status.CONTEXT_LIMIT:
                raise
            return _BatchReply(made_by, refusal=refused.detail)
        for image in images:
            episode.images.put(image)
        reply = query_model(episode.model, messages, episode.budget, episode.log, compact_messages(messages, None))
        return _BatchReply(made_by, text=reply.text)


def _recorded_reply(path: Path, task_id: str, batch: QuestionBatch) -> str | None:
    """The reply of the batch call the trajectory at PATH made, None when it made none (or is unreadable)."""
    try:
        events = [logged.event for logged in read_events(path)]
    except (OSError, ValueError):
        return None
    made = any(
        isinstance(event, SharedCallEvent)
        and event.made_by == task_id
        and event.batch == batch.id
        and event.questions == [task.id for task in batch.tasks]
        for event in events
    )
    calls = [event for event in events if isinstance(event, ModelCallEvent)]
    return calls[-1].response.text if made and len(calls) == 1 else None


def _question(task: Task) -> dict[str, Any]:
    kind = _PAPER_TYPES.get(task.type or "", task.type)
    return {"question_type": kind, "question": task.question} if kind else {"question": task.question}


def _joined(batch: QuestionBatch) -> Task:
    """The batch as one task: the first's documents, with every chart of the batch's questions (first seen first)
    and their places, for the inputs that show the charts (cropped, bbox)."""
    ids = list(dict.fromkeys(chart for task in batch.tasks for chart in task.metadata.get("chart_ids") or []))
    placed: dict[Any, Any] = {}
    for task in batch.tasks:
        for chart in task.metadata.get("charts") or []:
            if isinstance(chart, dict):
                placed.setdefault(chart.get("id"), chart)
    first = batch.tasks[0]
    return dataclasses.replace(first, metadata={**first.metadata, "chart_ids": ids, "charts": list(placed.values())})
