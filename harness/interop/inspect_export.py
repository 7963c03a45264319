"""A run of ours as an inspect_ai evaluation log (`EvalLog`), through inspect_ai's own pydantic models.

One sample per finished episode: the question as input, the gold as target, the conversation as inspect's
chat messages (tool calls and tool results as inspect represents them), the graded submission as output,
our verdict as the score `harness`, the budget that ended it as the sample's limit, tokens and cost as
model usage, the agent's own time as working time, an infrastructure failure as the sample's error.
What inspect has no place for is metadata under the key `harness` (on the sample, on each message, on the
log), so `import inspect` gives back the same rows (inspect_import.py).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from inspect_ai._util.error import EvalError
from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalMetric,
    EvalPlan,
    EvalPlanStep,
    EvalResults,
    EvalSample,
    EvalSampleLimit,
    EvalScore,
    EvalSpec,
    EvalStats,
)
from inspect_ai.model import ModelOutput, ModelUsage
from inspect_ai.scorer import CORRECT, INCORRECT, Score

from harness.core.status import INFRASTRUCTURE_FAILURES, Status
from harness.grading.record import Verdict
from harness.interop.imported import recorded_opens
from harness.interop.inspect_messages import KEY, inspect_conversation
from harness.records.episode_row import GRADE_FIELDS
from harness.records.events import EpisodeEndEvent, EpisodeStartEvent
from harness.records.image_store import ImageStore
from harness.records.reading import LoggedEvent
from harness.records.results import LEFT_OUT_WHEN_NONE, ROW_FIELDS

_SCORER = "harness"
_EVIDENCE_FIELDS = (
    "evidence_recall",
    "evidence_reached",
    "files_touched",
    "evidence_method",
    "failure_mode",
    "refused_network",
    "refused_writes",
)
"""Row fields kept at the top of the sample's metadata, where analysis tools look."""
_GRADE_METADATA = tuple(name for name in GRADE_FIELDS if name != "judge_cost_usd")
"""The grade's fields (the row's, as `records/episode_row.py` sets them) on the score; the judges' cost is usage."""
INSPECT_OWN = frozenset(
    {
        "epoch",  # the sample's epoch
        "input_tokens",  # the sample's model usage, as its input, output, cache-read and reasoning tokens
        "output_tokens",
        "cached_tokens",
        "reasoning_tokens",
        "duration_s",  # its working time
        "model_ids",  # each assistant message's model
        "answer",  # the score's answer
        *_GRADE_METADATA,  # the score's metadata
        *_EVIDENCE_FIELDS,  # the top of the sample's metadata
    }
)
"""The row fields inspect's own fields hold. Every other field of the row goes under the sample's metadata key
`harness`, so a field added to `ResultRow` is carried there and back (inspect_import.py) with no list to
extend. The import reads back the usage, time and models from these; the grade and diagnostics it computes again."""
_LIMITS: dict[Status, tuple[str, str | None]] = {
    Status.TURN_LIMIT: ("turn", "max_turns"),
    Status.TIME_LIMIT: ("working", "time_limit"),
    Status.CONTEXT_LIMIT: ("context", "context_window"),
    Status.COST_LIMIT: ("cost", "max_episode_cost"),
    Status.FORMAT_ERRORS: ("custom", "max_format_errors"),
    Status.SANDBOX_LIMIT: ("custom", "memory_mb"),
    Status.CANCELLED: ("operator", None),
}
"""Our budget statuses as inspect's sample limit types, and the config setting that gives the limit."""


def export_log(
    run_id: str,
    created: str,
    config: dict[str, Any],
    episodes: list[list[LoggedEvent]],
    selected: int = 0,
    label: str | None = None,
    images: ImageStore | None = None,
) -> EvalLog:
    """The finished episodes of run RUN_ID (run.yaml's `created` and `config`) as one evaluation log; a run
    with fewer finished episodes than its SELECTED tasks times its epochs is a `cancelled` evaluation, as inspect
    calls one. As inspect counts them, the dataset's samples are the tasks, each run once per epoch. LABEL, when
    it is not the model's name (a sweep's arms of one model), names the evaluation apart. The images the agent
    was shown come from IMAGES (the run folder's), as inspect's ContentImage."""
    model = str(config.get("model") or "unknown")
    qualify = _duplicate_ids(episodes)
    samples = [_sample(events, config, model, qualify, images) for events in episodes]
    sample_ids = list(dict.fromkeys(sample.id for sample in samples))
    epochs = max([int(config.get("epochs") or 1), *(sample.epoch for sample in samples)])
    planned = max(selected, len(sample_ids)) * epochs
    correct = sum(_verdict(sample) == "correct" for sample in samples)
    graded = sum(_verdict(sample) not in (None, "judge_error") for sample in samples)
    usage: dict[str, ModelUsage] = {}
    for sample in samples:
        for name, used in sample.model_usage.items():
            usage[name] = usage[name] + used if name in usage else used
    domains = sorted({_start(events).domain for events in episodes})
    times = [logged.time for events in episodes for logged in (events[0], events[-1]) if logged.time is not None]
    task = f"harness/{','.join(domains) or 'none'}"
    return EvalLog(
        status="success" if len(samples) >= planned else "cancelled",
        eval=EvalSpec(
            run_id=run_id,
            created=created,
            task=task,
            task_display_name=f"{task} ({label})" if label and label != model else None,
            dataset=EvalDataset(name=",".join(domains), samples=max(selected, len(sample_ids)), sample_ids=sample_ids),
            model=model,
            config=EvalConfig(
                epochs=epochs,
                turn_limit=config.get("max_turns"),
                working_limit=_int(config.get("time_limit")),
            ),
            packages={"harness": str(_start(episodes[0]).harness_version or "")} if episodes else {},
            metadata={KEY: {"run_id": run_id, "config": config}},
        ),
        plan=EvalPlan(
            steps=[EvalPlanStep(solver="harness/agent_loop", params={"action_format": config.get("action_format")})]
        ),
        results=EvalResults(
            total_samples=max(planned, len(samples)),
            completed_samples=len(samples),
            scores=[
                EvalScore(
                    name=_SCORER,
                    scorer=_SCORER,
                    scored_samples=len(samples),
                    metrics={"accuracy": EvalMetric(name="accuracy", value=correct / graded if graded else 0.0)},
                )
            ],
        ),
        stats=EvalStats(
            started_at=_iso(min(times)) if times else "",
            completed_at=_iso(max(times)) if times else "",
            model_usage=usage,
        ),
        samples=samples,
    )


def _duplicate_ids(episodes: list[list[LoggedEvent]]) -> bool:
    """Task ids are unique per domain: when two domains share one, sample ids are `domain/id`."""
    keys = [(_start(events).task_id, _end(events).row.epoch) for events in episodes]
    return len(set(keys)) < len(keys)


def _start(events: list[LoggedEvent]) -> EpisodeStartEvent:
    start = events[0].event
    assert isinstance(start, EpisodeStartEvent), "a finished episode's log starts with its episode_start"
    return start


def _end(events: list[LoggedEvent]) -> EpisodeEndEvent:
    end = events[-1].event
    assert isinstance(end, EpisodeEndEvent), "a finished episode's log ends with its row"
    return end


def _sample(
    events: list[LoggedEvent], config: dict[str, Any], model: str, qualify: bool, images: ImageStore | None
) -> EvalSample:
    start, end = dict(events[0].line), dict(events[-1].line)  # the episode's start and row, copied as logged
    status = Status(end["status"])
    task = start["task"]
    submission = end.get("submission")
    total_time = end["duration_s"] + end.get("queue_s", 0.0) + end.get("sandbox_start_s", 0.0)
    return EvalSample(
        id=f"{start['domain']}/{start['task_id']}" if qualify else start["task_id"],
        epoch=int(end.get("epoch", 1)),
        input=task["question"],
        target=task["answer"],
        messages=inspect_conversation(events, images),
        output=ModelOutput.from_content(model, submission or "") if submission else ModelOutput(model=model),
        scores={_SCORER: _score(end)},
        metadata={name: end.get(name) for name in _EVIDENCE_FIELDS}
        | {
            KEY: {name: end[name] for name in ROW_FIELDS if name in end and name not in INSPECT_OWN}
            | {"task": task, "opens": recorded_opens(events), "submission": submission}
        },
        model_usage={model: _usage(end)} if _has_usage(end) else {},
        started_at=_iso(start["time"]),
        completed_at=_iso(end["time"]),
        total_time=round(total_time, 3),
        working_time=end["duration_s"],
        error=EvalError(
            message=f"{status}: {end.get('detail') or ''}",
            traceback=end.get("detail") or "",
            traceback_ansi=end.get("detail") or "",
        )
        if status in INFRASTRUCTURE_FAILURES
        else None,
        limit=_limit(status, end.get("detail"), config),
    )


def _score(end: dict[str, Any]) -> Score:
    """Our grade as inspect's score: the `score` grader's number as the value, else C or I; a grade the judges
    could not give (`judge_error`) is inspect's unscored score, which its metrics leave out, never I."""
    reasons = ", ".join(end.get("reasons") or []) or "no reason codes"
    explanation = f"{end['verdict']} ({reasons}); strict {end['verdict_strict']}, lenient {end['verdict_lenient']}"
    metadata = {
        name: end.get(name)
        for name in _GRADE_METADATA
        if name not in LEFT_OUT_WHEN_NONE or end.get(name) is not None  # the score grader's, when set
    }
    if end["verdict"] == Verdict.JUDGE_ERROR.value:
        return Score.unscored(
            reason=Verdict.JUDGE_ERROR.value, answer=end.get("answer"), explanation=explanation, metadata=metadata
        )
    score = end.get("score")
    value = score if isinstance(score, (int, float)) else CORRECT if end["verdict"] == "correct" else INCORRECT
    return Score(value=value, answer=end.get("answer"), explanation=explanation, metadata=metadata)


def _verdict(sample: EvalSample) -> str | None:
    """The verdict our score carries in its metadata; None for a sample without it."""
    score = (sample.scores or {}).get(_SCORER)
    return None if score is None or score.metadata is None else score.metadata.get("verdict")


def _limit(status: Status, detail: str | None, config: dict[str, Any]) -> EvalSampleLimit | None:
    if status not in _LIMITS:
        return None
    kind, setting = _LIMITS[status]
    value = config.get(setting) if setting else None
    return EvalSampleLimit(type=kind, limit=float(value) if value is not None else 0.0, reason=detail)  # type: ignore[arg-type]


def _has_usage(end: dict[str, Any]) -> bool:
    return bool(end["input_tokens"] or end["output_tokens"] or end.get("cost_usd") is not None)


def _usage(end: dict[str, Any]) -> ModelUsage:
    return ModelUsage(
        input_tokens=end["input_tokens"],
        output_tokens=end["output_tokens"],
        total_tokens=end["input_tokens"] + end["output_tokens"],
        input_tokens_cache_read=end["cached_tokens"] or None,
        reasoning_tokens=end["reasoning_tokens"] or None,
        total_cost=end.get("cost_usd"),
    )


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat()


def _int(value: Any) -> int | None:
    return int(value) if value is not None else None
