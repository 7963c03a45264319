"""The folder of an episode's model socket: a fresh host folder that a sandbox mounts read-only at
`MODEL_SOCKET_FOLDER` before it starts, where the runner's model proxy (episode/model_proxy.py) listens on a
unix socket; an installed agent's only way out of its sandbox (which refuses IP sockets: syscall_policy.py).

A path-named unix socket is reached through the file system, so it crosses the sandbox's empty network
namespace; a read-only mount still lets a process connect to it (the kernel refuses writes to a read-only file
system only for files, folders and links), and no other file of the host is in the folder."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Protocol, runtime_checkable

from harness.sandboxes.base import Sandbox, SandboxError

MODEL_SOCKET_FOLDER = "/run/model"
"""Where the sandbox shows the folder."""
SOCKET_NAME = "api.sock"
"""The proxy's socket in it: `/run/model/api.sock` inside the sandbox."""
AGENT_FOLDER = "/run/agent"
"""Where a sandbox that can shows an installed agent's own install from the host, read-only (Gemini CLI's, on
the local sandbox, which otherwise shows the host's /usr and Python environments only)."""


@runtime_checkable
class MountsModelSocket(Protocol):
    def mount_model_socket(self, folder: Path) -> None:
        """Before `start`: show FOLDER, read-only, at `MODEL_SOCKET_FOLDER` in the sandbox."""


@runtime_checkable
class MountsAgent(Protocol):
    def mount_agent(self, folder: Path) -> None:
        """Before `start`: show FOLDER, read-only, at `AGENT_FOLDER` in the sandbox."""


def mount_agent_folder(sandbox: Sandbox, folder: Path) -> None:
    """FOLDER, an installed agent's install on the host, shown in SANDBOX (not started yet); `SandboxError` when its
    backend cannot show one."""
    if not isinstance(sandbox, MountsAgent):
        raise SandboxError(f"{type(sandbox).__name__} cannot show an agent's install from the host")
    sandbox.mount_agent(folder)


def make_socket_folder(sandbox: Sandbox) -> Path:
    """A new folder for the episode's socket, mounted into SANDBOX (not started yet); `SandboxError` when its
    backend cannot mount one. It lies in a folder of its own that only the runner's user may enter, so no other
    user of the host reaches the socket; inside the sandbox that folder is not on the way. The caller removes it
    (`remove_socket_folder`) when the episode ends."""
    if not isinstance(sandbox, MountsModelSocket):
        raise SandboxError(
            f"{type(sandbox).__name__} cannot mount the model's socket (an installed agent runs on local or docker)"
        )
    private = Path(tempfile.mkdtemp(prefix="harness-model-"))  # mode 0700
    folder = private / "model"
    folder.mkdir()
    folder.chmod(0o755)  # the sandbox's user, another uid, passes through it to the socket
    sandbox.mount_model_socket(folder)
    return folder


def remove_socket_folder(folder: Path) -> None:
    shutil.rmtree(folder.parent, ignore_errors=True)
