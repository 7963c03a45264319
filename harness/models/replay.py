"""`replay:PATH`: feeds the replies logged in a trajectory, in order (no network, no provider)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.budget import estimate_tokens
from harness.errors import InputError
from harness.models import ModelReply
from harness.tasks import Task
from harness.trajectory import read_trajectory, trajectory_path


def replay_sources(path: Path, tasks: list[Task]) -> dict[tuple[str, str], Path]:
    """Each selected task's logged trajectory: PATH is one trajectory file or a run folder."""
    if path.is_file():
        events = read_trajectory(path)
        start = events[0] if events and events[0].get("event") == "episode_start" else None
        if start is None:
            raise InputError(f"{path}: not a trajectory (no episode_start on line 1)")
        others = [task.id for task in tasks if (task.domain, task.id) != (start["domain"], start["task_id"])]
        if others:
            raise InputError(f"{path}: replays task {start['task_id']!r} only; select it with --task-id")
        return {(start["domain"], start["task_id"]): path}
    sources = {}
    for task in tasks:
        source = trajectory_path(path, task.domain, task.id)
        if not source.is_file():
            raise InputError(f"{path}: no logged trajectory for task {task.id!r} ({source} not found)")
        sources[(task.domain, task.id)] = source
    return sources


class ReplayModel:
    """Returns the logged replies in order; once they run out, empty text (a format error)."""

    context_window = None

    def __init__(self, trajectory: Path):
        self.name = f"replay:{trajectory}"
        self._replies = [
            ModelReply.from_dict(event["response"])
            for event in read_trajectory(trajectory)
            if event.get("event") == "model_call"
        ]
        self._position = 0

    def count_tokens(self, messages: list[dict[str, Any]]) -> int:
        return estimate_tokens(messages)

    def query(self, messages: list[dict[str, Any]], timeout_s: float) -> ModelReply:
        if self._position >= len(self._replies):
            return ModelReply(text="")
        reply = self._replies[self._position]
        self._position += 1
        return reply
