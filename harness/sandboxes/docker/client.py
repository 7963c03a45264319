"""The Docker engine's client, checked reachable (the only module that imports docker-py besides the sandbox)."""

from __future__ import annotations

from typing import Any

from harness.core.errors import InputError


def docker_client() -> Any:
    import docker

    try:
        client = docker.from_env()
        client.ping()
    except Exception as error:
        raise InputError(f"--sandbox docker: no Docker engine reachable ({error}); start dockerd") from None
    return client
