"""The host uid a root runner's episode runs as: one of its own, from root's range in /etc/subuid.

The kernel keeps some things per uid for the whole machine, whatever the namespaces: `RLIMIT_NPROC` counts
every process of the uid (a command in a user namespace counts toward the uid that made the namespace, the
launcher's). With one shared uid (65534) and no cgroups, one episode holding every process slot makes every
other episode on the machine, of every run, fail to start a process. So each episode of a root runner takes
a uid of root's subordinate range that no other episode on the machine holds, and holds it until it closes.

A claim is an open-file-description lock on the uid's byte of one lock file (`LOCK_FILE`): two claims
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

SHARED_UID = 65534
"""The uid of every root runner's episode where root has no subordinate range: `nobody`."""
SUBUID_FILE = Path("/etc/subuid")
LOCK_FILE = Path("/run/harness-episode-uids.lock")
"""One byte per uid of the range (its offset from 0): locked while an episode holds that uid."""


class SharedUidRefused(SandboxError):
    """Every episode would share uid 65534 with no cgroup to keep their process slots apart."""


@dataclass(frozen=True)
class SubordinateRange:
    first: int
    count: int

    def __str__(self) -> str:
        return f"{self.first}-{self.first + self.count - 1}"


@dataclass
class HostUid:
    """The host uid one episode's launcher and commands run as, held until `release`."""

    uid: int
    lock: int | None = None
    """The descriptor whose lock holds `uid`; None for the shared uid."""

    def release(self) -> None:
        if self.lock is not None:
            os.close(self.lock)
            self.lock = None


def root_range() -> SubordinateRange | None:
    """Root's first range in /etc/subuid (by name or as 0), or None."""
    names = _root_names()
    try:
        lines = SUBUID_FILE.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.strip().split(":")
        if len(fields) == 3 and fields[0] in names and fields[1].isdigit() and fields[2].isdigit():
            first, count = int(fields[1]), int(fields[2])
            if first > 0 and count > 0:
                return SubordinateRange(first, count)
    return None


def describe_host_uids() -> str:
    """Which host uid a root runner's episode runs as, for run.yaml."""
    span = root_range()
    return f"its own per episode, of root's {SUBUID_FILE} range {span}" if span else str(SHARED_UID)


def claim_host_uid(limits_mechanism: str) -> HostUid:
    """A uid of root's range that no other episode on the machine holds; the shared uid where root has no
    range, which is refused when the limits are rlimits (they could not keep the episodes' processes apart)."""
    span = root_range()
    if span is None:
        if limits_mechanism == "rlimit":
            raise SharedUidRefused(
                f"cgroups are unavailable and root has no range in {SUBUID_FILE}, so every episode of every run "
                f"would be uid {SHARED_UID}, and one agent could take the process slots of all; add a range "
                "(usermod --add-subuids 100000-165535 root) or run where cgroups are writable"
            )
        return HostUid(SHARED_UID)
    try:
        fd = os.open(LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as error:
        raise SandboxError(f"cannot claim a host uid for the episode: {LOCK_FILE}: {error.strerror}") from None
    start = random.randrange(span.count)
    for step in range(span.count):
        uid = span.first + (start + step) % span.count
        if _lock_byte(fd, uid):
            return HostUid(uid, fd)
    os.close(fd)
    raise SandboxError(f"every uid of root's {SUBUID_FILE} range {span} is held by a running episode")


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
