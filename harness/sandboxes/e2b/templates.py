"""E2B templates: one per domain and size, built from the recipe with the collection baked in, and found by a
tag that is a hash of exactly what was built.

A template's name is claimed when a build is requested, before anything is built (e2b-dev/infra, the API's
template build request), so a name that resolves says nothing about a usable build. A tag does: we assign
the recipe tag only after the SDK reports the build ready, through the service's tag assignment, which
resolves its target to a ready build only (infra `GetTemplateWithBuildByTag`, `status_group = 'ready'`).
A failed or interrupted build therefore leaves no tag, and a changed recipe, collection or size asks for a
tag no build has: both are refused before any episode, with the command that builds again.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.sandboxes.base import DOCUMENTS, WORKDIR, SandboxError
from harness.sandboxes.e2b.errors import explain, require_api_key, sdk_errors
from harness.sandboxes.limits import ResourceLimits
from harness.sandboxes.recipe import RECIPE_DIR, write_build_context
from harness.sandboxes.remote_exec import AGENT

_MIN_MEMORY_MB = 128
"""E2B's smallest template memory; it also wants 1 or an even number of CPUs and even megabytes."""
_TAG_LENGTH = 16


@dataclass(frozen=True)
class TemplateResources:
    """The CPUs and memory a template is built with: every sandbox from it gets exactly these."""

    cpu_count: int
    memory_mb: int

    @classmethod
    def from_limits(cls, limits: ResourceLimits) -> TemplateResources:
        """E2B's rules for a template build (the service refuses anything else); raises `SandboxError`."""
        cpus, memory = limits.cpus, limits.memory_mb
        if not float(cpus).is_integer() or not (cpus == 1 or (cpus >= 2 and cpus % 2 == 0)):
            raise SandboxError(f"e2b: --cpus {cpus:g}: E2B gives 1 or an even number of whole CPUs")
        if memory < _MIN_MEMORY_MB or memory % 2:
            raise SandboxError(
                f"e2b: --memory-mb {memory}: E2B wants an even number of megabytes, at least {_MIN_MEMORY_MB}"
            )
        return cls(int(cpus), memory)


def template_name(domain: str, resources: TemplateResources) -> str:
    """One template per domain and size: a run finds the template built with the limits it asks for."""
    slug = re.sub(r"[^a-z0-9-]", "-", domain.lower())
    return f"harness-{slug}-{resources.cpu_count}cpu-{resources.memory_mb}mb"


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another filesystem
        shutil.copy2(source, target)


def _refuse_symlinks(collection: Path) -> None:
    """A link in the collection would be baked in as the link alone, dangling in the template: refused."""
    for folder, names, files in os.walk(collection):
        for name in sorted(names + files):
            path = Path(folder) / name
            if path.is_symlink():
                raise SandboxError(
                    f"{path}: a symbolic link (to {os.readlink(path)}); E2B would bake it in dangling: replace it "
                    "with the file it points to"
                )


def template_definition(sdk: Any, context: Path, collection: Path) -> Any:
    """The recipe's Dockerfile plus the collection, root-owned with no write bits, and the agent user.

    The collection is put into the build context as real files: the SDK packs a symlinked folder as the
    link alone (`template/utils.py: get_all_files_in_path` does not walk it, `tar_file_stream` adds it
    non-recursively), which uploads an empty folder and leaves the collection out of the cache hash."""
    _refuse_symlinks(collection.resolve())
    write_build_context(context, None)
    shutil.copytree(collection.resolve(), context / "documents", copy_function=_link_or_copy)
    dockerfile = (RECIPE_DIR / "Dockerfile").read_text()
    default_base = re.search(r"^ARG BASE_IMAGE=(\S+)$", dockerfile, re.M)
    if default_base:  # E2B builds FROM a registry image; substitute the recipe's default
        dockerfile = dockerfile.replace("${BASE_IMAGE}", default_base.group(1))
    return (
        sdk.Template(file_context_path=str(context))
        .from_dockerfile(dockerfile)
        .copy("documents", DOCUMENTS, user="root")
        .run_cmd(f"chown -R root:root {DOCUMENTS} && chmod -R a-w,a+rX,ug-s {DOCUMENTS}", user="root")
        .set_user(AGENT)
        .set_workdir(WORKDIR)
    )


def _recipe_tag(sdk: Any, definition: Any, resources: TemplateResources) -> str:
    """The hash of what E2B builds: every step as the SDK sends it, with the hash of every file it copies
    (the recipe's and the collection's: content, mode and path), and the CPUs and memory."""
    digest = hashlib.sha256(sdk.Template.to_json(definition).encode())
    digest.update(f"\0{resources.cpu_count}cpu\0{resources.memory_mb}mb".encode())
    return digest.hexdigest()[:_TAG_LENGTH]


def template_reference(sdk: Any, domain: str, collection: Path, resources: TemplateResources) -> str:
    """`name:tag`: the template a run over this collection with these resources needs."""
    with tempfile.TemporaryDirectory(prefix="harness-e2b-") as context:
        tag = _recipe_tag(sdk, template_definition(sdk, Path(context), collection), resources)
    return f"{template_name(domain, resources)}:{tag}"


def build_template(
    sdk: Any, domain: str, collection: Path, resources: TemplateResources, log: Callable[[str], None]
) -> str:
    """Build the domain's template in E2B's cloud with these CPUs and memory, then tag the ready build with
    its recipe tag; returns `name:tag`."""
    api_key = require_api_key()
    name = template_name(domain, resources)
    with tempfile.TemporaryDirectory(prefix="harness-e2b-") as context:
        definition = template_definition(sdk, Path(context), collection)
        tag = _recipe_tag(sdk, definition, resources)
        try:
            info = sdk.Template.build(
                definition,
                name=name,
                cpu_count=resources.cpu_count,
                memory_mb=resources.memory_mb,
                on_build_logs=lambda entry: log(str(entry)),
                api_key=api_key,
            )
            # Only now, and only onto a ready build (the service checks): a failed build leaves no tag.
            sdk.Template.assign_tags(f"{name}:{info.build_id}", [tag], api_key=api_key)
        except sdk_errors(sdk) as error:  # refusals ("400: ..."), failed steps, a bad key, rate limits
            raise SandboxError(f"E2B template build failed: {explain(sdk, error)}") from None
    return f"{name}:{tag}"


def ready_build(sdk: Any, reference: str, api_key: str) -> str | None:
    """The id of the build `name:tag` names (the tag exists only on a ready one), None when no ready build has
    it; raises `SandboxError` when the service cannot say."""
    name, _, tag = reference.partition(":")
    try:
        if not sdk.Template.exists(name, api_key=api_key):
            return None
        tags = sdk.Template.get_tags(name, api_key=api_key)
    except sdk_errors(sdk) as error:
        raise SandboxError(f"cannot look up E2B template {reference}: {explain(sdk, error)}") from None
    return next((str(entry.build_id) for entry in tags if entry.tag == tag), None)
