"""The E2B emulator's layer cache (tests/helpers/e2b_emulator_build.py) keys a COPY as E2B does: by the files'
paths, modes, sizes and bytes, not by when they were written."""

from __future__ import annotations

import os
from pathlib import Path

from e2b.template.utils import calculate_files_hash, tar_file_stream

from tests.helpers.e2b_emulator_build import write_keyed_tar


def packed(context: Path, work: Path) -> tuple[str, bytes]:
    """E2B's key of `COPY documents` from `context` and the tar the emulator builds that layer from."""
    key = calculate_files_hash("documents", "/workspace/documents", str(context), [], True, None)
    write_keyed_tar(tar_file_stream("documents", str(context), [], True, False), work)
    return key, work.read_bytes()


def documents(context: Path, mtime: int) -> Path:
    folder = context / "documents" / "sub"
    folder.mkdir(parents=True)
    (folder / "table.csv").write_text("a,b\n1,2\n")
    (context / "documents" / "report.md").write_text("# Report\n")
    for path in (folder / "table.csv", context / "documents" / "report.md", folder, folder.parent):
        os.utime(path, (mtime, mtime))
    return context


def test_the_same_files_written_at_another_time_are_the_same_layer_and_another_mode_is_not(tmp_path):
    first = packed(documents(tmp_path / "one", 1_000_000_000), tmp_path / "one.tar")
    again = packed(documents(tmp_path / "two", 1_700_000_000), tmp_path / "two.tar")
    assert again == first  # E2B's cache finds the layer; Docker's finds the same ADD

    changed = documents(tmp_path / "three", 1_000_000_000)
    (changed / "documents" / "report.md").chmod(0o600)
    key, tar = packed(changed, tmp_path / "three.tar")
    assert key != first[0] and tar != first[1]
