"""`--executor ray`'s event stream: each trajectory event sent from a node as it happens (`StreamedLog`), and
written by the driver, the single writer of the run folder (`TrajectoryFiles`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.core.episode_key import EpisodeKey
from harness.core.reply import Usage
from harness.records.events import Event, ModelCallEvent
from harness.records.run_folder import RunFolder
from harness.records.trajectory import KeptEvents, TrajectoryWriter


@dataclass
class TrajectoryFiles:
    """The driver's side of the event stream: one open trajectory per episode, the latest attempt's."""

    folder: RunFolder
    open: dict[EpisodeKey, tuple[int, TrajectoryWriter]] = field(default_factory=dict)
    started: set[EpisodeKey] = field(default_factory=set)
    """Episodes whose first event arrived and whose row did not yet: the ones running."""

    def take(self, events: Any) -> tuple[int, int]:
        """Write every queued event; returns how many episodes started since (their first event), and the tokens
        of the model calls among the events."""
        count = events.size()
        if not count:
            return 0, 0
        started = tokens = 0
        for key, attempt, line, call_tokens in events.get_nowait_batch(count):  # the driver is the only consumer
            current = self.open.get(key)
            tokens += call_tokens  # a lost attempt's calls were made too
            if current is not None and current[0] > attempt:
                continue  # a late event of a lost attempt
            if current is None or current[0] < attempt:
                if current is not None:  # the attempt on a lost node: kept under previous/
                    current[1].close()
                    self.folder.keep_previous_attempt(*key)
                if key not in self.started:
                    self.started.add(key)
                    started += 1
                self.open[key] = (attempt, TrajectoryWriter(self.folder.trajectory_path(*key)))
            self.open[key][1].append(line)
        return started, tokens

    def end(self, key: EpisodeKey, line: str, attempt: int) -> None:
        """The end of an episode the driver itself ended (its node was lost twice): ATTEMPT is its last."""
        if key not in self.open:
            self.open[key] = (attempt, TrajectoryWriter(self.folder.trajectory_path(*key)))
        self.open[key][1].append(line)

    def close(self, key: EpisodeKey) -> int:
        """Close (fsync) the episode's trajectory; 1 if it was counted as running, else 0."""
        current = self.open.pop(key, None)
        if current is not None:
            current[1].close()
        if key in self.started:
            self.started.discard(key)
            return 1
        return 0

    def close_all(self) -> None:
        """After a second Ctrl-C: what the nodes sent so far stays, fsynced; those episodes stay unfinished."""
        for key in list(self.open):
            self.close(key)


class StreamedLog(KeptEvents):
    """An episode's trajectory on a node: each event goes to the driver as it happens."""

    def __init__(self, events: Any, key: EpisodeKey, attempt: int):
        super().__init__()
        self._events, self._key, self._attempt = events, key, attempt

    def _send(self, line: str, event: Event) -> None:
        """The line, and the call's tokens for the driver's live count (it writes lines, reading none)."""
        usage = event.response.usage if isinstance(event, ModelCallEvent) else Usage()
        self._events.put((self._key, self._attempt, line, usage.input_tokens + usage.output_tokens))

    def close(self) -> None:
        """The driver closes the file when the row arrives."""
