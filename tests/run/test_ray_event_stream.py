"""The stream of events from Ray nodes to the driver (no cluster: the queue's two ends, as Ray's queue calls them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.core.reply import Reply, Usage
from harness.records.events import ModelCallEvent, SandboxReadyEvent
from harness.records.run_folder import RunFolder
from harness.run.executors.ray_event_stream import StreamedLog, TrajectoryFiles


class ListQueue:
    """`ray.util.queue.Queue`'s calls the stream uses, over a list."""

    def __init__(self) -> None:
        self.items: list[Any] = []

    def put(self, item: Any) -> None:
        self.items.append(item)

    def size(self) -> int:
        return len(self.items)

    def get_nowait_batch(self, count: int) -> list[Any]:
        taken, self.items = self.items[:count], self.items[count:]
        return taken


def _call(turn: int, input_tokens: int, output_tokens: int) -> ModelCallEvent:
    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens)
    return ModelCallEvent(turn=turn, messages=[], response=Reply(text="", usage=usage))


def test_the_driver_counts_each_calls_tokens_as_its_event_arrives(tmp_path: Path):
    """The live token count under Ray moves with every call, not only when an episode's row arrives."""
    queue = ListQueue()
    log = StreamedLog(queue, ("law", "t1", 1), attempt=1)
    log.write(SandboxReadyEvent(sandbox={"backend": "local"}, start_s=0.1))
    log.write(_call(1, 1200, 30))
    files = TrajectoryFiles(RunFolder(tmp_path / "run"))
    assert files.take(queue) == (1, 1230)
    log.write(_call(2, 1300, 40))
    assert files.take(queue) == (0, 1340)
    assert files.take(queue) == (0, 0)


def test_a_lost_attempts_late_calls_are_counted_but_not_written(tmp_path: Path):
    queue = ListQueue()
    lost, retried = (StreamedLog(queue, ("law", "t1", 1), attempt) for attempt in (1, 2))
    retried.write(_call(1, 100, 10))
    lost.write(_call(3, 900, 90))  # the lost node's last call, arriving after the retry began
    folder = RunFolder(tmp_path / "run")
    files = TrajectoryFiles(folder)
    assert files.take(queue) == (1, 1100)
    files.close(("law", "t1", 1))
    assert folder.trajectory_path("law", "t1", 1).read_text().count('"turn"') == 1
