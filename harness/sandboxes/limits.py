"""Memory, process and CPU limits for a local sandbox: cgroups when we may create them, else rlimits.

The limits are applied by a tiny bash prologue that runs before `exec bwrap`, so they cover the
sandbox's whole process tree from its first instruction without a Python `preexec_fn` (unsafe with
threads). Cgroups go under `<hierarchy>/harness/` as root, or under the runner's own cgroup v2 when it
is delegated to the user (a systemd user scope with `Delegate=yes`); each is named
`<runner pid>-<episode>-<random>`, so stale ones of dead runners can be told from a live run's.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
_STALE_KILL_WAIT_S = 2.0
"""How long a cleanup waits for the killed processes of a dead runner's episode to leave its cgroup."""

RUNNER_LEAF = "harness-runner"
"""In a delegated cgroup, the runner moves into this leaf: a cgroup with processes cannot delegate controllers."""


@dataclass(frozen=True)
class ResourceLimits:
    memory_mb: int = 4096
    """Memory for the whole sandbox; an allocation beyond it fails (or the allocator is OOM-killed)."""
    pids: int = 512
    """Processes and threads alive at once inside the sandbox."""
    cpus: float = 2.0
    """CPU share (cgroups only; rlimits cannot express it)."""
    disk_mb: int = 2048
    """Scratch space: /workspace/run and /tmp together, in megabytes; memory (tmpfs), so below `memory_mb`."""


@dataclass
class AppliedLimits:
    """How the limits are enforced for one episode, and the shell prologue that enforces them."""

    mechanism: str  # cgroup-v1 | cgroup-v2 | rlimit
    prologue: str
    cgroup_dirs: list[Path] = field(default_factory=list)
    warning: str | None = None

    def release(self) -> None:
        """Remove the episode's cgroups (their processes are gone once the sandbox has exited)."""
        for directory in reversed(self.cgroup_dirs):
            with contextlib.suppress(OSError):
                directory.rmdir()
        self.cgroup_dirs.clear()

    def out_of_memory(self) -> bool:
        """The episode's memory cgroup killed a process for memory (its `oom_kill` count, v1 or v2)."""
        for directory in self.cgroup_dirs[:1]:  # the memory group comes first
            for name in ("memory.events", "memory.oom_control"):
                with contextlib.suppress(OSError, ValueError):
                    for line in (directory / name).read_text().splitlines():
                        key, _, value = line.partition(" ")
                        if key == "oom_kill" and int(value) > 0:
                            return True
        return False


def apply_limits(limits: ResourceLimits, episode_name: str) -> AppliedLimits:
    """Create per-episode cgroups (v2, then v1) or fall back to rlimits with a warning."""
    name = f"{os.getpid()}-{episode_name}-{uuid.uuid4().hex[:8]}"
    errors = []
    for attempt in (_cgroup_v2, _cgroup_v1):
        try:
            applied = attempt(limits, name)
        except OSError as error:
            errors.append(f"{attempt.__name__.lstrip('_')}: {error.strerror or error}")
            continue
        if applied is not None:
            return applied
    warning = (
        f"the memory limit is per process, not per sandbox: cgroups unavailable "
        f"({'; '.join(errors) or 'no writable hierarchy, and no delegated cgroup v2 subtree'}), so "
        f"RLIMIT_AS caps each process at {limits.memory_mb} MB (N processes may use N times that), "
        f"{_process_limit_scope()}, and no CPU limit applies; "
        "for per-sandbox limits run as root or inside `systemd-run --user --scope -p Delegate=yes`"
    )
    prologue = f"ulimit -v {limits.memory_mb * 1024} && ulimit -u {limits.pids} && "
    return AppliedLimits("rlimit", prologue, warning=warning)


def _process_limit_scope() -> str:
    """What RLIMIT_NPROC counts: it counts every process of a uid on the machine (see `local/uids.py`)."""
    if os.geteuid() == 0:
        return "RLIMIT_NPROC counts the processes of the episode's own host uid"
    return (
        f"RLIMIT_NPROC counts every process of uid {os.getuid()} on this machine, this user's other runs and "
        "programs included (an episode can take their process slots, and they its)"
    )


def _write(path: Path, value: str) -> None:
    path.write_text(value)


def _join_prologue(procs_files: list[Path]) -> str:
    return "".join(f"echo $$ > {shlex.quote(str(p))} && " for p in procs_files)


def _cgroup2_mount() -> Path | None:
    """The cgroup v2 hierarchy: all of CGROUP_ROOT, or its `unified` part on a hybrid machine."""
    for mount in (CGROUP_ROOT, CGROUP_ROOT / "unified"):
        if (mount / "cgroup.controllers").exists():
            return mount
    return None


def own_cgroup() -> str:
    """The runner's cgroup v2 path ("/user.slice/.../app.scope"), "" when it has none."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                return line[3:]
    return ""


def _delegated_base(mount: Path) -> Path | None:
    """The runner's own cgroup v2 when the user may manage it (a delegated subtree), else None."""
    own = own_cgroup().strip("/")
    if not own:
        return None
    base = mount / own
    if base.name == RUNNER_LEAF:  # we moved ourselves here earlier
        base = base.parent
    files = ("cgroup.procs", "cgroup.subtree_control")
    if not (os.access(base, os.W_OK) and all(os.access(base / name, os.W_OK) for name in files)):
        return None
    return base


def _cgroup_v2(limits: ResourceLimits, name: str) -> AppliedLimits | None:
    mount = _cgroup2_mount()
    if mount is None:
        return None
    base = mount if os.geteuid() == 0 else _delegated_base(mount)
    if base is None:
        return None
    needed = {"memory", "pids", "cpu"}
    available = set((base / "cgroup.controllers").read_text().split())
    if not {"memory", "pids"} <= available:
        return None
    if base != mount:
        leaf = base / RUNNER_LEAF
        leaf.mkdir(exist_ok=True)
        _write(leaf / "cgroup.procs", str(os.getpid()))
    parent = base / "harness"
    parent.mkdir(exist_ok=True)
    enable = " ".join(f"+{c}" for c in sorted(needed & available))
    _write(base / "cgroup.subtree_control", enable)
    _write(parent / "cgroup.subtree_control", enable)
    group = parent / name
    group.mkdir()
    applied = AppliedLimits("cgroup-v2", "", [group])
    try:
        _write(group / "memory.max", str(limits.memory_mb * 1024 * 1024))
        if (group / "memory.swap.max").exists():
            _write(group / "memory.swap.max", "0")
        _write(group / "pids.max", str(limits.pids))
        if (group / "cpu.max").exists():
            _write(group / "cpu.max", f"{int(limits.cpus * 100000)} 100000")
    except OSError:
        applied.release()
        raise
    applied.prologue = _join_prologue([group / "cgroup.procs"])
    return applied


def _cgroup_v1(limits: ResourceLimits, name: str) -> AppliedLimits | None:
    memory_root, pids_root = CGROUP_ROOT / "memory", CGROUP_ROOT / "pids"
    if not (memory_root / "cgroup.procs").exists() or not (pids_root / "cgroup.procs").exists():
        return None
    applied = AppliedLimits("cgroup-v1", "")
    try:
        for root in (memory_root, pids_root, CGROUP_ROOT / "cpu"):
            if not (root / "cgroup.procs").exists():
                continue
            (root / "harness").mkdir(exist_ok=True)
            group = root / "harness" / name
            group.mkdir()
            applied.cgroup_dirs.append(group)
        memory_group, pids_group = applied.cgroup_dirs[0], applied.cgroup_dirs[1]
        memory_bytes = str(limits.memory_mb * 1024 * 1024)
        _write(memory_group / "memory.limit_in_bytes", memory_bytes)
        if (memory_group / "memory.memsw.limit_in_bytes").exists():
            _write(memory_group / "memory.memsw.limit_in_bytes", memory_bytes)
        _write(pids_group / "pids.max", str(limits.pids))
        if len(applied.cgroup_dirs) > 2:
            cpu_group = applied.cgroup_dirs[2]
            _write(cpu_group / "cpu.cfs_period_us", "100000")
            _write(cpu_group / "cpu.cfs_quota_us", str(int(limits.cpus * 100000)))
    except OSError:
        applied.release()
        raise
    applied.prologue = _join_prologue([d / "cgroup.procs" for d in applied.cgroup_dirs])
    return applied


def release_stale_cgroups() -> int:
    """Remove per-episode cgroups left by runners that are gone, killing what is still in them (a holder whose
    start the runner's death cut short waits there for ever); those of a live runner are never touched."""
    parents = [CGROUP_ROOT / "harness", *CGROUP_ROOT.glob("*/harness")]
    mount = _cgroup2_mount()
    delegated = _delegated_base(mount) if mount is not None and os.geteuid() != 0 else None
    if delegated is not None:
        parents.append(delegated / "harness")
    removed = 0
    for parent in parents:
        for group in parent.glob("*") if parent.is_dir() else []:
            pid = group.name.split("-", 1)[0]
            if group.is_dir() and pid.isdigit() and not Path(f"/proc/{pid}").exists():
                _kill_orphaned_members(group)
                try:
                    group.rmdir()
                    removed += 1
                except OSError:
                    pass  # still holds a process: left for a later cleanup
    return removed


def _kill_orphaned_members(group: Path) -> None:
    """SIGKILL the processes of a dead runner's episode group, and wait (briefly) for them to leave it. Only when
    none of them has a live parent outside the group but init: a runner in another pid namespace, whose pid
    looks dead from here, is the parent of its holders, so its episodes are never killed."""
    members = _members(group)
    if not members or not all(_parent(pid) in (0, 1) or _parent(pid) in members for pid in members):
        return
    for pid in members:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + _STALE_KILL_WAIT_S
    while _members(group) and time.monotonic() < deadline:
        time.sleep(0.02)


def _members(group: Path) -> set[int]:
    try:
        return {int(pid) for pid in (group / "cgroup.procs").read_text().split()}
    except (OSError, ValueError):
        return set()


def _parent(pid: int) -> int:
    """PID's parent (0 when it is gone)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0
