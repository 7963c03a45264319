"""The `inspect` format (interop/formats.py): inspect_ai `.eval` logs, through inspect's own log API: our runs
as logs (`export inspect`), and a log's samples as episodes for the import engine (`import inspect`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from harness.core.errors import InputError
from harness.core.names import check_label, file_name
from harness.interop.imported import ForeignEpisode, ForeignFile, mapping
from harness.records.reading import is_finished, read_events
from harness.records.run_folder import RunFolder

FORMAT = "inspect_ai eval log"
PATTERN = "*.eval"
UNIT = "sample"
_INSTALL = "pip install 'harness[inspect]'"


def _inspect_log() -> Any:
    """inspect_ai's log API (the optional extra `harness[inspect]`), or a one-line error saying how to get it."""
    try:
        import inspect_ai.log
    except ImportError:
        raise InputError(f"inspect_ai is not installed: {_INSTALL}") from None
    return inspect_ai.log


def export(runs: list[Path], out_dir: Path, console: Console) -> int:
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
        log = export_log(
            record.run_id,
            record.created,
            record.config.model_dump(),
            episodes,
            record.tasks,
            record.report_label,
            folder.images,
        )
        log_api.write_eval_log(log, str(target))
        console.print(f"exported {len(episodes)} episodes to {target}", markup=False, highlight=False)
    return 0


def check_readable() -> None:
    """inspect_ai is an optional extra: its absence is said here, in one line, not in the worker that reads."""
    _inspect_log()


def read(path: Path) -> ForeignFile:
    """The log's samples as episodes, each named by its id (or our export's metadata) and its epoch."""
    from harness.interop.inspect_import import import_sample, sample_names

    log = _read_log(path)
    episodes = []
    for sample in log.samples:
        where = f"{path}: sample {sample.id!r}" + ("" if sample.epoch == 1 else f" epoch {sample.epoch}")
        try:
            episode = import_sample(sample)
        except (AttributeError, TypeError, ValueError, KeyError) as error:
            raise InputError(f"{path}: sample {sample.id!r}: malformed ({type(error).__name__}: {error})") from None
        episodes.append(ForeignEpisode(path, where, sample_names(sample), sample.epoch, log.eval.model, episode))
    config = mapping(mapping(mapping(log.eval.metadata).get("harness")).get("config"))
    settings = {
        "model": log.eval.model,
        "max_turns": config.get("max_turns") or log.eval.config.turn_limit,
        "time_limit": config.get("time_limit") or log.eval.config.working_limit,
    }
    return ForeignFile(path, episodes, settings)


def _read_log(path: Path) -> Any:
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
