"""The local sandbox's commands go through the episode's resident launcher, waited for without threads."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from harness.sandboxes.base import SandboxError, SandboxLimitHit, SandboxSettings
from harness.sandboxes.limits import ResourceLimits
from harness.sandboxes.local.sandbox import BubblewrapSandbox, find_bwrap


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


@pytest.mark.skipif(os.geteuid() != 0, reason="the episode's own memory cgroup needs root on this machine")
def test_an_episode_whose_memory_use_took_its_launcher_down_ends_at_its_limit_not_as_our_error(tmp_path: Path):
    settings = SandboxSettings(ResourceLimits(memory_mb=128, disk_mb=32))
    box = BubblewrapSandbox(tmp_path, "oom", settings, find_bwrap())
    box.start()
    try:
        hog = box.execute("python3 -c 'b = bytearray(512 * 2**20)'", 60)
        assert hog.exit_code == 137  # out of memory, the kernel takes the agent's process, not the launcher
        assert box.execute("echo alive", 10).stdout == "alive\n"
        assert box._scratch is not None
        os.kill(box._scratch.holder_pid, signal.SIGKILL)  # as if the kernel had taken the launcher too
        with pytest.raises(SandboxLimitHit) as hit:
            box.execute("true", 10)
        assert hit.value.limit == "memory"
    finally:
        box.close()


def test_a_launcher_lost_without_running_out_of_memory_is_a_sandbox_error(tmp_path: Path):
    box = BubblewrapSandbox(tmp_path, "lost", SandboxSettings(), find_bwrap())
    box.start()
    try:
        assert box._scratch is not None
        os.kill(box._scratch.holder_pid, signal.SIGKILL)
        with pytest.raises(SandboxError) as lost:
            box.execute("true", 10)
        assert not isinstance(lost.value, SandboxLimitHit)
    finally:
        box.close()
