"""The import engine: a run folder from another tool's files, whatever their format (interop/formats.py). Each
episode a format reads is matched to one of our tasks by the (domain, task id) it names and its epoch, written
as our trajectory, graded by our graders and annotated as a run's episode; what matched nothing is listed."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TypeVar

from rich.console import Console

from harness.core.bounded import MEMORY, TIME, Limits, Stopped, bounded_map
from harness.core.episode_key import EpisodeKey
from harness.core.errors import InputError
from harness.core.names import check_run_id, reference_name
from harness.core.safe_text import for_terminal
from harness.core.status import Outcome
from harness.diagnostics.episode_end import EpisodeEnd, finish_episode
from harness.grading import JUDGED, Grade
from harness.grading.judge import JudgePanel
from harness.inputs.tasks import Task, available_domains, load_task_file
from harness.interop.formats import TrajectoryFormat
from harness.interop.imported import ForeignEpisode, ForeignFile, ImportedEpisode
from harness.records.episode_log import start_event
from harness.records.episode_row import GRADE_FIELDS, episode_row
from harness.records.events import SandboxFacts, SandboxReadyEvent
from harness.records.results import ResultRow, ResultsWriter
from harness.records.run_folder import RunFolder
from harness.records.run_record import ImportSource, RunRecord
from harness.records.run_settings import RunSettings
from harness.records.trajectory import TrajectoryWriter

DECIDED_BY_IMPORT = frozenset(
    {
        "task_id",
        "domain",
        "epoch",
        "task_digest",
        "task_type",
        "task_groups",
        "status",
        "detail",
        "attempt",
        "answer",
        *GRADE_FIELDS,
    }
)
"""Row fields the import decides itself: the task's (from our task file), the outcome's (the format reads it),
the grade's (our graders; a judge's cost is kept when our judges answered from the cache) and the attempt (an
import is one). The diagnostics are computed again from the events. Every other field the file gives is kept."""
READ_MEMORY_MB = 2048
READ_SECONDS = 300.0
"""The bounds on reading one foreign file (`--max-memory`, `--max-time`): a 1.9 MB `.eval` log, gigabytes of
JSON zipped, took 2 GB to read."""

R = TypeVar("R")


@dataclass(frozen=True)
class ImportOptions:
    paths: list[Path]
    tasks_dir: Path
    collections_dir: Path | None
    results_dir: Path
    run_id: str
    judge: JudgePanel | None = None
    """For judge-graded tasks (`--judge`): without it, importing one is refused before anything is written."""
    limits: Limits = dataclasses.field(default_factory=lambda: Limits(READ_MEMORY_MB, READ_SECONDS))
    """Each file is read in a worker process under these (`read_bounded`)."""


def import_files(form: TrajectoryFormat, options: ImportOptions, console: Console) -> int:
    """A run folder from the files OPTIONS name in format FORM: every episode matching one of our tasks and
    epochs, graded by our graders; the rest listed. Every file is read and checked before anything is written."""
    folder = _new_import_folder(options)
    tasks = _tasks_by_id(options.tasks_dir)
    paths = _input_files(options.paths, form.PATTERN, "files")
    form.check_readable()  # what the worker would fail on for want of a package: said here, in one line
    files = [read for _, read in read_bounded(paths, form.read, options.limits)]
    matched: dict[EpisodeKey, tuple[ForeignEpisode, Task]] = {}
    unmatched: list[str] = []
    for foreign in (episode for read in files for episode in read.episodes):
        if type(foreign.epoch) is not int or foreign.epoch < 1:
            raise InputError(f"{foreign.where}: field 'epoch': {foreign.epoch!r} is not a whole number from 1")
        task, why = _match_task(foreign.names, tasks)
        if task is None:
            unmatched.append(f"{foreign.where}: {why}")
            continue
        task = dataclasses.replace(task, epoch=foreign.epoch)
        if task.episode in matched:
            epoch = "" if task.epoch == 1 else f" epoch {task.epoch}"
            first = matched[task.episode][0].where
            unmatched.append(f"{foreign.where}: task {task.domain}/{task.id}{epoch} already imported from {first}")
        else:
            matched[task.episode] = (foreign, task)
    if not matched:
        raise InputError(f"no {form.UNIT} matched a task in {options.tasks_dir}: " + "; ".join(unmatched[:3]))
    _refuse_judged_without_panel([(foreign.path, task) for foreign, task in matched.values()], options)
    imports = [
        (_ImportedFrom(foreign.path, foreign.model, form.FORMAT), foreign.episode, task)
        for foreign, task in matched.values()
    ]
    record = _record(options, form.FORMAT, files[0], len(matched))
    return _write_import(folder, options, record, imports, unmatched, f"{form.UNIT}s", console)


def read_bounded(paths: list[Path], read: Callable[[Path], R], limits: Limits) -> list[tuple[Path, R]]:
    """`read(path)` for each file, in a worker process under LIMITS (memory, time per file); one that goes over
    is refused with one line, before anything is written. READ must be a module-level function."""
    for flag, value in (("--max-memory", limits.memory_mb), ("--max-time", limits.seconds)):
        if value <= 0:
            raise InputError(f"{flag}: {value:g} is not a positive number")
    found: dict[Path, R] = {}
    with contextlib.closing(bounded_map(paths, read, limits)) as results:
        for path, result in results:
            if isinstance(result, Stopped):
                raise InputError(f"{path}: {_exceeded(result, limits)}")
            found[path] = result
    return [(path, found[path]) for path in paths]


def _exceeded(stopped: Stopped, limits: Limits) -> str:
    if stopped.limit == MEMORY:
        return f"memory: reading it needs more than {limits.memory_mb} MB (--max-memory)"
    if stopped.limit == TIME:
        return f"time: reading it took longer than {limits.seconds:g} s (--max-time)"
    return "the process reading it died (a crash, or out of memory)"


def _match_task(names: tuple[tuple[str | None, str], ...], tasks: dict[str, list[Task]]) -> tuple[Task | None, str]:
    """The task of the first (domain, id) NAMES gives that is one task (a None domain: any), else why none."""
    for domain, task_id in names:
        found = [task for task in tasks.get(task_id, []) if domain in (None, task.domain, reference_name(task.domain))]
        if len(found) == 1:
            return found[0], ""
        if len(found) > 1:
            return None, f"task id {task_id!r} is in several domains ({', '.join(t.domain for t in found)})"
    return None, f"no task with id {names[0][1]!r}" if names else "no task id"


def _record(options: ImportOptions, form: str, first: ForeignFile, count: int) -> RunRecord:
    """The import's run.yaml: the settings the first file says its run had."""
    settings = first.settings
    for name in ("max_turns", "time_limit"):
        value = settings.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise InputError(f"{first.path}: setting {name!r}: {value!r:.80} is not a number")
    return RunRecord(
        run_id=options.run_id,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        imported=ImportSource(form, [str(path) for path in options.paths]),
        config=RunSettings(
            model=settings.get("model") or form,
            max_turns=settings.get("max_turns") or 0,
            time_limit=float(settings.get("time_limit") or 0),
            tasks_dir=str(options.tasks_dir),
        ),
        tasks=count,
    )


def _new_import_folder(options: ImportOptions) -> RunFolder:
    """The run folder an import makes (not yet): refused when it exists."""
    check_run_id(options.run_id)
    folder = RunFolder(options.results_dir / options.run_id)
    if folder.path.exists():
        raise InputError(f"{folder.path}: already exists; pick another --run-id")
    return folder


def _input_files(paths: list[Path], pattern: str, kind: str) -> list[Path]:
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


def _refuse_judged_without_panel(matched: list[tuple[Path, Task]], options: ImportOptions) -> None:
    """A task graded by `judge` needs `--judge`: refused before anything is written."""
    judged = [(path, task) for path, task in matched if task.grader in JUDGED]
    if judged and options.judge is None:
        path, task = judged[0]
        raise InputError(f"{path}: task {task.domain}/{task.id} is graded by '{task.grader}': --judge is required")


def _write_import(
    folder: RunFolder,
    options: ImportOptions,
    record: RunRecord,
    imports: list[tuple[_ImportedFrom, ImportedEpisode, Task]],
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
            writer.append(_import_episode(folder, source, episode, task, found, options.judge))
    finally:
        writer.close()
    for line in unmatched:
        console.print(
            f"unmatched: {for_terminal(line, keep_newlines=False)}", markup=False, highlight=False, soft_wrap=True
        )
    console.print(
        f"imported {len(imports)} episodes into {folder.path}; {len(unmatched)} {kind} unmatched",
        markup=False,
        highlight=False,
    )
    return 0


def _tasks_by_id(tasks_dir: Path) -> dict[str, list[Task]]:
    by_id: dict[str, list[Task]] = {}
    for domain in available_domains(tasks_dir):
        for task in load_task_file(tasks_dir / f"{domain}.jsonl"):
            for name in dict.fromkeys((task.id, reference_name(task.id))):  # as `export harbor` names a task
                by_id.setdefault(name, []).append(task)
    if not by_id:
        raise InputError(f"{tasks_dir}: no task files (*.jsonl)")
    return by_id


@dataclass(frozen=True)
class _ImportedFrom:
    """Where an imported episode came from: its file, the model it names and the file's format."""

    path: Path
    model: str | None
    format: str


def _import_episode(
    folder: RunFolder,
    source: _ImportedFrom,
    episode: ImportedEpisode,
    task: Task,
    collection: Path | None,
    judge: JudgePanel | None,
) -> ResultRow:
    """One imported episode into FOLDER: its trajectory (our events), then its end as every episode's
    (diagnostics/episode_end.py): graded by our graders, evidence recorded."""
    log = TrajectoryWriter(folder.trajectory_path(*task.episode))
    log.write(start_event(task, source.model, imported_from=str(source.path)))
    imported = SandboxReadyEvent(
        sandbox=SandboxFacts.model_validate({"backend": f"imported ({source.format})"}),
        start_s=episode.row.get("sandbox_start_s", 0.0),
    )
    log.write(imported)
    for event in episode.events:
        log.write(event)
    outcome = Outcome(episode.status, episode.submission, episode.detail)
    kept = {name: value for name, value in episode.row.items() if name not in DECIDED_BY_IMPORT}

    def row_of(ended: Outcome, graded: Grade) -> ResultRow:
        row = dataclasses.replace(episode_row(task, ended, graded), **kept)
        if graded.judge_cost_usd is None:  # our judges answered from the cache: what they cost when they did not
            row = dataclasses.replace(row, judge_cost_usd=episode.row.get("judge_cost_usd"))
        return row

    end = EpisodeEnd(outcome, episode.submission, collection, episode.opens, judge)
    return finish_episode(task, end, row_of, log)
