"""The agent loop: query the model, run its one bash action, observe, until an answer or a limit."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ParamSpec

from harness.core.status import EndsEpisode, EpisodeEnd, Outcome, Status, outcome_of
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
    write_event,
)
from harness.records.trajectory import TrajectoryLog
from harness.sandboxes.base import ExecResult, Sandbox
from harness.sandboxes.command_size import too_long
from harness.sandboxes.tools import tools

P = ParamSpec("P")


@dataclass(frozen=True)
class LoopSettings:
    action_format: str
    command_timeout_s: float
    max_format_errors: int


def _ends_as_outcome(loop: Callable[P, None]) -> Callable[P, Outcome]:
    """Every way out of the loop, an `EpisodeEnd` or an error that ends the episode, as its `Outcome` (a bug of
    ours propagates, for the episode to record)."""

    @functools.wraps(loop)
    def run(*args: P.args, **kwargs: P.kwargs) -> Outcome:
        try:
            loop(*args, **kwargs)
        except (EpisodeEnd, EndsEpisode) as end:
            return outcome_of(end)
        raise AssertionError("the loop only ends by raising")  # pragma: no cover

    return run


@_ends_as_outcome
def run_agent(
    task: Task,
    model: Model,
    sandbox: Sandbox,
    budget: Budget,
    prompts: PromptSet,
    log: TrajectoryLog,
    settings: LoopSettings,
) -> None:
    """Run one episode's conversation until an answer, a budget, or a failure ends it."""
    system = prompts.render(
        "system",
        action_format=settings.action_format,
        max_turns=budget.max_turns,
        time_limit_s=int(budget.time_limit_s),
        command_timeout_s=int(settings.command_timeout_s),
        tools=", ".join(tool.command for tool in tools() if tool.command not in ("bash", "python3")),
    )
    question = prompts.render("task", question=task.question, answer_format=task.answer_format)
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": question}]
    logged = 0
    shown: ShownText | None = None
    format_errors = 0
    while True:
        budget.check_before_call(messages)
        started = time.monotonic()
        try:
            reply = model.query(messages, budget.seconds_left)
        except ModelError as error:
            budget.record_retries(error.attempts, error.queued_s)
            latency_s = round(time.monotonic() - started, 3)
            failed = ModelErrorEvent(
                turn=budget.turns + 1,
                messages=compact_messages(messages[logged:], shown),
                error=str(error),
                attempts=error.attempts,
                latency_s=latency_s,
            )
            write_event(log, failed)
            if budget.out_of_time() and not isinstance(error, ContextOverflow):
                raise EpisodeEnd(Status.TIME_LIMIT, detail=f"the model call ran out of time: {error}") from None
            raise
        call = ModelCallEvent(
            turn=budget.turns + 1,
            messages=compact_messages(messages[logged:], shown),
            response=reply.record(),
            latency_s=round(time.monotonic() - started, 3),
            model_id=reply.model_id,
        )
        write_event(log, call)
        budget.record_retries(reply.attempts, reply.queued_s)
        budget.record_call(messages, reply.usage, reply.cost_usd, reply.model_id)
        messages.append(reply.to_message())
        logged = len(messages)
        prose = strip_code_blocks(reply.text)
        if has_closed_answer(prose):
            raise EpisodeEnd(Status.ANSWERED, submission=prose)
        try:
            command = parse_action(reply, settings.action_format)
        except FormatError as problem:
            format_errors += 1
            text = prompts.render(
                "format_error",
                problem=str(problem),
                action_format=settings.action_format,
                **_budget_left(budget),
            )
            refused = FormatErrorEvent(turn=budget.turns, problem=str(problem), consecutive=format_errors, text=text)
            write_event(log, refused)
            if format_errors >= settings.max_format_errors:
                raise EpisodeEnd(Status.FORMAT_ERRORS, detail=str(problem)) from None
            messages.extend(_observation_messages(reply, text))
            shown = ShownText("format_error", refused.turn, text)
            continue
        format_errors = 0
        timeout = budget.command_timeout(settings.command_timeout_s)
        write_event(log, ActionEvent(turn=budget.turns, command=command, timeout_s=round(timeout, 3)))
        result = too_long(command) or sandbox.execute(command, timeout)
        observed = prompts.render("observation", **_result_fields(result), **_budget_left(budget))
        write_event(log, ObservationEvent(turn=budget.turns, **_result_fields(result), text=observed))
        budget.check_cancelled()
        if command_submits_answer(command) and has_closed_answer(result.stdout):
            raise EpisodeEnd(Status.ANSWERED, submission=result.stdout)
        if result.timed_out and budget.out_of_time():
            raise EpisodeEnd(Status.TIME_LIMIT, detail="a command ran until the episode's time was up")
        messages.extend(_observation_messages(reply, observed))
        shown = ShownText("observation", budget.turns, observed)


def _budget_left(budget: Budget) -> dict[str, int]:
    return {"turns_left": budget.turns_left, "seconds_left": int(budget.seconds_left)}


def _observation_messages(reply: ModelReply, text: str) -> list[dict[str, Any]]:
    """Tool results answer every tool call sent back (providers require it); otherwise one user message."""
    if not (calls := reply.replayable_calls):
        return [{"role": "user", "content": text}]
    return [{"role": "tool", "tool_call_id": call.id, "content": text} for call in calls]


OBSERVED = ("exit_code", "stdout", "stderr", "timed_out", "truncated", "raw_bytes", "duration_s")
"""What an observation event records of a command's result."""


def _result_fields(result: ExecResult) -> dict[str, Any]:
    return {name: getattr(result, name) for name in OBSERVED}
