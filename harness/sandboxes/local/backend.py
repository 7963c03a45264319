"""`--sandbox local`: bubblewrap on this host (sandbox.py), cgroups where they can be had (limits.py)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from harness.core.errors import InputError
from harness.sandboxes.backend import BackendSetup, Capabilities, SandboxBackend
from harness.sandboxes.base import Sandbox, SandboxSettings
from harness.sandboxes.limits import release_stale_cgroups
from harness.sandboxes.local.sandbox import BubblewrapSandbox, BwrapUnavailable, Privilege, check_bwrap, find_bwrap


class LocalBackend(SandboxBackend):
    name = "local"

    def __init__(self, settings: SandboxSettings, bwrap: str):
        self.settings = settings
        self.bwrap = bwrap
        self._privilege: Privilege | None = None
        self._facts: dict[str, Any] = {"backend": "local", "bwrap": bwrap}
        """The probe sandbox's own facts (user, limit mechanism) once `start` ran it."""

    @classmethod
    def check(cls, setup: BackendSetup) -> LocalBackend:
        try:
            return cls(setup.settings, find_bwrap())
        except BwrapUnavailable as error:
            raise InputError(f"--sandbox local: {error}") from None

    @classmethod
    def clean_up(cls) -> str:
        return f"removed {release_stale_cgroups()} cgroups"

    @property
    def facts(self) -> dict[str, Any]:
        return self._facts

    @property
    def capabilities(self) -> Capabilities:
        warning = (self._facts.get("limits") or {}).get("warning")
        return Capabilities(warning=warning, sees_opens=True, host_tools=True)

    def start(self, probe: bool = True) -> None:
        """Free the cgroups of dead runners, then start one throwaway sandbox: how commands drop privileges."""
        release_stale_cgroups()
        try:
            self._privilege, facts, self.tool_probe = check_bwrap(self.bwrap, self.settings)
        except BwrapUnavailable as error:
            raise InputError(f"--sandbox local: {error}") from None
        self._facts = dict(facts)

    def new_sandbox(self, domain: str, collection: Path, episode_name: str, cancel: threading.Event) -> Sandbox:
        if self._privilege is None:
            raise RuntimeError("the local backend makes sandboxes once started")
        return BubblewrapSandbox(collection, episode_name, self.settings, self.bwrap, cancel, self._privilege)
