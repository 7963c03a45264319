"""A folder to write into that cannot be written is one line naming it and why."""

from __future__ import annotations

import os

import pytest

from harness.core.errors import InputError
from harness.core.writable import check_writable_folder


def test_a_folder_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "out").write_text("x")
    with pytest.raises(InputError, match=r"^--out .*/out: cannot be written: it is a file, not a folder$"):
        check_writable_folder(tmp_path / "out", "--out")


def test_a_folder_under_a_file_is_refused_naming_the_file(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match=r"cannot be written: .*/file is a file, not a folder$"):
        check_writable_folder(tmp_path / "file" / "a" / "b", "--results-dir")


def test_a_folder_without_permission_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "access", lambda path, mode: False)  # root may write anywhere: the answer is given
    with pytest.raises(InputError, match=r"cannot be written: no permission to write in "):
        check_writable_folder(tmp_path / "new", "--out")


def test_a_folder_that_can_be_made_or_written_is_accepted(tmp_path):
    check_writable_folder(tmp_path / "new" / "deeper", "--out")
    check_writable_folder(tmp_path, "--out")
    assert list(tmp_path.iterdir()) == []
