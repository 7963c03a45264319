"""One episode end to end: sandbox up, agent loop, grade, trajectory closed, results row returned."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from harness.agent import LoopOutcome, LoopSettings, run_agent
from harness.budget import Budget
from harness.config import RunConfig
from harness.grading import Grade, get_grader
from harness.models import Model
from harness.outcome import Status
from harness.prompts import PromptSet
from harness.sandboxes import Sandbox, SandboxError
from harness.tasks import Task
from harness.trajectory import SCHEMA_VERSION, TrajectoryWriter, safe_name, trajectory_path

SandboxFactory = Callable[[Task, str], Sandbox]


@dataclass(frozen=True)
class EpisodeResult:
    """One row of results.jsonl."""

    task_id: str
    domain: str
    status: str
    answer: str | None
    """The answer tag's content, None when there was none."""
    verdict: str
    verdict_strict: str
    verdict_lenient: str
    reasons: list[str]
    correct_at_tolerance: bool | None
    parsed_value: str | None
    unit: str | None
    """The unit read with the number, normalised (`pp`, `%`, `billion`); "" for none, None when unread."""
    turns: int
    duration_s: float
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    reasoning_tokens: int
    cost_usd: float | None
    """Sum of the calls' known prices; None when no price was known."""
    detail: str | None
    """Why a limit or failure ended the episode."""
    grader_version: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class EpisodeContext:
    config: RunConfig
    prompts: PromptSet
    make_model: Callable[[Task], Model]
    make_sandbox: SandboxFactory
    run_dir: Path
    run_facts: dict[str, Any]
    """Recorded in every episode_start: config hash, versions."""
    collection_hashes: dict[str, str]
    cancel: threading.Event
    """Set on Ctrl-C: running episodes end as `cancelled` at their next step."""


def episode_name(task: Task) -> str:
    return safe_name(f"{task.domain}-{task.id}")


def run_episode(task: Task, context: EpisodeContext) -> EpisodeResult:
    config = context.config
    log = TrajectoryWriter(trajectory_path(context.run_dir, task.domain, task.id))
    started = time.monotonic()
    model = context.make_model(task)
    sandbox = context.make_sandbox(task, episode_name(task))
    window = config.context_window or model.context_window
    # Provider models bring their tokenizer; the others are estimated (they have no context window anyway).
    counter = getattr(model, "count_tokens", None)
    budget = Budget(config.max_turns, config.time_limit, window, config.output_reserve, context.cancel, counter)
    settings = LoopSettings(config.action_format, config.command_timeout, config.max_format_errors)
    try:
        sandbox.start()
        log.write(
            "episode_start",
            schema_version=SCHEMA_VERSION,
            task_id=task.id,
            domain=task.domain,
            task=_task_record(task),
            model=model.name,
            sandbox=sandbox.describe(),
            collection_hash=context.collection_hashes.get(task.domain),
            **context.run_facts,
        )
        outcome = run_agent(task, model, sandbox, budget, context.prompts, log, settings)
    except (SandboxError, OSError) as error:  # the sandbox could not start or stop
        outcome = LoopOutcome(Status.SANDBOX_ERROR, None, str(error))
    except BaseException as error:  # Ctrl-C or a bug: the trajectory still gets its end, then it propagates
        outcome = LoopOutcome(Status.CANCELLED, None, f"interrupted: {type(error).__name__}: {error}")
        raise
    finally:
        sandbox.close()
        result = _result(task, outcome, budget, time.monotonic() - started)
        log.write("episode_end", **result.to_dict(), submission=_graded_text(outcome))
        log.close()
    return result


def _task_record(task: Task) -> dict[str, Any]:
    """What regrading needs from the logs alone (the trajectory is a host file; it never enters the sandbox)."""
    return {
        "question": task.question,
        "answer": task.answer,
        "answer_format": task.answer_format,
        "grader": task.grader,
        "rel_tol": task.rel_tol,
    }


def _graded_text(outcome: LoopOutcome) -> str | None:
    """The submission the grader reads: only answered episodes have one."""
    return outcome.submission if outcome.status is Status.ANSWERED else None


def _result(task: Task, outcome: LoopOutcome, budget: Budget, duration_s: float) -> EpisodeResult:
    grade: Grade = get_grader(task.grader).grade(_graded_text(outcome), task.answer, task.answer_format, task.rel_tol)
    return EpisodeResult(
        task_id=task.id,
        domain=task.domain,
        status=outcome.status.value,
        **grade_fields(grade),
        turns=budget.turns,
        duration_s=round(duration_s, 3),
        input_tokens=budget.input_tokens,
        output_tokens=budget.output_tokens,
        cached_tokens=budget.cached_tokens,
        reasoning_tokens=budget.reasoning_tokens,
        cost_usd=budget.cost_usd,
        detail=outcome.detail,
    )


def grade_fields(grade: Grade) -> dict[str, Any]:
    """The results-row fields that come from the grade (shared with re-grading)."""
    return {
        "answer": grade.tag_content,
        "verdict": grade.verdict.value,
        "verdict_strict": grade.verdict_strict.value,
        "verdict_lenient": grade.verdict_lenient.value,
        "reasons": grade.reasons,
        "correct_at_tolerance": grade.correct_at_tolerance,
        "parsed_value": grade.parsed_value,
        "unit": grade.unit,
        "grader_version": grade.grader_version,
    }
