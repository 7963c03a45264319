"""The run folders that `report` and `view` arguments name: a run folder, a sweep folder, or any folder of runs;
and where a report of them goes by default (never where a glob of the runs would catch it)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from harness.core.errors import InputError
from harness.records.run_folder import RunFolder
from harness.records.sweep_record import read_sweep_record

_REPORT_FILE = "report.md"
"""What marks a report folder: a glob of runs and sweeps that catches one skips it."""


def run_folders(paths: list[Path]) -> list[Path]:
    """Each PATH's run folders, in order, each once: a run folder itself; a sweep folder's runs in its sweep.yaml
    order; any other folder's subfolders that are run folders, by name. A report folder is passed over."""
    found: dict[Path, None] = {}
    for path in paths:
        for run in _runs_in(path):
            found.setdefault(run)
    if not found:
        raise InputError(f"{' '.join(map(str, paths))}: no run folders (only report folders)")
    return list(found)


def _runs_in(path: Path) -> list[Path]:
    if RunFolder(path).record_path.is_file():
        return [path]
    if not path.is_dir():
        raise InputError(f"{path}: {'not a folder' if path.exists() else 'no such folder'} (give run or sweep folders)")
    if (path / _REPORT_FILE).is_file():
        return []
    sweep = read_sweep_record(path)
    if sweep is not None:
        runs = [path / entry.run_id for entry in sweep.runs]
    else:
        runs = sorted(child for child in path.iterdir() if child.is_dir())
    runs = [run for run in runs if RunFolder(run).record_path.is_file()]
    if not runs:
        raise InputError(f"{path}: not a run folder (no run.yaml) nor a folder of run folders")
    return runs


def default_report_folder(paths: list[Path], runs: list[Path]) -> Path:
    """One run folder given: its `report/`. Otherwise `<holder>-report` beside the folder holding the runs (a sweep
    folder, or their nearest common folder), so that no glob over the runs catches it and the same command
    writes the same place again."""
    if len(paths) == 1 and runs == paths:
        return runs[0] / "report"
    holder = Path(os.path.commonpath([run.resolve().parent for run in runs]))
    return holder.parent / f"{holder.name}-report"


def run_labels(settings: list[str], runs: list[Path]) -> Mapping[Path, str]:
    """`--label RUN=LABEL` settings -> run folder -> label; RUN is a run folder's path or its name."""
    labels: dict[Path, str] = {}
    for setting in settings:
        name, equals, label = setting.partition("=")
        if not equals or not name or not label.strip():
            raise InputError(f"--label {setting}: expected RUN=LABEL")
        matches = [run for run in runs if run.name == name or run.resolve() == Path(name).resolve()]
        if len(matches) != 1:
            found = "names no run folder given" if not matches else "names several run folders; give its path"
            raise InputError(f"--label {setting}: {name!r} {found}")
        labels[matches[0]] = label.strip()
    return labels
