"""The paper's protocol (`--zero-shot full|cropped|bbox`): no sandbox and no tools; the task's document as images
in one prompt with the question and its options, one reply, graded by the task's grader.

The request is checked before any call: its images against what every provider takes in one request
(`RequestLimits`: first from the pages' sizes on disk, before any page is read, then from the images made,
each decoded in a bounded worker), and its tokens, each image counted by the provider's own rule
(`Model.count_tokens`), against the context window. A document too large for one request ends the episode
as `context_limit` with the reason, never sent. The images are stored once in the run folder by hash; the
trajectory refers to them.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import Any

from harness.core.image_decode import check_images_bounded
from harness.core.images import CheckedImage, ImageRefused, user_message
from harness.core.status import EpisodeFailure, EpisodeFinished, Outcome, Status, outcome_of
from harness.episode.budget import Budget
from harness.grading.answer import has_closed_answer, strip_code_blocks
from harness.inputs.page_images import DocumentPages, stored_sizes, task_images
from harness.inputs.tasks import Task
from harness.models.base import Model, ModelError
from harness.records.compact import compact_messages
from harness.records.events import ModelCallEvent, ModelErrorEvent
from harness.records.image_store import ImageStore
from harness.records.trajectory import TrajectoryLog

__all__ = ["PROMPT", "PROMPT_VERSION", "RequestLimits", "protocol_of", "run_zero_shot"]

PROMPT_VERSION = "zero-shot-prompt-1.0"
PROMPT = """You are given {what} of a financial report as images, then a question about it.
Read the charts and the text in the images, reason step by step, and answer in one reply.
End your reply with the final answer in a tag: <answer>...</answer>{format}"""
_WHAT = {
    "full": "every page",
    "cropped": "the charts a question is about, each cut out of its page,",
    "bbox": "every page, with the charts the question is about boxed in magenta,",
}


@dataclass(frozen=True)
class RequestLimits:
    """What one request may carry so that every provider takes it: Anthropic's 100 images a request (each at most
    2000 px a side once more than 20 are sent), and Gemini's 20 MB inline request (base64 adds a third)."""

    max_images: int = 100
    many_images: int = 20
    max_side_when_many: int = 2000
    max_bytes: int = 14 * 1024 * 1024

    def refusal(self, images: list[CheckedImage]) -> str | None:
        """Why these images cannot go in one request; None when they can."""
        widest = max((max(image.ref.width, image.ref.height) for image in images), default=0)
        return self._refusal(len(images), widest, sum(image.ref.bytes for image in images))

    def stored_refusal(self, count: int, stored_bytes: int) -> str | None:
        """Why COUNT images made from pages of STORED_BYTES on disk cannot go in one request, before any page is
        read (their sides are checked once they are)."""
        return self._refusal(count, 0, stored_bytes)

    def _refusal(self, count: int, widest: int, total: int) -> str | None:
        if count > self.max_images:
            return f"{count} images > the {self.max_images} one request may carry"
        if count > self.many_images and widest > self.max_side_when_many:
            return (
                f"{count} images with a side of {widest} px: past {self.many_images} images a request, "
                f"each may have at most {self.max_side_when_many} px a side"
            )
        if total > self.max_bytes:
            return f"{total:,} bytes of images > the {self.max_bytes:,} one request may carry"
        return None


def protocol_of(mode: str, dpis: list[int]) -> dict[str, Any]:
    """What run.yaml's protocol records of a zero-shot run."""
    limits = RequestLimits()
    return {
        "input": mode,
        "page_dpi": dpis[0] if len(dpis) == 1 else dpis,
        "prompt": PROMPT_VERSION,
        "prompt_digest": "sha256:" + hashlib.sha256(PROMPT.encode()).hexdigest()[:16],
        "max_images": limits.max_images,
        "max_image_bytes": limits.max_bytes,
    }


def _messages(task: Task, mode: str, images: list[CheckedImage]) -> list[dict[str, Any]]:
    shape = f"\nThe answer's format: {task.answer_format}" if task.answer_format else ""
    system = PROMPT.format(what=_WHAT[mode], format=shape)
    return [{"role": "system", "content": system}, user_message(task.question, images)]


def run_zero_shot(
    task: Task,
    model: Model,
    budget: Budget,
    log: TrajectoryLog,
    store: ImageStore,
    documents: list[DocumentPages],
    mode: str,
) -> Outcome:
    """The episode: its images checked and stored, the request checked, one call, the reply as the outcome."""
    try:
        count, stored = stored_sizes(task, documents, mode)
        if (refusal := RequestLimits().stored_refusal(count, stored)) is not None:  # before any page is read
            raise EpisodeFinished(Status.CONTEXT_LIMIT, detail=f"the document does not fit one request: {refusal}")
        try:
            images = check_images_bounded(task_images(task, documents, mode))
        except ImageRefused as refused:  # a collection's page past the limits of one image
            raise EpisodeFinished(Status.CONTEXT_LIMIT, detail=f"a page image cannot be sent: {refused}") from None
        if (refusal := RequestLimits().refusal(images)) is not None:
            raise EpisodeFinished(Status.CONTEXT_LIMIT, detail=f"the document does not fit one request: {refusal}")
        messages = _messages(task, mode, images)
        budget.check_before_call(messages)
        for image in images:
            store.put(image)
        prose = strip_code_blocks(_query(model, messages, budget, log))
        if not has_closed_answer(prose):
            raise EpisodeFinished(Status.FORMAT_ERRORS, detail="the one reply has no closed <answer> tag")
        raise EpisodeFinished(Status.ANSWERED, submission=prose)
    except (EpisodeFinished, EpisodeFailure) as end:
        return outcome_of(end)


def _query(model: Model, messages: list[dict[str, Any]], budget: Budget, log: TrajectoryLog) -> str:
    started = time.monotonic()
    logged = compact_messages(messages, None)
    try:
        reply = model.query(messages, budget.seconds_left)
    except ModelError as error:
        budget.record_retries(error.attempts, error.queued_s)
        latency = round(time.monotonic() - started, 3)
        log.write(
            ModelErrorEvent(turn=1, messages=logged, error=str(error), attempts=error.attempts, latency_s=latency)
        )
        raise
    latency = round(time.monotonic() - started, 3)
    log.write(
        ModelCallEvent(turn=1, messages=logged, response=reply.record(), latency_s=latency, model_id=reply.model_id)
    )
    budget.record_retries(reply.attempts, reply.queued_s)
    budget.record_call(messages, reply.usage, reply.cost_usd, reply.model_id)
    return reply.text
