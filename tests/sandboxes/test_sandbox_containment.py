"""Every containment property, checked by a command run inside a real sandbox: bubblewrap, Docker, and our
E2B code on the E2B emulator (tests/helpers/e2b_emulator.py)."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import pytest

from harness.sandboxes.base import Sandbox, SandboxSettings
from harness.sandboxes.limits import ResourceLimits
from tests.helpers.host_processes import host_processes, unique_sleep

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def sandbox(collection: Path, make_sandbox):
    box = make_sandbox(collection, "test", SandboxSettings(output_limit_bytes=2000))
    box.start()
    yield box
    box.close()


def run(box: Sandbox, command: str, timeout: float = 60):
    return box.execute(command, timeout)


def test_collection_is_readable_at_workspace_documents(sandbox):
    result = run(sandbox, "pwd; cat documents/report.md")
    assert result.exit_code == 0
    assert result.stdout.startswith("/workspace\n# Report")


def test_collection_is_read_only_inside_sandbox(sandbox, collection):
    result = run(sandbox, "echo x > documents/new.md; echo y >> documents/report.md; rm documents/report.md")
    assert "Read-only file system" in result.stderr
    assert sorted(p.name for p in collection.iterdir()) == ["report.md"]
    assert (collection / "report.md").read_text().startswith("# Report")


def test_scratch_space_is_writable_and_kept_between_commands(sandbox):
    assert run(sandbox, "echo 7 > run/x && echo 8 > /tmp/y").exit_code == 0
    assert run(sandbox, "cat run/x /tmp/y").stdout == "7\n8\n"


def test_nothing_persists_from_one_episode_to_the_next(collection, make_sandbox):
    settings = SandboxSettings()
    first = make_sandbox(collection, "first", settings)
    first.start()
    run(first, "echo secret > run/left && echo secret > /tmp/left")
    first.close()
    second = make_sandbox(collection, "second", settings)
    second.start()
    try:
        result = run(second, "ls -A run; ls /tmp/left run/left")
        assert result.stdout == ""
        assert result.stderr.count("No such file or directory") == 2
    finally:
        second.close()


def test_scratch_space_is_capped_at_disk_mb(collection, make_sandbox):
    box = make_sandbox(collection, "disk", SandboxSettings(ResourceLimits(disk_mb=64)))
    box.start()
    try:
        for folder in ("run", "/tmp"):
            result = run(box, f"head -c 100M /dev/zero > {folder}/big; echo $?; du -m {folder}/big | cut -f1")
            code, megabytes = result.stdout.split()
            assert code != "0" and "No space left on device" in result.stderr
            assert int(megabytes) <= 64
            run(box, f"rm {folder}/big")
    finally:
        box.close()


def test_pid_1_shows_nothing_of_the_host(sandbox, collection):
    result = run(sandbox, "tr '\\0' ' ' < /proc/1/cmdline")
    assert result.exit_code == 0 and result.stdout
    for host_detail in (str(collection), "harness-scratch", tempfile.gettempdir() + "/", f" {os.getpid()} ", "test"):
        assert host_detail not in result.stdout


def test_each_command_is_a_fresh_process(sandbox):
    run(sandbox, "export FOO=1; cd /tmp")
    assert run(sandbox, 'echo "${FOO:-unset} $PWD"').stdout == "unset /workspace\n"


def test_there_is_no_network(sandbox):
    """Nothing but loopback, and no IP socket even there (syscall_policy.SOCKET_FAMILIES)."""
    result = run(
        sandbox,
        "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '; "
        "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 80), timeout=3)\"",
    )
    assert result.stdout.split() == ["lo"]
    assert "Address family not supported by protocol" in result.stderr


def test_commands_run_as_an_unprivileged_user(sandbox):
    result = run(sandbox, "id -u; grep CapEff /proc/self/status")
    uid, capabilities = result.stdout.split("\n")[:2]
    assert uid != "0"
    assert capabilities.split()[1] == "0000000000000000"


@pytest.mark.skipif(os.geteuid() != 0, reason="host /etc/shadow is only a secret worth testing where we are root")
def test_host_secrets_are_not_visible(sandbox):
    host_accounts = {line.split(":")[0] for line in Path("/etc/passwd").read_text().splitlines()}
    result = run(sandbox, "cat /etc/shadow; cat /etc/passwd")
    assert "No such file" in result.stderr or "Permission denied" in result.stderr
    assert not any(line.count(":") == 8 for line in result.stdout.splitlines())  # no shadow entries
    visible = {line.split(":")[0] for line in result.stdout.splitlines() if line}
    assert host_accounts - visible, "the host's own account list leaked into the sandbox"


def test_runner_files_results_tasks_and_host_files_are_not_visible(sandbox, tmp_path):
    (tmp_path / "host-note.txt").write_text("private")
    home_files = [p for p in Path.home().iterdir() if p.is_file()][:5]
    paths = [
        REPO / "tasks" / "demo.jsonl",
        REPO / "harness" / "cli.py",
        REPO / "README.md",
        REPO / "results",
        tmp_path / "host-note.txt",
        *home_files,
    ]
    result = run(sandbox, " ; ".join(f"ls -d '{p}'" for p in paths))
    assert result.stdout == ""
    assert result.stderr.count("cannot access") == len(paths)


def test_environment_comes_from_the_allow_list_only(collection, monkeypatch, make_sandbox):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    monkeypatch.setenv("HARNESS_SECRET", "hunter2")
    box = make_sandbox(collection, "env", SandboxSettings())
    box.start()
    try:
        result = run(box, "env; cat /proc/1/environ /proc/self/environ 2>/dev/null | tr '\\0' '\\n'")
    finally:
        box.close()
    assert "sk-test-secret" not in result.stdout and "hunter2" not in result.stdout
    names = {line.split("=", 1)[0] for line in result.stdout.splitlines() if "=" in line}
    assert names <= {
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "TERM",
        "PYTHONDONTWRITEBYTECODE",
        "MPLBACKEND",
        "PAGER",
        "PWD",
        "HOSTNAME",
        "SHLVL",
        "_",
        "TZ",
    }


def test_starting_3000_processes_fails(sandbox):
    spawn = """
import subprocess
children = []
try:
    for _ in range(3000):
        children.append(subprocess.Popen(["sleep", "20"]))
    print("started", len(children))
except OSError:
    print("refused after", len(children))
"""
    result = run(sandbox, f"python3 -c '{spawn}'", timeout=60)
    assert result.stdout.startswith("refused after"), result.stdout + result.stderr
    assert int(result.stdout.split()[-1]) < 3000


def test_6gb_allocation_fails_under_the_default_4gb_limit(sandbox):
    result = run(sandbox, "python3 -c \"b = bytearray(6 * 1024**3); b[::4096] = b'x' * (len(b) // 4096); print('ok')\"")
    assert result.exit_code != 0
    assert "ok" not in result.stdout


def test_timeout_kills_the_whole_process_tree_including_detached_children(sandbox, collection):
    started = time.monotonic()
    sleep = unique_sleep(317)
    result = run(sandbox, f"setsid nohup {sleep} >/dev/null 2>&1 & ({sleep} &); {sleep}", timeout=1)
    assert result.timed_out and result.exit_code is None
    assert time.monotonic() - started < 10
    assert host_processes(sleep) == []


def test_background_processes_do_not_outlive_their_command(sandbox):
    sleep = unique_sleep(318)
    run(sandbox, f"nohup {sleep} >/dev/null 2>&1 &")
    assert gone_within(TEARDOWN_S, sleep)


TEARDOWN_S = 2.0
"""How long a command's killed processes may still be listed once it returned: the kernel tears a pid namespace
down (or a cgroup's processes die) asynchronously, slower on a loaded machine; a process that outlives the
command sleeps for minutes and is still there."""


def gone_within(seconds: float, pattern: str) -> bool:
    deadline = time.monotonic() + seconds
    while host_processes(pattern):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


THREAD_OUTLIVES_MAIN = """
import ctypes, threading, time
def stamp():
    while True:
        with open("/tmp/stamps", "a") as stamps:
            stamps.write(f"{time.time()}\\n")
        time.sleep(0.01)
threading.Thread(target=stamp).start()
time.sleep(0.1)
ctypes.CDLL(None).syscall(60, 0)
"""
"""The main thread ends by the raw SYS_exit (60 on x86_64), not exit_group: the process shows `State: Z`
while its other thread goes on stamping the time into /tmp/stamps."""


def test_a_process_whose_main_thread_exited_does_not_outlive_its_command(sandbox):
    background = f"nohup python3 -c '{THREAD_OUTLIVES_MAIN}' >/dev/null 2>&1 &"
    started = run(sandbox, f"{background} sleep 0.5; tail -n 1 /tmp/stamps")
    returned = time.time()
    assert started.exit_code == 0 and float(started.stdout) > returned - 60, started.stdout + started.stderr
    time.sleep(0.3)
    later = run(sandbox, 'tail -n 1 /tmp/stamps; sleep 0.2; tail -n 1 /tmp/stamps; ps -u "$(id -u)" -o stat=,comm=')
    first, second, *processes = later.stdout.splitlines()
    assert first == second and float(second) <= returned  # stopped before the first command's answer came
    assert "python3" not in " ".join(processes), processes


BUSY_STAMPERS = """
import os, threading, time
def stamp(k):
    stamps = os.open(f"/tmp/stamp{k}", os.O_WRONLY | os.O_CREAT, 0o644)
    while True:
        os.pwrite(stamps, repr(time.time()).encode().ljust(24), 0)
for k in range(4):
    threading.Thread(target=stamp, args=(k,)).start()
time.sleep(1000)
"""
"""Four threads that never sleep, each writing the time over its file's first bytes: at the command's end one
of them is running on some core."""


def test_no_process_of_a_command_runs_after_its_answer(sandbox):
    """The last write of four busy threads left behind comes before the command's answer (bwrap reported its exit
    while its pid 1 was still killing the rest: a thread ran up to 11 ms after the answer, a quarter of the time)."""
    lateness = []
    for _ in range(5):
        run(sandbox, f"nohup python3 -c '{BUSY_STAMPERS}' >/dev/null 2>&1 & sleep 0.5")
        returned = time.time()
        stamps = run(sandbox, "for f in /tmp/stamp*; do cat $f; echo; done; rm -f /tmp/stamp*").stdout.split()
        lateness.append(max(float(stamp) for stamp in stamps) - returned)
    assert max(lateness) < 0, lateness


def test_output_is_capped_with_head_tail_and_a_marker(sandbox):
    result = run(sandbox, "seq 1 100000")
    assert result.truncated
    assert result.raw_bytes == len("".join(f"{i}\n" for i in range(1, 100001)))
    assert result.stdout.startswith("1\n2\n3\n")
    assert result.stdout.endswith("99999\n100000\n")
    assert "output truncated" in result.stdout
    assert len(result.stdout) < 2200


# an ordinary caller's sandbox runs on the system python3 the tests can hand to an ordinary user, without the toolset
@pytest.mark.parametrize(
    "make_sandbox", ["local", "local-rlimit", "local-setpriv", "docker", "e2b-emulator"], indirect=True
)
def test_python_toolset_and_search_tools_are_available(sandbox):
    modules = "pandas, numpy, scipy, openpyxl, lxml, bs4, yaml, pymupdf, pdfplumber, tabulate"
    result = run(sandbox, f"python3 -c 'import {modules}; print(\"ok\")' && rg --version | head -1 && jq --version")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("ok\nripgrep")


def test_limits_are_recorded(sandbox):
    limits = sandbox.describe()["limits"]
    assert limits["mechanism"] in ("cgroup-v1", "cgroup-v2", "rlimit", "docker", "e2b template")
    assert (limits["memory_mb"], limits["pids"]) == (ResourceLimits().memory_mb, ResourceLimits().pids)


def test_without_cgroups_rlimits_apply_and_say_so(monkeypatch):
    from harness.sandboxes import limits

    monkeypatch.setattr(limits, "CGROUP_ROOT", Path("/nonexistent-cgroup-root"))
    applied = limits.apply_limits(ResourceLimits(memory_mb=1024, pids=64), "episode")
    assert applied.mechanism == "rlimit"
    assert "ulimit -v 1048576" in applied.prologue and "ulimit -u 64" in applied.prologue
    assert "RLIMIT_NPROC" in (applied.warning or "")


def test_without_cgroups_the_run_says_on_the_console_and_in_run_yaml_that_memory_is_per_process(mini, without_cgroups):
    import yaml

    outcome = mini.run("--model", "oracle", "--memory-mb", "1024", "--disk-mb", "512")
    assert outcome.rows[0]["verdict"] == "correct"
    console = " ".join(outcome.output.split())
    assert "warning: the memory limit is per process" in console and "1024 MB" in console
    recorded = yaml.safe_load((outcome.run_dir / "run.yaml").read_text())["sandbox"]["limits"]
    assert recorded["mechanism"] == "rlimit" and recorded["warning"].startswith("the memory limit is per process")


HOSTILE_SESSION = [
    # rename what the agent can reach of /tmp and /workspace/run, and put its own in their place
    'cd /tmp && for f in * .[!.]*; do [ -e "$f" ] && mv "$f" "$f.moved"; done; '
    "mv /workspace/run /workspace/run.moved && mkdir /workspace/run; true",
    # plant programs under every name a launcher or command server might run, wherever it may write
    "for d in / /tmp /workspace /workspace/run /dev/shm /var/tmp; do for n in bwrap bash sh setpriv unshare "
    "harness-exec harness-execd python3 timeout; do printf '#!/bin/sh\\necho PLANTED\\n' > $d/$n 2>/dev/null && "
    "chmod +x $d/$n; done; done; true",
    # leave processes behind
    "(setsid sh -c 'exec {sleep}' &); nohup {sleep} >/dev/null 2>&1 & true",
    # fill every writable place
    "for d in /tmp /workspace/run /dev/shm /var/tmp /run/lock; do head -c 300M /dev/zero > $d/fill 2>/dev/null; done; "
    "true",
]


def test_a_hostile_session_leaves_the_next_command_as_it_was(collection, make_sandbox):
    """Renames, planted programs, leftover processes and full disks, one command after another: the next
    command runs as the first did, nothing of the session lives on, and nothing ends as our error."""
    sleep = unique_sleep(391)
    box = make_sandbox(collection, "hostile", SandboxSettings(ResourceLimits(memory_mb=512, disk_mb=64)))
    box.start()
    try:
        before = run(box, "id -u; pwd; cat documents/report.md")
        for command in HOSTILE_SESSION:
            run(box, command.replace("{sleep}", sleep))
        after = run(box, "id -u; pwd; cat documents/report.md")
        leftovers = host_processes(sleep)
    finally:
        box.close()
    assert (after.exit_code, after.stdout) == (before.exit_code, before.stdout) and "PLANTED" not in after.stdout
    assert leftovers == []


@pytest.fixture
def runner_key():
    """A key in a new session keyring of the runner's (this process), as a runner started from a login shell,
    an ssh session or a systemd service has one."""
    from tests.helpers.kernel_keys import fresh_key, join_new_session_keyring_with

    key = fresh_key("runner")
    join_new_session_keyring_with(key)
    return key


def test_the_runners_session_keyring_is_out_of_reach(collection, make_sandbox, runner_key):
    from tests.helpers.kernel_keys import probe_command

    box = make_sandbox(collection, "keyring", SandboxSettings())
    box.start()
    try:
        result = run(box, probe_command(runner_key))
    finally:
        box.close()
    assert result.exit_code == 0 and result.stdout.count("missing") == 3, result.stdout + result.stderr
    assert runner_key.payload not in result.stdout + result.stderr


def test_a_key_planted_by_one_episode_is_not_read_by_the_next(collection, make_sandbox):
    """Neither through the session keyring the episodes could share nor through the user keyring of the host
    uid the commands run as, which the kernel keeps after every process of that uid is gone (the next run's
    episodes run as the same uid)."""
    from tests.helpers.kernel_keys import fresh_key, probe_command

    key = fresh_key("planted")
    results = []
    for name, plant in (("planter", True), ("reader", False)):
        box = make_sandbox(collection, name, SandboxSettings())
        box.start()
        try:
            results.append(run(box, probe_command(key, plant=plant)))
        finally:
            box.close()
    planted, read = results
    assert "planted" not in planted.stdout, planted.stdout
    assert read.stdout.count("missing") == 3 and key.payload not in read.stdout, read.stdout


LOCAL_BACKENDS = ["local", "local-rlimit", "local-setpriv", "local-caller"]
FILTERED = ["keyctl", "add_key", "request_key", "mount", "unshare", "bpf", "perf_event_open", "io_uring_setup"]


@pytest.mark.parametrize("make_sandbox", LOCAL_BACKENDS, indirect=True)
def test_local_commands_run_under_a_filter_denying_what_dockers_default_profile_denies(collection, make_sandbox):
    from tests.helpers.kernel_keys import EPERM, denied_calls_command

    box = make_sandbox(collection, "filtered", SandboxSettings())
    box.start()
    try:
        result = run(box, denied_calls_command([*FILTERED, "clone3"]))
    finally:
        box.close()
    errors = dict(line.split() for line in result.stdout.splitlines())
    assert errors == {**{name: str(EPERM) for name in FILTERED}, "clone3": "38"}, result.stdout + result.stderr


@pytest.mark.parametrize("make_sandbox", LOCAL_BACKENDS, indirect=True)
def test_the_filter_kills_key_calls_through_the_i386_and_x32_entry_points(collection, make_sandbox):
    from tests.helpers.kernel_keys import foreign_abi_keyctl_command

    box = make_sandbox(collection, "abi", SandboxSettings())
    box.start()
    try:
        result = run(box, foreign_abi_keyctl_command())
    finally:
        box.close()
    assert result.stdout.splitlines() == ["status 159", "status 159"], result.stdout + result.stderr  # SIGSYS
