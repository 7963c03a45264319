"""`collection build` as a process: an interrupt ends it at once, and a worker that dies costs only its file."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from harness.inputs.collections.manifest import manifest_path, read_manifest
from tests.helpers.collection_files import make_long_pdf, make_pdf


@pytest.mark.parametrize(
    ("workers", "interrupt"), [(1, "ctrl-c"), (2, "ctrl-c"), (2, "sigterm")], ids=["serial", "pool", "pool-sigterm"]
)
def test_an_interrupt_stops_at_once_and_keeps_and_records_what_was_converted(tmp_path, workers, interrupt):
    """Conversions of a minute each are running when the interrupt comes: the build ends without waiting for
    them (the timeout below is half their time) and leaves no worker behind."""
    for index in range(2):
        make_pdf(tmp_path / "src" / "a" / f"small-{index}.pdf", pages=1)
    make_long_pdf(tmp_path / "src" / "b" / "long-0.pdf", pages=4000)
    shutil.copy(tmp_path / "src" / "b" / "long-0.pdf", tmp_path / "src" / "b" / "long-1.pdf")
    out = tmp_path / "out" / "d"
    command = [
        sys.executable,
        "-m",
        "harness",
        "collection",
        "build",
        str(tmp_path / "src"),
        "--domain",
        "d",
        "--out",
        str(out),
        "--workers",
        str(workers),
    ]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 60
    while not (out.is_dir() and any(out.iterdir())) and time.monotonic() < deadline:
        time.sleep(0.05)
    children = psutil.Process(process.pid).children(recursive=True)
    if interrupt == "ctrl-c":
        os.killpg(process.pid, signal.SIGINT)  # as a terminal does: the whole process group
    else:
        process.terminate()  # the runner only
    try:
        _, stderr = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:  # a failing build must not outlive the test
        for leftover in [psutil.Process(process.pid), *children]:
            with contextlib.suppress(psutil.NoSuchProcess):
                leftover.kill()
        raise
    _, alive = psutil.wait_procs(children, timeout=10)
    for leftover in alive:
        leftover.kill()
    manifest = read_manifest(manifest_path(out))
    assert process.returncode == 130 and "interrupted" in stderr and "Traceback" not in stderr
    assert alive == []
    assert {entry.name for entry in manifest.documents} == {path.name for path in out.iterdir()}
    assert {entry.name for entry in manifest.documents} <= {"a_small-0.md", "a_small-1.md"}


def worker_processes(pid: int) -> list:

    workers = []
    with contextlib.suppress(psutil.Error):
        for child in psutil.Process(pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):  # a worker that just ended
                if "spawn_main" in " ".join(child.cmdline()):
                    workers.append(child)
    return workers


def build_with_two_workers(source: Path, out: Path) -> list[str]:
    """`collection build SOURCE --domain d --out OUT --workers 2`, as a user runs it."""
    build = ["collection", "build", str(source), "--domain", "d", "--out", str(out), "--workers", "2"]
    return [sys.executable, "-m", "harness", *build]


def test_a_worker_killed_mid_conversion_costs_nothing_its_files_go_again(tmp_path):
    """As the out-of-memory killer would: the files the pool was converting are converted again alone."""
    for index in range(2):
        make_pdf(tmp_path / "src" / "a" / f"small-{index}.pdf", pages=1)
    for index in range(2):
        make_long_pdf(tmp_path / "src" / "b" / f"long-{index}.pdf", pages=300)
    out = tmp_path / "out" / "d"
    command = build_with_two_workers(tmp_path / "src", out)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(list(out.glob("a_*.md")) if out.is_dir() else []) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    worker_processes(process.pid)[0].kill()
    _, stderr = process.communicate(timeout=120)
    names = sorted(path.name for path in out.iterdir())
    assert process.returncode == 0, stderr
    assert names == ["a_small-0.md", "a_small-1.md", "b_long-0.md", "b_long-1.md"]
    assert (out / "b_long-1.md").read_text().count("--- page ") == 300


def test_a_file_whose_converter_always_dies_is_skipped_with_the_reason(tmp_path):
    make_long_pdf(tmp_path / "src" / "b" / "long-0.pdf", pages=300)
    make_long_pdf(tmp_path / "src" / "b" / "long-1.pdf", pages=300)
    out = tmp_path / "out" / "d"
    command = build_with_two_workers(tmp_path / "src", out)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed = 0
    while process.poll() is None:  # a worker dies as soon as it opens a source: a converter that always crashes
        for worker in worker_processes(process.pid) if process.poll() is None else []:
            with contextlib.suppress(Exception):
                if any(str(tmp_path / "src") in file.path for file in worker.open_files()):
                    worker.kill()
                    killed += 1
        time.sleep(0.01)
    stdout, _ = process.communicate()
    skipped = {item.source: item.reason for item in read_manifest(manifest_path(out)).skipped}
    assert process.returncode == 1 and killed >= 2
    assert skipped == {f"b/long-{i}.pdf": "the converter's process died (a crash, or out of memory)" for i in range(2)}
    assert "skipped b/long-0.pdf: the converter's process died" in stdout
