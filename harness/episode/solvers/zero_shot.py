"""The paper's protocol (`--solver zero-shot --solver-arg input=full|cropped|bbox`, or `--zero-shot MODE`): no
sandbox and no tools; the task's document as images in one prompt with the question and its options, one reply,
graded by the task's grader.

The request is checked before any call: its images against what every provider takes in one request
(`RequestLimits`: first from the pages' sizes on disk, before any page is read, then from the images made,
each decoded in a bounded worker), and its tokens, each image counted by the provider's own rule
(`Model.count_tokens`), against the context window. A document too large for one request ends the episode
as `context_limit` with the reason, never sent. The images are stored once in the run folder by hash; the
trajectory refers to them. The prompt is a file (`prompt=FILE`, or a shipped prompt's name); one question a
request (`questions=one`, the default; the prompt's `{what}` and `{format}` filled in), or a document's
questions together (`questions=document`, FinDocMRE's paper: zero_shot_batches.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from harness.core.episode_key import EpisodeKey
from harness.core.errors import InputError, read_text_input
from harness.core.image_decode import check_images_bounded
from harness.core.images import CheckedImage, ImageRefused, user_message
from harness.core.messages import Message
from harness.core.status import EpisodeFailure, EpisodeFinished, Outcome, Status, outcome_of
from harness.episode.query import query_model
from harness.episode.solvers.base import EpisodeInputs, Solver, SolverArgumentError
from harness.episode.solvers.question_batches import BATCH_SIZE
from harness.episode.solvers.zero_shot_batches import QUESTIONS_PLACEHOLDER, BatchedQuestions
from harness.grading.answer import has_closed_answer, strip_code_blocks
from harness.inputs.limits import RequestLimits, request_limits
from harness.inputs.page_filter import PAGE_FILTERS
from harness.inputs.page_images import (
    BOX_COLOUR_NAME,
    ZERO_SHOT_INPUTS,
    cropped_images,
    document_pages,
    stored_sizes,
    task_images,
)
from harness.inputs.profiles import PROFILES_DIR
from harness.inputs.tasks import Task, collection_of
from harness.records.compact import compact_messages
from harness.records.events import CropSource, CropSourcesEvent
from harness.records.run_folder import RunFolder

__all__ = ["DEFAULT_PROMPT", "ZeroShot"]

_PROMPTS_DIR = PROFILES_DIR / "findocmre"
_SHIPPED_PROMPTS = {
    "zero-shot-cot": "zero-shot-prompt-1.0",
    "standard": "findocmre-standard-1.0",
    "standard-cot": "findocmre-standard-cot-1.0",
}
"""The prompts that ship (`findocmre/<name>.txt`), by name, each with the version run.yaml records: ours, one
question a request (chain of thought, `<answer>` tag); the paper's standard prompt (Table 14) and its
chain-of-thought variant (Table 6), a document's questions a request."""
DEFAULT_PROMPT = _PROMPTS_DIR / "zero-shot-cot.txt"
"""The prompt without a `prompt=` (the FinDocMRE profile names the paper's)."""
_QUESTIONS = ("one", "document")
_WHAT = {
    "full": "every page",
    "cropped": "the charts a question is about, each cut out of its page,",
    "bbox": f"every page, with the charts the question is about boxed in {BOX_COLOUR_NAME},",
}


class ZeroShot(Solver):
    """One question (or a document's questions), its document as images, one reply."""

    name = "zero-shot"
    needs_sandbox = False
    arguments: ClassVar[Mapping[str, str]] = {
        "input": "full (every page), cropped (the task's charts) or bbox (every page, the charts boxed)",
        "prompt": f"a prompt file, or a shipped one's name ({', '.join(_SHIPPED_PROMPTS)}); default: zero-shot-cot",
        "questions": f"one (a request per question: the default) or document (a document's questions together, "
        f"at most {BATCH_SIZE} a request, in the prompt's {QUESTIONS_PLACEHOLDER}: the paper's)",
        "page_filter": "none (every page: the default) or figures (only the pages that draw a figure, and those of "
        "the question's charts: FinDocMRE's Appendix C.4 as we read it; the findocmre profile's)",
    }

    def __init__(self, args: Mapping[str, str]) -> None:
        super().__init__(args)
        self.input = self.args.get("input", "")
        if self.input not in ZERO_SHOT_INPUTS:
            raise SolverArgumentError(f"input={self.input!r}: one of {', '.join(ZERO_SHOT_INPUTS)}")
        self.questions = self.args.get("questions", "one")
        if self.questions not in _QUESTIONS:
            raise SolverArgumentError(f"questions={self.questions!r}: one of {', '.join(_QUESTIONS)}")
        self.page_filter = self.args.get("page_filter", "none")
        if self.page_filter not in PAGE_FILTERS:
            raise SolverArgumentError(f"page_filter={self.page_filter!r}: one of {', '.join(PAGE_FILTERS)}")
        named = self.args.get("prompt")
        self.prompt_file = _PROMPTS_DIR / f"{named}.txt" if named in _SHIPPED_PROMPTS else Path(named or DEFAULT_PROMPT)
        self.prompt = read_text_input(self.prompt_file, "prompt").removesuffix("\n")
        placeholders = self.prompt.count(QUESTIONS_PLACEHOLDER)
        if self.questions == "document" and placeholders != 1:
            raise SolverArgumentError(
                f"prompt={self.prompt_file}: with questions=document the prompt holds {QUESTIONS_PLACEHOLDER} once, "
                f"where the questions go (it holds it {placeholders} times)"
            )
        if self.questions == "one" and placeholders:
            raise SolverArgumentError(
                f"prompt={self.prompt_file}: a prompt for a document's questions ({QUESTIONS_PLACEHOLDER}); with "
                "questions=one give a prompt for one question (e.g. prompt=zero-shot-cot)"
            )
        self.batches = BatchedQuestions(self.prompt, self.images) if self.questions == "document" else None

    def protocol(
        self, spec: str, tasks: list[Task], collections: dict[str, Path], limits: RequestLimits | None = None
    ) -> tuple[str, Any] | None:
        """The recorded protocol (as `--zero-shot` runs recorded it); every task's pages (and charts) are checked
        here, so a task that cannot be given as images is refused before anything is written; with
        `questions=document`, the run's batches are planned here."""
        dpis = sorted(
            {
                pages.dpi
                for task in tasks
                for pages in document_pages(task, collections[collection_of(task)], self.input, self.page_filter)
            }
        )
        limits = limits or request_limits(None)
        recorded: dict[str, Any] = {
            "input": self.input,
            "page_dpi": dpis[0] if len(dpis) == 1 else dpis,
            "page_filter": self.page_filter,
            "prompt": self._prompt_name(),
            "prompt_digest": "sha256:" + hashlib.sha256(self.prompt.encode()).hexdigest()[:16],
            "max_images": limits.images_per_request,
            "max_image_bytes": limits.request_bytes,
            **({"request_limits": limits.describe()} if limits.calls_provider else {}),
        }
        if self.input == "bbox":
            recorded["box_colour"] = BOX_COLOUR_NAME
        if self.batches is not None:
            recorded |= {"questions": "document", "questions_per_request": BATCH_SIZE}
            recorded["requests_per_epoch"] = self.batches.plan(tasks)
        return "zero_shot", recorded

    def resume(self, folder: RunFolder, finished: list[EpisodeKey]) -> str | None:
        """With `questions=document`: the batch calls the finished episodes made, read back from their trajectories,
        so a batch whose other episodes did not finish answers them from its call, not a new one."""
        if self.batches is None:
            return None
        recalled = self.batches.recall(folder, finished)
        return (
            f"zero-shot: {recalled} batch calls of the last run answer their unfinished questions" if recalled else None
        )

    def _prompt_name(self) -> str:
        """A shipped prompt's version, else the file as given."""
        shipped = self.prompt_file.resolve().parent == _PROMPTS_DIR.resolve()
        return _SHIPPED_PROMPTS.get(self.prompt_file.stem, str(self.prompt_file)) if shipped else str(self.prompt_file)

    def without_sandbox(self) -> str:
        return f"--zero-shot {self.input}: no sandbox, no tools"

    def solve(self, episode: EpisodeInputs) -> Outcome:
        """The episode: its images checked and stored, the request checked, one call, the reply as the outcome
        (with `questions=document`: its answer in its batch's reply)."""
        task, budget = episode.task, episode.budget
        try:
            if self.batches is not None:
                self.batches.answer(episode)
            images = self.images(task, episode)
            messages = self.messages(task, images)
            budget.check_before_call(messages)
            for image in images:
                episode.images.put(image)
            reply = query_model(episode.model, messages, budget, episode.log, compact_messages(messages, None))
            prose = strip_code_blocks(reply.text)
            if not has_closed_answer(prose):
                raise EpisodeFinished(Status.FORMAT_ERRORS, detail="the one reply has no closed <answer> tag")
            raise EpisodeFinished(Status.ANSWERED, submission=prose)
        except (EpisodeFinished, EpisodeFailure) as end:
            return outcome_of(end)

    def images(self, task: Task, episode: EpisodeInputs) -> list[CheckedImage]:
        """TASK's images under the solver's input, checked against one request's limits (EPISODE's); `EpisodeFinished`
        (context_limit) when they do not fit. For `cropped`, where each crop came from goes in EPISODE's log."""
        collection, limits = episode.collection, episode.limits
        if collection is None:
            raise InputError(f"task {task.domain}/{task.id}: no collection to read its pages from")
        documents = document_pages(task, collection, self.input, self.page_filter)
        count, stored = stored_sizes(task, documents, self.input, limits.image)
        if (refusal := limits.stored_refusal(count, stored)) is not None:  # before any page is read
            raise EpisodeFinished(Status.CONTEXT_LIMIT, detail=f"the document does not fit one request: {refusal}")
        try:
            if self.input == "cropped":
                images, sources = cropped_images(task, documents, limits.image)
                crops = [CropSource.model_validate(vars(source)) for source in sources]
                episode.log.write(CropSourcesEvent(crops=crops))
            else:
                images = check_images_bounded(task_images(task, documents, self.input), limits.image)
        except ImageRefused as refused:  # a collection's page past the limits of one image
            raise EpisodeFinished(Status.CONTEXT_LIMIT, detail=f"a page image cannot be sent: {refused}") from None
        if (refusal := limits.refusal(images)) is not None:
            raise EpisodeFinished(Status.CONTEXT_LIMIT, detail=f"the document does not fit one request: {refusal}")
        return images

    def messages(self, task: Task, images: list[CheckedImage]) -> list[Message]:
        """The request: the prompt file as the system message, the question with the images as the user's."""
        shape = f"\nThe answer's format: {task.answer_format}" if task.answer_format else ""
        system = self.prompt.replace("{what}", _WHAT[self.input]).replace("{format}", shape)
        return [{"role": "system", "content": system}, user_message(task.question, images)]
