"""A committed schema 2 run folder and a schema 3 one regrade, replay, report, view and export byte for byte as
the goldens under tests/fixtures/goldens/ say (made by the code before the typed-records refactor, issue 31).

Each fixture is copied into a fresh folder and read by `replay --regrade`, `replay`, `report`, `view --static`,
`export mini-swe-agent` and `export inspect`, all with paths relative to that folder; every file they write and
what they print is compared with its golden. Normalized, and nothing else, is what differs between two
invocations of the same code on the same input:
- the wall clock: the replay run's `time` stamps, `*_s` durations, printed time column and progress clock,
  its folder's stamp (`<run>.replay-<YYYYmmddTHHMMSS>`), its run.yaml's `created`;
- the machine: the replay run's sandbox description (bwrap path, host uid), its run.yaml's python version, the
  versions of its pinned packages and cache folder (a schema 2 run records none, so the replay takes this machine's);
- randomness: the viewer page's CSP nonce, inspect_ai's random ids (`id`, `eval_id`), and the zip entries'
  times of the `.eval` log (its members are compared decompressed, in order).

Regenerate (only when an output is meant to change): `python -m tests.records.test_run_folder_goldens`.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import struct
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest
import zstandard

from harness.cli.main import main

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
GOLDENS = FIXTURES / "goldens"
LEDGER = "| year | units |\n|---|---|\n| 2020 | 40 |\n| 2021 | 2 |\n"
"""Both fixtures' one document."""
RUNS = ("schema2", "schema3")
"""The committed run folders, tests/fixtures/<name>_run (made with <name>_run.script.yaml)."""

_STAMP = re.compile(rb"\.replay-\d{8}T\d{6}")
_TIME = re.compile(rb'"time": [0-9.e+-]+')
_DURATION = re.compile(rb'"([a-z_]+_s)": [0-9.e+-]+')
_TABLE_TIME = re.compile(rb"(\d+[hm])?\d+(\.\d+)?[sm] \xe2\x94\x82")
_WALL_TIME = re.compile(rb"wall time (\d+[hm])?\d+(\.\d+)?[sm]")
_CLOCK = re.compile(rb"\d+:\d\d:\d\d")
_SANDBOX_KEY = b'"sandbox": '
_NONCE = re.compile(rb'nonce(-|=")[A-Za-z0-9_-]{22}')
_RANDOM_ID = re.compile(rb'"(id|eval_id)": ?"[A-Za-z0-9]{22}"')
_YAML_LINE = re.compile(rb"^( *(created|python|cache_dir)): .*$", re.MULTILINE)
_YAML_SANDBOX = re.compile(rb"^sandbox:\n(  .*\n)*", re.MULTILINE)
_YAML_PACKAGES = re.compile(rb"^packages:\n(  .*\n)*", re.MULTILINE)


def outputs(run: str, work: Path) -> dict[str, bytes]:
    """What the six commands write and print for the fixture RUN, copied into WORK: path -> normalized bytes."""
    shutil.copytree(FIXTURES / f"{run}_run", work / run)
    (work / "tasks").mkdir()
    (work / "tasks" / "mini.jsonl").write_text("".join(json.dumps(task) + "\n" for task in _tasks(work / run)))
    (work / "collections" / "mini").mkdir(parents=True)
    (work / "collections" / "mini" / "ledger.md").write_text(LEDGER)
    before = {path: path.read_bytes() for path in work.rglob("*") if path.is_file()}
    printed: dict[str, bytes] = {}
    with contextlib.chdir(work):
        for name, arguments in (
            ("regrade", ["replay", "--regrade", run]),
            ("replay", ["replay", run]),
            ("report", ["report", run]),
            ("view", ["view", run, "--static", "site"]),
            ("export-mini-swe-agent", ["export", "mini-swe-agent", run, "mini-swe-agent"]),
            ("export-inspect", ["export", "inspect", run, "inspect"]),
        ):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                code = main(arguments)
            printed[f"stdout/{name}.txt"] = f"exit {code}\n{out.getvalue()}".encode()
    written = {
        path.relative_to(work).as_posix(): path
        for path in work.rglob("*")
        if path.is_file() and path.name != ".lock" and before.get(path) != path.read_bytes()
    }
    files = {name: _normalized(name, _read(path)) for name, path in written.items()}
    return {_STAMP.sub(b".replay-STAMP", name.encode()).decode(): data for name, data in files.items()} | {
        name: _normalized(name, data) for name, data in printed.items()
    }


def _tasks(run: Path) -> list[dict[str, object]]:
    """The tasks the fixture ran, from its logs (their solutions aside: `true`)."""
    tasks = []
    for log in sorted((run / "episodes" / "mini").glob("*.jsonl")):
        start = json.loads(log.read_text().splitlines()[0])
        task = {key: value for key, value in start["task"].items() if value is not None}
        tasks.append({"id": start["task_id"], "domain": "mini", "solution": "true", **task})
    return tasks


def _read(path: Path) -> bytes:
    """A file's bytes; a `.eval` log's members decompressed, each under its name, in the zip's order."""
    if path.suffix != ".eval":
        return path.read_bytes()
    parts = []
    with zipfile.ZipFile(path) as archive, path.open("rb") as raw:
        for info in archive.infolist():
            raw.seek(info.header_offset)
            name_length, extra_length = struct.unpack("<HH", raw.read(30)[26:30])
            raw.seek(info.header_offset + 30 + name_length + extra_length)
            data = raw.read(info.compress_size)
            if info.compress_type != zipfile.ZIP_STORED:
                data = zstandard.ZstdDecompressor().decompress(data, max_output_size=info.file_size)
            parts.append(f"== {info.filename}\n".encode() + data + b"\n")
    return b"".join(parts)


def _normalized(name: str, data: bytes) -> bytes:
    data = _STAMP.sub(b".replay-STAMP", data)
    if ".replay-" in name or name == "stdout/replay.txt":
        data = _TIME.sub(b'"time": 0', data)
        data = _DURATION.sub(rb'"\1": 0', data)
        data = _TABLE_TIME.sub("0s \u2502".encode(), data)
        data = _WALL_TIME.sub(b"wall time 0s", data)
        data = _CLOCK.sub(b"0:00:00", data)
        data = _without_sandbox(data)
        data = _YAML_LINE.sub(rb"\1: NORMALIZED", data)
        data = _YAML_SANDBOX.sub(b"sandbox: SANDBOX\n", data)
        data = _YAML_PACKAGES.sub(b"packages: PACKAGES\n", data)
    if name.endswith(".html"):
        data = _NONCE.sub(rb"nonce\1NONCE", data)
    if name.endswith(".eval"):
        data = _RANDOM_ID.sub(rb'"\1": "RANDOM"', data)
    return data


def _without_sandbox(data: bytes) -> bytes:
    """DATA with each JSON value under "sandbox" (the machine's description) replaced by "SANDBOX"."""
    text, start = data.decode(), 0
    key = _SANDBOX_KEY.decode()
    while (found := text.find(key, start)) >= 0:
        value_at = found + len(key)
        _, end = json.JSONDecoder().raw_decode(text, value_at)
        text = text[:value_at] + '"SANDBOX"' + text[end:]
        start = value_at
    return text.encode()


GOLDEN = ".golden"
"""Every golden file's suffix: the copies are data, compared byte for byte, never read as the page or code they
hold (a copy of the viewer's page would otherwise read as a second copy of its template)."""


def goldens(run: str) -> dict[str, bytes]:
    folder = GOLDENS / run
    return {
        path.relative_to(folder).as_posix().removesuffix(GOLDEN): path.read_bytes()
        for path in folder.rglob(f"*{GOLDEN}")
    }


@pytest.mark.parametrize("run", RUNS)
def test_a_committed_run_folder_reads_as_its_goldens(run, tmp_path, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)  # the goldens are printed 140 wide
    made = outputs(run, tmp_path)
    expected = goldens(run)
    assert sorted(made) == sorted(expected)
    assert [name for name in sorted(made) if made[name] != expected[name]] == []


def _write_goldens() -> None:
    for run in RUNS:
        shutil.rmtree(GOLDENS / run, ignore_errors=True)
        with tempfile.TemporaryDirectory() as work:
            for name, data in outputs(run, Path(work)).items():
                target = GOLDENS / run / f"{name}{GOLDEN}"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        print(f"wrote {GOLDENS / run}", file=sys.stderr)


if __name__ == "__main__":
    _write_goldens()
