"""`collection build` opens the archives in its source folder (zip and tar, folders inside kept in the names)
and refuses what a hostile archive holds: names out of the folder, links, bombs, too many members, archives in
archives; non-UTF-8 names read as text."""

from __future__ import annotations

import io
import json
import os
import stat
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

import pytest

from harness.cli.main import main
from harness.inputs.collections.archives import ArchiveBounds, expand_archives
from harness.inputs.collections.naming import slug
from harness.inputs.collections.sources import SourceFile, readable_name, source_files


def _tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes]], mode: str = "w", **options) -> Path:
    with tarfile.open(path, mode, **options) as archive:
        for info, data in members:
            info.size = len(data) if info.isreg() else 0
            archive.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return path


def _member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info


def _expand(archive: Path, tmp_path: Path, bounds: ArchiveBounds | None = None):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    files = [SourceFile(PurePosixPath(archive.name), archive)]
    kept, refused, opened = expand_archives(files, scratch, bounds or ArchiveBounds())
    return {str(f.relative): f.path.read_bytes() for f in kept}, {s.source: s.reason for s in refused}, opened


def _written(tmp_path: Path) -> set[str]:
    return {str(p.relative_to(tmp_path / "scratch")) for p in (tmp_path / "scratch").rglob("*") if p.is_file()}


def test_a_tar_gz_is_opened_with_its_folders_and_its_hostile_members_refused(tmp_path):
    archive = _tar(
        tmp_path / "dump.tar.gz",
        [
            (_member("reports/q1.txt"), b"revenue 12"),
            (_member("../escape.txt"), b"out"),
            (_member("/etc/abs.txt"), b"out"),
            (_member("passwd", tarfile.SYMTYPE, "/etc/passwd"), b""),
            (_member("hard", tarfile.LNKTYPE, "reports/q1.txt"), b""),
            (_member("fifo", tarfile.FIFOTYPE), b""),
            (_member("inner.zip"), b"PK\x05\x06" + bytes(18)),
        ],
        "w:gz",
    )
    kept, refused, opened = _expand(archive, tmp_path)
    assert kept == {"dump.tar.gz/reports/q1.txt": b"revenue 12"}
    assert refused["dump.tar.gz/../escape.txt"].startswith("a name out of the archive's folder")
    assert refused["dump.tar.gz//etc/abs.txt"].startswith("a name out of the archive's folder")
    assert refused["dump.tar.gz/passwd"] == refused["dump.tar.gz/hard"] == "a link (links in archives are not followed)"
    assert refused["dump.tar.gz/fifo"] == "not a regular file"
    assert refused["dump.tar.gz/inner.zip"].startswith("an archive inside an archive")
    assert [(a.source, a.members) for a in opened] == [("dump.tar.gz", 7)]
    assert _written(tmp_path) == {"0/reports/q1.txt", "0/inner.zip"}  # nothing else reached the disk
    assert not (tmp_path / "escape.txt").exists()


def test_a_zip_with_traversal_absolute_and_link_members_writes_only_its_document(tmp_path):
    path = tmp_path / "dump.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("docs/a.txt", "alpha")
        archive.writestr("../../escape.txt", "out")
        archive.writestr("/abs.txt", "out")
        link = zipfile.ZipInfo("environ.txt")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/proc/self/environ")
    kept, refused, opened = _expand(path, tmp_path)
    assert kept == {"dump.zip/docs/a.txt": b"alpha"}
    assert set(refused) == {"dump.zip/../../escape.txt", "dump.zip//abs.txt", "dump.zip/environ.txt"}
    assert refused["dump.zip/environ.txt"] == "a link (links in archives are not followed)"
    assert _written(tmp_path) == {"0/docs/a.txt"} and opened[0].members == 4


@pytest.mark.parametrize("kind", ["zip", "tar.gz"])
def test_a_bomb_is_refused_whole_before_anything_is_written(kind, tmp_path):
    zeros = bytes(2 * 1024 * 1024)  # packs ~1000x: the ratio a bomb has
    if kind == "zip":
        path = tmp_path / "bomb.zip"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("readme.txt", "first")
            archive.writestr("zeros.txt", zeros)
    else:
        path = _tar(tmp_path / "bomb.tar.gz", [(_member("readme.txt"), b"first"), (_member("zeros"), zeros)], "w:gz")
    kept, refused, opened = _expand(path, tmp_path)
    assert kept == {} and opened == [] and _written(tmp_path) == set()
    assert "compression ratio" in refused[path.name] and "zip bomb" in refused[path.name]


def test_too_many_members_or_bytes_refuse_the_archive(tmp_path):
    path = tmp_path / "many.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for index in range(10):
            archive.writestr(f"f{index}.txt", "x" * 100)
    _, refused, _ = _expand(path, tmp_path, ArchiveBounds(members=5))
    assert refused == {"many.zip": "archive not opened: members 10 over the bound of 5 (a zip bomb's mark)"}
    (tmp_path / "scratch").rename(tmp_path / "first")
    _, refused, _ = _expand(path, tmp_path, ArchiveBounds(bytes=500))
    assert refused["many.zip"].startswith("archive not opened: bytes unpacked 1,000 over the bound of 500")


def test_a_broken_archive_is_skipped_with_the_reason(tmp_path):
    path = tmp_path / "broken.tar.gz"
    path.write_bytes(b"\x1f\x8b not really gzip")
    _, refused, _ = _expand(path, tmp_path)
    assert refused["broken.tar.gz"].startswith("archive not opened: ")


def test_latin1_names_read_as_text_on_disk_in_a_tar_and_in_a_zip(tmp_path):
    assert readable_name(os.fsdecode(b"caf\xe9.txt")) == "café.txt"
    assert readable_name("café.txt") == "café.txt"
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / os.fsdecode(b"caf\xe9.txt")).write_text("latte")
    assert [str(f.relative) for f in source_files(folder)[0]] == ["café.txt"]
    tar = _tar(tmp_path / "old.tar", [(_member("café.txt"), b"latte")], encoding="latin-1")
    assert list(_expand(tar, tmp_path)[0]) == ["old.tar/café.txt"]
    zipped = tmp_path / "old.zip"  # a Unix zip of a Latin-1 name: raw bytes, no UTF-8 flag
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("cafX.txt", "latte")
    zipped.write_bytes(zipped.read_bytes().replace(b"cafX", b"caf\xe9"))
    (tmp_path / "scratch").rename(tmp_path / "first")
    assert list(_expand(zipped, tmp_path)[0]) == ["old.zip/café.txt"]


def test_names_that_read_the_same_once_decoded_stay_two_documents_in_a_folder_a_tar_and_a_zip(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "café.txt").write_text("utf-8")
    (folder / os.fsdecode(b"caf\xe9.txt")).write_text("latin-1")
    files = source_files(folder)[0]
    assert [(str(f.relative), f.path.read_text()) for f in files] == [
        ("caf\\xe9.txt", "latin-1"),
        ("café.txt", "utf-8"),
    ]
    assert "reads 'café.txt', as another file's does" in files[0].note and files[1].note is None
    members = [(_member("café.txt"), b"utf-8"), (_member(os.fsdecode(b"caf\xe9.txt")), b"latin-1")]
    tar = _tar(tmp_path / "old.tar", members, format=tarfile.GNU_FORMAT)
    assert _expand(tar, tmp_path)[0] == {"old.tar/caf\\xe9.txt": b"latin-1", "old.tar/café.txt": b"utf-8"}
    zipped = tmp_path / "old.zip"  # a UTF-8 name (flagged) and a Unix zip's Latin-1 one (raw bytes, no flag)
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("café.txt", "utf-8")
        archive.writestr("cafX.txt", "latin-1")
    zipped.write_bytes(zipped.read_bytes().replace(b"cafX", b"caf\xe9"))
    (tmp_path / "scratch").rename(tmp_path / "first")
    assert _expand(zipped, tmp_path)[0] == {"old.zip/caf\\xe9.txt": b"latin-1", "old.zip/café.txt": b"utf-8"}


def test_a_zip_holding_a_name_twice_unpacks_the_first_and_lists_the_second(tmp_path):
    zipped = tmp_path / "twice.zip"
    with zipfile.ZipFile(zipped, "w") as archive, pytest.warns(UserWarning, match="Duplicate name"):
        archive.writestr("notes.txt", "first")
        archive.writestr("notes.txt", "second")
    kept, refused, _ = _expand(zipped, tmp_path)
    assert kept == {"twice.zip/notes.txt": b"first"}
    assert refused == {"twice.zip/notes.txt": "a second member of the same name (not unpacked)"}


def test_every_accented_latin_letter_is_folded_in_output_names():
    assert slug("København Ærø Łódź Straße café") == "kobenhavn-aero-lodz-strasse-cafe"
    assert slug("北京 report") == "北京-report"  # other scripts are letters, kept


def test_collection_build_converts_an_archives_documents_and_says_it_opened_it(tmp_path, capsys):
    source = tmp_path / "raw"
    source.mkdir()
    (source / "notes.txt").write_text("top level\n")
    with zipfile.ZipFile(source / "dump.zip", "w") as archive:
        archive.writestr("Agency B/q1.txt", "revenue 12\n")
        archive.writestr("../escape.txt", "out\n")
    out = tmp_path / "collections" / "demo"
    assert main(["collection", "build", str(source), "--domain", "demo", "--out", str(out)]) == 1  # one refused
    printed = capsys.readouterr().out
    assert "opened dump.zip: 2 members, 11 bytes unpacked" in printed
    assert "skipped dump.zip/../escape.txt: a name out of the archive's folder" in printed
    assert sorted(p.name for p in out.iterdir()) == ["dump-zip_q1.md", "raw_notes.md"]
    manifest = json.loads((tmp_path / "collections" / "demo.manifest.json").read_text())
    assert manifest["archives"] == [{"source": "dump.zip", "members": 2, "bytes": 11}]
    assert {d["source"] for d in manifest["documents"]} == {"dump.zip/Agency B/q1.txt", "notes.txt"}


def _block(info: tarfile.TarInfo) -> bytes:
    return info.tobuf(tarfile.GNU_FORMAT)


def _padded(data: bytes) -> bytes:
    return data + bytes(-len(data) % tarfile.BLOCKSIZE)


def _extended(kind: bytes, data: bytes) -> bytes:
    """One extended header (a GNU long name `L`, a pax header `x`) carrying DATA, as its writer would put it."""
    header = tarfile.TarInfo("././@LongLink" if kind == tarfile.GNUTYPE_LONGNAME else "././@PaxHeader")
    header.type, header.size = kind, len(data)
    return _block(header) + _padded(data)


def _raw_tar(path: Path, extended: bytes, compress) -> Path:
    """A tar of EXTENDED headers before one small member `doc.txt`, compressed by COMPRESS."""
    member = tarfile.TarInfo("doc.txt")
    member.size = 5
    path.write_bytes(compress(extended + _block(member) + _padded(b"hello") + bytes(2 * tarfile.BLOCKSIZE)))
    return path


HEADER_BOMBS = {
    # a long name of 16 MiB: tarfile read it whole, and the name reached the refusal, the manifest and the console
    "long_name": (lambda: _extended(tarfile.GNUTYPE_LONGNAME, b"a" * (16 << 20) + b"\0"), "a GNU long-name header"),
    "pax_path": (lambda: _extended(tarfile.XHDTYPE, _pax_record("path", "p" * (1 << 20))), "a pax header"),
    # long names chained before one member: tarfile reads each by recursion (RecursionError, a crash of the build)
    "chained": (lambda: b"".join(_extended(tarfile.GNUTYPE_LONGNAME, b"n%d\0" % i) for i in range(5000)), "more than"),
}


def _pax_record(key: str, value: str) -> bytes:
    body = f" {key}={value}\n".encode()
    length = len(body) + len(str(len(body)))
    length = len(body) + len(str(length))
    return str(length).encode() + body


@pytest.mark.parametrize("suffix", ["tar.bz2", "tar.gz"])
@pytest.mark.parametrize("bomb", sorted(HEADER_BOMBS))
def test_a_tar_header_bomb_is_refused_before_its_headers_are_read_and_its_names_never_shown(
    tmp_path, capsys, bomb, suffix
):
    """Issue 45: the archive bounds counted regular members only; a 369-byte `.tar.bz2` whose long-name header
    declared gigabytes took the build to 2.3 GB, and an 8 MB "name" reached the manifest and the console."""
    import bz2
    import gzip

    make, reason = HEADER_BOMBS[bomb]
    source = tmp_path / "raw"
    source.mkdir()
    (source / "notes.txt").write_text("top level\n")
    _raw_tar(source / f"bomb.{suffix}", make(), bz2.compress if suffix == "tar.bz2" else gzip.compress)
    out = tmp_path / "collections" / "demo"
    assert main(["collection", "build", str(source), "--domain", "demo", "--out", str(out)]) == 1
    printed = capsys.readouterr().out
    [line] = [line for line in printed.splitlines() if f"bomb.{suffix}" in line]
    assert f"skipped bomb.{suffix}: archive not opened: {reason}" in line and len(line) < 400
    manifest = (tmp_path / "collections" / "demo.manifest.json").read_text()
    assert len(manifest) < 10_000 and sorted(p.name for p in out.iterdir()) == ["raw_notes.md"]


def test_a_member_named_too_long_for_a_file_system_is_refused_and_listed_cut_short(tmp_path):
    long_name = "d/" + "x" * 3000 + ".txt"
    archive = _tar(tmp_path / "names.tar", [(_member("ok.txt"), b"fine"), (_member(long_name), b"x")], format=1)
    kept, refused, _ = _expand(archive, tmp_path)
    assert kept == {"names.tar/ok.txt": b"fine"}
    [(shown, why)] = refused.items()
    assert why.startswith("a name too long for a file system") and len(shown) < 300 and "3,006 characters" in shown


def test_a_zip_member_of_any_size_over_the_ratio_is_a_bomb_but_a_tiny_repetitive_one_is_not(tmp_path, capsys):
    """Issue 45: only members over 1 MiB were checked, so 1 MiB members at a 1,014x ratio passed (about 9 MB of
    zip filled the 8 GB budget). Every member is checked, with a small allowance for tiny ones."""
    source = tmp_path / "raw"
    source.mkdir()
    with zipfile.ZipFile(source / "bomb.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("readme.txt", "first\n")
        archive.writestr("zeros.txt", bytes(1 << 20))  # exactly 1 MiB, about 1,000x
    with zipfile.ZipFile(source / "small.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("dots.txt", "." * 20_000 + "\n")  # tiny and repetitive: far over 200x, and no bomb
    out = tmp_path / "collections" / "demo"
    assert main(["collection", "build", str(source), "--domain", "demo", "--out", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "skipped bomb.zip: archive not opened: zeros.txt: compression ratio" in printed
    assert sorted(p.name for p in out.iterdir()) == ["small-zip_dots.md"]
