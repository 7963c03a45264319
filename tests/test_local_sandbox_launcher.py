"""The local sandbox's commands go through the episode's resident launcher, waited for without threads."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

from harness.sandboxes import SandboxSettings
from harness.sandboxes.local import BubblewrapSandbox, find_bwrap


def test_a_running_command_costs_the_runner_no_extra_thread(tmp_path: Path):
    collection = tmp_path / "collection"
    collection.mkdir()
    box = BubblewrapSandbox(collection, "threads", SandboxSettings(), find_bwrap())
    box.start()
    try:
        results = []
        before = threading.active_count()
        command = threading.Thread(
            target=lambda: results.append(box.execute("until [ -e documents/go ]; do sleep 0.01; done; echo done", 60))
        )
        command.start()
        most = 0
        for _ in range(100):  # while the command waits for the go file
            most = max(most, threading.active_count())
            time.sleep(0.01)
        (collection / "go").touch()
        command.join(60)
    finally:
        box.close()
    assert results and results[0].stdout == "done\n"
    assert most == before + 1  # the thread this test started, nothing else


def test_commands_see_only_anonymous_pipes_as_their_output(tmp_path: Path):
    box = BubblewrapSandbox(tmp_path, "pipes", SandboxSettings(), find_bwrap())
    box.start()
    try:
        result = box.execute("readlink /proc/self/fd/1 /proc/self/fd/2; ls /proc/self/fd", 60)
    finally:
        box.close()
    lines = result.stdout.split()
    assert lines[0].startswith("pipe:[") and lines[1].startswith("pipe:[")
    assert lines[2:] == ["0", "1", "2", "3"]  # 3: ls's own listing of /proc/self/fd


def test_a_timed_out_commands_processes_are_all_gone_when_it_returns(tmp_path: Path):
    box = BubblewrapSandbox(tmp_path, "teardown", SandboxSettings(), find_bwrap())
    box.start()
    try:
        # a sleep length no other test uses: pgrep sees every process on the machine
        result = box.execute("for i in $(seq 200); do sleep 343 & done; wait", 1)
        leftovers = subprocess.run(["pgrep", "-f", "sleep 343"], capture_output=True, text=True).stdout.split()
    finally:
        box.close()
    assert result.timed_out
    assert leftovers == []
