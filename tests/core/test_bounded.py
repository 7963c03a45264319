"""Work in bounded worker processes: past the time cap the worker is killed, past the memory cap the item
ends, a worker that dies costs only its item (which goes again once), the others all end."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from harness.core.bounded import DIED, MEMORY, TIME, BoundedWorker, Limits, Stopped, bounded_map


def hostile(item: tuple[str, Path]) -> str:
    kind, folder = item
    with (folder / f"{kind}.tries").open("a") as tries:
        tries.write("x")
    if kind == "sleeps":
        time.sleep(600)
    if kind == "allocates":
        return "x" * (1 << 30)
    if kind == "dies":
        os._exit(1)
    if kind == "raises":
        raise ValueError("a reader's one line")
    if kind == "pid":
        return str(os.getpid())
    return kind.upper()


@pytest.mark.parametrize("workers", [1, 2])
def test_each_item_ends_with_its_result_or_the_limit_it_went_over(tmp_path, workers):
    items = [(kind, tmp_path) for kind in ("fine", "sleeps", "allocates", "dies", "also-fine")]
    started = time.monotonic()
    results = dict(bounded_map(items, hostile, Limits(memory_mb=300, seconds=5), workers))
    assert time.monotonic() - started < 60
    assert {kind: result for (kind, _), result in results.items()} == {
        "fine": "FINE",
        "sleeps": Stopped(TIME),
        "allocates": Stopped(MEMORY),
        "dies": Stopped(DIED),
        "also-fine": "ALSO-FINE",
    }
    assert (tmp_path / "dies.tries").read_text() == "xx"  # it went again once, in a fresh process


def test_an_exception_the_work_raises_is_raised_in_the_caller(tmp_path):
    with pytest.raises(ValueError, match="a reader's one line"):
        list(bounded_map([("raises", tmp_path)], hostile, Limits(memory_mb=300, seconds=30)))


def test_a_kept_worker_serves_items_one_at_a_time_and_restarts_after_a_limit(tmp_path):
    """The image decoder's worker (core/image_decode.py): one process for many items, each under its own time
    cap; an item past a limit ends that process, and the next item gets a fresh one."""
    worker = BoundedWorker(hostile, memory_mb=300)
    try:
        first = worker.run(("pid", tmp_path), 30)
        assert worker.run(("pid", tmp_path), 30) == first  # the same process
        with pytest.raises(ValueError, match="a reader's one line"):
            worker.run(("raises", tmp_path), 30)
        assert worker.run(("pid", tmp_path), 30) == first  # an exception the work raised keeps it
        assert worker.run(("allocates", tmp_path), 30) == Stopped(MEMORY)
        assert worker.run(("sleeps", tmp_path), 2) == Stopped(TIME)
        assert worker.run(("dies", tmp_path), 30) == Stopped(DIED)
        assert worker.run(("fine", tmp_path), 30) == "FINE"
        assert worker.run(("pid", tmp_path), 30) != first
    finally:
        worker.close()


def test_a_worker_whose_parent_goes_away_with_its_answer_unread_ends_quietly(tmp_path, capfd):
    """Ctrl-C reaches the builder while a worker's answer waits unread: the builder's end of the pipe closes and
    the worker's next read is refused (ECONNRESET). That ends the worker like an end of input, with no traceback
    printed under the builder's own one-line message."""
    import multiprocessing

    from harness.core.bounded import _Worker

    worker = _Worker.start(multiprocessing.get_context("spawn"), hostile, 300)
    worker.take(0, [("fine", tmp_path)], 30)
    assert worker.connection.poll(30)  # its answer arrived, and is left unread
    worker.connection.close()
    worker.process.join(30)
    assert worker.process.exitcode == 0
    assert "Traceback" not in capfd.readouterr().err
