"""The local sandbox's commands go through the episode's resident launcher, waited for without threads."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from harness.sandboxes.base import SandboxError, SandboxLimitHit, SandboxSettings
from harness.sandboxes.limits import ResourceLimits
from harness.sandboxes.local.launcher import kill_command
from harness.sandboxes.local.sandbox import BubblewrapSandbox, find_bwrap
from tests.helpers.host_processes import host_processes, unique_sleep


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
        sleep = unique_sleep(343)
        result = box.execute(f"for i in $(seq 200); do {sleep} & done; wait", 1)
        leftovers = host_processes(sleep)
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


ORPHAN_MAKER = """
import contextlib, ctypes, os, subprocess, time
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER, as the holder's pid 1 reaps orphans
bwrap = subprocess.Popen(["bash", "-c", "sleep 3171 & echo $!; exec sleep 3172"], stdout=subprocess.PIPE, text=True)
print(bwrap.pid, bwrap.stdout.readline().strip(), flush=True)
while True:
    with contextlib.suppress(ChildProcessError):
        os.wait()
    time.sleep(0.01)
"""


def test_a_commands_pid_1_orphaned_before_it_bound_its_life_to_bwrap_is_killed_with_the_command():
    """bwrap killed between making its pid 1 and that pid 1's `--die-with-parent` leaves the pid 1 to the
    launcher, waiting forever: the kill takes it too (a cancelled sweep's episode waited 10 s for the launcher,
    then ended as a sandbox_error). Stand-ins: a subreaper as the launcher, `sleep`s as bwrap and its pid 1."""
    launcher = subprocess.Popen([sys.executable, "-c", ORPHAN_MAKER], stdout=subprocess.PIPE, text=True)
    bystander = subprocess.Popen(["sleep", "3173"])
    try:
        assert launcher.stdout is not None
        bwrap, pid_1 = (int(pid) for pid in launcher.stdout.readline().split())
        os.kill(bwrap, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while _parent_of(pid_1) != launcher.pid and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _parent_of(pid_1) == launcher.pid  # orphaned: the launcher's child now
        kill_command(launcher.pid)
        while Path(f"/proc/{pid_1}").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not Path(f"/proc/{pid_1}").exists()
        assert launcher.poll() is None and bystander.poll() is None  # the launcher and other processes live on
    finally:
        launcher.kill()
        bystander.kill()
        launcher.wait()
        bystander.wait()


def _parent_of(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def test_a_command_cancelled_at_any_instant_of_its_start_ends_at_once_as_cancelled(tmp_path: Path):
    """The runner's cancel lands before bwrap is reported, while it sets up, and after: each command ends
    within a second, killed (no exit code), never as the sandbox's error."""
    cancel = threading.Event()
    box = BubblewrapSandbox(tmp_path, "cancelled", SandboxSettings(), find_bwrap(), cancel)
    box.start()
    try:
        for delay_ms in range(0, 40, 2):
            cancel.clear()
            timer = threading.Timer(delay_ms / 1000, cancel.set)
            timer.start()
            started = time.monotonic()
            result = box.execute("sleep 3174", 60)
            timer.join()
            assert result.exit_code is None and not result.timed_out, (delay_ms, result)
            assert time.monotonic() - started < 5, delay_ms
    finally:
        box.close()
