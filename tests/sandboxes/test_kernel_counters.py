"""No machine-wide kernel counter carries a value from one episode to another (issue 45, classes 1 and 12).

The attack: a sender episode raises /proc/sys/fs/aio-nr by its answer (`io_setup(N)`) and opens that many
ptys (/proc/sys/kernel/pty/nr); a receiver episode running at the same time reads the answer back. Each
backend gets one pair of sandboxes: the receiver reads the two counters while the sender holds them, then
runs the survey (tests/helpers/kernel_counters.py), which moves every counter it knows of and reads all of
/proc and /sys. The attack through the command line, and Docker's /proc/locks (class 12), are in
tests/sandboxes/test_episode_channels.py.
"""

from __future__ import annotations

import errno
import json
import threading
from pathlib import Path

import pytest

from harness.sandboxes.base import SandboxSettings
from harness.sandboxes.kernel_counters import HIDDEN_FILES
from tests.helpers.kernel_counters import PIPE_FILLER, PIPE_PROBE, RECEIVER, SENDER, SURVEY
from tests.sandboxes.test_episode_channels import run_python, two_episodes  # noqa: F401

COUNTER_BACKENDS = ["local", "local-setpriv", "local-caller", "docker", "e2b-emulator"]
"""The local sandbox's privilege paths, whose commands' bwrap hides the counters alike (local-rlimit differs
from local only in how memory is limited)."""

SHARED_LOAD = {
    "/proc/loadavg",
    "/proc/meminfo",
    "/proc/vmstat",
    "/proc/zoneinfo",
    "/proc/buddyinfo",
    "/proc/uptime",
    "/proc/softirqs",
    "/proc/interrupts",
    "/proc/schedstat",
    "/proc/diskstats",
    "/proc/pressure/cpu",
    "/proc/pressure/io",
    "/proc/pressure/memory",
    "/proc/net/sockstat",
    "/proc/net/sockstat6",
    "/proc/net/protocols",
    "/proc/net/softnet_stat",
}
"""What stays readable and moves with everything on the machine (docs/guide/sandboxes.md): load, memory,
interrupts, disk traffic, the host's sockets (a sandbox can open none but local ones)."""
HOST_DISKS = "/proc/fs/"
"""The host's file systems' statistics (ext4's allocator): moved by writes to the host's disks, which no
sandbox makes (its scratch is a tmpfs)."""
OWN_NAMESPACE = {"/proc/sys/kernel/ns_last_pid", "/proc/sysvipc/shm", "/proc/sysvipc/msg", "/proc/sysvipc/sem"}
"""Counters the kernel keeps per namespace: the sandbox's own."""


@pytest.mark.parametrize("make_sandbox", COUNTER_BACKENDS, indirect=True)
def test_no_kernel_counter_carries_a_value_from_one_episode_to_another(two_episodes):  # noqa: F811
    sender, receiver = two_episodes
    sent: dict[str, object] = {}
    sending = threading.Thread(target=lambda: sent.update(result=run_python(sender, SENDER, "42", "3")))
    sending.start()
    try:
        received = run_python(receiver, RECEIVER, "1.5")
    finally:
        sending.join()
    sender_view = json.loads(sent["result"].stdout)  # type: ignore[attr-defined]
    assert sender_view["io_setup"] == -errno.ENOSYS and not isinstance(sender_view["ptys"], int), sender_view
    assert json.loads(received.stdout) == {"aio-nr": "", "pty/nr": ""}, received.stdout

    surveyed = run_python(receiver, SURVEY, *HIDDEN_FILES, "/proc/stat")
    survey = json.loads(surveyed.stdout)
    assert survey["moves"]["io_setup"] == -errno.ENOSYS, survey["moves"]
    assert not isinstance(survey["moves"]["ptys"], int), survey["moves"]
    assert survey["moves"]["tcp sockets"] == "Address family not supported by protocol", survey["moves"]
    counters = survey["counters"]
    assert {path: counters[path] for path in HIDDEN_FILES} == dict.fromkeys(HIDDEN_FILES, ""), counters
    assert counters["/proc/stat"].startswith("cpu ") and "processes" not in counters["/proc/stat"], counters
    channels = {path for path in survey["moved"] if not path.startswith(HOST_DISKS)} - SHARED_LOAD - OWN_NAMESPACE
    assert channels == set(), survey["moved"]


TOOLS = """set -e
python3 -c 'import pandas; print(pandas.DataFrame({"units": [40, 2]}).units.sum())'
rg -c Report documents/report.md
printf 'a\\n' > /tmp/log; (sleep 0.5; printf 'b\\n' >> /tmp/log) & timeout 1.5 tail -f /tmp/log || true
python3 -c 'import sqlite3; c = sqlite3.connect("file:/tmp/db?nolock=1", uri=True); c.execute("create table t(x)")
c.execute("insert into t values (42)"); print(c.execute("select x from t").fetchone()[0])'
ps aux | awk 'NR == 1 {print $1, $2}'
python3 -c 'import os; print(os.cpu_count() > 0)'
"""


@pytest.mark.parametrize("make_sandbox", ["local", "docker", "e2b-emulator"], indirect=True)
def test_the_agents_tools_work_with_the_counters_hidden(collection: Path, make_sandbox):
    """Python with pandas, rg, `tail -f`, SQLite (without locks, as before), ps (which needs /proc/stat's boot
    time and /proc/meminfo) on every backend whose sandbox has the toolset."""
    box = make_sandbox(collection, "tools", SandboxSettings())
    box.start()
    try:
        result = box.execute(TOOLS, 60)
    finally:
        box.close()
    assert result.stdout.split("\n") == ["42", "1", "a", "b", "42", "USER PID", "True", ""], result.stderr
    assert "ps:" not in result.stderr, result.stderr


@pytest.mark.parametrize("make_sandbox", ["docker"], indirect=True)
def test_one_episodes_pipes_do_not_shrink_anothers(two_episodes):  # noqa: F811
    """The kernel counts pipe capacity per uid, machine-wide: a uid over pipe-user-pages-soft gets 8 KB pipes.
    Every Docker container's `agent` was uid 2000, so one container read a bit from another's pipes; each
    episode now has a uid of its own (a root runner's local episodes already had, an ordinary user's share
    that user's: docs/guide/sandboxes.md; E2B's are VMs)."""
    sender, receiver = two_episodes
    sent: dict[str, object] = {}
    sending = threading.Thread(target=lambda: sent.update(result=run_python(sender, PIPE_FILLER, "3")))
    sending.start()
    try:
        received = run_python(receiver, PIPE_PROBE, "1.5")
    finally:
        sending.join()
    assert int(sent["result"].stdout) >= 16, sent["result"]  # type: ignore[attr-defined]
    assert received.stdout.strip() == "65536", received.stdout + received.stderr
