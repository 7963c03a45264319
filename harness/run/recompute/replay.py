"""`python -m harness replay PATH`: re-grade logged episodes, or re-execute them and compare.

PATH is one trajectory file or a run folder. Re-grading reads the logs alone (the submission and the
task's gold are in each trajectory). Re-execution runs every episode again in a fresh sandbox with the
`replay:` model feeding the logged replies, then compares each observation and the final verdict.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console

from harness.core.errors import InputError
from harness.core.json_text import json_text
from harness.core.status import Status
from harness.diagnostics.failure_modes import failure_mode
from harness.grading import JUDGED, GoldSpec, Verdict, grade
from harness.grading.judge import JudgePanel
from harness.grading.judge_cache import JudgeCache
from harness.grading.judge_protocol import load_protocol
from harness.inputs.config import RunConfig, setting_names
from harness.inputs.config_sources import build_config
from harness.records.episode_row import grade_fields
from harness.records.events import (
    EpisodeEndEvent,
    EpisodeStartEvent,
    Event,
    ImageViewEvent,
    ObservationEvent,
    SandboxReadyEvent,
)
from harness.records.reading import LoggedEvent, read_events, row_as_logged
from harness.records.results import MODE_FIELDS
from harness.records.run_folder import RunFolder, find_run_folder
from harness.records.run_record import RunRecord
from harness.run.judging.judges import litellm_judges
from harness.run.planning.plan import plan_run
from harness.run.runner import execute_run

_OBSERVED = ("exit_code", "stdout", "stderr", "timed_out")
_REPLAYS = "replays"
"""A re-execution's run folder goes under the replayed run's `replays/`: never beside the runs, where a glob of
them (`report results/sweep1/*/`) would take it for another run of the same label."""


@dataclass(frozen=True)
class _LoggedEpisode:
    path: Path
    start: EpisodeStartEvent
    end: EpisodeEndEvent
    events: list[Event]
    """Every event in order, the two ends included (only the ends where the rest is not needed)."""
    logged_row: dict[str, Any]
    """The end's row with the fields it was logged with (records/reading.py `row_as_logged`)."""

    @classmethod
    def of(cls, path: Path, events: list[LoggedEvent]) -> _LoggedEpisode | None:
        """The episode a finished log holds; None while unfinished (it cannot be replayed)."""
        start = events[0].event if events else None
        if not isinstance(start, EpisodeStartEvent):
            raise InputError(f"{path}:1: not a trajectory (no episode_start)")
        end = events[-1].event
        if not isinstance(end, EpisodeEndEvent):
            return None
        return cls(path, start, end, [logged.event for logged in events], row_as_logged(events[-1]))

    @property
    def key(self) -> tuple[str, str]:
        return self.start.domain, self.start.task_id

    @property
    def epoch(self) -> int:
        return int(self.start.epoch or 1)

    @property
    def name(self) -> str:
        """domain/task, with `epoch k` after it for k > 1."""
        return f"{self.key[0]}/{self.key[1]}" + ("" if self.epoch == 1 else f" epoch {self.epoch}")

    def observations(self) -> list[tuple[Any, ...]]:
        return [
            tuple(getattr(event, name) for name in _OBSERVED)
            for event in self.events
            if isinstance(event, ObservationEvent)
        ]

    def image_views(self) -> list[str]:
        """What each view_image call showed: the image's hash, or why it was refused."""
        return [
            event.image.sha256 if event.image is not None else f"refused: {event.problem}"
            for event in self.events
            if isinstance(event, ImageViewEvent)
        ]

    @property
    def sandbox_started(self) -> bool:
        return any(isinstance(event, SandboxReadyEvent) for event in self.events)


def _logged_files(path: Path) -> tuple[RunFolder, list[Path]]:
    """The run folder holding PATH, and the trajectory files to read (PATH itself, or the folder's)."""
    files = [path] if path.is_file() else RunFolder(path).trajectories()
    if not files:
        raise InputError(f"{path}: no trajectories (expected a .jsonl file or a run folder with episodes/)")
    return find_run_folder(path), files


def _finished_episode(file: Path) -> _LoggedEpisode | None:
    """One logged episode (None while unfinished: it cannot be replayed); read alone, so memory holds one."""
    return _LoggedEpisode.of(file, read_events(file))


def regrade(path: Path, console: Console) -> None:
    """Grade every logged submission again with today's graders; write results.regraded.jsonl as it goes,
    one episode in memory at a time."""
    folder, files = _logged_files(path)
    changed = graded_count = 0
    judge: JudgePanel | None = None
    judge_calls: list[dict[str, Any]] = []
    target = folder.regraded_path
    partial = target.with_name(target.name + ".partial")
    with _replacing(target, partial) as out:
        for file in files:
            episode = _finished_episode(file)
            if episode is None:
                continue
            task, end, logged_row = episode.start.task, episode.end, episode.logged_row
            if task.grader in JUDGED and judge is None:
                judge = _recorded_judge(folder)
            gold = GoldSpec(task.answer, task.answer_format, task.rel_tol, task.abs_tol, task.question or "")
            graded = grade(task.grader, end.submission, gold, judge, judge_calls.append)
            row = logged_row | grade_fields(graded)
            if "failure_mode" in row:  # logged with an evidence record: the mode follows the new verdict
                correct = row["verdict"] == Verdict.CORRECT
                row["failure_mode"] = failure_mode(Status(row["status"]), correct, row.get("evidence_recall"))
            if any(row[key] != logged_row[key] for key in MODE_FIELDS.values()):
                changed += 1
                console.print(
                    f"changed {episode.name}: {end.row.verdict.value} -> {Verdict(row['verdict']).value}",
                    soft_wrap=True,
                    markup=False,
                )
            out.write(json_text(row) + "\n")
            graded_count += 1
    console.print(
        f"regraded {graded_count} episodes: {changed} verdicts changed; wrote {target}", soft_wrap=True, markup=False
    )
    if judge_calls:
        paid = sum(not call["cached"] for call in judge_calls)
        console.print(f"judge: {paid} new calls, {len(judge_calls) - paid} from the cache", markup=False)


@contextmanager
def _replacing(target: Path, partial: Path) -> Iterator[TextIO]:
    """A file written beside TARGET that replaces it only once complete: a failure leaves TARGET as it was."""
    try:
        with partial.open("w", encoding="utf-8") as out:
            yield out
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def _recorded_judge(folder: RunFolder) -> JudgePanel:
    """The run's own judges (from run.yaml), with the cache next to the run folder: known verdicts cost nothing."""
    record = folder.read_record()
    judge = record.protocol.judge
    if judge is None or not judge.models:
        raise InputError(f"{folder.record_path}: the run grades with 'judge' but records no judges")
    config = _recorded_config(record, {})
    completion = litellm_judges(config.judge_api_base, config.judge_timeout, config.max_retries)
    panel = JudgePanel(
        judge.models, judge.quorum or len(judge.models), JudgeCache(folder.path.parent / ".judge-cache"), completion
    )
    if config.judge_prompt is None:
        return panel
    protocol = load_protocol(Path(config.judge_prompt))
    kind = "score_prompt" if protocol.score_range is not None else "judge_prompt"
    if protocol.digest != (getattr(judge, kind) or {}).get("digest"):
        raise InputError(f"{config.judge_prompt}: --judge-prompt: the file changed since the run judged with it")
    if protocol.score_range is not None:
        return dataclasses.replace(panel, score_protocol=protocol)
    return dataclasses.replace(panel, protocol=protocol)


def _recorded_config(record: RunRecord, overrides: dict[str, Any]) -> RunConfig:
    """The run's settings, with OVERRIDES; ones its run.yaml lacks (an older harness) take today's defaults, and
    ones this harness no longer has are left out."""
    known = set(setting_names()) - {"run_id", "limit"}
    return build_config({key: value for key, value in record.config.model_dump().items() if key in known}, overrides)


def reexecute(path: Path, console: Console) -> int:
    """Run the logged episodes again with their logged replies; how many did not reproduce exactly. The logs
    are read one at a time, before the run for their keys and after it for the comparison."""
    folder, files = _logged_files(path)
    sandbox = folder.read_record().sandbox
    if sandbox.backend == "none":  # a solver without a sandbox (zero-shot)
        reason = (sandbox.model_extra or {}).get("reason")
        raise InputError(
            f"{path}: a run without a sandbox ({reason}) ran no commands: nothing to re-execute; "
            "use `replay --regrade` to grade its replies again"
        )
    logged = [
        (
            file,
            dataclasses.replace(episode, events=[episode.start, episode.end]),
            episode.sandbox_started,
        )
        for file in files
        if (episode := _finished_episode(file)) is not None
    ]
    episodes = [(file, ends) for file, ends, started in logged if started]
    skipped = len(logged) - len(episodes)
    if skipped:
        console.print(f"skipped {skipped} episodes whose sandbox never started (nothing to replay)", highlight=False)
    if not episodes:
        raise InputError(f"{path}: no finished episodes to replay")
    recorded = folder.read_record()
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    overrides = {
        "model": f"replay:{path}",
        "domain": ",".join(sorted({episode.key[0] for _, episode in episodes})),
        "task_ids": list(dict.fromkeys(episode.key[1] for _, episode in episodes)),
        "epochs": 1 if path.is_file() else max(episode.epoch for _, episode in episodes),
        "run_id": f"{recorded.run_id}.replay-{stamp}",
        "results_dir": folder.path / _REPLAYS,
    }
    plan = plan_run(_recorded_config(recorded, overrides))
    if recorded.profile is None:  # a run from before profiles: its replay records none, as it did
        plan = dataclasses.replace(plan, profile=None)
    execute_run(plan, console)
    mismatches = 0
    for file, episode in episodes:
        replayed = _finished_episode(plan.folder.trajectory_path(*episode.key, 1 if path.is_file() else episode.epoch))
        original = _finished_episode(file)
        problem = _difference(original, replayed) if original and replayed else "the replayed episode did not finish"
        mismatches += problem is not None
        verdict = "differs" if problem else "matches"
        line = f"{verdict} {episode.name}: {problem or 'every observation and the verdict'}"
        console.print(line, soft_wrap=True, highlight=False, markup=False)
    console.print(
        f"replayed {len(episodes)} episodes: {len(episodes) - mismatches} reproduced exactly, {mismatches} differ"
        f"{f', {skipped} skipped' if skipped else ''}; new run {plan.run_dir}",
        soft_wrap=True,
        highlight=False,
        markup=False,
    )
    return mismatches


def _difference(original: _LoggedEpisode, replayed: _LoggedEpisode) -> str | None:
    old, new = original.observations(), replayed.observations()
    for index, (before, after) in enumerate(zip(old, new, strict=False), start=1):
        for field, was, now in zip(_OBSERVED, before, after, strict=True):
            if was != now:
                return f"observation {index}: {field} was {str(was)[:60]!r}, now {str(now)[:60]!r}"
    if len(old) != len(new):
        return f"{len(old)} observations logged, {len(new)} on replay"
    seen, seen_again = original.image_views(), replayed.image_views()
    for index, (was, now) in enumerate(zip(seen, seen_again, strict=False), start=1):
        if was != now:
            return f"image view {index}: was {was[:70]!r}, now {now[:70]!r}"
    if len(seen) != len(seen_again):
        return f"{len(seen)} image views logged, {len(seen_again)} on replay"
    if original.end.row.verdict != replayed.end.row.verdict:
        return f"verdict was {original.end.row.verdict.value}, now {replayed.end.row.verdict.value}"
    return None
