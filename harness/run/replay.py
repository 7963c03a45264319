"""`python -m harness replay PATH`: re-grade logged episodes, or re-execute them and compare.

PATH is one trajectory file or a run folder. Re-grading reads the logs alone (the submission and the
task's gold are in each trajectory). Re-execution runs every episode again in a fresh sandbox with the
`replay:` model feeding the logged replies, then compares each observation and the final verdict.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

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


def load_episodes(path: Path) -> tuple[RunFolder, list[LoggedEpisode]]:
    """The run folder holding PATH, and its finished episodes (unfinished ones cannot be replayed)."""
    files = [path] if path.is_file() else RunFolder(path).trajectories()
    if not files:
        raise InputError(f"{path}: no trajectories (expected a .jsonl file or a run folder with episodes/)")
    folder = find_run_folder(path)
    episodes = []
    for file in files:
        events = read_trajectory(file)
        if not events or events[0].get("event") != "episode_start":
            raise InputError(f"{file}:1: not a trajectory (no episode_start)")
        if is_finished(events):
            episodes.append(LoggedEpisode(file, events))
    return folder, episodes


def regrade(path: Path, console: Console) -> None:
    """Grade every logged submission again with today's graders; write results.regraded.jsonl."""
    folder, episodes = load_episodes(path)
    changed = 0
    rows = []
    judge = _recorded_judge(folder) if any(e.start["task"]["grader"] == "judge" for e in episodes) else None
    judge_calls: list[dict[str, Any]] = []
    for episode in episodes:
        task, end = episode.start["task"], episode.end
        gold = GoldSpec.from_record(task)
        graded = grade(task["grader"], end.get("submission"), gold, judge, judge_calls.append)
        row = {key: value for key, value in end.items() if key not in ("event", "time", "submission")}
        row |= grade_fields(graded)
        if "failure_mode" in row:  # logged with an evidence record: the mode follows the new verdict
            correct = row["verdict"] == Verdict.CORRECT
            row["failure_mode"] = failure_mode(Status(row["status"]), correct, row.get("evidence_recall"))
        if any(row[key] != end.get(key) for key in _VERDICTS):
            changed += 1
            console.print(f"changed {episode.name}: {end.get('verdict')} -> {row['verdict']}", soft_wrap=True,
                          markup=False)  # fmt: skip
        rows.append(row)
    target = folder.regraded_path
    target.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    console.print(
        f"regraded {len(rows)} episodes: {changed} verdicts changed; wrote {target}", soft_wrap=True, markup=False
    )
    if judge_calls:
        paid = sum(not call["cached"] for call in judge_calls)
        console.print(f"judge: {paid} new calls, {len(judge_calls) - paid} from the cache", markup=False)


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
    """Run the logged episodes again with their logged replies; how many did not reproduce exactly."""
    folder, logged = load_episodes(path)
    episodes = [episode for episode in logged if episode.sandbox_started]
    skipped = len(logged) - len(episodes)
    if skipped:
        console.print(f"skipped {skipped} episodes whose sandbox never started (nothing to replay)", highlight=False)
    if not episodes:
        raise InputError(f"{path}: no finished episodes to replay")
    recorded = folder.read_record()
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    overrides = {
        "model": f"replay:{path}",
        "domain": ",".join(sorted({e.key[0] for e in episodes})),
        "task_ids": list(dict.fromkeys(e.key[1] for e in episodes)),
        "epochs": 1 if path.is_file() else max(e.epoch for e in episodes),
        "run_id": f"{recorded.run_id}.replay-{stamp}",
        "results_dir": folder.path.parent,
    }
    plan = plan_run(_recorded_config(recorded, overrides))
    execute_run(plan, console)
    mismatches = 0
    for episode in episodes:
        replayed = read_trajectory(plan.folder.trajectory_path(*episode.key, 1 if path.is_file() else episode.epoch))
        problem = _difference(episode, LoggedEpisode(plan.run_dir, replayed))
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
