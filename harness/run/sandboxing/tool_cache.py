"""The tools a sandbox has, remembered per sandbox build in the user's cache: a later start from the same
Docker image or E2B template build starts no sandbox to look for them again.

An entry is a JSON file named by the hash of the build's identity (`SandboxBackend.probe_identity`: the image's
content id, the template's build id), trusted only where it names that exact identity and the probe of the
current tool list (tools.txt); a missing, unreadable or other-version entry is a miss. It lives in the user's
cache folder (`--cache-dir`), which no sandbox mounts, and holds only a probe that found every tool."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path

from harness.sandboxes.tools import missing_tools, probe_command

_VERSION = 1


def known_tools(cache_dir: Path, identity: str) -> dict[str, str] | None:
    """Each tool's path as an earlier start found it in the build IDENTITY names; None: not known."""
    try:
        data = json.loads(_entry(cache_dir, identity).read_text(encoding="utf-8"))
        if (data["version"], data["identity"], data["probe"]) != (_VERSION, identity, _probe_digest()):
            return None
        found = data["tools"]
        if not all(isinstance(name, str) and isinstance(path, str) for name, path in found.items()):
            return None
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    return None if missing_tools(found) else found


def remember_tools(cache_dir: Path, identity: str, found: dict[str, str]) -> None:
    """Keep what the probe found in the build IDENTITY names, written whole or not at all."""
    entry = _entry(cache_dir, identity)
    with contextlib.suppress(OSError):  # a cache we cannot write only costs the next start its probe
        entry.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle, partial = tempfile.mkstemp(dir=entry.parent, prefix=entry.stem, suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump({"version": _VERSION, "identity": identity, "probe": _probe_digest(), "tools": found}, file)
        os.replace(partial, entry)


def _entry(cache_dir: Path, identity: str) -> Path:
    return cache_dir / "tools" / f"{hashlib.sha256(identity.encode()).hexdigest()[:32]}.json"


def _probe_digest() -> str:
    """The tool list as probed: another list asks every build again."""
    return hashlib.sha256(probe_command().encode()).hexdigest()
