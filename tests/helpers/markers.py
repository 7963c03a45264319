"""The markers of pyproject.toml put on tests by what they use, so that no test has to say it: `docker` for the
Docker engine (the recipe's image, the E2B emulator, a Docker or emulated E2B sandbox), `ray` for a Ray cluster,
`browser` for Chromium, and `serial` for every test that must not share the machine with another one (run apart
from the parallel ones in .ci/run; docs/guide/contributing.md)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

DOCKER_FIXTURES = {"docker_image", "e2b_emulator", "emulated"}
DOCKER_BACKENDS = {"docker", "e2b-emulator"}
RAY_FIXTURES = {"cluster", "e2b_cluster"}
BROWSER_HELPERS = {"viewer_page", "headless_chromium", "sync_playwright"}

SERIAL_MODULES = {
    # a wall-clock bound on how long Ctrl-C, a killed worker or a trickling provider may take: a second test on
    # the other core stretches it
    "run/test_interrupt.py",
    "run/test_batch.py",
    "models/test_provider_deadline.py",
    "models/test_rate_limits.py",
    "models/test_adaptive_concurrency.py",
    "models/test_human.py",
    "core/test_bounded.py",
    "inputs/test_collection_limits.py",
    "inputs/test_collection_processes.py",
    "episode/test_busy_loops.py",  # busy loops filling a CPU quota until a time limit
    "episode/test_provider_time.py",  # the agent's clock of two runs compared to half a second
    # what is looked for machine-wide: containers of dead owners removed by label, host uids and their leftover
    # processes, cgroups taken away, kernel keyrings, a stopped E2B server's clock
    "sandboxes/test_backends.py",
    "sandboxes/test_backend_registry.py",
    "sandboxes/test_docker_isolation.py",
    "sandboxes/test_e2b_cloud.py",
    "sandboxes/test_e2b_server_behaviour.py",
    "sandboxes/test_kernel_keyrings.py",
    "sandboxes/test_local_sandbox_cleanup.py",
    "sandboxes/test_local_sandbox_escape.py",
    "sandboxes/test_local_sandbox_privilege.py",
    "sandboxes/test_local_sandbox_uid_isolation.py",
    "sandboxes/test_local_sandbox_unprivileged.py",
}
"""The rest of tests/sandboxes/ (containment, channels between episodes, the syscall policy, the closed book,
Docker's exec server, the local launcher) starts sandboxes of its own names and looks only at them (a leftover process
by a command line of its own, `tests/helpers/host_processes.py`): it runs beside other tests."""


def mark_by_use(items: Iterable[pytest.Item]) -> None:
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        body = _body_names(item)
        if fixtures & DOCKER_FIXTURES or body & DOCKER_FIXTURES or _params(item) & DOCKER_BACKENDS:
            item.add_marker(pytest.mark.docker)
        if fixtures & RAY_FIXTURES:
            item.add_marker(pytest.mark.ray)
        if body & BROWSER_HELPERS:
            item.add_marker(pytest.mark.browser)
        if _is_serial(item):
            item.add_marker(pytest.mark.serial)


def _body_names(item: pytest.Item) -> set[str]:
    """The names a test's body uses and the strings it holds: `viewer_page(...)` (imported at the top or in the
    test) and `request.getfixturevalue("docker_image")` are seen."""
    code = getattr(getattr(item, "function", None), "__code__", None)
    if code is None:
        return set()
    strings = {constant for constant in code.co_consts if isinstance(constant, str)}
    return set(code.co_names) | set(code.co_varnames) | strings


def _params(item: pytest.Item) -> set[Any]:
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return set()
    return {value for value in callspec.params.values() if isinstance(value, str)}


def _is_serial(item: pytest.Item) -> bool:
    if item.get_closest_marker("ray"):
        return True
    return item.path.relative_to(item.config.rootpath / "tests").as_posix() in SERIAL_MODULES
