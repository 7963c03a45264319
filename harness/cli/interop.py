"""`python -m harness import mini-swe-agent PATH...` and `python -m harness export mini-swe-agent RUN OUT`."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.console import Console

from harness.core.errors import InputError
from harness.core.names import check_run_id, file_name
from harness.episode.lifecycle import grade_fields, judge_log, start_event
from harness.grading import grade
from harness.grading.judge import JudgePanel
from harness.inputs.tasks import Task, available_domains, load_task_file, task_digest
from harness.interop.imported import ImportedEpisode
from harness.interop.mini_swe_agent import FORMAT, export_episode, import_messages, instance_id
from harness.records.events import (
    ActionEvent,
    EpisodeEndEvent,
    Event,
    EvidenceEvent,
    FormatErrorEvent,
    ModelCallEvent,
    ObservationEvent,
    SandboxReadyEvent,
    write_event,
)
from harness.records.results import ResultRow, ResultsWriter
from harness.records.run_folder import RunFolder
from harness.records.run_record import ImportSource, RunRecord
from harness.records.trajectory import TrajectoryWriter, is_finished, read_trajectory
from harness.signals.annotate import annotate


@dataclass(frozen=True)
class ImportOptions:
    paths: list[Path]
    tasks_dir: Path
    collections_dir: Path | None
    results_dir: Path
    run_id: str
    judge: JudgePanel | None = None
    """For judge-graded tasks (`--judge`): without it, importing one is refused before anything is written."""


def export_run(run_dir: Path, out_dir: Path, console: Console) -> int:
    """Every finished episode of the run as OUT_DIR/<domain>/<task>.traj.json (`<task>~epoch<k>.traj.json` for
    epoch k > 1, the run folder's own naming); unfinished ones are listed."""
    folder = RunFolder(run_dir)
    config = folder.read_record().config
    written = 0
    for path in folder.trajectories():
        events = read_trajectory(path)
        if not is_finished(events):
            console.print(f"skipped (unfinished): {path}", markup=False, highlight=False)
            continue
        start = events[0]
        target = out_dir / file_name(start["domain"]) / path.name.removesuffix(".jsonl")
        target = target.with_name(target.name + ".traj.json")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(export_episode(events, config), indent=2, ensure_ascii=False), encoding="utf-8")
        written += 1
    console.print(f"exported {written} episodes to {out_dir} ({FORMAT})", markup=False, highlight=False)
    return 0


def import_run(options: ImportOptions, console: Console) -> int:
    """A run folder from mini-swe-agent trajectories: rows graded by our graders, unmatched files listed."""
    folder = new_import_folder(options)
    tasks = tasks_by_id(options.tasks_dir)
    files = input_files(options.paths, "*.traj.json", "files")
    loaded = [(path, _load(path)) for path in files]  # every file is read and parsed before anything is written
    matched: dict[tuple[str, str, int], tuple[Path, dict[str, Any], ImportedEpisode, Task]] = {}
    unmatched: list[str] = []
    for path, (data, episode) in loaded:
        task, why = _match(path, data, tasks)
        if task is None:
            unmatched.append(f"{path}: {why}")
            continue
        task = dataclasses.replace(task, epoch=episode.row["epoch"])
        key = task.episode
        if key in matched:
            epoch = "" if task.epoch == 1 else f" epoch {task.epoch}"
            unmatched.append(f"{path}: task {task.domain}/{task.id}{epoch} already imported from {matched[key][0]}")
        else:
            matched[key] = (path, data, episode, task)
    if not matched:
        raise InputError(f"no trajectory matched a task in {options.tasks_dir}: " + "; ".join(unmatched[:3]))
    refuse_judged_without_panel([(path, task) for path, _, _, task in matched.values()], options)
    first = next(iter(matched.values()))[1]
    imports = [(ImportedFrom(path, _model_of(data), FORMAT), episode, task)
               for path, data, episode, task in matched.values()]  # fmt: skip
    return write_import(folder, options, _record(options, first, len(matched)), imports, unmatched, "files", console)


def _model_of(data: dict[str, Any]) -> str | None:
    return ((data["info"].get("config") or {}).get("model") or {}).get("model_name")


def new_import_folder(options: ImportOptions) -> RunFolder:
    """The run folder an import makes (not yet): refused when it exists."""
    check_run_id(options.run_id)
    folder = RunFolder(options.results_dir / options.run_id)
    if folder.path.exists():
        raise InputError(f"{folder.path}: already exists; pick another --run-id")
    return folder


def input_files(paths: list[Path], pattern: str, kind: str) -> list[Path]:
    """The files PATHS name: a file as given, a folder's files matching PATTERN at any depth, sorted."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(path.rglob(pattern))
        elif path.is_file():
            files.append(path)
        else:
            raise InputError(f"{path}: no such file or folder")
    if not files:
        raise InputError(f"{', '.join(map(str, paths))}: no {pattern} {kind}")
    return files


def refuse_judged_without_panel(matched: list[tuple[Path, Task]], options: ImportOptions) -> None:
    """A task graded by `judge` needs `--judge`: refused before anything is written."""
    judged = [(path, task) for path, task in matched if task.grader == "judge"]
    if judged and options.judge is None:
        path, task = judged[0]
        raise InputError(f"{path}: task {task.domain}/{task.id} is graded by 'judge': --judge is required")


def write_import(
    folder: RunFolder,
    options: ImportOptions,
    record: RunRecord,
    imports: list[tuple[ImportedFrom, ImportedEpisode, Task]],
    unmatched: list[str],
    kind: str,
    console: Console,
) -> int:
    """Everything read and checked: the run folder with its record and each imported episode, graded; then
    what was left unmatched (KIND: what was read, files or samples)."""
    folder.path.mkdir(parents=True)
    folder.write_record(record)
    writer = ResultsWriter(folder.results_path)
    try:
        for source, episode, task in imports:
            collection = options.collections_dir / task.domain if options.collections_dir else None
            found = collection if collection and collection.is_dir() else None
            writer.append(import_episode(folder, source, episode, task, found, options.judge))
    finally:
        writer.close()
    for line in unmatched:
        console.print(f"unmatched: {line}", markup=False, highlight=False, soft_wrap=True)
    console.print(f"imported {len(imports)} episodes into {folder.path}; {len(unmatched)} {kind} unmatched",
                  markup=False, highlight=False)  # fmt: skip
    return 0


def tasks_by_id(tasks_dir: Path) -> dict[str, list[Task]]:
    by_id: dict[str, list[Task]] = {}
    for domain in available_domains(tasks_dir):
        for task in load_task_file(tasks_dir / f"{domain}.jsonl"):
            by_id.setdefault(task.id, []).append(task)
    if not by_id:
        raise InputError(f"{tasks_dir}: no task files (*.jsonl)")
    return by_id


def _load(path: Path) -> tuple[dict[str, Any], ImportedEpisode]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise InputError(f"{path}: not a JSON trajectory: {error}") from None
    if not isinstance(data, dict) or not str(data.get("trajectory_format", "")).startswith("mini-swe-agent"):
        raise InputError(f"{path}: field 'trajectory_format': not a mini-swe-agent trajectory")
    if not isinstance(data.get("messages"), list) or not isinstance(data.get("info"), dict):
        raise InputError(f"{path}: field 'messages' or 'info': missing")
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


def _record(options: ImportOptions, data: dict[str, Any], count: int) -> RunRecord:
    config = (data.get("info") or {}).get("config") or {}
    agent = config.get("agent") or {}
    return RunRecord(
        run_id=options.run_id,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        imported=ImportSource(FORMAT, [str(path) for path in options.paths]),
        config={
            "model": (config.get("model") or {}).get("model_name") or "mini-swe-agent",
            "max_turns": agent.get("step_limit") or 0,
            "time_limit": float(agent.get("wall_time_limit_seconds") or 0),
            "tasks_dir": str(options.tasks_dir),
        },
        tasks=count,
    )


_IMPORTED_EVENTS: dict[str, type[Event]] = {
    event.kind: event for event in (ModelCallEvent, ActionEvent, FormatErrorEvent, ObservationEvent)
}
"""The events an imported trajectory gives (harness/interop/mini_swe_agent.py `import_messages`)."""


@dataclass(frozen=True)
class ImportedFrom:
    """Where an imported episode came from: its file, the model it names and the file's format."""

    path: Path
    model: str | None
    format: str


def import_episode(
    folder: RunFolder,
    source: ImportedFrom,
    episode: ImportedEpisode,
    task: Task,
    collection: Path | None,
    judge: JudgePanel | None,
) -> ResultRow:
    """One imported episode into FOLDER: its trajectory (our events), graded by our graders, evidence recorded."""
    log = TrajectoryWriter(folder.trajectory_path(*task.episode))
    write_event(log, start_event(task, source.model, imported_from=str(source.path)))
    imported = SandboxReadyEvent(sandbox={"backend": f"imported ({source.format})"},
                                 start_s=episode.row["sandbox_start_s"])  # fmt: skip
    write_event(log, imported)
    for kind, fields in episode.events:
        write_event(log, _IMPORTED_EVENTS[kind](**fields))
    graded = grade(task.grader, episode.submission, task.gold, judge, judge_log(log))
    fields = grade_fields(graded)
    if fields["judge_cost_usd"] is None and episode.judge_cost_usd is not None:
        fields["judge_cost_usd"] = episode.judge_cost_usd  # the judges answered from the cache: the grade's cost
    row = ResultRow(task_id=task.id, domain=task.domain, status=episode.status, **fields,
                    detail=episode.detail, task_digest=task_digest(task), **episode.row)  # fmt: skip
    row, evidence = annotate(row, read_trajectory(log.path), task.evidence, task.canary, collection, episode.opens)
    if evidence is not None:
        write_event(log, EvidenceEvent(**evidence))
    write_event(log, EpisodeEndEvent(row=row, submission=episode.submission))
    log.close()
    return row
