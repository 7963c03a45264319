"""The machine's kernel counters that a sandboxed process could both move and read, kept from every sandbox.

The kernel keeps many counters for the whole machine, not per namespace. One that an episode can move and
another can read is a channel between two episodes running at once: `io_setup(N)` raised
/proc/sys/fs/aio-nr by exactly N, and a receiver read the sender's answer there (issue 45). The survey
(`tests/helpers/kernel_counters.py`, run inside each backend's sandbox) moves every counter it knows of and
reads every file of /proc and /sys; what it found moving, and how each backend closes it:

- AIO contexts (/proc/sys/fs/aio-nr): `io_setup` is refused (`syscall_policy.py`), and the file hidden;
- ptys (/proc/sys/kernel/pty/nr, and the machine-wide pty limit that a sandbox could fill and another find
  full): the pty multiplexer is /dev/null, so no pty can be opened, and the count is hidden;
- open files, inodes and dentries (/proc/sys/fs/file-nr, inode-nr, inode-state, dentry-state), the lock
  table (/proc/locks), the count of cgroups (/proc/cgroups: each local episode makes one), the keys of
  every uid (/proc/key-users: each local episode's session keyring) and the caller's (/proc/keys, whose
  timeouts tick): hidden, read as empty files, as Docker's default hides /proc/keys;
- disk quota statistics (/proc/sys/fs/quota/*): `syncfs` on any file, a read-only document's included, syncs
  its file system's quotas and counts it in `syncs` (2 a call here): hidden;
- /proc/stat (the machine's fork count, its running and blocked processes, interrupts, CPU times): a quiet
  copy instead, the CPU lines at zero and the boot time, which `ps` needs;
- /sys (slab counters, the NUMA node's meminfo and vmstat, block device statistics): empty under Docker
  and E2B, as the local sandbox has no /sys at all.

Left readable, and said in docs/guide/sandboxes.md: the machine's load and memory figures and its thread
count (`sysinfo(2)`, /proc/loadavg, /proc/meminfo, /proc/vmstat, /proc/uptime). glibc computes
`sysconf(_SC_PHYS_PAGES)` from `sysinfo` and ignores its failure (Python and `sort` call it), so refusing
the call would hand them garbage; these move with everything that runs on the machine, as timing does.
"""

from __future__ import annotations

HIDDEN_FILES = (
    "/proc/locks",
    "/proc/cgroups",
    "/proc/keys",
    "/proc/key-users",
    "/proc/sys/fs/aio-nr",
    "/proc/sys/kernel/pty/nr",
    "/proc/sys/fs/file-nr",
    "/proc/sys/fs/inode-nr",
    "/proc/sys/fs/inode-state",
    "/proc/sys/fs/dentry-state",
    *(
        f"/proc/sys/fs/quota/{name}"
        for name in ("lookups", "drops", "reads", "writes", "cache_hits", "allocated_dquots", "free_dquots", "syncs")
    ),
)
"""Read as empty files in every sandbox (/dev/null bound over each that the machine has)."""

PTY_MULTIPLEXER = "/dev/pts/ptmx"
"""/dev/null in every sandbox: opening it allocates a pty, which the machine counts and limits as a whole.
/dev/ptmx links to it under bubblewrap and Docker; in a VM /dev/ptmx is a device of its own, hidden too."""

PROC_STAT = "/proc/stat"


def quiet_proc_stat(stat: str) -> str:
    """/proc/stat as a sandbox sees it: one line per CPU with every time at zero, and the boot time."""
    lines = []
    for line in stat.splitlines():
        name = line.split(" ", 1)[0]
        if name.startswith("cpu"):
            lines.append(name + " 0" * 10)
        elif name == "btime":
            lines.append(line)
    return "\n".join(lines) + "\n"


def host_quiet_proc_stat() -> str:
    """The quiet copy of this machine's /proc/stat."""
    with open(PROC_STAT) as stat:
        return quiet_proc_stat(stat.read())
