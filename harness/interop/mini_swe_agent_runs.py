"""The `mini-swe-agent` format (interop/formats.py): a run's finished episodes as `.traj.json` files, and such a
file as an episode for the import engine (run_import.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console

from harness.core.errors import InputError
from harness.core.json_text import json_text
from harness.core.names import check_label, file_name
from harness.core.safe_text import for_terminal
from harness.interop.imported import ForeignEpisode, ForeignFile, ImportedEpisode, mapping
from harness.interop.mini_swe_agent import FORMAT, epoch_of, export_episode, import_messages, instance_id
from harness.records.events import EpisodeStartEvent
from harness.records.reading import is_finished, read_events
from harness.records.run_folder import RunFolder

PATTERN = "*.traj.json"
UNIT = "file"


def export(runs: list[Path], out_dir: Path, console: Console) -> int:
    """Every finished episode of the run as OUT_DIR/<domain>/<task>.traj.json (`<task>~epoch<k>.traj.json` for
    epoch k > 1, the run folder's own naming); unfinished ones are listed."""
    if len(runs) != 1:
        raise InputError("export mini-swe-agent: one RUN_DIR at a time")
    folder = RunFolder(runs[0])
    config = folder.read_record().config.model_dump()
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


def check_readable() -> None:
    """Nothing to check: the format is JSON."""


def read(path: Path) -> ForeignFile:
    """One trajectory file as one episode, named by the instance id in it, else by its name (`<id>.traj.json`)
    or its folder's, in the domain our export wrote."""
    data, episode = load(path)
    info = data["info"]
    domain = mapping(info.get("harness")).get("domain")
    domain = str(domain) if domain is not None else None
    name = path.name.removesuffix(".json").removesuffix(".traj")
    names = tuple((domain, candidate) for candidate in (instance_id(data), name, path.parent.name) if candidate)
    agent = mapping(mapping(info.get("config")).get("agent"))
    settings = {
        "model": _model_of(data),
        "max_turns": agent.get("step_limit"),
        "time_limit": agent.get("wall_time_limit_seconds"),
    }
    foreign = ForeignEpisode(path, str(path), names, epoch_of(data), _model_of(data), episode)
    return ForeignFile(path, [foreign], settings)


def _model_of(data: dict[str, Any]) -> Any:
    config = data["info"].get("config")
    model = (config.get("model") if isinstance(config, dict) else None) or {}
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
