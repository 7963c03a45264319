"""Choose and check a sandbox backend for a run; each then makes one fresh sandbox per episode."""

from __future__ import annotations

import dataclasses
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from harness.core.errors import InputError
from harness.sandboxes.base import Sandbox, SandboxError, SandboxSettings
from harness.sandboxes.closed_book import (
    CLOSED_BOOK_TEMPLATE,
    ClosedBookSandbox,
    empty_documents,
    remove_empty_documents,
)

if TYPE_CHECKING:
    from harness.sandboxes.local.sandbox import Privilege


@dataclass(frozen=True)
class Capabilities:
    """What a run must know of its backend beyond making sandboxes."""

    max_sandboxes: int | None = None
    """Sandboxes the backend allows at once (E2B: the plan's; more are refused), None: no cap of its own."""
    cap_reason: str = ""
    """What sets `max_sandboxes`, for the console."""
    warning: str | None = None
    """A limit the backend cannot apply as asked (rlimits instead of cgroups, a short sandbox lifetime)."""
    sees_opens: bool = False
    """The host sees the agent's file opens (inotify on the collection): the sandbox's mounts are on it."""


class SandboxBackend(Protocol):
    facts: dict[str, Any]
    """For run.yaml: backend, image digest or template ids, limit mechanism."""

    @property
    def capabilities(self) -> Capabilities: ...

    def new_sandbox(self, domain: str, collection: Path, episode_name: str, cancel: threading.Event) -> Sandbox:
        """A fresh sandbox for one episode (not started yet)."""


@dataclass
class LocalBackend:
    settings: SandboxSettings
    bwrap: str
    privilege: Privilege
    facts: dict[str, Any]

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(warning=(self.facts.get("limits") or {}).get("warning"), sees_opens=True)

    def new_sandbox(self, domain: str, collection: Path, episode_name: str, cancel: threading.Event) -> Sandbox:
        from harness.sandboxes.local.sandbox import BubblewrapSandbox

        return BubblewrapSandbox(collection, episode_name, self.settings, self.bwrap, cancel, self.privilege)


@dataclass
class DockerBackend:
    settings: SandboxSettings
    client: Any
    image: str
    run_id: str
    facts: dict[str, Any]

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(sees_opens=os.environ.get("DOCKER_HOST", "unix://").startswith("unix://"))

    def new_sandbox(self, domain: str, collection: Path, episode_name: str, cancel: threading.Event) -> Sandbox:
        from harness.sandboxes.docker.sandbox import DockerSandbox

        return DockerSandbox(self.client, self.image, collection, self.run_id, episode_name, self.settings, cancel)


@dataclass
class E2BBackend:
    settings: SandboxSettings
    sdk: Any
    api_key: str
    templates: dict[str, str]
    run_id: str
    time_limit_s: float
    facts: dict[str, Any]
    capabilities: Capabilities
    plan: Any
    """The account's E2B plan (`e2b.plan.Plan`)."""
    pacer: Any
    """One per runner: every sandbox creation waits for its turn (`e2b.plan.CreationPacer`)."""
    invocation: str
    """In every sandbox's metadata: this start of the run, on every node (`remote_exec.LABEL_INVOCATION`)."""

    def paced_by(self, pacer: Any) -> E2BBackend:
        """The backend with its creations paced elsewhere (a Ray node: by the run's coordinator)."""
        return dataclasses.replace(self, pacer=pacer)

    def new_sandbox(self, domain: str, collection: Path, episode_name: str, cancel: threading.Event) -> Sandbox:
        from harness.sandboxes.e2b.sandbox import E2BSandbox

        return E2BSandbox(
            self.sdk,
            self.templates[domain],
            self.api_key,
            self.run_id,
            episode_name,
            self.settings,
            self.time_limit_s,
            cancel,
            self.plan,
            self.pacer,
            self.invocation,
        )

    def kill_left_by(self, invocations: list[str]) -> list[str]:
        """Kill what these invocations of the run left running on any host; the ids. Raises `SandboxError`."""
        from harness.sandboxes.e2b.sandbox import kill_invocations

        return kill_invocations(self.sdk, self.api_key, self.run_id, invocations)


@dataclass
class ClosedBookBackend:
    """A backend whose sandboxes mount an empty folder where the domain's collection would be (local, Docker)."""

    inner: SandboxBackend
    facts: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self.facts = self.inner.facts | {"documents": "empty (--closed-book)"}

    @property
    def capabilities(self) -> Capabilities:
        return self.inner.capabilities

    def new_sandbox(self, domain: str, collection: Path, episode_name: str, cancel: threading.Event) -> Sandbox:
        documents = empty_documents()
        return ClosedBookSandbox(self.inner.new_sandbox(domain, documents, episode_name, cancel), documents)


def prepare_backend(
    name: str,
    settings: SandboxSettings,
    run_id: str,
    collections: dict[str, Path],
    time_limit_s: float,
    image: str | None,
    closed_book: bool = False,
    invocation: str = "",
    templates: dict[str, str] | None = None,
) -> SandboxBackend:
    """Check the backend can run (raising `InputError` with the fix) and reap orphans of dead runs.
    `collections`: each domain's collection (E2B: its template is tagged with their hash); `closed_book`: its
    sandboxes get an empty /workspace/documents (sandboxes/closed_book.py); `invocation`: this start of the
    run, in the metadata of its E2B sandboxes; `templates`: E2B, the references the driver computed, for a Ray
    node (whose collections are checked against the driver's hashes instead of read again to tag them)."""
    if name == "local":
        return ClosedBookBackend(_local(settings)) if closed_book else _local(settings)
    if name == "docker":
        docker = _docker(settings, run_id, image)
        return ClosedBookBackend(docker) if closed_book else docker
    return _e2b(settings, run_id, collections, time_limit_s, closed_book, invocation, templates)


def _local(settings: SandboxSettings) -> LocalBackend:
    from harness.sandboxes.limits import release_stale_cgroups
    from harness.sandboxes.local.sandbox import BwrapUnavailable, check_bwrap, find_bwrap

    release_stale_cgroups()
    try:
        bwrap = find_bwrap()
        privilege, facts = check_bwrap(bwrap, settings)
    except BwrapUnavailable as error:
        raise InputError(f"--sandbox local: {error}") from None
    return LocalBackend(settings, bwrap, privilege, facts)


def _docker(settings: SandboxSettings, run_id: str, image: str | None) -> DockerBackend:
    from harness.sandboxes.docker.client import docker_client
    from harness.sandboxes.docker.sandbox import check_image, cleanup_orphans, docker_facts
    from harness.sandboxes.recipe import default_image

    client = docker_client()
    image = image or default_image()
    try:
        image_id = client.images.get(image).id
    except Exception:
        raise InputError(
            f"--sandbox docker: image {image} not found; build it with `python -m harness sandbox build docker`"
        ) from None
    check_image(client, image)
    cleanup_orphans(client)
    return DockerBackend(settings, client, image, run_id, docker_facts(image, image_id, settings.limits))


def _e2b(
    settings: SandboxSettings,
    run_id: str,
    collections: dict[str, Path],
    time_limit_s: float,
    closed_book: bool,
    invocation: str,
    known_templates: dict[str, str] | None,
) -> E2BBackend:
    from harness.sandboxes.e2b import plan as e2b_plan
    from harness.sandboxes.e2b import sandbox as e2b
    from harness.sandboxes.e2b import templates as e2b_templates
    from harness.sandboxes.e2b.errors import require_api_key

    try:
        api_key = require_api_key()
        resources = e2b_templates.TemplateResources.from_limits(settings.limits)
        plan = e2b_plan.current_plan()
        e2b_plan.sandbox_lifetime(time_limit_s, plan)  # refused here, before any episode, when the plan cannot
    except SandboxError as error:
        raise InputError(str(error)) from None
    sdk = e2b.default_sdk()
    try:
        # tagging reads every file of the collection (the SDK hashes each): once per start, on the driver
        templates = known_templates or _template_references(sdk, collections, resources, closed_book)
        for domain, reference in templates.items():
            if not e2b_templates.template_ready(sdk, reference, api_key):
                which = "--closed-book" if closed_book else f"--domain {domain}"
                raise InputError(
                    f"--sandbox e2b: template {reference} not found (no ready build of this recipe, collection and "
                    f"size: they changed since the last build, or it failed or was interrupted): build again with "
                    f"`python -m harness sandbox build e2b {which} --cpus {resources.cpu_count} "
                    f"--memory-mb {resources.memory_mb}`"
                )
        e2b.reap_orphans(sdk, api_key)
    except SandboxError as error:
        raise InputError(f"--sandbox e2b: {error}") from None
    # Each trajectory records what its sandbox reports; the template was built with exactly these.
    limits: dict[str, Any] = {
        "mechanism": "e2b template",
        "memory_mb": resources.memory_mb,
        "cpus": resources.cpu_count,
        "pids": settings.limits.pids,
    }
    warning = e2b_plan.lifetime_warning(time_limit_s, plan)
    if warning:
        limits["warning"] = warning
    documents = {"documents": "empty (--closed-book)"} if closed_book else {}
    facts = documents | {
        "backend": "e2b",
        "templates": templates,
        "time_limit_s": time_limit_s,
        "limits": limits,
        "plan": plan.name,
        "max_sandboxes": plan.max_sandboxes,
        "creations_per_s": plan.creations_per_s,
    }
    capabilities = Capabilities(plan.max_sandboxes, f"the cap of E2B's {plan.name} plan", warning)
    pacer = e2b_plan.CreationPacer(plan.creations_per_s)
    return E2BBackend(
        settings, sdk, api_key, templates, run_id, time_limit_s, facts, capabilities, plan, pacer, invocation
    )


def _template_references(sdk: Any, collections: dict[str, Path], resources: Any, closed_book: bool) -> dict[str, str]:
    """Each domain's template reference; closed-book, every domain's is the template built from no documents."""
    from harness.sandboxes.e2b import templates as e2b_templates

    if not closed_book:
        return {
            domain: e2b_templates.template_reference(sdk, domain, path, resources)
            for domain, path in collections.items()
        }
    empty = empty_documents()
    try:
        reference = e2b_templates.template_reference(sdk, CLOSED_BOOK_TEMPLATE, empty, resources)
    finally:
        remove_empty_documents(empty)
    return dict.fromkeys(collections, reference)
