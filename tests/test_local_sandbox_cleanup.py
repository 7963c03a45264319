"""Local sandbox leftovers: cleanup removes whatever a model made, and never touches another live run."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from harness.sandboxes import SandboxSettings
from harness.sandboxes.backends import prepare_backend
from harness.sandboxes.local import BubblewrapSandbox, find_bwrap
from harness.sandboxes.scratch import SCRATCH_PREFIX
from tests.unprivileged import run_unprivileged

REPO = Path(__file__).resolve().parent.parent
DEAD_PID = 2**22 + 11
"""Above the largest pid_max Linux allows (2**22): no process has it."""

MESSY_TREE = """
cd {root} && bottom=deep/$(printf 'd/%.0s' $(seq 1500)) && mkdir -p $bottom && echo x > ${{bottom}}file &&
mkdir -p locked/inner && echo x > locked/inner/f && chmod 000 locked/inner locked
"""
"""What a model did: a folder 1,500 levels deep, and folders nobody may read or enter."""


def test_closing_a_sandbox_removes_a_1500_level_tree_and_unreadable_folders(collection):
    box = BubblewrapSandbox(collection, "messy", SandboxSettings(), find_bwrap())
    box.start()
    (scratch,) = Path(tempfile.gettempdir()).glob(f"{SCRATCH_PREFIX}{os.getpid()}-messy-*")
    for root in ("/workspace/run", "/tmp"):
        result = box.execute(MESSY_TREE.format(root=root), 120)
        assert result.exit_code == 0, result.stderr
    box.close()
    assert not scratch.exists()


def test_orphan_cleanup_removes_a_deep_unreadable_tree_as_an_unprivileged_user():
    """A dead runner's scratch with a 1,500-level tree, `chmod 000` folders and a symlink out of it.

    Run as an ordinary user (uid 65534 when we are root: no root override helps it), in a temp folder of its
    own, so that other runs' cleanups on this machine do not race with it.
    """
    script = textwrap.dedent(f"""
        import subprocess, tempfile
        from pathlib import Path
        from harness.sandboxes.scratch import remove_orphaned_scratch
        orphan = Path(tempfile.mkdtemp(prefix="{SCRATCH_PREFIX}{DEAD_PID}-mini-t1-"))
        outside = Path(tempfile.mkdtemp(prefix="harness-test-outside-"))
        (outside / "keep.txt").write_text("host file")
        subprocess.run(["bash", "-c", {MESSY_TREE!r}.format(root=orphan)], check=True)
        (orphan / "link-out").symlink_to(outside)
        (orphan / "deep" / "link-file").symlink_to(outside / "keep.txt")
        removed = remove_orphaned_scratch()
        print(removed, orphan.exists(), sorted(p.name for p in outside.iterdir()))
    """)
    result = run_unprivileged(script)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split(None, 2) == ["1", "False", "['keep.txt']\n"]


RUNNER = """
import os, sys, tempfile
from pathlib import Path
from harness.sandboxes import SandboxSettings
from harness.sandboxes.local import BubblewrapSandbox, find_bwrap

box = BubblewrapSandbox(Path(sys.argv[1]), "other-run", SandboxSettings(), find_bwrap())
box.start()
box.execute("echo kept > run/x", 60)
scratch = Path(tempfile.gettempdir()).glob(f"harness-scratch-{os.getpid()}-other-run-*")
print(*scratch, *box._limits.cgroup_dirs, flush=True)
sys.stdin.readline()
result = box.execute("cat run/x", 60)
print(result.exit_code, result.stdout.strip(), flush=True)
box.close()
"""


def test_starting_a_run_leaves_another_live_runs_scratch_and_cgroups_intact(collection):
    """Another runner process is between two commands of an episode while this one starts a local run."""
    other = subprocess.Popen(
        [sys.executable, "-c", RUNNER, str(collection)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ | {"PYTHONPATH": str(REPO)},
    )
    try:
        folders = [Path(p) for p in other.stdout.readline().split()]
        assert folders and folders[0].name.startswith(f"{SCRATCH_PREFIX}{other.pid}-")
        prepare_backend("local", SandboxSettings(), "this-run", ["mini"], 60, None)
        assert all(folder.is_dir() for folder in folders)
        other.stdin.write("\n")
        other.stdin.flush()
        assert other.stdout.readline().split() == ["0", "kept"]
    finally:
        other.stdin.close()
        other.wait(60)


def test_cleanup_removes_cgroups_and_scratch_of_dead_runners_only(collection):
    from harness.sandboxes.limits import CGROUP_ROOT

    live = BubblewrapSandbox(collection, "live", SandboxSettings(), find_bwrap())
    live.start()
    try:
        live_cgroups = list(live._limits.cgroup_dirs)
        dead_cgroups = [group.parent / f"{DEAD_PID}-mini-t1-0123abcd" for group in live_cgroups]
        for group in dead_cgroups:
            group.mkdir()
        dead_scratch = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{DEAD_PID}-mini-t1-"))
        prepare_backend("local", SandboxSettings(), "this-run", ["mini"], 60, None)  # a run's start-up cleanup
        assert not dead_scratch.exists()
        assert not any(group.exists() for group in dead_cgroups)
        assert all(group.is_dir() for group in live_cgroups)
        assert live.execute("true", 60).exit_code == 0
        if os.geteuid() == 0:  # where cgroups exist at all, they were exercised
            assert live_cgroups and all(CGROUP_ROOT in group.parents for group in live_cgroups)
    finally:
        live.close()


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
