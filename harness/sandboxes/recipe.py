"""The one sandbox recipe (sandbox_templates/): its files, its hash, and the Docker image built from it."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.sandboxes.kernel_counters import HIDDEN_FILES, PTY_MULTIPLEXER
from harness.sandboxes.syscall_policy import RESTRICTIONS

RECIPE_DIR = Path(__file__).resolve().parents[1] / "sandbox_templates"
"""`harness/sandbox_templates` links to the top-level `sandbox_templates/` and is package data, so a wheel
carries the recipe and an editable install reads the source tree's."""
RECIPE_FILES = (
    "Dockerfile",
    "requirements.txt",
    "agents.txt",
    "tools.txt",
    "harness-exec",
    "harness-execd",
    "harness-seccomp",
)
SYSCALL_RULES = "syscall-rules.json"
"""Written into every build context from `syscall_policy.RESTRICTIONS`, for harness-seccomp (E2B's commands)."""
HIDDEN_COUNTERS = "hidden-counters"
"""Written into every build context from `kernel_counters`: the files harness-exec hides (E2B's commands)."""
IMAGE_REPOSITORY = "harness-sandbox"
DEBOOTSTRAP_IMAGE = "harness-base:bookworm"
_DEBOOTSTRAP_SUITE = "bookworm"


def recipe_hash() -> str:
    digest = hashlib.sha256()
    for name in RECIPE_FILES:
        digest.update(name.encode() + b"\0" + (RECIPE_DIR / name).read_bytes())
    digest.update(SYSCALL_RULES.encode() + b"\0" + _syscall_rules_json().encode())
    digest.update(HIDDEN_COUNTERS.encode() + b"\0" + _hidden_counters().encode())
    return digest.hexdigest()[:12]


def _hidden_counters() -> str:
    """One path a line; /dev/ptmx too, a device of its own in a VM (a link to pts/ptmx elsewhere)."""
    return "".join(f"{path}\n" for path in (*HIDDEN_FILES, "/dev/ptmx", PTY_MULTIPLEXER))


def _syscall_rules_json() -> str:
    """The rules harness-seccomp applies: each restriction's call, errno and refused argument tests."""
    rules = [
        {"syscall": rule.syscall, "errno": rule.errno, "refused": [dataclasses.asdict(t) for t in rule.refused]}
        for rule in RESTRICTIONS
    ]
    return json.dumps(rules, indent=1) + "\n"


def default_image() -> str:
    """The image tag for the current recipe: rebuilt whenever a recipe file changes."""
    return f"{IMAGE_REPOSITORY}:{recipe_hash()}"


def host_ca_bundle() -> Path | None:
    """The CA bundle pip on this host uses, for builds behind a TLS-inspecting proxy."""
    for name in ("PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"):
        value = os.environ.get(name)
        if value and Path(value).is_file():
            return Path(value)
    return None


def write_build_context(target: Path, ca_bundle: Path | None) -> None:
    """The recipe files plus `extra-ca.crt` (the host's CA bundle, or empty)."""
    for name in RECIPE_FILES:
        shutil.copy2(RECIPE_DIR / name, target / name)
    (target / SYSCALL_RULES).write_text(_syscall_rules_json())
    (target / HIDDEN_COUNTERS).write_text(_hidden_counters())
    (target / "extra-ca.crt").write_bytes(ca_bundle.read_bytes() if ca_bundle else b"")


def _ensure_debootstrap_base(client: Any, log: Callable[[str], None]) -> str:
    """A Debian base image without any registry: debootstrap a rootfs and `docker import` it (once)."""
    try:
        client.images.get(DEBOOTSTRAP_IMAGE)
        return DEBOOTSTRAP_IMAGE
    except Exception:  # docker.errors.ImageNotFound
        pass
    if shutil.which("debootstrap") is None:
        raise RuntimeError("--base debootstrap needs debootstrap (Debian package debootstrap) and root")
    with tempfile.TemporaryDirectory(prefix="harness-rootfs-") as work:
        rootfs, archive = Path(work) / "rootfs", Path(work) / "rootfs.tar"
        log(f"debootstrap {_DEBOOTSTRAP_SUITE} (about a minute)")
        subprocess.run(
            ["debootstrap", "--variant=minbase", _DEBOOTSTRAP_SUITE, str(rootfs), "http://deb.debian.org/debian"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        with tarfile.open(archive, mode="w") as tar:
            tar.add(rootfs, arcname=".")
        repository, tag = DEBOOTSTRAP_IMAGE.split(":")
        client.api.import_image_from_file(str(archive), repository=repository, tag=tag)
    return DEBOOTSTRAP_IMAGE


def build_image(client: Any, base_image: str | None, log: Callable[[str], None]) -> str:
    """Build (or find) the recipe image; returns its tag. `base_image="debootstrap"` works offline."""
    tag = default_image()
    try:
        client.images.get(tag)
        log(f"{tag} is up to date")
        return tag
    except Exception:  # docker.errors.ImageNotFound
        pass
    buildargs = {}
    if base_image == "debootstrap":
        buildargs["BASE_IMAGE"] = _ensure_debootstrap_base(client, log)
    elif base_image:
        buildargs["BASE_IMAGE"] = base_image
    with tempfile.TemporaryDirectory(prefix="harness-build-") as context:
        write_build_context(Path(context), host_ca_bundle())
        log(f"building {tag}")
        for chunk in client.api.build(path=context, tag=tag, buildargs=buildargs, rm=True, decode=True):
            if "error" in chunk:
                raise RuntimeError(f"docker build failed: {chunk['error'].strip()}")
            if chunk.get("stream", "").startswith("Step "):
                log(chunk["stream"].strip())
    return tag
