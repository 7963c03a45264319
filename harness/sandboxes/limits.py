"""Memory, process and CPU limits for a local sandbox: cgroups when we may create them, else rlimits.

The limits are applied by a tiny bash prologue that runs before `exec bwrap`, so they cover the
sandbox's whole process tree from its first instruction without a Python `preexec_fn` (unsafe with
threads).
"""

from __future__ import annotations

import contextlib
import shlex
import uuid
from dataclasses import dataclass, field
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class ResourceLimits:
    memory_mb: int = 4096
    """Memory for the whole sandbox; an allocation beyond it fails (or the allocator is OOM-killed)."""
    pids: int = 512
    """Processes and threads alive at once inside the sandbox."""
    cpus: float = 2.0
    """CPU share (cgroups only; rlimits cannot express it)."""


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


def apply_limits(limits: ResourceLimits, episode_name: str) -> AppliedLimits:
    """Create per-episode cgroups (v2, then v1) or fall back to rlimits with a warning."""
    name = f"{episode_name}-{uuid.uuid4().hex[:8]}"
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
        "cgroups unavailable (" + ("; ".join(errors) or "no writable hierarchy") + "); "
        "using rlimits: RLIMIT_AS caps each process's address space, RLIMIT_NPROC counts every process "
        "of the sandbox user on the host, and no CPU limit applies"
    )
    prologue = f"ulimit -v {limits.memory_mb * 1024} && ulimit -u {limits.pids} && "
    return AppliedLimits("rlimit", prologue, warning=warning)


def _write(path: Path, value: str) -> None:
    path.write_text(value)


def _join_prologue(procs_files: list[Path]) -> str:
    return "".join(f"echo $$ > {shlex.quote(str(p))} && " for p in procs_files)


def _cgroup_v2(limits: ResourceLimits, name: str) -> AppliedLimits | None:
    if not (CGROUP_ROOT / "cgroup.controllers").exists():
        return None
    parent = CGROUP_ROOT / "harness"
    needed = {"memory", "pids", "cpu"}
    available = set((CGROUP_ROOT / "cgroup.controllers").read_text().split())
    if not {"memory", "pids"} <= available:
        return None
    parent.mkdir(exist_ok=True)
    enable = " ".join(f"+{c}" for c in sorted(needed & available))
    _write(CGROUP_ROOT / "cgroup.subtree_control", enable)
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
    """Remove per-episode cgroups left by runs killed before `close` (a cgroup still in use stays)."""
    removed = 0
    for parent in (CGROUP_ROOT / "harness", *(CGROUP_ROOT.glob("*/harness"))):
        for group in parent.glob("*") if parent.is_dir() else []:
            if group.is_dir():
                try:
                    group.rmdir()
                    removed += 1
                except OSError:
                    pass  # busy: an episode of a live run
    return removed
