"""`--sandbox docker`: a container per episode from the recipe's image (sandbox.py)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.core.errors import InputError
from harness.sandboxes.backend import BackendSetup, BuildRequest, Capabilities, SandboxBackend
from harness.sandboxes.base import Sandbox, SandboxError, SandboxSettings
from harness.sandboxes.docker.client import docker_client
from harness.sandboxes.recipe import build_image, default_image


class DockerBackend(SandboxBackend):
    name = "docker"

    def __init__(self, settings: SandboxSettings, client: Any, image: str, run_id: str, facts: dict[str, Any]):
        self.settings, self.client, self.image, self.run_id = settings, client, image, run_id
        self._facts = facts

    @classmethod
    def check(cls, setup: BackendSetup) -> DockerBackend:
        from harness.sandboxes.docker.sandbox import docker_facts

        client = docker_client()
        image = setup.image or default_image()
        try:
            image_id = client.images.get(image).id
        except Exception:
            raise InputError(
                f"--sandbox docker: image {image} not found; build it with `python -m harness sandbox build docker`"
            ) from None
        return cls(setup.settings, client, image, setup.run_id, docker_facts(image, image_id, setup.settings.limits))

    @classmethod
    def build(cls, request: BuildRequest, echo: Callable[[str], None]) -> str:
        try:
            return f"image ready: {build_image(docker_client(), request.base, echo)}"
        except (RuntimeError, OSError) as error:
            raise SandboxError(str(error)) from None

    @classmethod
    def clean_up(cls) -> str:
        from harness.sandboxes.docker.sandbox import cleanup_orphans

        removed = cleanup_orphans(docker_client())
        return f"removed {len(removed)} orphaned containers {' '.join(removed)}".rstrip()

    @property
    def facts(self) -> dict[str, Any]:
        return self._facts

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(sees_opens=os.environ.get("DOCKER_HOST", "unix://").startswith("unix://"))

    def probe_identity(self, domain: str) -> str | None:
        image_id = self._facts.get("image_id")
        return f"docker image {image_id}" if image_id else None

    def start(self, probe: bool = True) -> None:
        """Remove the containers of dead runners, then refuse an image that cannot run an episode's command
        (PROBE False: this very image passed, its tools are known: no check container)."""
        from harness.sandboxes.docker.sandbox import check_runnable_image, cleanup_orphans

        cleanup_orphans(self.client)
        if probe:
            self.tool_probe = check_runnable_image(self.client, self.image)

    def new_sandbox(self, domain: str, collection: Path, episode_name: str, cancel: threading.Event) -> Sandbox:
        from harness.sandboxes.docker.sandbox import DockerSandbox

        return DockerSandbox(self.client, self.image, collection, self.run_id, episode_name, self.settings, cancel)
