"""Docker's resident command server (`harness-execd`), on the real engine: each command is a fresh agent
process that nothing outlives, the agent cannot touch the server, and a dead server is a clear error.

Each test's `sleep` has a length of its own (`unique_sleep`), so the host's pgrep never sees another test's processes,
nor another run's."""

from __future__ import annotations

import threading

import pytest

from harness.sandboxes.base import SandboxError, SandboxSettings
from harness.sandboxes.docker.sandbox import DockerSandbox
from tests.helpers.host_processes import host_processes, unique_sleep


@pytest.fixture
def box(docker_image, tmp_path):
    client, image = docker_image
    sandbox = DockerSandbox(client, image, tmp_path, "execd-run", "ep", SandboxSettings(output_limit_bytes=2000))
    sandbox.start()
    yield sandbox
    sandbox.close()


def kill_server(box: DockerSandbox) -> None:
    """End harness-execd from outside the agent (a root exec), as an operator or a failing engine could."""
    code, output = box._container.exec_run(["pkill", "-KILL", "-f", "harness-execd"], user="0:0")
    assert code == 0, output


def test_no_process_survives_its_command(box):
    sleep = unique_sleep(4242)
    result = box.execute(f"{sleep} & setsid nohup {sleep} >/dev/null 2>&1 & ({sleep} &); echo started", 30)
    assert result.stdout == "started\n" and result.exit_code == 0
    assert host_processes(sleep) == []  # gone when the answer came, not at the next command


def test_a_timeout_kills_the_whole_tree_and_reports_the_timeout(box):
    sleep = unique_sleep(4243)
    result = box.execute(f"setsid {sleep} & ({sleep} &); {sleep}", 1)
    assert result.timed_out and result.exit_code is None
    assert host_processes(sleep) == []


def test_cancel_kills_the_running_command_at_once(docker_image, tmp_path):
    client, image = docker_image
    cancel = threading.Event()
    sleep = unique_sleep(4244)
    box = DockerSandbox(client, image, tmp_path, "execd-run", "cancel", SandboxSettings(), cancel)
    box.start()
    try:
        threading.Timer(0.5, cancel.set).start()
        result = box.execute(f"setsid {sleep} & {sleep}", 600)
        survivors = host_processes(sleep)
    finally:
        box.close()
    assert result.exit_code is None and not result.timed_out and result.duration_s < 600
    assert survivors == []


@pytest.mark.parametrize(
    "attack",
    ["kill -9 -1", "pkill -KILL -f harness-execd", "pkill -KILL python3", "kill -KILL $PPID", "kill -STOP $PPID"],
)
def test_the_agent_cannot_stop_the_server(box, attack):
    box.execute(f"sleep 4245 & {attack}", 30)
    after = box.execute('echo still served; pgrep -u "$(id -u)" -c sleep', 30)
    assert after.stdout == "still served\n0\n" and after.exit_code == 1  # pgrep found nothing


def test_the_agent_cannot_trace_or_read_the_server(box):
    result = box.execute(
        "ls /proc/$PPID/fd; cat /proc/$PPID/environ; "
        "python3 -c 'import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
        "print(libc.ptrace(16, os.getppid(), 0, 0), ctypes.get_errno())'",  # PTRACE_ATTACH
        30,
    )
    assert result.stdout == "-1 1\n"  # EPERM
    assert result.stderr.count("Permission denied") == 2


def test_commands_have_no_capabilities_and_cannot_gain_any(box):
    result = box.execute("grep -E '^(CapInh|CapPrm|CapEff|CapAmb|NoNewPrivs)' /proc/self/status", 30)
    fields = dict(line.split(":\t") for line in result.stdout.splitlines())
    assert fields == {"CapInh": "0" * 16, "CapPrm": "0" * 16, "CapEff": "0" * 16, "CapAmb": "0" * 16, "NoNewPrivs": "1"}


def test_exit_codes_and_signals_come_back(box):
    assert box.execute("exit 3", 30).exit_code == 3
    assert box.execute("kill -TERM $$", 30).exit_code == 128 + 15


def test_stdin_is_empty(box):
    result = box.execute("cat; wc -c", 30)
    assert result.stdout == "0\n" and result.exit_code == 0


def test_huge_output_is_capped_and_counted(box):
    result = box.execute("head -c 100000000 /dev/zero | tr '\\0' a", 60)
    assert result.raw_bytes == 100_000_000 and result.truncated
    assert result.stdout.startswith("a" * 1000) and "output truncated" in result.stdout and len(result.stdout) < 2200


def test_invalid_utf8_output_is_decoded_with_replacement_characters(box):
    result = box.execute("printf 'caf\\303\\251 \\377\\n'; printf '\\376' >&2", 30)
    assert (result.stdout, result.stderr, result.raw_bytes) == ("café \ufffd\n", "\ufffd", 9)


@pytest.mark.parametrize("closer", ["exec >&- 2>&-", "exec >/dev/null; kill -PIPE $$"])
def test_a_command_that_closes_its_output_does_not_desync_the_next(box, closer):
    box.execute(f"echo before; {closer}; sleep 0.2; echo lost", 30)
    assert box.execute("echo next", 30).stdout == "next\n"


def test_output_of_a_background_process_holding_stdout_does_not_hold_the_answer(box):
    sleep = unique_sleep(4246)
    result = box.execute(f"({sleep}; echo late) & echo now", 30)
    assert result.stdout == "now\n" and host_processes(sleep) == []


def test_a_server_that_died_between_commands_is_a_sandbox_error(box):
    kill_server(box)
    with pytest.raises(SandboxError, match="harness-execd ended") as error:
        box.execute("echo hello", 30)
    assert type(error.value) is SandboxError  # killed from outside, not for memory: not the agent's limit


def test_a_server_that_dies_during_a_command_is_a_sandbox_error(box):
    threading.Timer(0.5, kill_server, [box]).start()
    with pytest.raises(SandboxError, match="harness-execd ended") as error:
        box.execute("sleep 4247", 600)
    assert type(error.value) is SandboxError


def test_the_agent_cannot_leave_the_idle_scheduling_class(box):
    result = box.execute("chrt -p $$; chrt -o -p 0 $$ || echo refused; renice -n -1 -p $$ || echo refused", 30)
    assert "SCHED_IDLE" in result.stdout and result.stdout.count("refused") == 2, result.stdout + result.stderr
