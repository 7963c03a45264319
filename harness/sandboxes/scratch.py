"""A local episode's scratch: a host folder, the sandbox's file tree on a size-capped tmpfs, and their removal.

The whole tree a command sees as `/` is built once per episode, by a *holder*: a bwrap process in its own
mount namespace (the host's tree plus the sandbox's) that mounts a tmpfs of `disk_mb` (bwrap `--size`,
bwrap >= 0.10) at `<folder>/root`, lays the sandbox out on it (`/tmp` and `/workspace/run` are folders of
that tmpfs, so they share the disk cap; `/usr`, the collection and the rest are read-only binds the caller
passes) and then runs a small bash launcher (`launcher.py` talks to it) that forks each command's bwrap on
request. A command's bwrap then only binds that ready tree as its root and mounts its own `/proc` (a
handful of mounts, instead of 20-odd per command). The holder starts inside the episode's limits (cgroup
or rlimits), so every command inherits them and its mount namespace with one fork and no `nsenter`.
The holder also makes the episode's network namespace (loopback only, so no network), which the commands
share: what a command could leave there is at most loopback's packet counters, no process or socket.
The launcher may run as another user (`launcher_user`: the sandbox user, when the runner is root and each
command gets its own user namespace); it then reads only files of this folder that are handed to it.
The holder dies with the runner (`--die-with-parent`, and the pipe's end), so a killed runner leaves no
mount behind, and nothing of the tmpfs ever lands on the host disk. The tmpfs is memory: where cgroups
apply, its pages count toward the episode's memory limit.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness.sandboxes import WORKDIR, SandboxError

SANDBOX_UID = 65534
SCRATCH_PREFIX = "harness-scratch-"
"""Scratch folders are named harness-scratch-<runner pid>-<episode>-*, so orphans can be told apart."""
_ATTEMPTS = 3
"""Tries to start a holder (see `create_scratch`)."""
_EXIT_WAIT_S = 1.0
"""How long the holder may take to end by itself at close before it is killed."""
DISK_ENFORCEMENT = "tmpfs of disk_mb for /workspace/run and /tmp together (bwrap --size), held per episode"
ROOT = "root"
"""The sandbox's tree, `<folder>/root` in the holder's mount namespace: every command's `/`."""
LAUNCHER_FILES = ("arguments", "command")
"""What the launcher reads: the options of every command's bwrap, and the current command's argv."""


# Runs in the holder, in the scratch folder, with the write ends of three pipes (stdout, stderr, bwrap's
# status; fd numbers in $2 $3 $4, moved above 9 out of the way of 0-4) that the runner reads for every
# command. For each request line (the command's number and argument count) it forks the command's bwrap
# with argv[0] "bwrap" (pid 1 inside shows nothing of the host), its options from `arguments` (fd 3) and
# its command from the first `count` NUL-terminated arguments in `command`. It answers "<n> pid <pid>" at
# once and "<n> exit <code>" when bwrap has exited, by which time every process of the command is gone
# (pid 1 of a pid namespace takes them all with it), so all of the output is in the pipes.
LAUNCHER = """echo $$
exec 2>/dev/null
o=$2 e=$3 s=$4
exec {out}>&"$o" {err}>&"$e" {status}>&"$s"
exec {o}>&- {e}>&- {s}>&-
while read -r n count; do
  mapfile -d '' -t -n "$count" argv < command
  { exec -a bwrap "$1" --args 3 -- "${argv[@]}"; } 3< arguments 4>&"$status" >&"$out" 2>&"$err" \\
    {out}>&- {err}>&- {status}>&- < /dev/null &
  echo "$n pid $!"
  wait "$!"
  echo "$n exit $?"
done
"""


@dataclass
class Layout:
    """How the holder mounts the rest of the sandbox's tree (besides `/tmp` and `/workspace/run`)."""

    options: list[str]
    """The holder's bwrap options, with destinations under the tree's root."""
    files: list[int] = field(default_factory=list)
    """Descriptors the options read (`--file FD DEST`): passed to the holder, closed once it has started."""


@dataclass
class Scratch:
    """One episode's scratch: `folder` on the host (the launcher's files) and the holder's tmpfs."""

    folder: Path
    holder: subprocess.Popen[bytes]
    holder_pid: int
    """The launcher: the process whose mount namespace holds the tmpfs (bwrap's child, not bwrap)."""
    as_root: bool
    outputs: tuple[int, int, int]
    """The read ends of the launcher's stdout, stderr and bwrap status pipes (non-blocking)."""

    @property
    def root(self) -> Path:
        """The tmpfs mount point of the sandbox's tree; it exists only inside the holder's namespace."""
        return self.folder / ROOT

    def close(self) -> bool:
        """Drop the tmpfs and remove the host folder; never raises. True when nothing is left."""
        with contextlib.suppress(OSError):
            if self.holder.stdin is not None:
                self.holder.stdin.close()
        try:
            # the launcher ends at the end of its requests, and the holder with it: every process is then
            # reaped by its parent, so the sandbox's CPU time shows in the runner's RUSAGE_CHILDREN
            self.holder.wait(_EXIT_WAIT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.holder.pid, signal.SIGKILL)
            self.holder.wait()
        for stream in (self.holder.stdout, self.holder.stderr):
            if stream is not None:
                stream.close()
        for fd in self.outputs:
            with contextlib.suppress(OSError):
                os.close(fd)
        return remove_tree(self.folder)


def create_scratch(
    episode_name: str,
    disk_mb: int,
    bwrap: str,
    prologue: str = "",
    lay_out: Callable[[str], Layout] = lambda root: Layout([]),
    launcher_user: int | None = None,
    launcher_bwrap: str | None = None,
) -> Scratch:
    """Make the host folder and start the holder of the sandbox's tree on its `disk_mb` tmpfs.

    `prologue` (shell, from `limits.py`) puts the holder, and so every command, under the episode's limits.
    `lay_out(root)` gives how the holder mounts the rest of the tree under `root` (`<folder>/root`, which
    already has `/tmp` and `/workspace/run`).
    `launcher_user`: the uid the launcher drops to (root only); `launcher_bwrap`: the bwrap it starts each
    command with, a path it can reach (default `bwrap`). The holder binds the host's whole tree, so a mount
    that vanishes meanwhile (a container another program removes) can fail it: that is tried again.
    """
    for _ in range(_ATTEMPTS - 1):
        try:
            return _create_scratch(episode_name, disk_mb, bwrap, prologue, lay_out, launcher_user, launcher_bwrap)
        except SandboxError as error:
            if "Can't bind mount /oldroot/" not in str(error):
                raise
    return _create_scratch(episode_name, disk_mb, bwrap, prologue, lay_out, launcher_user, launcher_bwrap)


def _create_scratch(
    episode_name: str,
    disk_mb: int,
    bwrap: str,
    prologue: str,
    lay_out: Callable[[str], Layout],
    launcher_user: int | None,
    launcher_bwrap: str | None,
) -> Scratch:
    drop = drop_to(launcher_user)
    folder = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-{episode_name}-"))
    root = str(folder / ROOT)
    try:
        _prepare_folder(folder, launcher_user)
        layout = lay_out(root)
    except OSError as error:
        remove_tree(folder)
        raise SandboxError(f"cannot prepare the scratch folder {folder}: {error}") from error
    try:
        return _start_holder(folder, disk_mb, bwrap, prologue, layout, drop, launcher_bwrap)
    finally:
        for fd in layout.files:
            os.close(fd)


def _start_holder(
    folder: Path, disk_mb: int, bwrap: str, prologue: str, layout: Layout, drop: list[str], launcher_bwrap: str | None
) -> Scratch:
    as_root = os.geteuid() == 0
    root = str(folder / ROOT)
    argv = ["/bin/bash", "-c", prologue + 'exec "$@"', "harness-sandbox"]
    # the episode's network namespace too (loopback only), which every command's bwrap inherits
    argv += [bwrap, *([] if as_root else ["--unshare-user"]), "--unshare-net", "--die-with-parent"]
    argv += ["--dev-bind", "/", "/"]
    argv += ["--perms", "0755", "--size", str(disk_mb * 1024 * 1024), "--tmpfs", root]
    argv += ["--perms", "1777", "--dir", f"{root}/tmp", "--perms", "0755", "--dir", f"{root}{WORKDIR}"]
    argv += ["--perms", "0755", "--dir", f"{root}{WORKDIR}/run", *layout.options]
    # the launcher prints its pid once the mounts exist, then serves commands until the pipe closes
    argv += ["--chdir", str(folder), "--", *drop, "/bin/bash", "-c", LAUNCHER]
    argv += ["harness-launcher", launcher_bwrap or bwrap]
    pipes = [os.pipe() for _ in range(3)]
    argv += [str(write) for _, write in pipes]
    for read, _ in pipes:
        os.set_blocking(read, False)
    outputs = (pipes[0][0], pipes[1][0], pipes[2][0])
    try:
        holder = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={"PATH": "/usr/bin:/bin"},
            cwd="/",
            start_new_session=True,
            pass_fds=[write for _, write in pipes] + layout.files,
        )
    except OSError as error:
        for fd in outputs:
            os.close(fd)
        remove_tree(folder)
        raise SandboxError(f"cannot start bwrap for the scratch tmpfs: {error}") from error
    finally:
        for _, write in pipes:
            os.close(write)
    assert holder.stdout is not None and holder.stderr is not None
    line = _first_line(holder.stdout.fileno())
    scratch = Scratch(folder, holder, int(line) if line.isdigit() else 0, as_root, outputs)
    if not scratch.holder_pid:
        holder.kill()
        reason = holder.stderr.read().decode(errors="replace").strip()[:300]
        scratch.close()
        raise SandboxError(f"bwrap cannot make the {disk_mb} MB scratch tmpfs: {reason or 'no reason given'}")
    if as_root:  # the holder made them as root; the sandbox user must own its scratch
        inside = Path(f"/proc/{scratch.holder_pid}/root{root}")
        try:
            os.chown(f"{inside}{WORKDIR}/run", SANDBOX_UID, SANDBOX_UID)
            os.chown(inside / "tmp", SANDBOX_UID, SANDBOX_UID)
        except OSError as error:
            scratch.close()
            raise SandboxError(f"cannot hand the scratch tmpfs to the sandbox user: {error}") from error
    return scratch


def _prepare_folder(folder: Path, launcher_user: int | None) -> None:
    """The mount point, and the launcher's files (its own when it runs as another user)."""
    (folder / ROOT).mkdir()
    for name in LAUNCHER_FILES:
        fd = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            if launcher_user is not None:
                os.fchown(fd, launcher_user, launcher_user)
        finally:
            os.close(fd)
    if launcher_user is not None:
        os.chmod(folder, 0o711)  # it may pass through to its files, not list the folder


def drop_to(uid: int | None) -> list[str]:
    """The argv prefix that runs a program as `uid` with no capabilities and no way back (`setpriv`);
    empty for None. The launcher takes it once per episode; a `Privilege.SETPRIV` command each time."""
    if uid is None:
        return []
    setpriv = shutil.which("setpriv", path="/usr/bin:/bin")
    if setpriv is None:
        raise SandboxError("running as root needs setpriv (util-linux) to drop to an unprivileged user")
    return [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
            "--bounding-set=-all", "--no-new-privs", "--"]  # fmt: skip


def _first_line(fd: int) -> bytes:
    """The holder's first line, read unbuffered: the launcher's later answers are read from the same fd."""
    line = b""
    while not line.endswith(b"\n") and (byte := os.read(fd, 1)):
        line += byte
    return line.strip()


def remove_tree(path: Path) -> bool:
    """Delete `path` whatever its depth and permissions, never following a symlink; True if it is gone.

    Iterative (a tree thousands of levels deep needs no recursion and no long paths: it walks with
    directory descriptors, at most two open at a time), and it gives each folder back rwx to its owner
    before entering it, so a `chmod 000` folder is removed too. Never raises.
    """
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            os.unlink(path)
            return True
        os.chmod(path, 0o700)
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        _empty_folder(fd)
    except OSError:
        return False
    finally:
        os.close(fd)
    try:
        os.rmdir(path)
    except OSError:
        return False
    return True


def _empty_folder(fd: int) -> None:
    """Empty the folder open at `fd` depth-first; the stack holds names, not descriptors."""
    stack: list[tuple[str, list[str]]] = [("", _unlink_files(fd))]
    current = os.dup(fd)
    try:
        while stack:
            name, pending = stack[-1]
            if pending:
                child = pending.pop()
                if not stat.S_ISDIR(os.stat(child, dir_fd=current, follow_symlinks=False).st_mode):
                    os.unlink(child, dir_fd=current)
                    continue
                os.chmod(child, 0o700, dir_fd=current)
                entered = os.open(child, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=current)
                os.close(current)
                current = entered
                stack.append((child, _unlink_files(current)))
                continue
            stack.pop()
            if stack:
                parent = os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=current)
                os.close(current)
                current = parent
                os.rmdir(name, dir_fd=current)
    finally:
        os.close(current)


def _unlink_files(fd: int) -> list[str]:
    """Unlink every non-folder entry (symlinks included, never followed); return the subfolders' names."""
    folders = []
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                folders.append(entry.name)
            else:
                os.unlink(entry.name, dir_fd=fd)
    return folders


def remove_orphaned_scratch() -> int:
    """Delete scratch folders of runners that are gone (killed before `close`); returns how many.

    A folder whose runner pid is alive (another run on this machine) is never touched.
    """
    removed = 0
    for folder in Path(tempfile.gettempdir()).glob(f"{SCRATCH_PREFIX}*"):
        pid = folder.name.removeprefix(SCRATCH_PREFIX).split("-", 1)[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists() and remove_tree(folder):
            removed += 1
    return removed
