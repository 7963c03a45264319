"""The `harbor` format (interop/formats.py): the tasks our runs ran as a Harbor dataset (`export harbor`), and a
Harbor job's trials as episodes for the import engine (`import harbor`, harbor_import.py)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from harness.core.errors import InputError
from harness.core.safe_text import for_terminal
from harness.grading import is_judged
from harness.inputs.tasks import Task, collection_of, collection_path, load_task_file, task_file
from harness.interop.harbor_import import FORMAT, PATTERN, UNIT, read
from harness.interop.harbor_task import task_folder_name, write_task
from harness.records.run_folder import RunFolder

__all__ = ["FORMAT", "PATTERN", "UNIT", "check_readable", "export", "read"]

DEFAULT_TIMEOUT_S = 1800.0
"""The agent's time in Harbor when the run set none."""


def check_readable() -> None:
    """Nothing to check: a Harbor job is JSON."""


def export(runs: list[Path], out_dir: Path, console: Console, image: str | None = None) -> int:
    """Every task the runs ran (a row of theirs), from their tasks and collections folders, as a Harbor task
    folder in OUT_DIR, its environment FROM IMAGE (`export --image`, by default this version's sandbox image);
    a judged task is left out and named (its grade needs a judge model). Every input is read before anything is
    written; OUT_DIR must not exist."""
    if image is None:
        raise InputError("export harbor: the environment's image is needed (--image)")
    if out_dir.exists():
        raise InputError(f"export harbor: {out_dir} exists; give a new folder")
    chosen: dict[tuple[str, str], tuple[Task, Path, float]] = {}
    for run in runs:
        folder = RunFolder(run)
        config = folder.read_record().config
        if not config.tasks_dir or not config.collections_dir:
            raise InputError(f"export harbor: {folder.path / 'run.yaml'}: no tasks_dir or collections_dir recorded")
        ran = set(folder.latest_rows())
        tasks_dir, collections_dir = Path(config.tasks_dir), Path(config.collections_dir)
        timeout_s = float(config.time_limit or DEFAULT_TIMEOUT_S)
        for domain in sorted({domain for domain, _, _ in ran}):
            for task in load_task_file(task_file(tasks_dir, domain)):
                if any((domain, task.id) == (d, t) for d, t, _ in ran):
                    collection = collection_path(collections_dir, collection_of(task))
                    chosen.setdefault((domain, task.id), (task, collection, timeout_s))
    judged = [f"{d}/{t}" for (d, t), (task, _, _) in chosen.items() if is_judged(task.grader)]
    kept = {key: value for key, value in chosen.items() if not is_judged(value[0].grader)}
    if not kept:
        raise InputError("export harbor: the runs ran no task a deterministic grader grades")
    out_dir.mkdir(parents=True)
    for task, collection, timeout_s in kept.values():
        write_task(task, collection, image, timeout_s, out_dir / task_folder_name(task))
    if judged:
        console.print(
            for_terminal(f"left out (a judge grades them): {', '.join(judged)}"), markup=False, highlight=False
        )
    console.print(
        f"exported {len(kept)} tasks to {for_terminal(str(out_dir))} (Harbor dataset, FROM {image})",
        markup=False,
        highlight=False,
    )
    return 0
