"""mini-swe-agent trajectory files and run folders, both ways: a run's finished episodes as `.traj.json` files,
and such files imported as a run folder (graded by our graders; files matching no task listed)."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.console import Console

from harness.core.episode_key import EpisodeKey
from harness.core.errors import InputError
from harness.core.json_text import json_text
from harness.core.names import check_label, file_name
from harness.core.safe_text import for_terminal
from harness.inputs.tasks import Task
from harness.interop import run_import
from harness.interop.imported import ImportedEpisode
from harness.interop.mini_swe_agent import FORMAT, export_episode, import_messages, instance_id
from harness.records.events import EpisodeStartEvent
from harness.records.reading import is_finished, read_events
from harness.records.run_folder import RunFolder
from harness.records.run_record import ImportSource, RunRecord


def export_run(run_dir: Path, out_dir: Path, console: Console) -> int:
    """Every finished episode of the run as OUT_DIR/<domain>/<task>.traj.json (`<task>~epoch<k>.traj.json` for
    epoch k > 1, the run folder's own naming); unfinished ones are listed."""
    folder = RunFolder(run_dir)
    config = folder.read_record().config
    written = 0
    for path in folder.trajectories():
        events = read_events(path)
        if not is_finished(events):
            console.print(
                f"skipped (unfinished): {for_terminal(str(path), keep_newlines=False)}", markup=False, highlight=False
            )
            continue
        start = events[0].event
        assert isinstance(start, EpisodeStartEvent)
        target = out_dir / file_name(start.domain) / path.name.removesuffix(".jsonl")
        target = target.with_name(target.name + ".traj.json")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json_text(export_episode(events, config), indent=2), encoding="utf-8")
        written += 1
    console.print(f"exported {written} episodes to {out_dir} ({FORMAT})", markup=False, highlight=False)
    return 0


def import_run(options: run_import.ImportOptions, console: Console) -> int:
    """A run folder from mini-swe-agent trajectories: rows graded by our graders, unmatched files listed."""
    folder = run_import.new_import_folder(options)
    tasks = run_import.tasks_by_id(options.tasks_dir)
    files = run_import.input_files(options.paths, "*.traj.json", "files")
    loaded = run_import.read_bounded(files, load, options.limits)  # all read and parsed before anything is written
    matched: dict[EpisodeKey, tuple[Path, dict[str, Any], ImportedEpisode, Task]] = {}
    unmatched: list[str] = []
    for path, (data, episode) in loaded:
        task, why = _match(path, data, tasks)
        if task is None:
            unmatched.append(f"{path}: {why}")
            continue
        task = dataclasses.replace(task, epoch=episode.epoch)
        key = task.episode
        if key in matched:
            epoch = "" if task.epoch == 1 else f" epoch {task.epoch}"
            unmatched.append(f"{path}: task {task.domain}/{task.id}{epoch} already imported from {matched[key][0]}")
        else:
            matched[key] = (path, data, episode, task)
    if not matched:
        raise InputError(f"no trajectory matched a task in {options.tasks_dir}: " + "; ".join(unmatched[:3]))
    run_import.refuse_judged_without_panel([(path, task) for path, _, _, task in matched.values()], options)
    first = next(iter(matched.values()))[1]
    imports = [
        (run_import.ImportedFrom(path, _model_of(data), FORMAT), episode, task)
        for path, data, episode, task in matched.values()
    ]
    return run_import.write_import(
        folder, options, _record(options, first, len(matched)), imports, unmatched, "files", console
    )


def _model_of(data: dict[str, Any]) -> Any:
    model = (data["info"].get("config") or {}).get("model") or {}
    return model.get("model_name") if isinstance(model, dict) else None


def load(path: Path) -> tuple[dict[str, Any], ImportedEpisode]:
    """One trajectory file, read and checked; runs in a bounded worker process (run_import.read_bounded)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise InputError(f"{path}: not a JSON trajectory: {error}") from None
    if not isinstance(data, dict) or not str(data.get("trajectory_format", "")).startswith("mini-swe-agent"):
        raise InputError(f"{path}: field 'trajectory_format': not a mini-swe-agent trajectory")
    if not isinstance(data.get("messages"), list) or not isinstance(data.get("info"), dict):
        raise InputError(f"{path}: field 'messages' or 'info': missing")
    model = _model_of(data)
    if model is not None:  # shown in reports and on the console: one line of visible text, as --label
        if not isinstance(model, str):
            raise InputError(f"{path}: field 'info.config.model.model_name': not a string")
        check_label(model, f"{path}: field 'info.config.model.model_name'")
    try:
        return data, import_messages(data)
    except (AttributeError, TypeError, ValueError, KeyError) as error:
        raise InputError(f"{path}: field 'messages': malformed ({type(error).__name__}: {error})") from None


def _match(path: Path, data: dict[str, Any], tasks: dict[str, list[Task]]) -> tuple[Task | None, str]:
    """The task by the instance id in the file, else by its name (`<id>.traj.json`) or its folder's."""
    domain = ((data.get("info") or {}).get("harness") or {}).get("domain")
    name = path.name.removesuffix(".json").removesuffix(".traj")
    for candidate in (instance_id(data), name, path.parent.name):
        found = [task for task in tasks.get(candidate or "", []) if domain in (None, task.domain)]
        if len(found) == 1:
            return found[0], ""
        if len(found) > 1:
            return None, f"task id {candidate!r} is in several domains ({', '.join(t.domain for t in found)})"
    return None, f"no task with id {instance_id(data) or name!r}"


def _record(options: run_import.ImportOptions, data: dict[str, Any], count: int) -> RunRecord:
    config = (data.get("info") or {}).get("config") or {}
    agent = config.get("agent") or {}
    return RunRecord(
        run_id=options.run_id,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        imported=ImportSource(FORMAT, [str(path) for path in options.paths]),
        config={
            "model": _model_of(data) or "mini-swe-agent",
            "max_turns": agent.get("step_limit") or 0,
            "time_limit": float(agent.get("wall_time_limit_seconds") or 0),
            "tasks_dir": str(options.tasks_dir),
        },
        tasks=count,
    )
