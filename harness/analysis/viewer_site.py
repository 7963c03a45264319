"""What the viewer serves for a set of run folders: a light index first, each episode when it is opened.

The index comes from the runs' results rows and file names, so it is ready without reading a trajectory; an
episode is read from its log only when asked for, so memory holds one episode, never a run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.analysis.episode_view import episode_view, run_header
from harness.records.events import ActionEvent, EpisodeStartEvent, ObservationEvent
from harness.records.reading import logged_event, read_events
from harness.records.run_folder import RunFolder

_LISTED = ("domain", "task_id", "epoch", "status", "verdict", "failure_mode", "turns", "answer")
"""What the index says of each episode: enough to list, filter and fill the task x model grid."""


@dataclass(frozen=True)
class _Episode:
    """One entry of the index: which run, which log, and its listed fields."""

    run: int
    path: Path
    listed: dict[str, Any]


class ViewerSite:
    def __init__(self, runs: list[Path]):
        self.folders = [RunFolder(path) for path in runs]
        self.records = [folder.read_record() for folder in self.folders]  # bad input: one line, nothing served
        self.episodes: list[_Episode] = []
        for number, folder in enumerate(self.folders):
            self.episodes += _listed_episodes(number, folder)

    @property
    def title(self) -> str:
        return "harness: " + ", ".join(folder.path.name for folder in self.folders)

    def index(self) -> dict[str, Any]:
        """The page's first load: each run's header and every episode's listed fields."""
        runs = []
        for folder, record in zip(self.folders, self.records, strict=True):
            header = run_header(folder, record)
            runs.append({"name": folder.path.name, "label": header["label"], "header": header})
        episodes = [
            {"id": number, "run": episode.run, **episode.listed} for number, episode in enumerate(self.episodes)
        ]
        return {"runs": runs, "episodes": episodes}

    def episode(self, number: int) -> dict[str, Any] | None:
        """One episode as the viewer shows it; None for a number the index does not have."""
        if not 0 <= number < len(self.episodes):
            return None
        entry = self.episodes[number]
        config = self.records[entry.run].config
        return episode_view(read_events(entry.path), config.max_turns or 0, config.time_limit or 0.0)

    def image(self, sha256: str) -> tuple[bytes, str] | None:
        """An image one of the runs stored, by its hash (bytes checked against it), with its media type."""
        for folder in self.folders:
            if (found := folder.images.find(sha256)) is not None:
                return found
        return None

    def search(self, query: str) -> list[int]:
        """The episodes whose commands or outputs contain QUERY (any case), one log read at a time."""
        needle = query.lower()
        escaped = json.dumps(query, ensure_ascii=False)[1:-1].lower()
        found = []
        for number, entry in enumerate(self.episodes):
            raw = entry.path.read_text(encoding="utf-8", errors="replace").lower()
            # the log is JSON (escaped text): a quick look at it before the parsed one
            if (needle in raw or escaped in raw) and needle in _searched_text(entry.path):
                found.append(number)
        return found


def _searched_text(path: Path) -> str:
    """What the search box looks through: every command and output of an episode, lowercased."""
    parts = []
    for logged in read_events(path):
        if isinstance(logged.event, ActionEvent):
            parts.append(logged.event.command)
        elif isinstance(logged.event, ObservationEvent):
            parts += [logged.event.stdout or "", logged.event.stderr or ""]
    return "\n".join(parts).lower()


def _listed_episodes(run: int, folder: RunFolder) -> list[_Episode]:
    """A run's finished episodes from its rows, then those with a log but no row yet (unfinished)."""
    entries = []
    seen = set()
    for key, row in folder.latest_rows().items():
        path = folder.trajectory_path(*key)
        if path.is_file():
            seen.add(path)
            entries.append(_Episode(run, path, {name: _plain(getattr(row, name)) for name in _LISTED}))
    for path in folder.trajectories():
        if path not in seen:
            start = _first_event(path)
            if start is not None:
                listed = {
                    "domain": start.domain,
                    "task_id": start.task_id,
                    "epoch": start.epoch or 1,
                    "status": "unfinished",
                    "verdict": "none",
                    "failure_mode": None,
                    "turns": None,
                    "answer": None,
                }
                entries.append(_Episode(run, path, listed))
    return entries


def _first_event(path: Path) -> EpisodeStartEvent | None:
    """The log's episode_start, read alone (the rest of the log may be long)."""
    with path.open(encoding="utf-8") as lines:
        line = lines.readline()
    if not line.endswith("\n"):
        return None
    event = logged_event(json.loads(line)).event
    return event if isinstance(event, EpisodeStartEvent) else None


def _plain(value: Any) -> Any:
    """An enum (status, verdict) as its value, for JSON."""
    return getattr(value, "value", value)
