"""A tar archive's extended headers read within bounds (issue 45: a 369-byte `.tar.bz2` whose GNU long-name
header declared gigabytes took a build to 2.3 GB, as tarfile reads such a header whole before it yields the
member). Each extended header is checked before tarfile reads it: a long name or link at most
`MAX_NAME_BYTES`, a pax header at most `MAX_PAX_BYTES`, at most `MAX_CHAINED` before one member, their bytes
counted (`HeaderTally`) toward the archive's bounds; sparse members, whose maps tarfile also reads whole, are
refused."""

from __future__ import annotations

import tarfile
from dataclasses import dataclass
from typing import Any

MAX_NAME_BYTES = 4096
"""A member's name or link target (Linux's PATH_MAX)."""
MAX_PAX_BYTES = 64 * 1024
"""One pax header's records: a path, a link target and a few times take a few KB."""
MAX_CHAINED = 4
"""Extended headers before one member: a pax header, a long name and a long link need three."""


class HeaderRefused(Exception):
    """An extended header over a bound: the archive is refused whole; the message says which bound."""


@dataclass
class HeaderTally:
    """The extended headers of one archive read so far, and how many precede the member being read."""

    limit: int
    """Bytes of extended headers allowed in the whole archive."""
    bytes: int = 0
    chained: int = 0

    def take(self, what: str, size: int, bound: int) -> None:
        """Count a header of SIZE bytes, or refuse it (before tarfile reads it)."""
        if size > bound:
            raise HeaderRefused(f"{what} of {size:,} bytes, over the bound of {bound:,}")
        if self.chained >= MAX_CHAINED:
            raise HeaderRefused(f"more than {MAX_CHAINED} extended headers before one member")
        self.bytes += size
        if self.bytes > self.limit:
            raise HeaderRefused(f"extended headers of {self.bytes:,} bytes, over the bound of {self.limit:,}")


def bounded_tarinfo(tally: HeaderTally) -> type[tarfile.TarInfo]:
    """A TarInfo class (tarfile.open's `tarinfo=`) that reads extended headers only within TALLY's bounds."""

    class BoundedTarInfo(tarfile.TarInfo):
        def _proc_gnulong(self, archive: Any) -> Any:
            tally.take("a GNU long-name header", self.size, MAX_NAME_BYTES + 1)  # the name and its NUL
            return _chained(tally, super()._proc_gnulong, archive)  # type: ignore[misc]

        def _proc_pax(self, archive: Any) -> Any:
            tally.take("a pax header", self.size, MAX_PAX_BYTES)
            return _chained(tally, super()._proc_pax, archive)  # type: ignore[misc]

        def _proc_sparse(self, archive: Any) -> Any:
            raise HeaderRefused("a sparse member (not opened)")

        def _proc_gnusparse_00(self, *arguments: Any) -> Any:
            raise HeaderRefused("a sparse member (not opened)")

        _proc_gnusparse_01 = _proc_gnusparse_10 = _proc_gnusparse_00

    return BoundedTarInfo


def _chained(tally: HeaderTally, read: Any, archive: Any) -> Any:
    """READ the header (which reads the headers after it, up to the member), one more in the chain meanwhile."""
    tally.chained += 1
    try:
        return read(archive)
    finally:
        tally.chained -= 1
