"""inspect_ai `.eval` logs and run folders, both ways, through inspect's own log API: our runs as logs
(`export inspect`), and such logs back as a run folder (`import inspect`)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.console import Console

from harness.core.errors import InputError
from harness.core.names import check_label, file_name
from harness.inputs.tasks import Task
from harness.interop import run_import
from harness.records.reading import is_finished, read_events
from harness.records.run_folder import RunFolder
from harness.records.run_record import ImportSource, RunRecord

FORMAT = "inspect_ai eval log"
INSTALL = "pip install 'harness[inspect]'"


def _inspect_log() -> Any:
    """inspect_ai's log API (the optional extra `harness[inspect]`), or a one-line error saying how to get it."""
    try:
        import inspect_ai.log
    except ImportError:
        raise InputError(f"inspect_ai is not installed: {INSTALL}") from None
    return inspect_ai.log


def export_runs(runs: list[Path], out_dir: Path, console: Console) -> int:
    """One `<run-id>.eval` per run folder in OUT_DIR; unfinished episodes are listed and left out."""
    log_api = _inspect_log()
    from harness.interop.inspect_export import export_log

    folders = [RunFolder(run) for run in runs]
    records = [folder.read_record() for folder in folders]  # every run is checked before anything is written
    out_dir.mkdir(parents=True, exist_ok=True)
    for folder, record in zip(folders, records, strict=True):
        episodes = []
        for path in folder.trajectories():
            events = read_events(path)
            if is_finished(events):
                episodes.append(events)
            else:
                console.print(f"skipped (unfinished): {path}", markup=False, highlight=False)
        target = out_dir / f"{file_name(record.run_id)}.eval"
        log = export_log(record.run_id, record.created, record.config, episodes, record.tasks)
        log_api.write_eval_log(log, str(target))
        console.print(f"exported {len(episodes)} episodes to {target}", markup=False, highlight=False)
    return 0


def import_logs(options: run_import.ImportOptions, console: Console) -> int:
    """A run folder from `.eval` logs: every sample whose id is one of our tasks, graded by our graders."""
    from harness.interop.inspect_import import import_sample, sample_task

    folder = run_import.new_import_folder(options)
    tasks = run_import.tasks_by_id(options.tasks_dir)
    _inspect_log()  # not installed: said here, not in the worker
    paths = run_import.input_files(options.paths, "*.eval", "logs")
    logs = run_import.read_bounded(paths, read_log, options.limits)
    matched: dict[tuple[str, str], tuple[Path, Any, Task]] = {}
    unmatched: list[str] = []
    for path, log in logs:
        for sample in log.samples or []:
            task, why = _match(sample_task(sample), tasks)
            if task is None:
                unmatched.append(f"{path}: sample {sample.id!r}: {why}")
            elif (task.domain, task.id) in matched:
                unmatched.append(
                    f"{path}: sample {sample.id!r} epoch {sample.epoch}: task {task.domain}/{task.id} "
                    "already imported (a run folder keeps one episode per task)"
                )
            else:
                matched[(task.domain, task.id)] = (path, sample, task)
    if not matched:
        raise InputError(f"no sample matched a task in {options.tasks_dir}: " + "; ".join(unmatched[:3]))
    run_import.refuse_judged_without_panel([(path, task) for path, _, task in matched.values()], options)
    model = logs[0][1].eval.model
    imports = [
        (run_import.ImportedFrom(path, model, FORMAT), _episode(import_sample, path, sample), task)
        for path, sample, task in matched.values()
    ]
    return run_import.write_import(
        folder, options, _record(options, logs[0][1], len(matched)), imports, unmatched, "samples", console
    )


def read_log(path: Path) -> Any:
    """The whole log, validated by inspect's own models; anything it cannot read is one line. Runs in a
    bounded worker process (run_import.read_bounded)."""
    try:
        log = _inspect_log().read_eval_log(str(path))
    except Exception as error:  # inspect raises zip, JSON, pydantic and its own errors alike
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise InputError(f"{path}: not an inspect_ai eval log: {reason}") from None
    if not log.samples:
        raise InputError(f"{path}: field 'samples': the log holds no samples")
    check_label(log.eval.model, f"{path}: field 'eval.model'")  # shown in reports: one line, as --label
    return log


def _episode(import_sample: Any, path: Path, sample: Any) -> Any:
    try:
        return import_sample(sample)
    except (AttributeError, TypeError, ValueError, KeyError) as error:
        raise InputError(f"{path}: sample {sample.id!r}: malformed ({type(error).__name__}: {error})") from None


def _match(named: tuple[str | None, str], tasks: dict[str, list[Task]]) -> tuple[Task | None, str]:
    """The task a sample names: by domain and id, by id alone, or by an id written `domain/id`."""
    domain, task_id = named
    candidates = [(domain, task_id)]
    if domain is None and "/" in task_id:
        candidates.append(tuple(task_id.split("/", 1)))  # type: ignore[arg-type]
    for wanted_domain, wanted_id in candidates:
        found = [task for task in tasks.get(wanted_id, []) if wanted_domain in (None, task.domain)]
        if len(found) == 1:
            return found[0], ""
        if len(found) > 1:
            return None, f"task id {wanted_id!r} is in several domains ({', '.join(t.domain for t in found)})"
    return None, f"no task with id {task_id!r}"


def _record(options: run_import.ImportOptions, log: Any, count: int) -> RunRecord:
    config = (log.eval.metadata or {}).get("harness", {}).get("config") or {}
    return RunRecord(
        run_id=options.run_id,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        imported=ImportSource(FORMAT, [str(path) for path in options.paths]),
        config={
            "model": log.eval.model,
            "max_turns": config.get("max_turns") or log.eval.config.turn_limit or 0,
            "time_limit": float(config.get("time_limit") or log.eval.config.working_limit or 0),
            "tasks_dir": str(options.tasks_dir),
        },
        tasks=count,
    )
