"""How a local command becomes unprivileged: its own user namespace, else (root, no user namespaces) setpriv."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.sandboxes.base import SandboxSettings
from harness.sandboxes.local.sandbox import BubblewrapSandbox, Privilege, check_bwrap, find_bwrap
from harness.sandboxes.local.uids import describe_host_uids, root_range


def test_a_command_in_its_own_user_namespace_is_agent_and_can_make_no_other_namespace(collection: Path):
    box = BubblewrapSandbox(collection, "userns", SandboxSettings(), find_bwrap(), privilege=Privilege.USER_NAMESPACE)
    box.start()
    try:
        result = box.execute(
            "id -un; id -u; grep CapEff /proc/self/status; unshare -U true || echo refused; "
            "unshare -rn true || echo refused; stat -c %U documents/report.md; touch run/mine",
            60,
        )
        scratch = box._scratch
        assert scratch is not None
        launcher_uid = _status_uid(scratch.holder_pid)
        owner = os.stat(f"/proc/{scratch.holder_pid}/root{scratch.root}/workspace/run/mine").st_uid
    finally:
        box.close()
    lines = result.stdout.split("\n")
    assert lines[:3] == ["agent", "2000", "CapEff:\t0000000000000000"]
    assert lines[3:5] == ["refused", "refused"]  # no user namespace of its own, so no root in one
    assert lines[5] == ("root" if os.geteuid() != 0 and collection.stat().st_uid == os.getuid() else "nobody")
    if os.geteuid() == 0:  # the launcher, and every file the agent writes, belong to the episode's own host uid
        span = root_range()
        assert launcher_uid == owner and span.first <= owner < span.first + span.count
    else:
        assert launcher_uid == os.getuid() and owner == os.getuid()


@pytest.mark.skipif(os.geteuid() != 0, reason="setpriv is the fallback of a root runner only")
def test_a_root_runner_falls_back_to_setpriv_where_user_namespaces_are_refused(
    collection: Path, bwrap_refusing_user_namespaces: str
):
    privilege, facts, _ = check_bwrap(bwrap_refusing_user_namespaces, SandboxSettings())
    assert privilege is Privilege.SETPRIV
    assert facts["user"].startswith(f"host uid {describe_host_uids()}, via setpriv (user namespace: ")
    assert "No permissions to create new namespace" in facts["user"]
    box = BubblewrapSandbox(
        collection, "fallback", SandboxSettings(), bwrap_refusing_user_namespaces, privilege=privilege
    )
    box.start()
    try:
        result = box.execute("id -u; grep CapEff /proc/self/status; cat documents/report.md", 60)
    finally:
        box.close()
    uid, capabilities, text = result.stdout.split("\n", 2)
    span = root_range()
    assert span.first <= int(uid) < span.first + span.count
    assert (capabilities, text) == ("CapEff:\t0000000000000000", (collection / "report.md").read_text())


def test_the_run_records_how_commands_drop_privileges(collection: Path):
    privilege, facts, _ = check_bwrap(find_bwrap(), SandboxSettings())
    assert privilege is Privilege.USER_NAMESPACE  # this machine allows unprivileged user namespaces
    host = describe_host_uids() if os.geteuid() == 0 else os.getuid()
    assert facts["user"] == f"uid 2000 in its own user namespace (host uid {host})"


def _status_uid(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise AssertionError(f"no Uid line for pid {pid}")
