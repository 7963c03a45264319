"""What every episode of a run shares: the run's settings, its factories, its throttles and where it writes."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.episode.settings import EpisodeSettings
from harness.episode.throttles import Slots
from harness.grading.judge import JudgePanel
from harness.inputs.prompts import PromptSet
from harness.inputs.tasks import Task, collection_of
from harness.models.base import Model
from harness.records.episode_log import RunFacts, start_event
from harness.records.events import EpisodeStartEvent
from harness.records.run_folder import RunFolder
from harness.records.trajectory import TrajectoryLog, TrajectoryWriter
from harness.sandboxes.base import Sandbox

_SandboxFactory = Callable[[Task, str], Sandbox]


@dataclass(frozen=True)
class EpisodeContext:
    settings: EpisodeSettings
    prompts: PromptSet
    make_model: Callable[[Task], Model]
    make_sandbox: _SandboxFactory
    run_dir: Path
    run_facts: RunFacts
    """Recorded in every episode_start: config hash, harness version (and on Ray, the node)."""
    collection_hashes: dict[str, str]
    cancel: threading.Event
    """Set on Ctrl-C: running episodes end as `cancelled` at their next step."""
    slots: Slots = field(default_factory=lambda: Slots.of(1 << 20, 1 << 20))
    """The run's sandbox and connection throttles (unbounded unless the batch sets them)."""
    sandbox_facts: dict[str, Any] = field(default_factory=dict)
    """The backend's facts, for episode_start (before this episode's sandbox exists)."""
    collections: dict[str, Path] = field(default_factory=dict)
    """Domain -> collection folder, to name the documents an episode touched."""
    judge: JudgePanel | None = None
    """Grades tasks whose grader is `judge`."""
    watch_opens: bool = False
    """Record exactly which collection files each episode opens (`watch_opens_possible`: asked, and seen)."""
    open_log: Callable[[Task], TrajectoryLog] | None = None
    """Where the episode's events go (default: its trajectory file in the run folder; on a Ray node, a
    stream to the driver, which alone writes the run folder)."""

    def trajectory_log(self, task: Task) -> TrajectoryLog:
        """A new log for TASK's episode."""
        if self.open_log is not None:
            return self.open_log(task)
        return TrajectoryWriter(RunFolder(self.run_dir).trajectory_path(*task.episode))

    def start_of(self, task: Task) -> EpisodeStartEvent:
        """TASK's episode_start: what regrading needs from the log alone, and the run's facts."""
        collection_hash = self.collection_hashes.get(collection_of(task))
        run_facts = self.run_facts
        return start_event(
            task, self.settings.model, sandbox=self.sandbox_facts, collection_hash=collection_hash, run_facts=run_facts
        )
