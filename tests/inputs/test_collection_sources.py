"""`collection build` and `tasks import` read only regular files inside their source folder: links out of it
(tar and unzip restore them), broken links, links to folders and special files are refused and listed with
the reason, and nothing of what they point to reaches the collection."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.inputs.collections.manifest import manifest_path, read_manifest
from tests.inputs.test_graders_mudabench import D3, mudabench, run_import  # noqa: F401 (the fixture)

GOLD = "GOLD-ANSWER-7319"
OUTSIDE = "OUTSIDE-SECRET-5521"
KEY = "sk-live-environ-8846"

REFUSED = {
    "environ.txt": "a link out of the source folder (to /proc/",
    "gold.txt": "a link out of the source folder (to ",
    "secret.txt": "a link out of the source folder (to ",
    "broken.txt": "a broken link",
    "outside-folder": "a link to a folder (links are not followed)",
    "fifo.txt": "not a regular file (a FIFO)",
}


def raw_documents(root: Path, tasks_file: Path, outside: Path) -> Path:
    """A folder as a hostile archive would unpack it; `alias.txt` is the one link that stays inside."""
    raw = root / "raw"
    raw.mkdir(parents=True)
    (raw / "notes.txt").write_text("hello from the notes\n")
    (raw / "environ.txt").symlink_to("/proc/self/environ")
    (raw / "gold.txt").symlink_to(os.path.relpath(tasks_file, raw))
    (raw / "secret.txt").symlink_to(outside / "secret.txt")
    (raw / "broken.txt").symlink_to(raw / "nowhere.txt")
    (raw / "outside-folder").symlink_to(outside)
    (raw / "alias.txt").symlink_to("notes.txt")
    os.mkfifo(raw / "fifo.txt")
    return raw


def unpacked(kind: str, tmp_path: Path, tasks_file: Path, outside: Path) -> Path:
    raw = raw_documents(tmp_path / "made", tasks_file, outside)
    if kind == "folder":
        return raw
    target = tmp_path / "unpacked"
    target.mkdir()
    if kind == "tar":
        subprocess.run(["tar", "-cf", tmp_path / "raw.tar", "-C", raw.parent, "raw"], check=True)
        subprocess.run(["tar", "-xf", tmp_path / "raw.tar", "-C", target], check=True)
    else:  # zip stores links as links (--symlinks) and skips FIFOs; unzip restores the links
        subprocess.run(["zip", "-q", "--symlinks", "-r", tmp_path / "raw.zip", "raw"], cwd=raw.parent, check=True)
        subprocess.run(["unzip", "-q", tmp_path / "raw.zip", "-d", target], check=True)
    assert (target / "raw" / "environ.txt").is_symlink()
    return target / "raw"


@pytest.mark.parametrize("kind", ["folder", "tar", "zip"])
def test_links_out_of_the_source_folder_and_special_files_are_refused_and_listed(kind, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HARNESS_TEST_PROVIDER_KEY", KEY)  # in the builder's /proc/self/environ
    tasks_file = tmp_path / "tasks" / "demo.jsonl"
    tasks_file.parent.mkdir()
    tasks_file.write_text(f'{{"id": "t1", "domain": "demo", "question": "Q?", "answer": "{GOLD}"}}\n')
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(OUTSIDE + "\n")
    raw = unpacked(kind, tmp_path, tasks_file, outside)
    # the same depth below tmp_path in every case: gold.txt's relative link reaches the tasks file
    assert (raw / "gold.txt").read_text().startswith('{"id"')
    out = tmp_path / "collections" / "demo"

    code = main(["collection", "build", str(raw), "--domain", "demo", "--out", str(out), "--workers", "1"])

    output = capsys.readouterr().out
    expected = {name: reason for name, reason in REFUSED.items() if kind != "zip" or name != "fifo.txt"}
    assert code == 1, output
    built = {path.name: path.read_text() for path in out.iterdir()}
    for text in built.values():
        assert GOLD not in text and OUTSIDE not in text and KEY not in text
    assert sorted(built) == ["raw_alias.md", "raw_notes.md"]  # the link inside: read as its target
    assert "hello from the notes" in built["raw_alias.md"]
    manifest = read_manifest(manifest_path(out))
    skipped = {entry.source: entry.reason for entry in manifest.skipped}
    assert sorted(skipped) == sorted(expected)
    for name, reason in expected.items():
        assert skipped[name].startswith(reason), skipped[name]
        assert f"skipped {name}: " in output


def test_a_pdf_linked_out_of_the_pdf_folder_or_a_fifo_is_refused_by_tasks_import(mudabench, capsys):  # noqa: F811
    secret = mudabench / "elsewhere" / "secret.pdf"
    secret.parent.mkdir()
    (mudabench / "pdfs" / f"{D3}.pdf").rename(secret)
    (mudabench / "pdfs" / f"{D3}.pdf").symlink_to(secret)
    fifo = mudabench / "pdfs" / "stuck.pdf"
    os.mkfifo(fifo)

    code, output = run_import(mudabench, capsys, "simple.json")

    assert code == 1
    assert f"refused {D3}.pdf: a link out of the source folder" in output
    assert "refused stuck.pdf: not a regular file (a FIFO)" in output
    assert f"missing {D3}.pdf" in output
    collections = [path for path in (mudabench / "collections").iterdir() if path.is_dir()]
    texts = [path.read_text() for folder in collections for path in folder.iterdir()]
    assert texts and not any("14.35%" in text for text in texts)  # the secret PDF is D3's report
