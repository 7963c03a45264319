"""The agent loop: query the model, run its one bash action, observe, until an answer or a limit."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from harness.core.status import EpisodeFailure, EpisodeFinished, Outcome, Status, outcome_of
from harness.episode.actions import FormatError, parse_action
from harness.episode.budget import Budget
from harness.grading.answer import command_submits_answer, has_closed_answer, strip_code_blocks
from harness.inputs.prompts import PromptSet
from harness.inputs.tasks import Task
from harness.models.base import ContextOverflow, Model, ModelError, ModelReply
from harness.records.compact import ShownText, compact_messages
from harness.records.events import (
    ActionEvent,
    FormatErrorEvent,
    ModelCallEvent,
    ModelErrorEvent,
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


def run_agent(
    task: Task,
    model: Model,
    sandbox: Sandbox,
    budget: Budget,
    prompts: PromptSet,
    log: TrajectoryLog,
    settings: LoopSettings,
) -> Outcome:
    """Run one episode's conversation until an answer, a budget, or a failure ends it."""
    return _AgentLoop(task, model, sandbox, budget, prompts, log, settings).run()


class _AgentLoop:
    """One episode's conversation: `run` takes `step`s (`query` the model, then `execute` its action) until one
    raises `EpisodeFinished` or an error that ends the episode; `run` alone turns that into the `Outcome`."""

    def __init__(
        self,
        task: Task,
        model: Model,
        sandbox: Sandbox,
        budget: Budget,
        prompts: PromptSet,
        log: TrajectoryLog,
        settings: LoopSettings,
    ):
        self.model, self.sandbox, self.budget, self.prompts, self.log = model, sandbox, budget, prompts, log
        self.settings = settings
        system = self._system_prompt()
        question = prompts.render("task", question=task.question, answer_format=task.answer_format)
        self.messages: list[dict[str, Any]] = [
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
            command = parse_action(reply, self.settings.action_format)
        except FormatError as problem:
            self.refuse(reply, problem)
            return
        self.format_errors = 0
        self.execute(reply, command)

    def query(self) -> ModelReply:
        """The model's next reply, logged and counted; a failed call is logged before it ends the episode."""
        budget = self.budget
        budget.check_before_call(self.messages)
        started = time.monotonic()
        try:
            reply = self.model.query(self.messages, budget.seconds_left)
        except ModelError as error:
            budget.record_retries(error.attempts, error.queued_s)
            failed = ModelErrorEvent(
                turn=budget.turns + 1,
                messages=compact_messages(self.messages[self.logged :], self.shown),
                error=str(error),
                attempts=error.attempts,
                latency_s=round(time.monotonic() - started, 3),
            )
            self.log.write(failed)
            if budget.out_of_time() and not isinstance(error, ContextOverflow):
                raise EpisodeFinished(Status.TIME_LIMIT, detail=f"the model call ran out of time: {error}") from None
            raise
        call = ModelCallEvent(
            turn=budget.turns + 1,
            messages=compact_messages(self.messages[self.logged :], self.shown),
            response=reply.record(),
            latency_s=round(time.monotonic() - started, 3),
            model_id=reply.model_id,
        )
        self.log.write(call)
        budget.record_retries(reply.attempts, reply.queued_s)
        budget.record_call(self.messages, reply.usage, reply.cost_usd, reply.model_id)
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
        self.log.write(ObservationEvent(turn=budget.turns, **_result_fields(result), text=observed))
        budget.check_cancelled()
        if command_submits_answer(command) and has_closed_answer(result.stdout):
            raise EpisodeFinished(Status.ANSWERED, submission=result.stdout)
        if result.timed_out and budget.out_of_time():
            raise EpisodeFinished(Status.TIME_LIMIT, detail="a command ran until the episode's time was up")
        self.messages.extend(_observation_messages(reply, observed))
        self.shown = ShownText("observation", budget.turns, observed)

    def _system_prompt(self) -> str:
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


def _observation_messages(reply: ModelReply, text: str) -> list[dict[str, Any]]:
    """Tool results answer every tool call sent back (providers require it); otherwise one user message."""
    if not (calls := reply.replayable_calls):
        return [{"role": "user", "content": text}]
    return [{"role": "tool", "tool_call_id": call.id, "content": text} for call in calls]


_OBSERVED = ("exit_code", "stdout", "stderr", "timed_out", "truncated", "raw_bytes", "duration_s")
"""What an observation event records of a command's result."""


def _result_fields(result: ExecResult) -> dict[str, Any]:
    return {name: getattr(result, name) for name in _OBSERVED}
