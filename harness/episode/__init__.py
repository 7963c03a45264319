"""One episode: its solvers (the bash agent among them), its budget and its lifecycle. What the executors call
is exported here."""

from harness.episode.context import EpisodeContext
from harness.episode.lifecycle import failed_row, run_episode

__all__ = [
    "EpisodeContext",
    "actions",
    "budget",
    "failed_row",
    "proxy",
    "query",
    "run_episode",
    "settings",
    "solvers",
    "throttles",
    "vision",
]
