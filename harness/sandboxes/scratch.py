"""A local episode's scratch space: a host folder plus a size-capped tmpfs, and their removal.

`/workspace/run` and `/tmp` live on one tmpfs of `disk_mb` megabytes (bwrap `--size`, bwrap >= 0.10). Each
command is a fresh bwrap, so the tmpfs is held for the whole episode by a *holder*: a bwrap process in its
own mount namespace (the host's tree plus the tmpfs) running a small bash launcher (`launcher.py` talks
to it) that forks each command's bwrap on request. The holder starts inside the episode's limits (cgroup
or rlimits), so every command inherits them and its mount namespace with one fork and no `nsenter`.
The holder also makes the episode's network namespace (loopback only, so no network), which the commands
share: what a command could leave there is at most loopback's packet counters, no process or socket.
The holder dies with the runner (`--die-with-parent`, and the pipe's end), so a killed runner leaves no
mount behind, and nothing of the tmpfs ever lands on the host disk. The tmpfs is memory: where cgroups
apply, its pages count toward the episode's memory limit.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness.sandboxes import SandboxError

SANDBOX_UID = 65534
SCRATCH_PREFIX = "harness-scratch-"
"""Scratch folders are named harness-scratch-<runner pid>-<episode>-*, so orphans can be told apart."""
_ATTEMPTS = 3
"""Tries to start a holder (see `create_scratch`)."""
_EXIT_WAIT_S = 1.0
"""How long the holder may take to end by itself at close before it is killed."""
DISK_ENFORCEMENT = "tmpfs of disk_mb for /workspace/run and /tmp together (bwrap --size), held per episode"


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
class Scratch:
    """One episode's scratch: `folder` on the host (synthesized /etc files, the launcher's files) and
    the holder's tmpfs."""

    folder: Path
    holder: subprocess.Popen[bytes]
    holder_pid: int
    """The launcher: the process whose mount namespace holds the tmpfs (bwrap's child, not bwrap)."""
    as_root: bool
    outputs: tuple[int, int, int]
    """The read ends of the launcher's stdout, stderr and bwrap status pipes (non-blocking)."""

    @property
    def space(self) -> Path:
        """The tmpfs mount point; its `run` and `tmp` exist only inside the holder's namespace."""
        return self.folder / "space"

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


def create_scratch(episode_name: str, disk_mb: int, bwrap: str, prologue: str = "") -> Scratch:
    """Make the host folder and start the holder of its `disk_mb` tmpfs (with `run` and `tmp` inside).

    `prologue` (shell, from `limits.py`) puts the holder, and so every command, under the episode's limits.
    The holder binds the host's whole tree, so a mount that vanishes meanwhile (a container another
    program removes) can fail it: that is tried again.
    """
    for _ in range(_ATTEMPTS - 1):
        try:
            return _create_scratch(episode_name, disk_mb, bwrap, prologue)
        except SandboxError as error:
            if "Can't bind mount /oldroot/" not in str(error):
                raise
    return _create_scratch(episode_name, disk_mb, bwrap, prologue)


def _create_scratch(episode_name: str, disk_mb: int, bwrap: str, prologue: str) -> Scratch:
    as_root = os.geteuid() == 0
    folder = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-{episode_name}-"))
    (folder / "space").mkdir()
    space = str(folder / "space")
    argv = ["/bin/bash", "-c", prologue + 'exec "$@"', "harness-sandbox"]
    # the episode's network namespace too (loopback only), which every command's bwrap inherits
    argv += [bwrap, *([] if as_root else ["--unshare-user"]), "--unshare-net", "--die-with-parent"]
    argv += ["--dev-bind", "/", "/"]
    argv += ["--perms", "0755", "--size", str(disk_mb * 1024 * 1024), "--tmpfs", space]
    argv += ["--perms", "0755", "--dir", f"{space}/run", "--perms", "1777", "--dir", f"{space}/tmp"]
    # the launcher prints its pid once the mounts exist, then serves commands until the pipe closes
    argv += ["--chdir", str(folder), "--", "/bin/bash", "-c", LAUNCHER, "harness-launcher", bwrap]
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
            pass_fds=[write for _, write in pipes],
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
        inside = Path(f"/proc/{scratch.holder_pid}/root{space}")
        try:
            os.chown(inside / "run", SANDBOX_UID, SANDBOX_UID)
            os.chown(inside / "tmp", SANDBOX_UID, SANDBOX_UID)
        except OSError as error:
            scratch.close()
            raise SandboxError(f"cannot hand the scratch tmpfs to the sandbox user: {error}") from error
    return scratch


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
