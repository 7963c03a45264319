"""What keeps concurrent episodes apart inside the kernel, as syscall rules every backend applies the same way.

Two sandboxes running at once share files: the collection (a read-only bind of one host folder), and on the
local backend the host's /usr and the Python environment. Read-only is not enough. Byte-range locks (`fcntl`,
`flock`, leases) work on read-only files and are visible to every process that opens the same inode, and an
inotify or dnotify watch sees every open of a file by anyone: both carried answers and evidence between two
episodes. A sandbox's page-cache probes (`cachestat`, `preadv2(RWF_NOWAIT)`) tell which files another
episode read. And `socket()` reaches kernel services no namespace covers (AF_VSOCK to the hypervisor, AF_ALG
to the kernel's crypto code), so socket families are an allow-list. And a machine-wide counter that a
call moves is read by every sandbox: `io_setup(N)` raises /proc/sys/fs/aio-nr by N, an IP socket the
machine's count of TCP sockets and socket-buffer memory (/proc/net/sockstat); the other counters a sandbox
can move are hidden instead (`kernel_counters.py`).

Each `_Restriction` names a call and the argument values it refuses (with the errno a kernel without the
feature would give, so tools fall back as they would there), and, for allow-list filters, the values it
allows: the two partitions are complementary (`tests/sandboxes` checks it value by value). The local filter
(default allow) takes only the refusals; the Docker profile (default deny, `docker/seccomp_profile.py`)
takes both. An int argument compares 64 bits in seccomp while the kernel reads 32, so a refused value is
matched on its low 32 bits (MASKED_EQ) or by a range that covers every value with upper bits set (GT).

Left open, and said in docs/guide/sandboxes.md: timing (CPU, memory and disk contention; how fast a file
reads), which no syscall rule closes.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass
from typing import Literal

_LOW_32_BITS = 0xFFFF_FFFF

_Operator = Literal["EQ", "GT", "LT", "MASKED_EQ"]


@dataclass(frozen=True)
class ArgTest:
    """One comparison of a call's argument, as libseccomp and Docker's profile format state it.

    MASKED_EQ: `(argument & value) == datum`; the others compare the argument with `value`."""

    index: int
    op: _Operator
    value: int
    datum: int = 0

    def matches(self, argument: int) -> bool:
        if self.op == "EQ":
            return argument == self.value
        if self.op == "GT":
            return argument > self.value
        if self.op == "LT":
            return argument < self.value
        return argument & self.value == self.datum


@dataclass(frozen=True)
class _Restriction:
    """A call refused with `errno` when any of `refused` holds (always, when `refused` is empty)."""

    syscall: str
    errno: int
    refused: tuple[ArgTest, ...] = ()
    allowed: tuple[ArgTest, ...] = ()
    """The values the call is let through with, for a filter whose default is to deny: the complement of
    `refused` (empty for a call refused always). Values outside both get the filter's default."""
    why: str = ""


def _values(index: int, values: tuple[int, ...], op: _Operator = "EQ") -> tuple[ArgTest, ...]:
    if op == "MASKED_EQ":
        return tuple(ArgTest(index, "MASKED_EQ", _LOW_32_BITS, value) for value in values)
    return tuple(ArgTest(index, op, value) for value in values)


AF_UNIX = 1
SOCKET_FAMILIES = (AF_UNIX,)
"""What a contained command needs: local sockets. Not IP, though the sandbox's network namespace has nothing but
loopback: the kernel counts every TCP socket and the memory of every TCP and UDP socket buffer for the whole
machine, and shows both in any namespace's /proc/net/sockstat and /proc/net/protocols (which follow each
process's own /proc/PID, so no mount can hide them). Measured by `bench/ip_socket_counters.py`: TCP `alloc` moves by
exactly the sockets another namespace opens (docs/guide/agents.md), so installed agents get no IP either."""
_OTHER_FAMILIES = (ArgTest(0, "EQ", 0), ArgTest(0, "GT", AF_UNIX))

F_GETLK, F_SETLK, F_SETLKW = 5, 6, 7
F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW = 36, 37, 38
F_SETLEASE, F_GETLEASE, F_NOTIFY, F_CANCELLK = 1024, 1025, 1026, 1029
_LOCK_COMMANDS: tuple[int, ...] = (F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW)
_LOCK_COMMANDS += (F_SETLEASE, F_GETLEASE, F_CANCELLK)
_FCNTL_COMMANDS_ALLOWED = (0, 1, 2, 3, 4, 8, 9, 10, 11, 15, 16, 17, 1027, 1028, *range(1030, 1039))
"""Every other `fcntl` command of Linux 6.18: dup, descriptor and status flags, owner and signal, pipe size,
seals, write hints, queries. One newer than these is refused by an allow-list filter (EPERM)."""
RWF_NOWAIT = 0x8

RESTRICTIONS: tuple[_Restriction, ...] = (
    _Restriction(
        "socket",
        errno.EAFNOSUPPORT,
        _OTHER_FAMILIES,
        _values(0, SOCKET_FAMILIES),
        "IP (machine-wide socket counters), and families outside the namespaces (AF_VSOCK, AF_ALG, AF_NETLINK...)",
    ),
    _Restriction("socketpair", errno.EAFNOSUPPORT, _OTHER_FAMILIES, _values(0, SOCKET_FAMILIES), "as socket"),
    _Restriction("flock", errno.ENOLCK, why="a lock on a shared file is seen by every episode"),
    _Restriction(
        "fcntl",
        errno.ENOLCK,
        _values(1, _LOCK_COMMANDS, "MASKED_EQ"),
        _values(1, _FCNTL_COMMANDS_ALLOWED),
        "record locks, open-file-description locks and leases: as flock",
    ),
    _Restriction("fcntl", errno.EINVAL, _values(1, (F_NOTIFY,), "MASKED_EQ"), why="dnotify: as inotify"),
    _Restriction("inotify_init", errno.ENOSYS, why="a watch sees every episode's opens of a shared file"),
    _Restriction("inotify_init1", errno.ENOSYS, why="as inotify_init"),
    _Restriction("inotify_add_watch", errno.ENOSYS, why="as inotify_init"),
    _Restriction("fanotify_init", errno.EPERM, why="as inotify_init (and Docker's default refuses it)"),
    _Restriction("cachestat", errno.ENOSYS, why="the page cache of a shared file shows what others read"),
    _Restriction(
        "io_setup",
        errno.ENOSYS,
        why="an AIO context of N events raises the machine's /proc/sys/fs/aio-nr by N (as a kernel without AIO)",
    ),
    _Restriction(
        "preadv2",
        errno.EOPNOTSUPP,
        (ArgTest(5, "MASKED_EQ", RWF_NOWAIT, RWF_NOWAIT),),
        (ArgTest(5, "MASKED_EQ", RWF_NOWAIT, 0),),
        "RWF_NOWAIT: as cachestat",
    ),
)
"""The rules on top of each backend's own filter (the local one's `syscall_filter.DENIED`, Docker's default)."""
