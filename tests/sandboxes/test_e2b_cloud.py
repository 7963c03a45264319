"""Issue 15: what the real E2B service does that our fake used to hide, one test per finding.

Offline parts use the real SDK (its template definition and file packing); the build, the start and the
commands use tests/helpers/e2b_emulator.py on the local Docker engine; the service's refusals use
tests/helpers/fake_e2b.py.
"""

from __future__ import annotations

import inspect
import io
import json
import re
import shlex
import stat
import sys
import tarfile
import time
from importlib.metadata import version
from pathlib import Path

import e2b
import pytest
from e2b.sandbox_sync.commands.command import Commands
from e2b.template.consts import RESOLVE_SYMLINKS
from e2b.template.utils import tar_file_stream
from packaging.requirements import Requirement
from packaging.version import Version

import tests.helpers.fake_e2b as fake_e2b
from harness.sandboxes.base import SandboxError, SandboxSettings
from harness.sandboxes.limits import ResourceLimits
from harness.sandboxes.output import HeadTail
from harness.sandboxes.recipe import RECIPE_DIR
from harness.sandboxes.remote_exec import AGENT_UID
from tests.conftest import REPO, emulated_e2b_sandbox
from tests.sandboxes.test_backends import MINI_TEMPLATE, build_e2b, fake_sdk  # noqa: F401  (a fixture)


@pytest.fixture
def collection(tmp_path: Path) -> Path:
    folder = tmp_path / "collection"
    (folder / "sub" / "deeper").mkdir(parents=True)
    (folder / "report.md").write_text("# Report\n")
    (folder / "sub" / "table.csv").write_text("a,b\n1,2\n")
    (folder / "sub" / "deeper" / "note.txt").write_text("deep\n")
    (folder / "sub" / "deeper" / "note.txt").chmod(0o640)
    return folder


def packed_uploads(template: e2b.Template) -> dict[str, tarfile.TarInfo]:
    """Every file the real SDK would upload for the template's COPY steps, by path under its destination."""
    inner = template._template
    uploads = {}
    for step in inner._instructions_with_hashes():
        if step["type"].value != "COPY":
            continue
        resolve = step.get("resolveSymlinks")
        stream = tar_file_stream(
            step["args"][0], inner._file_context_path, [], RESOLVE_SYMLINKS if resolve is None else resolve, False
        )
        with tarfile.open(fileobj=io.BytesIO(stream.read())) as packed:
            uploads.update({f"{step['args'][1]}:{m.name}": m for m in packed.getmembers()})
    return uploads


# 1. The template build: E2B's `useradd user` takes uid 1000 before our steps.
def test_the_recipe_builds_after_e2bs_default_user_and_the_agent_has_its_own_uid(emulated):
    result = emulated.execute("id -u; id -u user", 30)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.split() == [str(AGENT_UID), "1000"]


# 2. The collection is uploaded: every file, with its mode, and the cache hash follows its content.
def test_the_sdk_packs_every_collection_file_with_its_mode(collection, tmp_path):
    from harness.sandboxes.e2b.templates import template_definition

    uploads = packed_uploads(template_definition(e2b, tmp_path, collection))
    documents = {
        name.split(":", 1)[1]: info for name, info in uploads.items() if name.startswith("/workspace/documents:")
    }
    files = {name: info for name, info in documents.items() if info.isfile()}
    assert sorted(files) == ["documents/report.md", "documents/sub/deeper/note.txt", "documents/sub/table.csv"]
    assert stat.S_IMODE(files["documents/sub/deeper/note.txt"].mode) == 0o640
    assert not any(info.issym() for info in documents.values())


def test_the_template_cache_hash_changes_with_the_collection(collection, tmp_path):
    from harness.sandboxes.e2b.templates import template_definition

    def documents_hash(context: Path) -> str:
        context.mkdir()
        steps = template_definition(e2b, context, collection)._template._instructions_with_hashes()
        return next(s["filesHash"] for s in steps if s["type"].value == "COPY" and s["args"][0] == "documents")

    before = documents_hash(tmp_path / "one")
    (collection / "report.md").write_text("# Report, revised\n")
    assert documents_hash(tmp_path / "two") != before


def test_the_emulated_sandbox_has_the_whole_collection(emulated):
    result = emulated.execute("cat documents/report.md documents/sub/table.csv documents/sub/deeper/note.txt", 30)
    assert result.stdout == "# Report\na,b\n1,2\ndeep\n"


# 3. The agent's tools: E2B's login shell resets PATH.
def test_the_toolset_is_on_path_in_e2bs_login_shell(emulated):
    result = emulated.execute("command -v python3; python3 -c 'import numpy, pandas; print(pandas.__name__)'", 30)
    assert result.stdout == "/opt/sandbox/bin/python3\npandas\n", result.stderr


# 4. The hobby plan keeps a sandbox at most an hour: cap the lifetime, or refuse before any episode.
def test_a_one_hour_time_limit_gets_a_sandbox_on_the_hobby_plan(mini, fake_sdk):  # noqa: F811
    outcome = mini.run("--model", "oracle", "--sandbox", "e2b", "--time-limit", "3600")
    assert outcome.rows[0]["verdict"] == "correct", outcome.output
    assert fake_sdk.episodes_created[0]["timeout"] == 3600
    assert "use --time-limit 3480 or less" in outcome.output  # the margin is gone: said, not hidden


def test_a_time_limit_the_plan_cannot_hold_is_refused_before_any_episode(mini, fake_sdk):  # noqa: F811
    outcome = mini.run("--model", "oracle", "--sandbox", "e2b", "--time-limit", "4000")
    assert outcome.exit_code == 2 and not fake_sdk.created
    assert "--time-limit 3480 or less" in outcome.output and "E2B_PLAN=pro" in outcome.output


# 5. The pinned SDK has every argument we pass; output is not retained in the runner.
def test_the_e2b_requirement_admits_only_releases_with_every_argument_we_use():
    requirement = Requirement(re.search(r'"(e2b[^"]*)"', (REPO / "pyproject.toml").read_text()).group(1))
    assert not requirement.specifier.contains(Version("2.62.0")) and requirement.specifier.contains(version("e2b"))
    assert "allow_internet_access" in inspect.signature(e2b.Sandbox.create).parameters
    assert "retain_output" in inspect.signature(Commands.run).parameters
    assert "resolve_symlinks" in inspect.signature(e2b.Template().from_image("debian").copy).parameters
    assert "name" in inspect.signature(e2b.Template.build).parameters and hasattr(e2b.Template, "exists")
    assert "idempotency_key" in inspect.signature(e2b.Sandbox.create).parameters  # issue 24
    assert hasattr(e2b.Template, "assign_tags") and hasattr(e2b.Template, "get_tags")
    assert hasattr(e2b.Sandbox, "set_timeout")


# 6. Isolation: E2B's sudoer, root without a password, `chmod -R 777 /usr/local`, dotfiles in the home.
def test_an_agent_cannot_climb_through_sudo_su_or_replace_harness_exec(emulated, collection):
    attempts = emulated.execute(
        "sudo -n id -u; su -c 'id -u' root </dev/null; su -c 'id -u' user </dev/null; "
        "echo 'echo hijacked' >> /usr/local/bin/harness-exec; echo x > /workspace/documents/new.md; "
        "echo OK",
        30,
    )
    assert attempts.stdout.strip().splitlines() == ["OK"], attempts.stdout  # no command ran as another user
    recipe = (RECIPE_DIR / "harness-exec").read_bytes()
    assert emulated.execute("cat /usr/local/bin/harness-exec", 30).stdout.encode() == recipe
    check = emulated.execute("stat -c '%U %a' /usr/local/bin/harness-exec; ls documents", 30)
    assert check.stdout.splitlines()[0] == "root 755" and "new.md" not in check.stdout


def test_an_agent_cannot_plant_startup_files_for_the_next_command(emulated):
    for name in (".bashrc", ".profile", ".bash_profile", ".bash_login"):
        emulated.execute(f"echo 'echo planted' >> ~/{name}; rm -f ~/{name}; echo 'echo planted' > ~/{name}", 30)
    assert "planted" not in emulated.execute("echo clean", 30).stdout


# 7. SDK errors become one-line errors; the SDK's signal-kill code is ours, its timeout a sandbox error.
def test_a_refused_key_at_build_is_one_line(mini, fake_sdk):  # noqa: F811
    fake_sdk.failures["build"] = e2b.AuthenticationException("401: Invalid API key")
    code, output = build_e2b(mini)
    assert code == 2 and "E2B refused the API key" in output and "Traceback" not in output


def test_build_logs_with_rich_markup_are_printed_as_written(mini, fake_sdk):  # noqa: F811
    fake_sdk.build_logs = ["[/bold] step 3 [red]", "done"]
    code, output = build_e2b(mini)
    assert code == 0 and "[/bold] step 3 [red]" in output


def test_a_failing_template_lookup_at_run_start_is_one_line(mini, fake_sdk):  # noqa: F811
    fake_sdk.failures["exists"] = e2b.AuthenticationException("401: Invalid API key")
    outcome = mini.run("--model", "oracle", "--sandbox", "e2b")
    assert outcome.exit_code == 2 and "E2B refused the API key" in outcome.output


def test_a_failing_orphan_listing_is_a_sandbox_error(fake_sdk):  # noqa: F811
    from harness.sandboxes.e2b.sandbox import reap_orphans

    fake_sdk.failures["list"] = e2b.RateLimitException("429: Rate limit exceeded")
    with pytest.raises(SandboxError, match="E2B rate limit"):
        reap_orphans(fake_e2b, "key")


class _Handle:
    def __init__(self, error: BaseException):
        self.error = error

    def wait(self, **callbacks):
        raise self.error

    def kill(self):
        raise self.error


def test_the_sdks_timeout_is_a_sandbox_error_and_a_signal_kill_has_no_exit_code(fake_sdk):  # noqa: F811
    from harness.sandboxes.e2b.sandbox import _E2BCommand

    streams = (HeadTail(100), HeadTail(100))
    with pytest.raises(SandboxError, match="stream early"):  # never the command's own time limit (issue 24)
        _E2BCommand(fake_e2b, _Handle(e2b.TimeoutException("deadline"))).wait(*streams)
    assert _E2BCommand(fake_e2b, _Handle(e2b.CommandExitException("", "", -1, None))).wait(*streams) is None
    with pytest.raises(SandboxError, match="sandbox is gone"):  # its lifetime ran out: not a command timeout
        _E2BCommand(fake_e2b, _Handle(e2b.SandboxNotRunningException("sandbox not running"))).wait(*streams)
    with pytest.raises(SandboxError, match="kill failed"):
        _E2BCommand(fake_e2b, _Handle(e2b.NotFoundException("sandbox gone"))).kill()


# 8. Limits: the process limit is enforced, concurrency above the plan's cap is bounded, 429 is retried.
def test_the_process_limit_is_enforced_on_e2b(emulated):
    assert emulated.execute("ulimit -u", 30).stdout.strip() == "512"
    assert emulated.describe()["limits"]["pids"] == 512


def test_max_sandboxes_is_bounded_by_the_plan(mini, fake_sdk):  # noqa: F811
    outcome = mini.run("--model", "oracle", "--sandbox", "e2b", "--workers", "30")
    assert outcome.rows[0]["verdict"] == "correct", outcome.output
    assert "--max-sandboxes 30: at most 20 at once" in outcome.output


def test_creation_refused_with_429_is_retried_before_the_agent_clock(mini, fake_sdk, monkeypatch):  # noqa: F811
    monkeypatch.setattr("harness.sandboxes.e2b.plan.CREATE_BACKOFF_S", (0.01, 0.01, 0.01))
    fake_sdk.rate_limited = 2
    outcome = mini.run("--model", "oracle", "--sandbox", "e2b")
    assert outcome.rows[0]["verdict"] == "correct", outcome.output
    assert len(fake_sdk.episodes_created) == 3


def test_creation_still_refused_after_the_backoff_is_a_sandbox_error(mini, fake_sdk, monkeypatch):  # noqa: F811
    monkeypatch.setattr("harness.sandboxes.e2b.plan.CREATE_BACKOFF_S", (0.01,))
    fake_sdk.rate_limited = 5
    outcome = mini.run("--model", "oracle", "--sandbox", "e2b")
    assert outcome.rows[0]["status"] == "sandbox_error" and "rate limit" in outcome.rows[0]["detail"].lower()


def test_the_oracle_solves_every_demo_task_on_the_emulator(e2b_emulator, monkeypatch, tmp_path, capsys):
    """The README's main job with `--sandbox e2b`: `sandbox build e2b`, then the run, through our CLI."""
    from harness.cli.main import main

    monkeypatch.setitem(sys.modules, "e2b", e2b_emulator)
    monkeypatch.setenv("E2B_API_KEY", "emulator-key")
    monkeypatch.chdir(REPO)
    assert main(["sandbox", "build", "e2b", "--domain", "demo"]) == 0
    code = main(
        [
            "--model",
            "oracle",
            "--domain",
            "demo",
            "--sandbox",
            "e2b",
            "--workers",
            "2",
            "--results-dir",
            str(tmp_path),
            "--run-id",
            "demo-e2b",
        ]
    )
    output = capsys.readouterr().out
    rows = [json.loads(line) for line in (tmp_path / "demo-e2b" / "results.jsonl").read_text().splitlines()]
    assert code == 0 and len(rows) == 13, output
    assert [row["task_id"] for row in rows if row["verdict"] != "correct"] == [], output


# 9. What enforces a command's limits is out of the agent's reach, and nothing of a command lives on.
THREADED_ZOMBIE = """
import ctypes, threading, time
def write():
    with open("/tmp/zombie.log", "a") as log:
        while True:
            log.write("x"); log.flush(); time.sleep(0.02)
threading.Thread(target=write).start()
time.sleep(0.2)
ctypes.CDLL(None).syscall(60, 0)  # SYS_exit: the main thread ends, the process shows Z, the writer runs on
"""
DAEMON = "setsid bash -c 'while :; do echo x >> /tmp/daemon.log; sleep 0.02; done' </dev/null >/dev/null 2>&1 &"


def test_an_agent_cannot_stop_harness_exec_or_the_timer_of_its_command(emulated):
    started = time.monotonic()
    result = emulated.execute("kill -STOP $PPID $(pgrep -f harness-exec); sleep 60", 2)
    assert result.timed_out and time.monotonic() - started < 10


def test_a_threaded_zombie_and_a_setsid_daemon_die_with_their_command(emulated):
    first = emulated.execute(
        f"(python3 -c {shlex.quote(THREADED_ZOMBIE)} &); {DAEMON} sleep 1; ps -o stat=,comm= -u agent | grep python3",
        30,
    )
    assert first.stdout.split()[0].startswith("Z"), first.stdout + first.stderr  # the trick works
    sizes = "wc -c < /tmp/zombie.log; wc -c < /tmp/daemon.log"
    before = emulated.execute(sizes, 30).stdout
    time.sleep(1)
    assert emulated.execute(sizes, 30).stdout == before


SHARED_MEMORY = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
segment = libc.shmget(0, 64 << 20, 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
address = libc.shmat(segment, None, 0)
ctypes.memset(address, 1, 64 << 20)
print(segment)
"""


def test_shared_memory_segments_die_with_their_command(emulated):
    created = emulated.execute(f"python3 -c {shlex.quote(SHARED_MEMORY)}", 30)
    assert created.exit_code == 0 and created.stdout.strip().isdigit(), created.stderr
    assert emulated.execute("ipcs -m | grep -c agent", 30).stdout.strip() == "0"


# 10. Scratch space: one tmpfs of --disk-mb for every folder the agent can write, well below the memory.
def test_every_folder_the_agent_can_write_is_on_the_one_scratch_tmpfs(emulated):
    writable = emulated.execute(
        "find / \\( -path /proc -o -path /sys -o -path /dev/mqueue \\) -prune -o -writable ! -type l ! -type c "
        "-printf '%D %p\\n' 2>/dev/null; stat -c '%d' /workspace/run",
        60,
    )
    *paths, scratch = writable.stdout.splitlines()
    assert paths and [p for p in paths if p.split()[0] != scratch] == [], writable.stdout


def test_filling_every_writable_folder_leaves_the_sandbox_working(collection, e2b_emulator, monkeypatch):
    monkeypatch.setenv("E2B_API_KEY", "emulator-key")
    settings = SandboxSettings(ResourceLimits(memory_mb=512, disk_mb=256))
    box = emulated_e2b_sandbox(e2b_emulator, collection, "fill", settings)
    box.start()
    try:
        folders = ("/tmp", "/workspace/run", "/dev/shm", "/var/tmp", "/run/lock")
        fill = "; ".join(f"head -c 300M /dev/zero > {folder}/fill" for folder in folders)
        box.execute(fill, 60)
        used = box.execute(f"du -cm {' '.join(f'{folder}/fill' for folder in folders)} | tail -1", 30)
        assert int(used.stdout.split()[0]) <= 256, used.stdout + used.stderr
        assert box.execute("echo alive", 30).stdout == "alive\n"
        assert box.describe()["limits"]["disk_mb"] == 256
    finally:
        box.close()


def test_scratch_space_is_at_most_half_the_sandbox_memory(collection, e2b_emulator, monkeypatch):
    monkeypatch.setenv("E2B_API_KEY", "emulator-key")
    box = emulated_e2b_sandbox(e2b_emulator, collection, "half", SandboxSettings(ResourceLimits(memory_mb=512)))
    box.start()
    try:
        assert box.execute("df -m --output=size /tmp | tail -1", 30).stdout.strip() == "256"
        assert box.describe()["limits"]["disk_mb"] == 256
    finally:
        box.close()
