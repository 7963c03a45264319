"""The paper's protocol (`--solver zero-shot --solver-arg input=full|cropped|bbox`, or `--zero-shot MODE`): no
sandbox and no tools; the task's document as images in one prompt with the question and its options, one reply,
graded by the task's grader.

The request is checked before any call: its images against what every provider takes in one request
(`RequestLimits`: first from the pages' sizes on disk, before any page is read, then from the images made,
each decoded in a bounded worker), and its tokens, each image counted by the provider's own rule
(`Model.count_tokens`), against the context window. A document too large for one request ends the episode
as `context_limit` with the reason, never sent. The images are stored once in the run folder by hash; the
trajectory refers to them. The prompt is a file (`prompt=FILE`; by default the FinDocMRE profile's
`zero-shot-cot.txt`), whose `{what}` and `{format}` are filled in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from harness.core.errors import InputError, read_text_input
from harness.core.image_decode import check_images_bounded
from harness.core.images import CheckedImage, ImageRefused, user_message
from harness.core.messages import Message
from harness.core.status import EpisodeFailure, EpisodeFinished, Outcome, Status, outcome_of
from harness.episode.query import query_model
from harness.episode.solvers.base import EpisodeInputs, Solver, SolverArgumentError
from harness.grading.answer import has_closed_answer, strip_code_blocks
from harness.inputs.limits import RequestLimits, request_limits
from harness.inputs.page_images import ZERO_SHOT_INPUTS, document_pages, stored_sizes, task_images
from harness.inputs.profiles import PROFILES_DIR
from harness.inputs.tasks import Task, collection_of
from harness.records.compact import compact_messages

__all__ = ["DEFAULT_PROMPT", "ZeroShot"]

DEFAULT_PROMPT = PROFILES_DIR / "findocmre" / "zero-shot-cot.txt"
"""The paper's chain-of-thought prompt (its Table 6 ablation), one question per request."""
_DEFAULT_PROMPT_VERSION = "zero-shot-prompt-1.0"
_WHAT = {
    "full": "every page",
    "cropped": "the charts a question is about, each cut out of its page,",
    "bbox": "every page, with the charts the question is about boxed in magenta,",
}


class ZeroShot(Solver):
    """One question, its document as images, one reply."""

    name = "zero-shot"
    needs_sandbox = False
    arguments: ClassVar[Mapping[str, str]] = {
        "input": "full (every page), cropped (the task's charts) or bbox (every page, the charts boxed)",
        "prompt": "a prompt file ({what} and {format} filled in); default: the FinDocMRE profile's",
    }

    def __init__(self, args: Mapping[str, str]) -> None:
        super().__init__(args)
        self.input = self.args.get("input", "")
        if self.input not in ZERO_SHOT_INPUTS:
            raise SolverArgumentError(f"input={self.input!r}: one of {', '.join(ZERO_SHOT_INPUTS)}")
        self.prompt_file = Path(self.args["prompt"]) if "prompt" in self.args else DEFAULT_PROMPT
        self.prompt = read_text_input(self.prompt_file, "prompt").removesuffix("\n")

    def protocol(
        self, spec: str, tasks: list[Task], collections: dict[str, Path], limits: RequestLimits | None = None
    ) -> tuple[str, Any] | None:
        """The recorded protocol (as `--zero-shot` runs recorded it); every task's pages (and charts) are checked
        here, so a task that cannot be given as images is refused before anything is written."""
        dpis = sorted(
            {
                pages.dpi
                for task in tasks
                for pages in document_pages(task, collections[collection_of(task)], self.input)
            }
        )
        limits = limits or request_limits(None)
        default = self.prompt_file == DEFAULT_PROMPT
        return "zero_shot", {
            "input": self.input,
            "page_dpi": dpis[0] if len(dpis) == 1 else dpis,
            "prompt": _DEFAULT_PROMPT_VERSION if default else str(self.prompt_file),
            "prompt_digest": "sha256:" + hashlib.sha256(self.prompt.encode()).hexdigest()[:16],
            "max_images": limits.images_per_request,
            "max_image_bytes": limits.request_bytes,
            **({"request_limits": limits.describe()} if limits.calls_provider else {}),
        }

    def without_sandbox(self) -> str:
        return f"--zero-shot {self.input}: no sandbox, no tools"

    def solve(self, episode: EpisodeInputs) -> Outcome:
        """The episode: its images checked and stored, the request checked, one call, the reply as the outcome."""
        task, budget = episode.task, episode.budget
        try:
            if episode.collection is None:
                raise InputError(f"task {task.domain}/{task.id}: no collection to read its pages from")
            documents = document_pages(task, episode.collection, self.input)
            count, stored = stored_sizes(task, documents, self.input)
            if (refusal := episode.limits.stored_refusal(count, stored)) is not None:  # before any page is read
                raise EpisodeFinished(Status.CONTEXT_LIMIT, detail=f"the document does not fit one request: {refusal}")
            try:
                images = check_images_bounded(task_images(task, documents, self.input), episode.limits.image)
            except ImageRefused as refused:  # a collection's page past the limits of one image
                raise EpisodeFinished(Status.CONTEXT_LIMIT, detail=f"a page image cannot be sent: {refused}") from None
            if (refusal := episode.limits.refusal(images)) is not None:
                raise EpisodeFinished(Status.CONTEXT_LIMIT, detail=f"the document does not fit one request: {refusal}")
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

    def messages(self, task: Task, images: list[CheckedImage]) -> list[Message]:
        """The request: the prompt file as the system message, the question with the images as the user's."""
        shape = f"\nThe answer's format: {task.answer_format}" if task.answer_format else ""
        system = self.prompt.replace("{what}", _WHAT[self.input]).replace("{format}", shape)
        return [{"role": "system", "content": system}, user_message(task.question, images)]
