"""`python -m harness annotate RUN --judge MODEL[,MODEL...]`: the five failure modes of every wrong episode,
from a judge panel, into RUN/failure_labels.jsonl (results.jsonl is never changed)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from harness.diagnostics.condensed import condense
from harness.diagnostics.mode_judge import EpisodeCase, label_episode
from harness.diagnostics.mode_prompt import PROMPT_DIGEST
from harness.records.events import EpisodeStartEvent
from harness.records.failure_labels import JUDGE_ERROR, LABELLED, EpisodeLabels, LabelJudgeCall, write_labels
from harness.records.reading import is_finished, read_events
from harness.records.results import ResultRow
from harness.records.run_folder import RunFolder
from harness.run.judging.judges import JudgeOptions

TRAJECTORY_CHARS = 60_000
"""The condensed trajectory's size by default (about 15,000 tokens), well inside any judge's context."""


def _wrong_episodes(folder: RunFolder) -> list[ResultRow]:
    """The latest row of every episode that finished wrong by the agent's doing (not an infrastructure failure)."""
    rows = folder.latest_rows().values()
    return [row for row in rows if not row.is_correct() and not row.needs_rerun and not row.needs_regrade]


def annotate_run(run_dir: Path, options: JudgeOptions, trajectory_chars: int, console: Console) -> list[EpisodeLabels]:
    folder = RunFolder(run_dir)
    record = folder.read_record()
    aliases = record.config.model_aliases or {}
    panel = options.panel(folder.path.parent, "annotate asks a judge panel", aliases)
    labels: list[EpisodeLabels] = []
    unlogged = 0
    for row in _wrong_episodes(folder):
        events = read_events(folder.trajectory_path(row.domain, row.task_id, row.epoch))
        start = events[0].event if events else None
        if not isinstance(start, EpisodeStartEvent) or not is_finished(events):
            unlogged += 1
            continue
        task = start.task
        outcome = (
            f"status {row.status.value}, verdict {row.verdict.value}, answer "
            f"{row.answer!r}, {row.turns} turns" + (f" ({row.detail})" if row.detail else "")
        )
        trajectory = condense([logged.event for logged in events], trajectory_chars)
        case = EpisodeCase(task.question or "", task.answer, outcome, trajectory, row.turns)
        found = label_episode(panel, case)
        labels.append(
            EpisodeLabels(
                domain=row.domain,
                task_id=row.task_id,
                epoch=row.epoch,
                status=JUDGE_ERROR if found.modes is None else LABELLED,
                modes=found.modes or {},
                judges=[LabelJudgeCall.model_validate(judge) for judge in found.judges],
                prompt=PROMPT_DIGEST,
                rule_mode=row.failure_mode,
                cost_usd=found.cost_usd,
                trajectory_chars=len(trajectory),
                calls={"made": found.made, "cached": found.cached},
            )
        )
    write_labels(folder.failure_labels_path, labels)
    errors = sum(label.status == JUDGE_ERROR for label in labels)
    made = sum(label.calls["made"] for label in labels)
    cached = sum(label.calls["cached"] for label in labels)
    costs = [label.cost_usd for label in labels if label.cost_usd is not None]
    cost = f"${sum(costs):.4f}" if costs else "unknown"
    console.print(
        f"labelled {len(labels) - errors} wrong episodes, {errors} judge errors"
        + (f", {unlogged} without a finished trajectory" if unlogged else "")
        + f"; judge calls: {made} made, {cached} from the cache; judge cost {cost} (apart from the run's); "
        f"wrote {folder.failure_labels_path}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    return labels
