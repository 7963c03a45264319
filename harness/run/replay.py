"""`python -m harness replay PATH`: re-grade logged episodes, or re-execute them and compare.

PATH is one trajectory file or a run folder. Re-grading reads the logs alone (the submission and the
task's gold are in each trajectory). Re-execution runs every episode again in a fresh sandbox with the
`replay:` model feeding the logged replies, then compares each observation and the final verdict.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console

from harness.core.errors import InputError
from harness.core.status import Status
from harness.episode.lifecycle import grade_fields
from harness.grading import GoldSpec, Verdict, grade
from harness.grading.judge import JudgePanel
from harness.grading.judge_cache import JudgeCache
from harness.inputs.config import RunConfig, build_config, setting_names
from harness.records.run_folder import RunFolder, find_run_folder
from harness.records.run_record import RunRecord
from harness.records.trajectory import is_finished, read_trajectory
from harness.run.judges import litellm_judges
from harness.run.runner import execute_run, plan_run
from harness.signals.failure_modes import failure_mode

_VERDICTS = ("verdict", "verdict_strict", "verdict_lenient")
_OBSERVED = ("exit_code", "stdout", "stderr", "timed_out")


@dataclass(frozen=True)
class LoggedEpisode:
    path: Path
    events: list[dict[str, Any]]

    @property
    def start(self) -> dict[str, Any]:
        return self.events[0]

    @property
    def end(self) -> dict[str, Any]:
        return self.events[-1]

    @property
    def key(self) -> tuple[str, str]:
        return self.start["domain"], self.start["task_id"]

    @property
    def epoch(self) -> int:
        return int(self.start.get("epoch") or 1)

    @property
    def name(self) -> str:
        """domain/task, with `epoch k` after it for k > 1."""
        return f"{self.key[0]}/{self.key[1]}" + ("" if self.epoch == 1 else f" epoch {self.epoch}")

    def observations(self) -> list[tuple[Any, ...]]:
        return [tuple(e.get(k) for k in _OBSERVED) for e in self.events if e["event"] == "observation"]

    @property
    def sandbox_started(self) -> bool:
        return any(event["event"] == "sandbox_ready" for event in self.events)


def logged_files(path: Path) -> tuple[RunFolder, list[Path]]:
    """The run folder holding PATH, and the trajectory files to read (PATH itself, or the folder's)."""
    files = [path] if path.is_file() else RunFolder(path).trajectories()
    if not files:
        raise InputError(f"{path}: no trajectories (expected a .jsonl file or a run folder with episodes/)")
    return find_run_folder(path), files


def finished_episode(file: Path) -> LoggedEpisode | None:
    """One logged episode (None while unfinished: it cannot be replayed); read alone, so memory holds one."""
    events = read_trajectory(file)
    if not events or events[0].get("event") != "episode_start":
        raise InputError(f"{file}:1: not a trajectory (no episode_start)")
    return LoggedEpisode(file, events) if is_finished(events) else None


def regrade(path: Path, console: Console) -> None:
    """Grade every logged submission again with today's graders; write results.regraded.jsonl as it goes,
    one episode in memory at a time."""
    folder, files = logged_files(path)
    changed = graded_count = 0
    judge: JudgePanel | None = None
    judge_calls: list[dict[str, Any]] = []
    target = folder.regraded_path
    partial = target.with_name(target.name + ".partial")
    with _replacing(target, partial) as out:
        for file in files:
            episode = finished_episode(file)
            if episode is None:
                continue
            task, end = episode.start["task"], episode.end
            if task["grader"] == "judge" and judge is None:
                judge = _recorded_judge(folder)
            graded = grade(task["grader"], end.get("submission"), GoldSpec.from_record(task), judge,
                           judge_calls.append)  # fmt: skip
            row = {key: value for key, value in end.items() if key not in ("event", "time", "submission")}
            row |= grade_fields(graded)
            if "failure_mode" in row:  # logged with an evidence record: the mode follows the new verdict
                correct = row["verdict"] == Verdict.CORRECT
                row["failure_mode"] = failure_mode(Status(row["status"]), correct, row.get("evidence_recall"))
            if any(row[key] != end.get(key) for key in _VERDICTS):
                changed += 1
                console.print(f"changed {episode.name}: {end.get('verdict')} -> {row['verdict']}", soft_wrap=True,
                              markup=False)  # fmt: skip
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
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
    judge = record.protocol.get("judge")
    if not judge:
        raise InputError(f"{folder.record_path}: the run grades with 'judge' but records no judges")
    config = _recorded_config(record, {})
    completion = litellm_judges(config.judge_api_base, config.judge_timeout, config.max_retries)
    return JudgePanel(judge["models"], judge["quorum"], JudgeCache(folder.path.parent / ".judge-cache"), completion)


def _recorded_config(record: RunRecord, overrides: dict[str, Any]) -> RunConfig:
    """The run's settings, with OVERRIDES; ones its run.yaml lacks (an older harness) take today's defaults, and
    ones this harness no longer has are left out."""
    known = set(setting_names()) - {"run_id", "limit"}
    return build_config({key: value for key, value in record.config.items() if key in known}, overrides)


def reexecute(path: Path, console: Console) -> int:
    """Run the logged episodes again with their logged replies; how many did not reproduce exactly. The logs
    are read one at a time, before the run for their keys and after it for the comparison."""
    folder, files = logged_files(path)
    logged = [(file, LoggedEpisode(file, [episode.start, episode.end]), episode.sandbox_started) for file in files
              if (episode := finished_episode(file)) is not None]  # fmt: skip
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
        "results_dir": folder.path.parent,
    }
    plan = plan_run(_recorded_config(recorded, overrides))
    execute_run(plan, console)
    mismatches = 0
    for file, episode in episodes:
        replayed = read_trajectory(plan.folder.trajectory_path(*episode.key, 1 if path.is_file() else episode.epoch))
        problem = _difference(LoggedEpisode(file, read_trajectory(file)), LoggedEpisode(plan.run_dir, replayed))
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


def _difference(original: LoggedEpisode, replayed: LoggedEpisode) -> str | None:
    old, new = original.observations(), replayed.observations()
    for index, (before, after) in enumerate(zip(old, new, strict=False), start=1):
        for field, was, now in zip(_OBSERVED, before, after, strict=True):
            if was != now:
                return f"observation {index}: {field} was {str(was)[:60]!r}, now {str(now)[:60]!r}"
    if len(old) != len(new):
        return f"{len(old)} observations logged, {len(new)} on replay"
    if original.end.get("verdict") != replayed.end.get("verdict"):
        return f"verdict was {original.end.get('verdict')}, now {replayed.end.get('verdict')}"
    return None
