"""Local sandbox leftovers: none on disk whatever a model made; cleanup never touches another live run."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from harness.sandboxes.backend import BackendSetup
from harness.sandboxes.base import SandboxSettings
from harness.sandboxes.local.sandbox import BubblewrapSandbox, find_bwrap
from harness.sandboxes.registry import prepare_backend

REPO = Path(__file__).resolve().parents[2]
DEAD_PID = 2**22 + 11
"""Above the largest pid_max Linux allows (2**22): no process has it."""


def start_a_local_run() -> None:
    """What a run's start does to the host: the backend checked, then started (its clean-up of dead runs)."""
    setup = BackendSetup(settings=SandboxSettings(), run_id="this-run", collections={}, time_limit_s=60)
    prepare_backend("local", setup).start()


MESSY_TREE = """
cd {root} && bottom=deep/$(printf 'd/%.0s' $(seq 1500)) && mkdir -p $bottom && echo x > ${{bottom}}file &&
mkdir -p locked/inner && echo x > locked/inner/f && chmod 000 locked/inner locked
"""
"""What a model did: a folder 1,500 levels deep, and folders nobody may read or enter."""


def test_a_sandbox_leaves_nothing_on_the_host_disk_whatever_tree_a_model_made(collection, tmp_path, monkeypatch):
    """The tree lives on a tmpfs in the holder's namespace only: a 1,500-level folder and `chmod 000` ones
    never touch the host's disk, and are gone with the holder. This process's temporary folder is one of its
    own, so another program's files in the machine's /tmp are not counted."""
    temp = tmp_path / "private-tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    before = set(temp.iterdir())
    box = BubblewrapSandbox(collection, "messy", SandboxSettings(), find_bwrap())
    box.start()
    assert box._scratch is not None
    holder = box._scratch.holder_pid
    for root in ("/workspace/run", "/tmp"):
        result = box.execute(MESSY_TREE.format(root=root), 120)
        assert result.exit_code == 0, result.stderr
    made = set(temp.iterdir()) - before
    box.close()
    assert made == set()
    assert not Path(f"/proc/{holder}").exists()


RUNNER = """
import os, sys, tempfile
from pathlib import Path
from harness.sandboxes.base import SandboxSettings
from harness.sandboxes.local.sandbox import BubblewrapSandbox, find_bwrap
from harness.sandboxes.registry import prepare_backend

box = BubblewrapSandbox(Path(sys.argv[1]), "other-run", SandboxSettings(), find_bwrap())
box.start()
box.execute("echo kept > run/x", 60)
print(box._scratch.holder_pid, *box._limits.cgroup_dirs, flush=True)
sys.stdin.readline()
result = box.execute("cat run/x", 60)
print(result.exit_code, result.stdout.strip(), flush=True)
box.close()
"""


def test_starting_a_run_leaves_another_live_runs_sandbox_and_cgroups_intact(collection):
    """Another runner process is between two commands of an episode while this one starts a local run."""
    other = subprocess.Popen(
        [sys.executable, "-c", RUNNER, str(collection)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ | {"PYTHONPATH": str(REPO)},
    )
    try:
        holder, *cgroups = other.stdout.readline().split()
        start_a_local_run()
        assert Path(f"/proc/{holder}").exists() and all(Path(group).is_dir() for group in cgroups)
        other.stdin.write("\n")
        other.stdin.flush()
        assert other.stdout.readline().split() == ["0", "kept"]
    finally:
        other.stdin.close()
        other.wait(60)


def test_cleanup_removes_cgroups_of_dead_runners_only(collection):
    from harness.sandboxes.limits import CGROUP_ROOT

    live = BubblewrapSandbox(collection, "live", SandboxSettings(), find_bwrap())
    live.start()
    try:
        live_cgroups = list(live._limits.cgroup_dirs)
        unique = uuid.uuid4().hex[:8]  # cgroups are the machine's: another test run may be using other names
        dead_cgroups = [group.parent / f"{DEAD_PID}-mini-t1-{unique}" for group in live_cgroups]
        for group in dead_cgroups:
            group.mkdir()
        start_a_local_run()
        assert not any(group.exists() for group in dead_cgroups)
        assert all(group.is_dir() for group in live_cgroups)
        assert live.execute("true", 60).exit_code == 0
        if os.geteuid() == 0:  # where cgroups exist at all, they were exercised
            assert live_cgroups and all(CGROUP_ROOT in group.parents for group in live_cgroups)
    finally:
        live.close()


def test_cleanup_kills_what_a_dead_runners_episode_left_in_its_cgroup_and_nothing_of_a_live_ones(collection):
    """A runner killed while a holder started leaves it waiting for ever in its episode's cgroup (its parent,
    bwrap, is gone): the next cleanup kills it. A process there whose parent lives (a runner in another pid
    namespace, whose own pid looks dead from here) is left alone."""
    live = BubblewrapSandbox(collection, "live", SandboxSettings(), find_bwrap())
    live.start()
    live_cgroups = list(live._limits.cgroup_dirs)
    live.close()
    if os.geteuid() != 0 or not live_cgroups:
        return  # an ordinary user without a delegated subtree has no cgroups to leave anything in
    unique = uuid.uuid4().hex[:8]  # cgroups are the machine's: another test run may be using other names
    orphaned = [group.parent / f"{DEAD_PID}-mini-orphan-{unique}" for group in live_cgroups]
    parented = [group.parent / f"{DEAD_PID + 1}-mini-parented-{unique}" for group in live_cgroups]
    for group in (*orphaned, *parented):
        group.mkdir()
    join = "; ".join(f"echo $$ > {group}/cgroup.procs" for group in orphaned)
    # the shell that starts it exits at once: the sleep's parent is init, as a stuck holder's is
    started = subprocess.run(
        ["bash", "-c", f"sh -c '{join}; exec sleep 600' >/dev/null 2>&1 & echo $!"],
        capture_output=True,
        text=True,
        check=True,
    )
    orphan = int(started.stdout)
    child = subprocess.Popen(
        ["sh", "-c", "; ".join(f"echo $$ > {group}/cgroup.procs" for group in parented) + "; exec sleep 600"]
    )
    try:
        deadline = time.monotonic() + 10
        while (
            not all(
                str(pid) in (g / "cgroup.procs").read_text().split()
                for pid, groups in ((orphan, orphaned), (child.pid, parented))
                for g in groups
            )
            and time.monotonic() < deadline
        ):
            time.sleep(0.02)
        start_a_local_run()
        assert not any(group.exists() for group in orphaned)
        assert not Path(f"/proc/{orphan}").exists() or "Z" in Path(f"/proc/{orphan}/stat").read_text().split()[2]
        assert child.poll() is None and all(group.is_dir() for group in parented)
    finally:
        child.kill()
        child.wait()
        with contextlib.suppress(ProcessLookupError):
            os.kill(orphan, signal.SIGKILL)
        for group in (*orphaned, *parented):
            deadline = time.monotonic() + 5
            while group.exists() and time.monotonic() < deadline:
                with contextlib.suppress(OSError):
                    group.rmdir()
                time.sleep(0.02)


def test_an_ordinary_user_with_a_delegated_cgroup_v2_subtree_gets_per_sandbox_limits(tmp_path, monkeypatch):
    """A systemd user scope with Delegate=yes, as files: the runner leaves for a leaf, episodes get groups."""
    from harness.sandboxes import limits

    scope = tmp_path / "user.slice" / "app.scope"
    scope.mkdir(parents=True)
    for folder, controllers in ((tmp_path, "cpu memory pids"), (scope, "memory pids")):
        (folder / "cgroup.controllers").write_text(controllers)
        (folder / "cgroup.procs").write_text("")
        (folder / "cgroup.subtree_control").write_text("")
    monkeypatch.setattr(limits, "CGROUP_ROOT", tmp_path)
    monkeypatch.setattr(limits, "own_cgroup", lambda: "/user.slice/app.scope")
    monkeypatch.setattr(limits.os, "geteuid", lambda: 1000)
    applied = limits.apply_limits(limits.ResourceLimits(memory_mb=256, pids=32), "mini-t1")
    (group,) = applied.cgroup_dirs
    assert applied.mechanism == "cgroup-v2" and applied.warning is None
    assert group.parent == scope / "harness" and group.name.startswith(f"{os.getpid()}-mini-t1-")
    assert (scope / limits.RUNNER_LEAF / "cgroup.procs").read_text() == str(os.getpid())
    assert (scope / "cgroup.subtree_control").read_text() == "+memory +pids"
    assert (group / "memory.max").read_text() == str(256 * 1024 * 1024) and (group / "pids.max").read_text() == "32"
    assert f"echo $$ > {group}/cgroup.procs" in applied.prologue
    stale = scope / "harness" / f"{DEAD_PID}-mini-t2-0123abcd"
    stale.mkdir()
    assert limits.release_stale_cgroups() == 1 and not stale.exists() and group.is_dir()
