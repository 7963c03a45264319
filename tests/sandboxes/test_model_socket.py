"""The folder of an episode's model socket (harness/sandboxes/model_socket.py): reachable by the sandbox it is
mounted into, and by no other user of the host; a backend that cannot mount it says so."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from harness.sandboxes.base import SandboxError
from harness.sandboxes.model_socket import make_socket_folder, mount_agent_folder, remove_socket_folder


class Mounting:
    """A sandbox that records the folder it was asked to mount."""

    def __init__(self) -> None:
        self.mounted: Path | None = None

    def mount_model_socket(self, folder: Path) -> None:
        self.mounted = folder


class NotMounting:
    pass


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_socket_folder_is_mounted_and_lies_in_a_folder_only_the_runner_enters():
    sandbox = Mounting()
    folder = make_socket_folder(sandbox)
    try:
        assert sandbox.mounted == folder and not any(folder.iterdir())
        assert (mode(folder.parent), mode(folder)) == (0o700, 0o755)  # the sandbox's user passes the inner one only
    finally:
        remove_socket_folder(folder)
    assert not folder.parent.exists()


def test_a_sandbox_that_cannot_mount_the_socket_is_a_sandbox_error():
    with pytest.raises(SandboxError, match="cannot mount the model's socket"):
        make_socket_folder(NotMounting())


def test_a_sandbox_that_cannot_show_an_agents_install_is_a_sandbox_error(tmp_path):
    with pytest.raises(SandboxError, match="cannot show an agent's install"):
        mount_agent_folder(NotMounting(), tmp_path)
