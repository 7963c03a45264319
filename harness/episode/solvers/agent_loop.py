"""The bash agent's loop: query the model, run the one tool it called (bash; with vision, view_image), observe,
until an answer or a limit. `AgentLoop`'s steps are methods a variant overrides (mini-swe-agent's
way: one step replaced, the rest inherited); the `BashAgent` solver (bash_agent.py) runs it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.core.images import CheckedImage, ImageRefused, tool_message, user_message
from harness.core.messages import Message
from harness.core.status import EpisodeFailure, EpisodeFinished, Outcome, Status, outcome_of
from harness.episode.actions import FormatError
from harness.episode.budget import Budget
from harness.episode.query import query_model
from harness.episode.solvers.tools import AgentTool, BashTool, read_action
from harness.episode.vision import ImageViewer
from harness.grading.answer import command_submits_answer, has_closed_answer, strip_code_blocks
from harness.inputs.prompts import PromptSet
from harness.inputs.tasks import Task
from harness.models.base import Model, ModelReply
from harness.records.compact import ShownText, compact_messages
from harness.records.events import (
    ActionEvent,
    FormatErrorEvent,
    ImageViewEvent,
    ObservationEvent,
)
from harness.records.trajectory import TrajectoryLog
from harness.sandboxes.base import ExecResult, Sandbox
from harness.sandboxes.command_size import too_long
from harness.sandboxes.tools import tools


@dataclass(frozen=True)
class LoopSettings:
    action_format: str
    command_timeout_s: float
    max_format_errors: int
    vision: bool = False
    """The agent can look: a view_image call shows it an image of its sandbox (episode/vision.py)."""


class AgentLoop:
    """One episode's conversation: `run` takes `step`s (`query` the model, then run the tool it called: `execute` a
    command, `view` an image; or `refuse` a reply without one) until one raises `EpisodeFinished` or an error that
    ends the episode; `run` alone turns that into the `Outcome`. A variant overrides a step (examples/solvers/); the
    tools are the solver's (`BashAgent.tools`)."""

    def __init__(
        self,
        task: Task,
        model: Model,
        sandbox: Sandbox,
        budget: Budget,
        prompts: PromptSet,
        log: TrajectoryLog,
        settings: LoopSettings,
        viewer: ImageViewer | None = None,
        tools: Sequence[AgentTool] = (BashTool(),),
    ):
        self.model, self.sandbox, self.budget, self.prompts, self.log = model, sandbox, budget, prompts, log
        self.settings, self.viewer, self.tools = settings, viewer, tools
        system = self.system_prompt()
        question = prompts.render("task", question=task.question, answer_format=task.answer_format)
        self.messages: list[Message] = [
            {"role": "system", "content": system},
            {"role": "user", "content": question},
        ]
        self.logged = 0
        """Messages already in the trajectory: each model call logs only those after them."""
        self.shown: ShownText | None = None
        """The last observation or format-error text, which the next call's logged messages refer to."""
        self.format_errors = 0
        """Consecutive replies without a usable action."""
        self.final_reply: str | None = None
        """The last non-empty reply without an action: an episode ended by format errors ends with it as its
        final reply (what a judge protocol that `reads: final_reply` judges, with or without the answer tag)."""

    def run(self) -> Outcome:
        """Every way out of the loop, an `EpisodeFinished` or an error that ends the episode, as its `Outcome` (a bug
        of ours propagates, for the episode to record)."""
        try:
            while True:
                self.step()
        except (EpisodeFinished, EpisodeFailure) as end:
            return outcome_of(end)

    def step(self) -> None:
        """One turn: the model's reply, and its action run and observed (or its format refused)."""
        reply = self.query()
        prose = strip_code_blocks(reply.text)
        if has_closed_answer(prose):
            raise EpisodeFinished(Status.ANSWERED, submission=prose)
        try:
            tool, argument = read_action(reply, self.settings.action_format, self.tools)
        except FormatError as problem:
            self.refuse(reply, problem)
            return
        self.format_errors = 0
        tool.run(self, reply, argument)

    def query(self) -> ModelReply:
        """The model's next reply, through the one query step (episode/query.py)."""
        logged = compact_messages(self.messages[self.logged :], self.shown)
        reply = query_model(self.model, self.messages, self.budget, self.log, logged)
        self.messages.append(reply.to_message())
        self.logged = len(self.messages)
        return reply

    def refuse(self, reply: ModelReply, problem: FormatError) -> None:
        """A reply without a usable action: the model is told why, until too many in a row end the episode."""
        self.format_errors += 1
        self.final_reply = strip_code_blocks(reply.text).strip() or self.final_reply
        text = self.prompts.render(
            "format_error",
            problem=str(problem),
            action_format=self.settings.action_format,
            **_budget_left(self.budget),
        )
        turn = self.budget.turns
        self.log.write(FormatErrorEvent(turn=turn, problem=str(problem), consecutive=self.format_errors, text=text))
        if self.format_errors >= self.settings.max_format_errors:
            raise EpisodeFinished(Status.FORMAT_ERRORS, submission=self.final_reply, detail=str(problem)) from None
        self.messages.extend(_observation_messages(reply, text))
        self.shown = ShownText("format_error", turn, text)

    def execute(self, reply: ModelReply, command: str) -> None:
        """Run the action in the sandbox and show the model what it did, unless it submitted or used up the time."""
        budget = self.budget
        timeout = budget.command_timeout(self.settings.command_timeout_s)
        self.log.write(ActionEvent(turn=budget.turns, command=command, timeout_s=round(timeout, 3)))
        result = too_long(command) or self.sandbox.execute(command, timeout)
        observed = self.prompts.render("observation", **_result_fields(result), **_budget_left(budget))
        self.log.write(observation_event(budget.turns, result, observed))
        budget.check_cancelled()
        if command_submits_answer(command) and has_closed_answer(result.stdout):
            raise EpisodeFinished(Status.ANSWERED, submission=result.stdout)
        if result.timed_out and budget.out_of_time():
            raise EpisodeFinished(Status.TIME_LIMIT, detail="a command ran until the episode's time was up")
        self.messages.extend(_observation_messages(reply, observed))
        self.shown = ShownText("observation", budget.turns, observed)

    def view(self, reply: ModelReply, path: str) -> None:
        """Show the agent the image it asked for, or tell it why not (its error: a turn spent, no retry)."""
        assert self.viewer is not None, "the view_image tool is offered with a viewer"
        budget = self.budget
        images: list[CheckedImage] = []
        try:
            images.append(self.viewer.view(path, budget.seconds_left))
            ref = images[0].ref
            shown = ShownImage(f"{path}: a {ref.width}x{ref.height} {ref.media_type} image of {ref.bytes:,} bytes")
            problem = None
        except ImageRefused as refused:
            shown, problem = ShownImage(f"view_image: {refused}", failed=True), str(refused)
        text = self.prompts.render("observation", **shown.result_fields(), **_budget_left(budget))
        image = images[0].ref if images else None
        self.log.write(ImageViewEvent(turn=budget.turns, path=path, image=image, problem=problem, text=text))
        budget.check_cancelled()
        self.messages.extend(_observation_messages(reply, text, images))
        self.shown = ShownText("image_view", budget.turns, text)

    def system_prompt(self) -> str:
        """The system prompt: the prompt set's `system` template with the run's budgets and tools."""
        return self.prompts.render(
            "system",
            action_format=self.settings.action_format,
            max_turns=self.budget.max_turns,
            time_limit_s=int(self.budget.time_limit_s),
            command_timeout_s=int(self.settings.command_timeout_s),
            tools=", ".join(tool.command for tool in tools() if tool.command not in ("bash", "python3")),
        )


def _budget_left(budget: Budget) -> dict[str, int]:
    return {"turns_left": budget.turns_left, "seconds_left": int(budget.seconds_left)}


def _observation_messages(reply: ModelReply, text: str, images: list[CheckedImage] | None = None) -> list[Message]:
    """Tool results answer every tool call sent back (providers require it); otherwise one user message. Images
    follow the text (the provider layer moves them where each API takes a tool's image)."""
    if not (calls := reply.replayable_calls):
        return [user_message(text, images or [])]
    return [tool_message(call.id, text, images or []) for call in calls]


@dataclass(frozen=True)
class ShownImage:
    """A view_image call's result, shown through the observation template as a command's would be."""

    said: str
    """The one line the tool's result says: what was shown, or why it was refused."""
    failed: bool = False

    def result_fields(self) -> dict[str, Any]:
        stdout, stderr = ("", self.said) if self.failed else (self.said, "")
        return {
            "exit_code": 1 if self.failed else 0,
            "stdout": stdout,
            "stderr": stderr,
            "timed_out": False,
            "truncated": False,
            "raw_bytes": len(self.said.encode()),
            "duration_s": 0.0,
        }


_OBSERVED = ("exit_code", "stdout", "stderr", "timed_out", "truncated", "raw_bytes", "duration_s")
"""What an observation event records of a command's result."""


def _result_fields(result: ExecResult) -> dict[str, Any]:
    return {name: getattr(result, name) for name in _OBSERVED}


def observation_event(turn: int, result: ExecResult, text: str) -> ObservationEvent:
    """What the trajectory records of a command the sandbox ran, TEXT being what the model was shown of it."""
    return ObservationEvent(
        turn=turn,
        exit_code=result.exit_code,
        stdout=result.stdout,
        stderr=result.stderr,
        timed_out=result.timed_out,
        truncated=result.truncated,
        raw_bytes=result.raw_bytes,
        duration_s=result.duration_s,
        text=text,
    )
