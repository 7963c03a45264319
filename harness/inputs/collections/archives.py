"""Archives in a source folder (`.zip`, `.tar`, `.tar.gz`/`.tgz`, `.tar.bz2`, `.tar.xz`), opened into a scratch
folder so their documents are built like any other file, with the folders inside them kept in their names
(`dump.zip/reports/q1.pdf`). An archive is anyone's: a member named out of the scratch folder (`../x`, `/etc/x`)
or a link (symbolic or hard) is refused and listed, never written; an archive over a bound (members, bytes
unpacked, extended headers, or a compression ratio only a bomb reaches, in any member however small) is refused
whole before anything of it is written; a member whose name is too long for a file system is refused and listed
under its name cut short. The stdlib does the reading: tarfile's `data` filter (its extended headers bounded:
tar_headers.py) and zipfile's own size checks. Archives inside an archive are not opened (listed as skipped):
one level, no recursion to bound."""

from __future__ import annotations

import os
import stat
import tarfile
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from harness.inputs.collections.manifest import OpenedArchive, Skipped
from harness.inputs.collections.sources import SourceFile, readable_name, source_files
from harness.inputs.collections.tar_headers import MAX_NAME_BYTES, HeaderRefused, HeaderTally, bounded_tarinfo

_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
_UTF8_NAMES = 0x800
"""A zip member's flag bit: its name is UTF-8; without it the name's bytes are some code page (zipfile reads
them as cp437, which turns a Latin-1 `café` into `caf├⌐`)."""


@dataclass(frozen=True)
class ArchiveBounds:
    members: int = 100_000
    """Members of one archive (folders included)."""
    bytes: int = 8 * 1024**3
    """Bytes unpacked, over all archives of one build (AGORA's whole archive is 1.5 GB)."""
    ratio: float = 200.0
    """Unpacked over packed size, of every zip member and of a whole compressed tar, beyond `RATIO_ALLOWANCE`:
    text and spreadsheets pack 5-20×, a bomb 1,000× and more."""
    header_bytes: int = 64 * 1024**2
    """Bytes of a tar's extended headers (long names, pax records), read into memory before its members."""


RATIO_ALLOWANCE = 64 * 1024
"""Bytes unpacked beyond the ratio a member (a zip's) or an archive (a tar) may have: a small file of one repeated
byte packs far more than 200× and is no bomb."""
_NAME_PART_BYTES = 255
"""One part of a member's name (a file or folder name: NAME_MAX)."""
SHOWN_NAME_CHARS = 200
"""A refused member's name in the manifest and on the console is cut to this many characters."""


class _Refused(Exception):
    """The archive as a whole is refused; the message says why."""


def is_archive(name: str) -> bool:
    return name.casefold().endswith(_SUFFIXES)


def expand_archives(
    files: list[SourceFile], scratch: Path, bounds: ArchiveBounds
) -> tuple[list[SourceFile], list[Skipped], list[OpenedArchive]]:
    """FILES with every archive among them replaced by its documents (unpacked under SCRATCH, named
    `archive/member`); the members and archives refused, with why; and the archives opened."""
    kept: list[SourceFile] = []
    refused: list[Skipped] = []
    opened: list[OpenedArchive] = []
    budget = bounds.bytes
    for index, file in enumerate(files):
        if not is_archive(file.relative.name):
            kept.append(file)
            continue
        into = scratch / str(index)
        into.mkdir(parents=True)
        try:
            members, unpacked, inside = _unpack(file.path, into, bounds, budget)
        except (_Refused, HeaderRefused, tarfile.TarError, zipfile.BadZipFile, OSError, EOFError) as error:
            refused.append(Skipped(str(file.relative), f"archive not opened: {shown_name(str(error))}"))
            continue
        budget -= unpacked
        found, skipped = source_files(into)
        refused += [Skipped(f"{file.relative}/{shown_name(name)}", reason) for name, reason in inside]
        refused += [Skipped(f"{file.relative}/{s.source}", s.reason) for s in skipped]
        for member in found:
            name = file.relative / member.relative
            if is_archive(member.relative.name):
                refused.append(Skipped(str(name), "an archive inside an archive (not opened: unpack it first)"))
            else:
                kept.append(SourceFile(name, member.path, member.note))
        opened.append(OpenedArchive(str(file.relative), members, unpacked))
    return kept, refused, opened


def _unpack(path: Path, into: Path, bounds: ArchiveBounds, budget: int) -> tuple[int, int, list[tuple[str, str]]]:
    """Members, bytes unpacked, and the members refused (name, reason)."""
    if path.name.casefold().endswith(".zip"):
        return _unzip(path, into, bounds, budget)
    return _untar(path, into, bounds, budget)


def shown_name(name: str) -> str:
    """NAME, or its start and its length when it is over `SHOWN_NAME_CHARS` (a header can carry megabytes)."""
    if len(name) <= SHOWN_NAME_CHARS:
        return name
    return f"{name[:SHOWN_NAME_CHARS]}... ({len(name):,} characters)"


def _over(what: str, value: float, bound: float) -> _Refused:
    return _Refused(f"{what} {value:,.0f} over the bound of {bound:,.0f} (a zip bomb's mark)")


def _unzip(path: Path, into: Path, bounds: ArchiveBounds, budget: int) -> tuple[int, int, list[tuple[str, str]]]:
    refused: list[tuple[str, str]] = []
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
        if len(infos) > bounds.members:
            raise _over("members", len(infos), bounds.members)
        total = sum(info.file_size for info in infos)
        if total > budget:
            raise _over("bytes unpacked", total, budget)
        for info in infos:
            if info.file_size > bounds.ratio * info.compress_size + RATIO_ALLOWANCE:
                ratio = info.file_size / max(info.compress_size, 1)
                raise _over(f"{shown_name(readable_name(info.filename))}: compression ratio", ratio, bounds.ratio)
        wanted = []
        for info in infos:
            if not info.flag_bits & _UTF8_NAMES:
                info.filename = _zip_name(_stored_name(info))
            reason = _unsafe_name(info.filename)
            if reason is None and stat.S_ISLNK(info.external_attr >> 16):
                reason = "a link (links in archives are not followed)"
            if reason:
                refused.append((info.filename, reason))
            elif not info.is_dir():
                wanted.append(info)
        wanted = _apart(wanted, refused)
        for info in wanted:  # zipfile never writes more than the member's declared size, checked above
            archive.extract(info, into)
    return len(infos), sum(info.file_size for info in wanted), refused


def _apart(wanted: list[zipfile.ZipInfo], refused: list[tuple[str, str]]) -> list[zipfile.ZipInfo]:
    """Members whose names read the same (a UTF-8 `café.txt` and a Latin-1 `caf\\xe9.txt`) unpacked under their
    own bytes, so one does not overwrite the other (`source_files` then shows them apart); a name stored twice
    is unpacked once, the later members of that name refused."""
    readings = Counter(info.filename for info in wanted)
    kept, unpacked = [], set()
    for info in wanted:
        if readings[info.filename] > 1:
            info.filename = os.fsdecode(_stored_name(info))
        if info.filename in unpacked:
            refused.append((readable_name(info.filename), "a second member of the same name (not unpacked)"))
        else:
            unpacked.add(info.filename)
            kept.append(info)
    return kept


def _stored_name(info: zipfile.ZipInfo) -> bytes:
    """A member's name as its bytes in the archive (zipfile keeps it decoded: UTF-8 with the flag, else cp437)."""
    return info.orig_filename.encode("utf-8" if info.flag_bits & _UTF8_NAMES else "cp437")


def _zip_name(raw: bytes) -> str:
    """A zip member's name stored without the UTF-8 flag: UTF-8 when it reads as such (many tools leave the flag
    off), cp437 (the zip standard's) when its other bytes are all cp437's accented letters (0x80-0xA5), else
    a Unix zip's Latin-1 name, read as `readable_name` does (`caf\\xe9` -> `café`, not cp437's `cafΘ`)."""
    high = [byte for byte in raw if byte >= 0x80]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    return raw.decode("cp437") if all(byte <= 0xA5 for byte in high) else readable_name(raw)


def _unsafe_name(name: str) -> str | None:
    parts = PurePosixPath(name).parts
    if name.startswith("/") or ".." in parts:
        return "a name out of the archive's folder (absolute or with ..)"
    encoded = os.fsencode(name)
    if len(encoded) > MAX_NAME_BYTES or any(len(os.fsencode(part)) > _NAME_PART_BYTES for part in parts):
        return f"a name too long for a file system (over {MAX_NAME_BYTES:,} bytes, or a part over {_NAME_PART_BYTES})"
    return None


def _untar(path: Path, into: Path, bounds: ArchiveBounds, budget: int) -> tuple[int, int, list[tuple[str, str]]]:
    refused: list[tuple[str, str]] = []
    wanted: list[tarfile.TarInfo] = []
    regular = 0
    packed = max(path.stat().st_size, 1)
    headers = HeaderTally(bounds.header_bytes)
    with tarfile.open(path, tarinfo=bounded_tarinfo(headers)) as archive:
        for count, member in enumerate(archive, start=1):  # headers only, read as they come: a bomb stops early
            if count > bounds.members:
                raise _over("members", count, bounds.members)
            regular += member.size if member.isreg() else 0
            total = regular + headers.bytes + count * tarfile.BLOCKSIZE
            if total > budget:
                raise _over("bytes unpacked", total, budget)
            if total > bounds.ratio * packed + RATIO_ALLOWANCE:
                raise _over("compression ratio", total / packed, bounds.ratio)
            name = readable_name(member.name)
            if member.issym() or member.islnk():
                refused.append((name, "a link (links in archives are not followed)"))
                continue
            if not (member.isreg() or member.isdir()):
                refused.append((name, "not a regular file"))
                continue
            reason = _unsafe_name(member.name)
            if reason:
                refused.append((name, reason))
                continue
            try:
                tarfile.data_filter(member, str(into))
            except tarfile.FilterError as error:
                refused.append((name, f"a name out of the archive's folder ({error})"))
                continue
            wanted.append(member)
        archive.extractall(into, members=wanted, filter="data")
        members = len(archive.getmembers())  # read once above: the list is kept
    return members, sum(m.size for m in wanted if m.isreg()), refused
