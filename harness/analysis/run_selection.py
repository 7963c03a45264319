"""The run folders that `report` and `view` arguments name: a run folder, a sweep folder, or any folder of runs;
and where a report of them goes by default (never where a glob of the runs would catch it)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.core.errors import InputError
from harness.records.run_folder import RunFolder
from harness.records.sweep_record import read_sweep_record

_REPORT_FILE = "report.md"
"""What marks a report folder: a glob of runs and sweeps that catches one skips it."""


@dataclass(frozen=True)
class RunSelection:
    runs: list[Path]
    """The run folders, in order, each once."""
    left_out: list[str]
    """Each folder passed over inside a folder of runs, and why (a report folder is passed over unsaid)."""


def run_folders(paths: list[Path]) -> RunSelection:
    """Each PATH's run folders, in order, each once: a run folder itself; a sweep folder's runs in its sweep.yaml
    order; any other folder's run folders and sweep folders' runs, by name. A report folder is passed over."""
    found: dict[Path, None] = {}
    left_out: list[str] = []
    for path in paths:
        for run in _runs_in(path, left_out):
            found.setdefault(run)
    if not found:
        raise InputError(f"{' '.join(map(str, paths))}: no run folders (only report folders)")
    return RunSelection(list(found), left_out)


def _is_run(path: Path) -> bool:
    return RunFolder(path).record_path.is_file()


def _runs_in(path: Path, left_out: list[str]) -> list[Path]:
    if _is_run(path):
        return [path]
    if not path.is_dir():
        raise InputError(f"{path}: {'not a folder' if path.exists() else 'no such folder'} (give run or sweep folders)")
    if (path / _REPORT_FILE).is_file():
        return []
    runs = _sweep_runs(path, left_out)
    if runs is None:
        runs = []
        for child in sorted(child for child in path.iterdir() if child.is_dir() and not child.name.startswith(".")):
            inner = [child] if _is_run(child) else _sweep_runs(child, left_out)
            if inner is not None:
                runs += inner
            elif not (child / _REPORT_FILE).is_file():
                left_out.append(f"{child}: neither a run folder (no run.yaml) nor a sweep folder")
    if not runs:
        raise InputError(f"{path}: not a run folder (no run.yaml) nor a folder of run folders")
    return runs


def _sweep_runs(path: Path, left_out: list[str]) -> list[Path] | None:
    """A sweep folder's runs in its sweep.yaml order (None: not a sweep folder); a run it names that is not there
    is left out."""
    sweep = read_sweep_record(path)
    if sweep is None:
        return None
    runs = [path / entry.run_id for entry in sweep.runs]
    left_out += [
        f"{run}: in {path.name}/sweep.yaml but not a run folder (no run.yaml)" for run in runs if not _is_run(run)
    ]
    return [run for run in runs if _is_run(run)]


def each_run(path: Path) -> list[Path]:
    """PATH alone when it is a file, a run folder or inside one; else the run folders it holds (a sweep's, a
    folder of runs'), or one line saying it holds none."""
    if path.is_file() or any(_is_run(folder) for folder in [path, *path.parents]):
        return [path]
    return run_folders([path]).runs


def one_run(path: Path, command: str) -> Path:
    """PATH (a file, a run folder or inside one), or the one run a folder holds; one line naming the runs when it
    holds several."""
    runs = each_run(path)
    if len(runs) > 1:
        names = ", ".join(map(str, runs[:6])) + (f" and {len(runs) - 6} more" if len(runs) > 6 else "")
        raise InputError(f"{path}: holds {len(runs)} runs; {command} takes one of them: {names}")
    return runs[0]


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
