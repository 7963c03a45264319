"""The one query step every solver uses: the model's reply, logged and counted against the budget; a failed call
is logged before it ends the episode (as the time limit when the episode's time ran out during it)."""

from __future__ import annotations

import time

from harness.core.messages import Message
from harness.core.status import EpisodeFinished, Status
from harness.episode.budget import Budget
from harness.models.base import ContextOverflow, Model, ModelError, ModelReply
from harness.records.events import ModelCallEvent, ModelErrorEvent
from harness.records.trajectory import TrajectoryLog


def query_model(
    model: Model,
    messages: list[Message],
    budget: Budget,
    log: TrajectoryLog,
    logged: list[Message],
    stage: str | None = None,
) -> ModelReply:
    """One call with MESSAGES, the conversation so far (checked against the context budget first); LOGGED is what
    the trajectory records of them (the messages new since the last call, compacted); STAGE: the solver's stage the
    call serves, recorded with it."""
    budget.check_before_call(messages)
    turn = budget.turns + 1
    started = time.monotonic()
    try:
        reply = model.query(messages, budget.seconds_left)
    except ModelError as error:
        budget.record_retries(error.attempts, error.queued_s)
        latency = round(time.monotonic() - started, 3)
        log.write(
            ModelErrorEvent(turn=turn, messages=logged, error=str(error), attempts=error.attempts, latency_s=latency)
        )
        if budget.out_of_time() and not isinstance(error, ContextOverflow):
            raise EpisodeFinished(Status.TIME_LIMIT, detail=f"the model call ran out of time: {error}") from None
        raise
    latency = round(time.monotonic() - started, 3)
    log.write(
        ModelCallEvent(
            turn=turn,
            messages=logged,
            response=reply.record(),
            latency_s=latency,
            model_id=reply.model_id,
            stage=stage,
        )
    )
    budget.record_retries(reply.attempts, reply.queued_s)
    budget.record_call(messages, reply.usage, reply.cost_usd, reply.model_id)
    return reply
