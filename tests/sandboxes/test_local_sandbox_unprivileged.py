"""The local sandbox started by an ordinary user (a uid of the test session's own via setpriv when the tests run as
root: tests/helpers/unprivileged.py)."""

from __future__ import annotations

import json

from tests.helpers.unprivileged import run_unprivileged

EPISODE = """
import json, os, tempfile
from pathlib import Path
from harness.sandboxes.base import SandboxSettings
from harness.sandboxes.limits import ResourceLimits
from harness.sandboxes.local.sandbox import BubblewrapSandbox

collection = Path(tempfile.mkdtemp())
(collection / "report.md").write_text("# Report")
settings = SandboxSettings(ResourceLimits(memory_mb=512, disk_mb=64))
box = BubblewrapSandbox(collection, "unprivileged", settings, os.environ["HARNESS_BWRAP"])
box.start()
commands = {
    "id": "id -u; touch run/owned",
    "disk": "head -c 100M /dev/zero > run/big; du -m run/big | cut -f1",
    "kept": "ls run",
    "pid1": "tr '\\\\0' ' ' < /proc/1/cmdline",
    "mess": "mkdir -p /tmp/locked/inner && chmod 000 /tmp/locked/inner /tmp/locked",
    "network": "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '",
}
results = {name: box.execute(command, 60) for name, command in commands.items()}
scratch = box._scratch
owner = os.stat(f"/proc/{scratch.holder_pid}/root{scratch.root}/workspace/run/owned").st_uid
facts = box.describe()
box.close()
print(json.dumps({
    "uid": os.getuid(),
    "owner": owner,
    "results": {name: [r.exit_code, r.stdout, r.stderr] for name, r in results.items()},
    "limits": facts["limits"],
    "leftovers": [str(p) for p in Path(tempfile.gettempdir()).glob(f"harness-scratch-{os.getpid()}-*")],
    "collection": str(collection),
}))
"""


def test_an_ordinary_users_sandbox_caps_scratch_hides_the_host_and_leaves_nothing():
    result = run_unprivileged(EPISODE)
    assert result.returncode == 0, result.stderr[-2000:]
    outcome = json.loads(result.stdout)
    results = outcome["results"]
    # uid 2000 (`agent`, as in the Docker image) in the command's user namespace, the caller's uid outside
    assert outcome["uid"] != 0 and results["id"][1] == "2000\n" and outcome["owner"] == outcome["uid"]
    assert "No space left on device" in results["disk"][2] and int(results["disk"][1]) <= 64
    assert results["kept"][1] == "big\nowned\n"
    assert results["pid1"][1].startswith("bwrap --args") and outcome["collection"] not in results["pid1"][1]
    assert results["mess"][0] == 0
    assert results["network"][1] == "lo\n"
    assert outcome["leftovers"] == []
    limits = outcome["limits"]
    assert limits["disk_mb"] == 64 and "tmpfs" in limits["disk"]
    assert limits["mechanism"] in ("rlimit", "cgroup-v2")  # v2: a delegated subtree (systemd user scope)
    if limits["mechanism"] == "rlimit":  # no delegated cgroup v2 subtree here: the run must say so
        assert limits["warning"].startswith("the memory limit is per process")
        assert "512 MB" in limits["warning"]
        # its processes count toward the caller's uid whatever the mapping: shared with its other runs, and said
        assert f"RLIMIT_NPROC counts every process of uid {outcome['uid']} on this machine" in limits["warning"]
