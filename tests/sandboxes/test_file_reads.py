"""A file read out of the local sandbox as the agent sees it: bounded, only regular files, links resolved inside."""

from __future__ import annotations

import pytest

from harness.sandboxes.base import SandboxSettings
from harness.sandboxes.file_read import FileUnreadable
from harness.sandboxes.local.sandbox import BubblewrapSandbox, find_bwrap


@pytest.fixture(scope="module")
def box(tmp_path_factory):
    collection = tmp_path_factory.mktemp("collection")
    (collection / "chart.bin").write_bytes(bytes(range(256)) * 3)
    collection.chmod(0o755)
    (collection / "chart.bin").chmod(0o644)
    sandbox = BubblewrapSandbox(collection, "file-reads", SandboxSettings(output_limit_bytes=1000), find_bwrap())
    sandbox.start()
    yield sandbox
    sandbox.close()


def test_a_file_comes_back_whole_past_the_output_limit(box):
    data = box.read_bytes("documents/chart.bin", 10_000, 30)
    assert data == bytes(range(256)) * 3


def test_a_file_over_the_limit_is_refused_with_its_size(box):
    with pytest.raises(FileUnreadable, match="the file is 768 bytes, over the limit of 700 bytes"):
        box.read_bytes("documents/chart.bin", 700, 30)


@pytest.mark.parametrize(
    ("setup", "path", "problem"),
    [
        ("true", "run/missing.png", "no such file"),
        ("mkdir -p run/folder", "run/folder", "not a regular file"),
        ("mkfifo run/pipe", "run/pipe", "not a regular file"),
        ("true", "/dev/zero", "not a regular file"),
        ("echo x > run/secret && chmod 000 run/secret", "run/secret", "not readable"),
    ],
)
def test_what_is_not_a_readable_regular_file_is_the_agents_error(box, setup, path, problem):
    assert box.execute(setup, 30).exit_code == 0
    with pytest.raises(FileUnreadable, match=problem):
        box.read_bytes(path, 10_000, 30)


def test_a_link_to_a_host_file_resolves_inside_the_sandbox(box, tmp_path):
    host_file = tmp_path / "host-secret.png"
    host_file.write_bytes(b"host bytes")
    assert box.execute(f"ln -sf {host_file} run/link.png", 30).exit_code == 0
    with pytest.raises(FileUnreadable, match="no such file"):
        box.read_bytes("run/link.png", 10_000, 30)


def test_a_path_is_an_argument_never_code(box):
    assert box.execute("echo ok > 'run/a b;$(touch pwned) `touch pwned`.png'", 30).exit_code == 0
    assert box.read_bytes("run/a b;$(touch pwned) `touch pwned`.png", 100, 30) == b"ok\n"
    assert box.execute("test -e pwned || test -e run/pwned", 30).exit_code == 1


@pytest.mark.parametrize("make_sandbox", ["local", "docker"], indirect=True)
def test_every_backend_hands_out_a_file_past_its_output_limit(make_sandbox, tmp_path):
    collection = tmp_path / "collection"
    collection.mkdir(mode=0o755)
    data = bytes(range(256)) * 40
    (collection / "page.bin").write_bytes(data)
    (collection / "page.bin").chmod(0o644)
    box = make_sandbox(collection, "file-reads-backends", SandboxSettings(output_limit_bytes=1000))
    box.start()
    try:
        assert box.read_bytes("documents/page.bin", 20_000, 60) == data
        with pytest.raises(FileUnreadable, match="the file is 10240 bytes, over the limit of 10,000 bytes"):
            box.read_bytes("documents/page.bin", 10_000, 60)
    finally:
        box.close()
