"""Without cgroups, every process of a uid on the machine counts toward its RLIMIT_NPROC: a root runner's
episodes each run as a host uid of their own, so one agent holding every process slot of its uid leaves the
episodes of another run on the same machine alone; where that cannot be, the run is refused."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from harness.sandboxes.base import SandboxError, SandboxSettings
from harness.sandboxes.limits import ResourceLimits
from harness.sandboxes.local import uids
from harness.sandboxes.local.sandbox import BubblewrapSandbox, Privilege, find_bwrap
from tests.conftest import REPO, TEST_SUBUIDS

HOLD_S = 300
"""How long the hostile episode's processes would live: until the test cancels its command."""
HOSTILE = f"""python3 -c '
import os, time
while True:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep({HOLD_S})
        os._exit(0)
time.sleep({HOLD_S})
'"""

SECOND_RUN = """
import sys
from pathlib import Path
from harness.sandboxes import limits
from harness.sandboxes.local import uids
limits.CGROUP_ROOT = Path("/nonexistent-cgroup-root")
uids.SUBUID_FILE = Path(sys.argv[1])
from harness.cli.main import main
sys.exit(main(sys.argv[2:]))
"""
PIDS = 128


@pytest.mark.skipif(os.geteuid() != 0, reason="an ordinary runner's episodes all count toward its own uid")
def test_a_hostile_episode_holding_its_uids_process_slots_leaves_another_runs_episodes_alone(
    collection: Path, tmp_path: Path, without_cgroups: Path
):
    settings = SandboxSettings(ResourceLimits(memory_mb=1024, pids=PIDS, disk_mb=64))
    hostile = BubblewrapSandbox(collection, "hostile", settings, find_bwrap(), threading.Event())
    hostile.start()
    thread = threading.Thread(target=hostile.execute, args=(HOSTILE, HOLD_S))
    thread.start()
    try:
        _wait_until_every_slot_is_held(hostile)
        arguments = f"--model oracle --domain demo --workers 2 --results-dir {tmp_path} --run-id second --pids {PIDS}"
        second = subprocess.run(
            [sys.executable, "-c", SECOND_RUN, str(without_cgroups), *arguments.split()],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
        held_throughout = thread.is_alive()
    finally:
        hostile._cancel.set()
        thread.join(60)
        hostile.close()
    assert held_throughout
    assert second.returncode == 0, second.stderr[-2000:]
    rows = [json.loads(line) for line in (tmp_path / "second" / "results.jsonl").read_text().splitlines()]
    assert len(rows) >= 10 and all(row["status"] == "answered" for row in rows), [row["status"] for row in rows]


def _wait_until_every_slot_is_held(box: BubblewrapSandbox) -> None:
    scratch = box._scratch
    assert scratch is not None
    uid = _uid(scratch.holder_pid)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if sum(1 for p in os.listdir("/proc") if p.isdigit() and _uid(int(p)) == uid) >= PIDS:
            return
        time.sleep(0.1)
    raise AssertionError("the hostile episode never held every process slot of its uid")


def _uid(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except OSError:
        pass
    return -1


@pytest.mark.skipif(os.geteuid() != 0, reason="host uids of its own are a root runner's")
@pytest.mark.parametrize("privilege", [Privilege.USER_NAMESPACE, Privilege.SETPRIV])
def test_two_episodes_at_once_run_as_different_host_uids_of_roots_range(collection: Path, without_cgroups, privilege):
    settings = SandboxSettings(ResourceLimits(memory_mb=1024, disk_mb=64))
    boxes = [BubblewrapSandbox(collection, f"episode-{n}", settings, find_bwrap(), privilege=privilege) for n in (1, 2)]
    owners = []
    try:
        for box in boxes:
            box.start()
            box.execute("touch run/mine", 30)
            scratch = box._scratch
            assert scratch is not None
            owners.append(os.stat(f"/proc/{scratch.holder_pid}/root{scratch.root}/workspace/run/mine").st_uid)
    finally:
        for box in boxes:
            box.close()
    first, count = (int(field) for field in TEST_SUBUIDS.strip().split(":")[1:])
    assert owners[0] != owners[1] and all(first <= uid < first + count for uid in owners), owners


CLAIM_AND_WAIT = """
import sys, time
from pathlib import Path
from harness.sandboxes.local import uids
uids.SUBUID_FILE = Path(sys.argv[1])
print(uids.claim_host_uid().uid, flush=True)
time.sleep(600)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="the lock file is root's")
def test_a_uid_is_held_until_released_or_its_holder_dies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    first = 1_600_000_000 + random.randrange(1_000_000) * 2  # a range of two no other test run is likely to use
    subuids = tmp_path / "subuid"
    subuids.write_text(f"root:{first}:2\n")
    monkeypatch.setattr(uids, "SUBUID_FILE", subuids)
    other = subprocess.Popen(
        [sys.executable, "-c", CLAIM_AND_WAIT, str(subuids)],
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ | {"PYTHONPATH": str(REPO)},
    )
    try:
        assert other.stdout is not None
        held_elsewhere = int(other.stdout.readline())
        mine = uids.claim_host_uid()
        assert {held_elsewhere, mine.uid} == {first, first + 1}
        with pytest.raises(SandboxError, match="is held by a running episode"):
            uids.claim_host_uid()
        mine.release()
        again = uids.claim_host_uid()
        assert again.uid == mine.uid
    finally:
        other.kill()
        other.wait()
    freed = uids.claim_host_uid()  # the killed runner's uid
    assert freed.uid == held_elsewhere
    again.release()
    freed.release()


@pytest.mark.skipif(os.geteuid() != 0, reason="host uids of its own are a root runner's")
def test_without_cgroups_and_without_a_subordinate_range_episodes_still_get_uids_of_their_own(
    collection: Path, without_cgroups
):
    without_cgroups.write_text("")
    settings = SandboxSettings(ResourceLimits(memory_mb=1024, disk_mb=64))
    boxes = [BubblewrapSandbox(collection, f"own-{n}", settings, find_bwrap()) for n in (1, 2)]
    owners = []
    try:
        for box in boxes:
            box.start()
            scratch = box._scratch
            assert scratch is not None
            owners.append(os.stat(f"/proc/{scratch.holder_pid}/root{scratch.root}/workspace/run").st_uid)
    finally:
        for box in boxes:
            box.close()
    span = uids.BUILT_IN_RANGE
    assert owners[0] != owners[1] and all(span.first <= uid < span.first + span.count for uid in owners), owners
    assert "the built-in range" in uids.describe_host_uids()


@pytest.mark.skipif(os.geteuid() != 0, reason="the lock file is root's")
def test_a_uid_that_names_an_account_of_the_machine_is_never_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    subuids = tmp_path / "subuid"
    subuids.write_text("root:65534:1\n")  # nobody
    monkeypatch.setattr(uids, "SUBUID_FILE", subuids)
    with pytest.raises(SandboxError, match="every uid of the range 65534-65534"):
        uids.claim_host_uid()


def test_a_tool_check_that_could_not_run_says_why_not_that_every_tool_is_missing(mini, monkeypatch):
    from harness.sandboxes.local import sandbox as local_sandbox

    probe = local_sandbox.probe_command()
    # too few descriptors for the probe's command substitutions: a real failure inside the sandbox, and fast (the
    # probe runs in the bwrap check's own sandbox, `check_bwrap`)
    monkeypatch.setattr(local_sandbox, "probe_command", lambda: "ulimit -n 3; " + probe)
    outcome = mini.run("--model", mini.script(["<answer>42</answer>"]))
    assert outcome.exit_code == 2
    [line] = [text for text in outcome.output.splitlines() if text.strip()]
    assert "the local sandbox could not run the tool check: " in line and "Too many open files" in line, line
    assert "lacks" not in line
    assert not mini.results_dir.exists()
