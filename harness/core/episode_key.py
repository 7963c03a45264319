"""The key of an episode: which task, and which repeat of it."""

from __future__ import annotations

from typing import NamedTuple


class EpisodeKey(NamedTuple):
    """(domain, task id, epoch): an episode's name in the run folder, its trajectory's and its row's. A task is
    what is asked; an episode is one attempt at it (epochs 1 .. --epochs)."""

    domain: str
    task_id: str
    epoch: int
