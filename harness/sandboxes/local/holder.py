"""A local episode's holder: the sandbox's file tree on a size-capped tmpfs, and the launcher that serves it.

The whole tree a command sees as `/` is built once per episode by a *holder*: a bwrap process with mount,
pid and network namespaces of its own. Its root is a tmpfs made read-only once laid out, holding only what
the launcher needs, at the host's paths and read-only: /usr (bash, setpriv), the Python environments and
the folder of bwrap itself; plus a /dev, a /proc of its own pid namespace, and at `/sandbox` the sandbox's
tree, a tmpfs of `disk_mb` (`/tmp` and `/workspace/run` are folders of it, so they share the disk cap;
/usr, the collection and the rest are read-only binds the caller passes). Nothing of the host's `/` is
there and no host process is visible, so a process that ever ran in the launcher's context would find
nothing of the host. In it, a small bash launcher (`launcher.py` talks to it) forks each command's bwrap
on request; a command's bwrap binds `/sandbox` as its `/` and mounts its own `/proc`.

What the launcher runs and reads never passes through the agent's tree: bwrap and bash at their host paths
in the holder's read-only root (the agent's root is `/sandbox`, it cannot reach them), and the options of
every command's bwrap and each command's argv from memory files the runner made (memfd), handed over as
descriptors, the options sealed and the argv read-only for the launcher. Nothing of an episode is on the
host's disk, and nothing outlives it: the holder dies with the runner (`--die-with-parent`, the pipe's end);
one whose start the runner's death cut short is killed by the next cleanup (`limits.release_stale_cgroups`).

The holder starts inside the episode's limits (cgroup or rlimits), so every command inherits them and its
namespaces with one fork. The launcher may run as another user (`launcher_user`: the sandbox user, when
the runner is root and each command gets its own user namespace). The tmpfs is memory: where cgroups
apply, its pages count toward the episode's memory limit.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field

from harness.sandboxes.base import WORKDIR, SandboxError
from harness.sandboxes.local.syscall_filter import filter_program, new_session_keyring

_EXIT_WAIT_S = 1.0
"""How long the holder may take to end by itself at close before it is killed."""
DISK_ENFORCEMENT = "tmpfs of disk_mb for /workspace/run and /tmp together (bwrap --size), held per episode"
ROOT = "/sandbox"
"""The sandbox's tree in the holder's mount namespace: every command's `/`."""
_UNCOVERED_PROC = ["/bin/sh", "-c", 'mount -n -t proc -o nosuid,nodev,noexec proc /proc && exec "$@"', "harness-proc"]
"""Mounts a procfs of the holder's pid namespace over bwrap's `--proc` (whose read-only binds over /proc/sys
and others a command's user namespace would see as locked, so the kernel refuses its bwrap a /proc)."""
_UNPRIVILEGED_HOLDER = ["--unshare-user", "--uid", "0", "--gid", "0", "--cap-add", "CAP_SYS_ADMIN"]
_UNPRIVILEGED_HOLDER += ["--cap-add", "CAP_SETFCAP"]
_ROOT_LAUNCHER_CAPABILITIES = ["--cap-drop", "ALL"] + [
    option
    for name in ("SYS_ADMIN", "SYS_CHROOT", "SETUID", "SETGID", "SETPCAP")
    for option in ("--cap-add", f"CAP_{name}")
]
"""A root launcher's capabilities: bwrap's namespaces, mounts and chroot, and setpriv's for each command."""
_SEALS = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE


# Runs in the holder as `bash -c _LAUNCHER harness-launcher BWRAP OUT ERR STATUS COMMAND OPTIONS FILTER`: bwrap's
# host path (read-only in the holder's root), the write ends of three pipes (stdout, stderr, bwrap's status)
# that the runner reads for every command, and three memfds: the current command's argv (NUL-terminated), the
# options of every command's bwrap and the seccomp filter (`syscall_filter.py`). All are moved above 9 out of
# the way of 0-5. For each request line (the command's number and argument count) it forks the command's
# bwrap with argv[0] "bwrap" (pid 1 inside shows nothing of the host), its options on fd 3, the filter on fd 5
# and its command from the first `count` arguments of the argv memfd, each opened afresh through
# /proc/self/fd (offset 0). It answers "<n> exit <code>" when bwrap has exited and every process of the command
# is gone (pid 1 of a pid namespace takes them all with it, and then itself, which the launcher waits for), so all
# of the output is in the pipes and nothing of the command runs after its answer. A kill finds the command's
# processes as the launcher's children and grandchildren (launcher.py), so no pid is answered.
# Commands run with the highest oom_score_adj: out of memory, the kernel kills the agent's processes first.
_LAUNCHER = """exec 2>/dev/null
b=$1 o=$2 e=$3 s=$4 c=$5 a=$6 f=$7
exec {out}>&"$o" {err}>&"$e" {status}>&"$s" {argv}<&"$c" {options}<&"$a" {filter}<&"$f"
exec {o}>&- {e}>&- {s}>&- {c}<&- {a}<&- {f}<&-
echo ready
while read -r n count; do
  mapfile -d '' -t -n "$count" command < "/proc/self/fd/$argv"
  { echo 1000 > /proc/self/oom_score_adj; exec -a bwrap "$b" --args 3 -- "${command[@]}"; } \\
    3< "/proc/self/fd/$options" 4>&"$status" 5< "/proc/self/fd/$filter" >&"$out" 2>&"$err" {out}>&- {err}>&- \\
    {status}>&- {argv}<&- {options}<&- {filter}<&- < /dev/null &
  wait "$!"
  code=$?
  # bwrap exits on its pid 1's report of the command's exit, while that pid 1 may still be killing the rest;
  # orphaned, it is ours (we are the holder's pid 1), and the answer waits until we are alone again
  while p=(/proc/[0-9]*); (( ${#p[@]} > 1 )); do sleep 0.001; done
  echo "$n exit $code"
done
"""


@dataclass
class Layout:
    """How the holder mounts the rest of its view: read-only system folders, and the sandbox's tree."""

    options: list[str]
    """The holder's bwrap options: the launcher's folders at their host paths, the tree's under `ROOT`."""
    files: list[int] = field(default_factory=list)
    """Descriptors the options read (`--file FD DEST`): passed to the holder, closed once it has started."""


@dataclass
class Scratch:
    """One episode's holder: the launcher's pipes and memfds, and the tmpfs only its namespace has."""

    holder: subprocess.Popen[bytes]
    holder_pid: int
    """Host pid of the launcher, the holder's pid 1 (`/proc/PID/root` is the holder's root)."""
    pid_namespace: int
    """Inode of the holder's pid namespace: the launcher's pids are numbered in it."""
    outputs: tuple[int, int, int]
    """The read ends of the launcher's stdout, stderr and bwrap status pipes (non-blocking)."""
    command: int
    """The runner's writable descriptor on the command memfd."""

    root: str = ROOT
    """The sandbox's tree, a path inside the holder's mount namespace only."""

    def close(self) -> None:
        """End the holder (its tmpfs goes with it) and close every descriptor; never raises."""
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
        for fd in (*self.outputs, self.command):
            with contextlib.suppress(OSError):
                os.close(fd)


def create_scratch(
    disk_mb: int,
    bwrap: str,
    command_options: list[str],
    prologue: str = "",
    lay_out: Callable[[str], Layout] = lambda root: Layout([]),
    launcher_user: int | None = None,
    scratch_owner: int | None = None,
) -> Scratch:
    """Start the holder of the sandbox's tree on its `disk_mb` tmpfs; raises `SandboxError`.

    `command_options`: every command's bwrap options (the holder adds its status fd and the seccomp filter's).
    `prologue` (shell, from `limits.py`) puts the holder, and so every command, under the episode's limits.
    `lay_out(ROOT)` gives how the holder mounts the rest (`ROOT` already has `/tmp` and `/workspace/run`);
    bwrap must lie in a folder it binds, or in /usr.
    `launcher_user`: the uid the launcher drops to (root only). `scratch_owner`: the host uid of the agent's
    commands, which must own its scratch (root only: an ordinary caller's holder makes it as the caller).
    """
    drop = drop_to(launcher_user)
    syscall_filter = filter_program()
    opened: list[int] = []
    try:
        options = ["--json-status-fd", "4", "--seccomp", "5", *command_options]
        opened.append(_sealed_memfd("harness-options", b"".join(o.encode() + b"\0" for o in options)))
        opened.append(_sealed_memfd("harness-seccomp", syscall_filter))
        opened.append(command := os.memfd_create("harness-command", os.MFD_CLOEXEC))
        # the launcher's copy is read-only: only the runner writes a command
        opened.append(readable := os.open(f"/proc/self/fd/{command}", os.O_RDONLY | os.O_CLOEXEC))
        layout = lay_out(ROOT)
    except OSError as error:
        for fd in opened:
            os.close(fd)
        raise SandboxError(f"cannot prepare the sandbox's tree: {error}") from error
    launcher_uid = os.getuid() if launcher_user is None else launcher_user
    try:
        memfds = (readable, opened[0], opened[1])
        return _start_holder(disk_mb, bwrap, prologue, layout, drop, launcher_uid, scratch_owner, command, memfds)
    finally:
        for fd in (*layout.files, readable, opened[0], opened[1]):
            os.close(fd)


def _sealed_memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        os.write(fd, data)  # a few kilobytes of options: one write
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, _SEALS)
    except OSError:
        os.close(fd)
        raise
    return fd


def _start_holder(
    disk_mb: int,
    bwrap: str,
    prologue: str,
    layout: Layout,
    drop: list[str],
    launcher_uid: int,
    scratch_owner: int | None,
    command: int,
    memfds: tuple[int, int, int],
) -> Scratch:
    """Start the holder; the returned `Scratch` owns `command` (closed here when the start fails)."""
    root = ROOT
    pipes = [os.pipe() for _ in range(4)]  # stdout, stderr, status, and the holder's info (its pid)
    info_read, info_write = pipes[3]
    holder_options, launcher_prefix = _privileges(drop)
    argv = [*new_session_keyring(), "/bin/bash", "-c", prologue + 'exec "$@"', "harness-sandbox", bwrap]
    argv += holder_options
    # the launcher is the pid namespace's pid 1, so the holder's bwrap reaps it (no init of bwrap's own)
    argv += ["--unshare-pid", "--as-pid-1", "--unshare-net"]
    argv += ["--die-with-parent", "--info-fd", str(info_write), "--dev", "/dev", "--proc", "/proc"]
    argv += ["--perms", "0755", "--size", str(disk_mb * 1024 * 1024), "--tmpfs", root]
    argv += ["--perms", "1777", "--dir", f"{root}/tmp", "--perms", "0755", "--dir", f"{root}{WORKDIR}"]
    argv += ["--perms", "0755", "--dir", f"{root}{WORKDIR}/run", *layout.options]
    # where each command's bwrap mounts its own scratch root (it cannot make it in the read-only root)
    argv += ["--perms", "0755", "--dir", "/tmp", "--dir", f"/tmp/.bubblewrap-{launcher_uid}", "--remount-ro", "/"]
    # the launcher prints `ready` once the mounts exist, then serves commands until the pipe closes
    argv += ["--chdir", "/", "--", *launcher_prefix, "/bin/bash", "-c", _LAUNCHER, "harness-launcher"]
    argv += [os.path.realpath(bwrap)]
    argv += [str(write) for _, write in pipes[:3]] + [str(fd) for fd in memfds]
    for read, _ in pipes[:3]:
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
            pass_fds=[write for _, write in pipes] + [*memfds, *layout.files],
        )
    except OSError as error:
        for fd in (*outputs, info_read, command):
            os.close(fd)
        raise SandboxError(f"cannot start bwrap for the sandbox's tree: {error}") from error
    finally:
        for _, write in pipes:
            os.close(write)
    assert holder.stdout is not None and holder.stderr is not None
    ready = _first_line(holder.stdout.fileno()) == b"ready"
    pid = _holder_pid(info_read)
    scratch = Scratch(holder, pid, pid_namespace(pid), outputs, command)
    if not (ready and scratch.pid_namespace):
        holder.kill()
        reason = holder.stderr.read().decode(errors="replace").strip()[:300]
        scratch.close()
        raise SandboxError(f"bwrap cannot make the {disk_mb} MB sandbox tree: {reason or 'no reason given'}")
    if scratch_owner is not None:  # the holder made it as root; the sandbox user must own its scratch
        try:
            os.chown(f"/proc/{pid}/root{root}{WORKDIR}/run", scratch_owner, scratch_owner)
        except OSError as error:
            scratch.close()
            raise SandboxError(f"cannot hand the scratch tmpfs to the sandbox user: {error}") from error
    return scratch


def _privileges(drop: list[str]) -> tuple[list[str], list[str]]:
    """The holder's privilege options and the launcher's argv prefix, by privilege path.

    A root runner whose commands get user namespaces mounts the launcher's /proc as root, then drops to
    the sandbox user (`drop`); a root launcher for `setpriv` commands keeps only what bwrap needs; an
    ordinary caller is root in the holder's user namespace only to mount that /proc, and its launcher is the
    caller again, in a namespace of its own.
    """
    if os.geteuid() != 0:
        return _UNPRIVILEGED_HOLDER, [*_UNCOVERED_PROC, *_as_caller()]
    if drop:
        return [], [*_UNCOVERED_PROC, *drop]
    return _ROOT_LAUNCHER_CAPABILITIES, []


def _holder_pid(info: int) -> int:
    """The holder's pid 1 from bwrap's `--info-fd` (one JSON object); 0 when bwrap failed before writing it."""
    data = b""
    try:
        while chunk := os.read(info, 4096):
            data += chunk
            with contextlib.suppress(ValueError, KeyError, TypeError):
                return int(json.loads(data)["child-pid"])
    finally:
        os.close(info)
    return 0


def pid_namespace(pid: int) -> int:
    """The inode of the process's pid namespace; 0 when it is gone (or not a pid)."""
    if pid <= 0:
        return 0
    try:
        return os.stat(f"/proc/{pid}/ns/pid").st_ino
    except OSError:
        return 0


def drop_to(uid: int | None) -> list[str]:
    """The argv prefix that runs a program as `uid` with no capabilities and no way back (`setpriv`);
    empty for None. The launcher takes it once per episode; a `Privilege.SETPRIV` command each time."""
    if uid is None:
        return []
    return [
        _setpriv(),
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--",
    ]


def _as_caller() -> list[str]:
    """The argv prefix that runs the launcher of an ordinary caller as the caller again, in a user namespace
    of its own: no capability over the holder's (its mounts stay as laid out), and its bwrap maps the agent to
    the caller's uid, not to root (mapping root needs CAP_SETFCAP, which the holder keeps for this step)."""
    unshare = shutil.which("unshare", path="/usr/bin:/bin")
    if unshare is None:
        raise SandboxError("the local sandbox needs unshare (util-linux)")
    return [unshare, "--user", f"--map-user={os.getuid()}", f"--map-group={os.getgid()}", "--"]


def _setpriv() -> str:
    setpriv = shutil.which("setpriv", path="/usr/bin:/bin")
    if setpriv is None:
        raise SandboxError("the local sandbox needs setpriv (util-linux) to drop privileges")
    return setpriv


def _first_line(fd: int) -> bytes:
    """The holder's first line, read unbuffered: the launcher's later answers are read from the same fd."""
    line = b""
    while not line.endswith(b"\n") and (byte := os.read(fd, 1)):
        line += byte
    return line.strip()
