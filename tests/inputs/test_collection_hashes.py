"""A collection's hash is the same however its files are hashed: here, or in a process of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.inputs.collections import hashing


def _collection(root: Path) -> Path:
    folder = root / "docs"
    (folder / "sub folder").mkdir(parents=True)
    names = ["a.md", "sub folder/b c.md", "café.md", "line\nbreak.md", "sub folder/empty.md", "big.bin"]
    for number, name in enumerate(names):
        (folder / name).write_bytes(name.encode() * number * 1000)
    (folder / "big.bin").write_bytes(bytes(range(256)) * 20_000)  # several read blocks
    return folder


def test_hashing_in_a_process_of_its_own_gives_the_same_hash(tmp_path: Path, monkeypatch):
    folder = _collection(tmp_path)
    here = hashing.collection_hash(folder)
    monkeypatch.setattr(hashing, "_IN_PROCESS_BYTES", 0)

    def not_here(path: Path) -> str:
        raise AssertionError(f"{path} hashed in this process")

    monkeypatch.setattr(hashing, "file_sha256", not_here)
    assert hashing.collection_hash(folder) == here
    assert hashing.collection_hash(folder, tmp_path / "cache") == here


def test_a_file_the_other_process_cannot_read_is_named(tmp_path: Path, monkeypatch):
    folder = _collection(tmp_path)
    monkeypatch.setattr(hashing, "_IN_PROCESS_BYTES", 0)
    with pytest.raises(OSError, match=r"docs/gone\.md: No such file or directory"):
        hashing._hashed(folder, ["a.md", "gone.md"], 1 << 30)
