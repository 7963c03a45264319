"""The isolation rules (`sandboxes/syscall_policy.py`) as data, and the Docker profile made from them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.sandboxes.base import SandboxSettings
from harness.sandboxes.docker.seccomp_profile import seccomp_profile
from harness.sandboxes.syscall_policy import RESTRICTIONS, SOCKET_FAMILIES

PROBED = [*range(0, 2100), *((1 << 32) | value for value in (1, 2, 6, 10, 37, 40)), (1 << 64) - 1]


@pytest.mark.parametrize("restriction", [r for r in RESTRICTIONS if r.allowed], ids=lambda r: r.syscall)
def test_what_an_allow_list_filter_lets_through_is_never_what_the_rules_refuse(restriction):
    for value in PROBED:
        allowed = any(test.matches(value) for test in restriction.allowed)
        refused = any(test.matches(value) for test in restriction.refused)
        assert not (allowed and refused), (restriction.syscall, value)
    if restriction.syscall == "socket":  # and for families, the two are the whole: nothing else gets through
        assert [value for value in PROBED if any(t.matches(value) for t in restriction.allowed)] == list(
            SOCKET_FAMILIES
        )
        assert all(any(t.matches(v) for t in restriction.refused) for v in PROBED if v not in SOCKET_FAMILIES)


def test_the_docker_profile_is_mobys_default_with_every_restricted_call_ruled_by_us_alone():
    profile = json.loads(seccomp_profile())
    moby = json.loads((Path(__file__).parents[2] / "harness/sandboxes/docker/moby_default_seccomp.json").read_text())
    restricted = {restriction.syscall for restriction in RESTRICTIONS}
    ours = [entry for entry in profile["syscalls"] if set(entry["names"]) & restricted]
    assert all(entry["names"] == [entry["names"][0]] and entry.get("args") is not None for entry in ours)
    expected = sum(len(r.allowed) + max(len(r.refused), 1) for r in RESTRICTIONS)
    assert len(ours) == expected
    kept = {name for entry in profile["syscalls"] for name in entry["names"]} - restricted
    assert kept == {name for entry in moby["syscalls"] for name in entry["names"]} - restricted
    assert profile["defaultAction"] == moby["defaultAction"] == "SCMP_ACT_ERRNO"
    assert all(arch["subArchitectures"] == [] for arch in profile["archMap"])


def test_a_docker_sandbox_kills_the_32_bit_entry_points(collection: Path, docker_image):
    from harness.sandboxes.docker.sandbox import DockerSandbox
    from tests.helpers.kernel_keys import foreign_abi_keyctl_command

    client, image = docker_image
    box = DockerSandbox(client, image, collection, "test-run", "abi", SandboxSettings())
    box.start()
    try:
        result = box.execute(foreign_abi_keyctl_command(), 60)
    finally:
        box.close()
    assert result.stdout.splitlines() == ["status 159", "status 159"], result.stdout + result.stderr  # SIGSYS
