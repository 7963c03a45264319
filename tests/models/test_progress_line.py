"""The progress line at 80 columns keeps done/total whole and says which calls are being retried and how long
the oldest one has been going (models/in_flight.py, read from the retry policy's own marks)."""

from __future__ import annotations

import io

import httpx
import litellm
from rich.console import Console

from harness.models import in_flight
from harness.models.in_flight import IN_FLIGHT
from harness.models.retries import RetriedCall
from harness.run.executors.batch import BatchState, progress_bar

GATE = "openai@http://127.0.0.1:1/v1"


def test_a_retried_call_is_marked_while_it_is_retried_and_forgotten_after():
    seen = []

    def call(timeout: float) -> str:
        seen.append(IN_FLIGHT.view([GATE]))
        if len(seen) == 1:
            response = httpx.Response(500, headers={"retry-after": "0"}, request=httpx.Request("POST", "http://x"))
            raise litellm.InternalServerError("boom", llm_provider="openai", model="m", response=response)
        return "reply"

    with IN_FLIGHT.calling(GATE):
        assert RetriedCall(call, 2, 60.0, 60.0).run() == "reply"
    assert [view.retrying for view in seen] == [0, 1] and [view.calls for view in seen] == [1, 1]
    assert IN_FLIGHT.view([GATE]).calls == 0 and IN_FLIGHT.view([GATE]).oldest_s is None


def test_the_progress_line_at_80_columns_keeps_done_total_retries_and_the_oldest_call(monkeypatch):
    console = Console(width=80, file=io.StringIO(), color_system=None, force_terminal=True)  # a narrow terminal
    progress = progress_bar(console)
    state = BatchState(done=998, correct=700, running=16, gates=(GATE,))
    with IN_FLIGHT.calling(GATE):
        IN_FLIGHT.retrying()
        now = in_flight.time.monotonic()
        monkeypatch.setattr(in_flight.time, "monotonic", lambda: now + 250)
        task = progress.add_task("openai/a-rather-long-local-model-name on all", total=1000, **state.counts())
        progress.update(task, completed=998)
        console.print(progress.make_tasks_table(progress.tasks))
    line = console.file.getvalue().rstrip("\n")
    assert "\n" not in line and len(line) <= 80, line
    assert "998/1000 · correct 700 · running 16 · retrying 1 · oldest call 4m10s" in line, line
    assert line.startswith("openai/") and "… 998/1000" in line  # the name is what is cut short
