"""The host uid a root runner's episode runs as: one of its own, held by no other episode on the machine.

The kernel keeps some things per uid for the whole machine, whatever the namespaces: `RLIMIT_NPROC` counts
every process of the uid (a command in a user namespace counts toward the uid that made the namespace, the
launcher's), and so do the inotify instances, the message-queue bytes and the user keyring. With one shared
uid, one episode holding every process slot makes every other episode on the machine, of every run, fail to
start a process. So each episode of a root runner takes a uid that no other episode on the machine holds, and
holds it until it closes: from root's range in /etc/subuid where root has one, else from `BUILT_IN_RANGE`,
so no edit of /etc/subuid is needed. A uid that names an account of this machine is never taken.

A claim is an open-file-description lock on the uid's byte of one lock file (`_LOCK_FILE`): two claims
conflict even within one process, and the kernel drops a claim with the last descriptor of its holder, so a
killed runner leaves nothing to clean up. Claims start at a random uid of the range, so a uid just released
(whose last processes may still be exiting) is rarely the next one taken.

A non-root runner cannot do this: whatever the mapping, its sandbox's processes count toward its own uid (the
creator of every user namespace it makes). Its limits say so (`limits.py`).
"""

from __future__ import annotations

import fcntl
import os
import pwd
import random
import struct
from dataclasses import dataclass
from pathlib import Path

from harness.sandboxes.base import SandboxError

SUBUID_FILE = Path("/etc/subuid")
_LOCK_FILE = Path("/run/harness-episode-uids.lock")
"""One byte per uid of the range (its offset from 0): locked while an episode holds that uid."""


@dataclass(frozen=True)
class _SubordinateRange:
    first: int
    count: int

    def __str__(self) -> str:
        return f"{self.first}-{self.first + self.count - 1}"


BUILT_IN_RANGE = _SubordinateRange(1_879_048_192, 65_536)
"""Where root has no /etc/subuid range: the start of the span systemd's UID allocation table leaves unused
(1879048192-2147483647, between the container ranges and the uids that tools may read as negative)."""


@dataclass
class HostUid:
    """The host uid one episode's launcher and commands run as, held until `release`."""

    uid: int
    lock: int | None = None
    """The descriptor whose lock holds `uid` (None once released)."""

    def release(self) -> None:
        if self.lock is not None:
            os.close(self.lock)
            self.lock = None


def root_range() -> _SubordinateRange:
    """Root's first range in /etc/subuid (by name or as 0), else `BUILT_IN_RANGE`."""
    names = _root_names()
    try:
        lines = SUBUID_FILE.read_text().splitlines()
    except OSError:
        return BUILT_IN_RANGE
    for line in lines:
        fields = line.strip().split(":")
        if len(fields) == 3 and fields[0] in names and fields[1].isdigit() and fields[2].isdigit():
            first, count = int(fields[1]), int(fields[2])
            if first > 0 and count > 0:
                return _SubordinateRange(first, count)
    return BUILT_IN_RANGE


def describe_host_uids() -> str:
    """Which host uid a root runner's episode runs as, for run.yaml."""
    span = root_range()
    source = f"root's {SUBUID_FILE} range" if span != BUILT_IN_RANGE else "the built-in range"
    return f"one per episode, of {source} {span}"


def claim_host_uid() -> HostUid:
    """A uid of root's range (or the built-in one) that no other episode on the machine holds and no account
    of the machine has."""
    span = root_range()
    try:
        fd = os.open(_LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as error:
        raise SandboxError(f"cannot claim a host uid for the episode: {_LOCK_FILE}: {error.strerror}") from None
    start = random.randrange(span.count)
    for step in range(span.count):
        uid = span.first + (start + step) % span.count
        if not _is_an_account(uid) and _lock_byte(fd, uid):
            return HostUid(uid, fd)
    os.close(fd)
    raise SandboxError(f"every uid of the range {span} is held by a running episode")


def _is_an_account(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True


def _lock_byte(fd: int, offset: int) -> bool:
    """An exclusive open-file-description lock on one byte (struct flock: type, whence, start, len, pid 0)."""
    request = struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, offset, 1, 0)
    try:
        fcntl.fcntl(fd, fcntl.F_OFD_SETLK, request)
    except (BlockingIOError, PermissionError):
        return False
    return True


def _root_names() -> set[str]:
    try:
        return {"0", pwd.getpwuid(0).pw_name}
    except KeyError:
        return {"0"}
