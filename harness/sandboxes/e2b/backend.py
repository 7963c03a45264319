"""`--sandbox e2b`: a Firecracker VM per episode on E2B's service, from a template per domain (templates.py)
within the account's plan (plan.py)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.core.errors import InputError
from harness.sandboxes.backend import BackendSetup, BuildRequest, Capabilities, Killer, SandboxBackend
from harness.sandboxes.base import Sandbox, SandboxError
from harness.sandboxes.closed_book import CLOSED_BOOK_TEMPLATE, empty_documents, remove_empty_documents
from harness.sandboxes.e2b import plan as e2b_plan
from harness.sandboxes.e2b import sandbox as e2b
from harness.sandboxes.e2b import templates as e2b_templates
from harness.sandboxes.e2b.errors import require_api_key
from harness.sandboxes.pacing import CreationPacer, Pacer


class E2BBackend(SandboxBackend):
    name = "e2b"
    closed_book_builtin = True

    def __init__(
        self,
        setup: BackendSetup,
        sdk: Any,
        api_key: str,
        templates: dict[str, str],
        builds: dict[str, str],
        plan: e2b_plan.Plan,
        pacer: Pacer,
    ):
        self.setup, self.sdk, self.api_key, self.templates, self.plan = setup, sdk, api_key, templates, plan
        self.builds = builds
        """Each domain's build, as its template's tag named it when the run was checked."""
        self.pacer = pacer
        """Every sandbox creation waits for its turn: one pacer per runner, or the Ray coordinator's."""

    @classmethod
    def check(cls, setup: BackendSetup) -> E2BBackend:
        """The API key, the plan's lifetime, and a ready template per domain (asked of the service, read only)."""
        try:
            api_key = require_api_key()
            resources = e2b_templates.TemplateResources.from_limits(setup.settings.limits)
            plan = e2b_plan.current_plan()
            e2b_plan.sandbox_lifetime(setup.time_limit_s, plan)  # refused here, before any episode
        except SandboxError as error:
            raise InputError(str(error)) from None
        sdk = e2b.default_sdk()
        try:
            # tagging reads every file of the collection (the SDK hashes each): once per start, on the driver
            templates = setup.templates or _template_references(sdk, setup.collections, resources, setup.closed_book)
            builds = {}
            for domain, reference in templates.items():
                build = e2b_templates.ready_build(sdk, reference, api_key)
                if build is None:
                    which = "--closed-book" if setup.closed_book else f"--domain {domain}"
                    raise InputError(
                        f"--sandbox e2b: template {reference} not found (no ready build of this recipe, collection "
                        f"and size: they changed since the last build, or it failed or was interrupted): build "
                        f"again with `python -m harness sandbox build e2b {which} --cpus {resources.cpu_count} "
                        f"--memory-mb {resources.memory_mb}`"
                    )
                builds[domain] = build
        except SandboxError as error:
            raise InputError(f"--sandbox e2b: {error}") from None
        return cls(setup, sdk, api_key, templates, builds, plan, CreationPacer(plan.creations_per_s))

    @classmethod
    def build(cls, request: BuildRequest, echo: Callable[[str], None]) -> str:
        if request.closed_book:
            name, collection = CLOSED_BOOK_TEMPLATE, empty_documents()
        elif request.domain is not None and request.collection is not None:
            name, collection = request.domain, request.collection
        else:
            raise InputError("sandbox build e2b: --domain or --closed-book is required (one template per domain)")
        try:
            resources = e2b_templates.TemplateResources.from_limits(request.limits)
            reference = e2b_templates.build_template(e2b.default_sdk(), name, collection, resources, echo)
        except SandboxError as error:
            raise InputError(str(error)) from None
        finally:
            if request.closed_book:
                remove_empty_documents(collection)
        return f"template ready: {reference}"

    @classmethod
    def clean_up(cls) -> str:
        """Kill the sandboxes of runners that are gone (the service lists them by metadata)."""
        try:
            api_key = require_api_key()
        except SandboxError:
            raise InputError("E2B_API_KEY not set") from None
        return f"killed {len(e2b.reap_orphans(e2b.default_sdk(), api_key))} orphaned sandboxes"

    @classmethod
    def leftovers_of(cls, run_id: str) -> Killer:
        try:
            api_key = require_api_key()
        except SandboxError:
            raise InputError("E2B_API_KEY is not set; the run's E2B sandboxes need it") from None
        return functools.partial(e2b.kill_invocations, e2b.default_sdk(), api_key, run_id)

    @property
    def facts(self) -> dict[str, Any]:
        resources = e2b_templates.TemplateResources.from_limits(self.setup.settings.limits)
        # Each trajectory records what its sandbox reports; the template was built with exactly these.
        limits: dict[str, Any] = {
            "mechanism": "e2b template",
            "memory_mb": resources.memory_mb,
            "cpus": resources.cpu_count,
            "pids": self.setup.settings.limits.pids,
        }
        warning = e2b_plan.lifetime_warning(self.setup.time_limit_s, self.plan)
        if warning:
            limits["warning"] = warning
        documents = {"documents": "empty (--closed-book)"} if self.setup.closed_book else {}
        return documents | {
            "backend": "e2b",
            "templates": self.templates,
            "time_limit_s": self.setup.time_limit_s,
            "limits": limits,
            "plan": self.plan.name,
            "max_sandboxes": self.plan.max_sandboxes,
            "creations_per_s": self.plan.creations_per_s,
        }

    @property
    def capabilities(self) -> Capabilities:
        warning = e2b_plan.lifetime_warning(self.setup.time_limit_s, self.plan)
        return Capabilities(self.plan.max_sandboxes, f"the cap of E2B's {self.plan.name} plan", warning)

    def probe_identity(self, domain: str) -> str | None:
        return f"e2b build {self.builds[domain]} of {self.templates[domain]}"

    def start(self, probe: bool = True) -> None:
        """Kill the sandboxes of runners that are gone, before this run makes its own."""
        try:
            e2b.reap_orphans(self.sdk, self.api_key)
        except SandboxError as error:
            raise InputError(f"--sandbox e2b: {error}") from None

    def new_sandbox(self, domain: str, collection: Path, episode_name: str, cancel: threading.Event) -> Sandbox:
        return e2b.E2BSandbox(
            self.sdk,
            self.templates[domain],
            self.api_key,
            self.setup.run_id,
            episode_name,
            self.setup.settings,
            self.setup.time_limit_s,
            cancel,
            self.plan,
            self.pacer,
            self.setup.invocation,
        )

    def leftovers(self) -> Killer:
        return functools.partial(e2b.kill_invocations, self.sdk, self.api_key, self.setup.run_id)

    @property
    def creations_per_s(self) -> float:
        return self.plan.creations_per_s

    def paced_by(self, pacer: Pacer) -> E2BBackend:
        return E2BBackend(self.setup, self.sdk, self.api_key, self.templates, self.builds, self.plan, pacer)


def _template_references(
    sdk: Any, collections: dict[str, Path], resources: e2b_templates.TemplateResources, closed_book: bool
) -> dict[str, str]:
    """Each domain's template reference; closed-book, every domain's is the template built from no documents."""
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
