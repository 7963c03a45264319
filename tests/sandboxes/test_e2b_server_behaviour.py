"""Issue 24: E2B's SDK and server, read against our code a second time; one test per finding.

The fake (tests/helpers/fake_e2b.py) and the emulator (tests/helpers/e2b_emulator.py) behave as the server does;
each test names the e2b-dev/infra file the behaviour comes from.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest
import yaml

import tests.helpers.fake_e2b as fake_e2b
from harness.records.run_folder import RunFolder
from harness.sandboxes.base import SandboxError, SandboxSettings
from harness.sandboxes.e2b.sandbox import E2BSandbox, kill_invocations
from harness.sandboxes.e2b.templates import TemplateResources, build_template
from tests.conftest import REPO
from tests.helpers.e2b_service import TokenBucket
from tests.sandboxes.test_backends import MINI_TEMPLATE, build_e2b, fake_sdk  # noqa: F401  (a fixture)


# 1. A failed first build can be retried: build files are staged outside /tmp.
def test_a_build_that_failed_at_pip_succeeds_when_retried(collection, e2b_emulator, monkeypatch):
    """infra `orchestrator/pkg/template/build/phases/steps/builder.go`: each step's layer is cached once it
    succeeds, and the first uncached step after a cached one runs in a freshly created sandbox, whose /tmp
    (a tmpfs) is empty. The emulator fails the pip step once, then builds again from its cache."""
    monkeypatch.setattr(e2b_emulator, "REGISTRY", e2b_emulator.Registry(failing_step="pip install"))
    monkeypatch.setenv("E2B_API_KEY", "emulator-key")
    resources = TemplateResources(2, 4096)
    with pytest.raises(SandboxError, match="network unreachable"):
        build_template(e2b_emulator, "retry", collection, resources, lambda line: None)
    reference = build_template(e2b_emulator, "retry", collection, resources, lambda line: None)
    box = E2BSandbox(e2b_emulator, reference, "emulator-key", "test-run", "retry", SandboxSettings(), 600)
    box.start()
    try:
        result = box.execute("python3 -c 'import pandas; print(pandas.__name__)'", 60)
        assert result.stdout == "pandas\n", result.stderr
    finally:
        box.close()


# 2. A failed, interrupted or outdated template is refused before any episode.
def test_a_failed_build_leaves_no_template_a_run_would_use(mini, fake_sdk):  # noqa: F811
    """infra `api/.../template_request_build`: the name is claimed when the build is requested, so
    `Template.exists` is true for a build that then failed."""
    fake_sdk.templates.clear()
    fake_sdk.build_outcome = "error"
    code, output = build_e2b(mini)
    assert code == 2 and "Build failed" in output
    outcome = mini.run("--model", "oracle", "--sandbox", "e2b")
    assert outcome.exit_code == 2 and not fake_sdk.created
    assert "build again with `python -m harness sandbox build e2b --domain mini" in outcome.output


def test_a_build_interrupted_with_ctrl_c_then_a_run_is_refused_saying_to_build_again(mini, fake_sdk):  # noqa: F811
    """infra `api/.../template_request_build` claims the name before the build; only a ready build takes a tag
    (`db/queries/get_template_with_build_by_tag.sql`: `status_group = 'ready'`)."""
    fake_sdk.templates.clear()
    fake_sdk.build_outcome = "interrupt"
    code, output = build_e2b(mini)  # Ctrl-C stops `sandbox build` cleanly: one line saying what is left
    assert code == 130 and "Traceback" not in output
    assert "interrupted; nothing e2b can use was made; run `sandbox build e2b` again" in output
    assert MINI_TEMPLATE in fake_sdk.templates  # the name resolves on the service
    outcome = mini.run("--model", "oracle", "--sandbox", "e2b")
    assert outcome.exit_code == 2 and not fake_sdk.created
    [line] = [line for line in outcome.output.splitlines() if "not found" in line]
    assert "build again with `python -m harness sandbox build e2b --domain mini --cpus 2 --memory-mb 4096`" in line


def test_a_changed_collection_needs_a_new_build_and_gets_a_new_tag(mini, fake_sdk):  # noqa: F811
    """The tag is a hash of the steps as sent, with the SDK's hash of every copied file: a collection
    edited after its build no longer matches, and its run is refused instead of reading the old documents."""
    first = mini.run("--model", "oracle", "--sandbox", "e2b", run_id="before")
    old = yaml.safe_load((first.run_dir / "run.yaml").read_text())["sandbox"]["templates"]["mini"]
    ledger = mini.root / "collections" / "mini" / "ledger.md"
    ledger.write_text(ledger.read_text().replace("| 2021 | 2 |", "| 2021 | 3 |"))
    refused = mini.run("--model", "oracle", "--sandbox", "e2b", run_id="stale")
    assert refused.exit_code == 2 and "not found" in refused.output and old not in refused.output
    code, output = build_e2b(mini)
    assert code == 0, output
    new = output.split("template ready: ")[1].split()[0]
    assert new.split(":")[0] == old.split(":")[0] and new != old
    rerun = mini.run("--model", "oracle", "--sandbox", "e2b", run_id="after")
    assert yaml.safe_load((rerun.run_dir / "run.yaml").read_text())["sandbox"]["templates"]["mini"] == new
    assert fake_sdk.created[-1]["template"] == new


def test_a_symbolic_link_in_the_collection_is_refused_at_build_naming_it(mini, fake_sdk):  # noqa: F811
    link = mini.root / "collections" / "mini" / "alias.md"
    link.symlink_to("ledger.md")
    fake_sdk.builds.clear()
    code, output = build_e2b(mini)
    [line] = output.strip().splitlines()
    assert code == 2 and f"{link}: a symbolic link" in line and not fake_sdk.builds


# 3. The SDK's TimeoutException is not the command's timeout.
def test_a_stream_the_server_cuts_early_is_a_sandbox_error_not_a_timed_out_command(emulated, e2b_emulator):
    """infra `envd/internal/services/process/start.go`: when the request's context ends (a proxy, a restart),
    envd ends the stream with `ctx.Err()`; the SDK raises CANCELED as TimeoutException (`e2b/envd/rpc.py`)."""
    e2b_emulator.REGISTRY.stream_cut_after_s = 1.0
    try:
        with pytest.raises(SandboxError, match="stream early"):
            emulated.execute("sleep 3; echo done", 30)
    finally:
        e2b_emulator.REGISTRY.stream_cut_after_s = None


# 6. A background process cannot hold a command open.
NON_DUMPABLE_HOLDER = (
    "python3 -c 'import ctypes, time; ctypes.CDLL(None).prctl(4, 0)\n"  # PR_SET_DUMPABLE 0
    'while True: open("/tmp/holder.log", "a").write("x"); time.sleep(0.05)\' &'
)


def test_a_non_dumpable_background_process_does_not_hold_the_command_open(emulated):
    """infra `envd/internal/services/process/handler/handler.go`: a command ends only when both of its
    output pipes close. A process that made itself non-dumpable has its /proc/PID entries owned by root
    (so no test of /proc ownership finds it), yet holds stdout; it dies with the command's pid namespace
    when harness-exec, its first process, exits."""
    started = time.monotonic()
    wait_for_root = "for i in $(seq 50); do [ $(stat -c %U /proc/$!/fd) = root ] && break; sleep 0.1; done"
    result = emulated.execute(f"{NON_DUMPABLE_HOLDER} {wait_for_root}; stat -c %U /proc/$!/fd; echo started", 20)
    assert (result.exit_code, result.stdout) == (0, "root\nstarted\n"), result.stderr
    assert time.monotonic() - started < 10
    size = emulated.execute("wc -c < /tmp/holder.log", 20).stdout
    time.sleep(0.5)
    assert emulated.execute("wc -c < /tmp/holder.log", 20).stdout == size  # it died with its command


# 4. Creations are paced to the plan's rate, with jitter; the fake's API has the server's token bucket.
def test_workers_started_together_all_get_a_sandbox_at_the_plans_creation_rate(mini, fake_sdk, monkeypatch):  # noqa: F811
    """infra `api/internal/middleware/ratelimit/ratelimit.go`: a token bucket per team and route, 429 without a
    token. Time is scaled tenfold (10 creations a second, backoff up to 1.6 s) to keep the test short."""
    from harness.sandboxes.e2b import plan

    monkeypatch.setitem(plan.PLANS, "hobby", plan.Plan("hobby", 3600, 20, 10.0))
    monkeypatch.setattr(plan, "CREATE_BACKOFF_S", (0.1, 0.2, 0.4, 0.8, 1.6))
    tasks = mini.tasks_dir / "mini.jsonl"
    task = json.loads(tasks.read_text())
    tasks.write_text("".join(json.dumps(task | {"id": f"t{n}"}) + "\n" for n in range(10)))
    fake_sdk.creation_bucket = TokenBucket(rate=10.0, burst=1)
    outcome = mini.run("--model", "oracle", "--sandbox", "e2b", "--workers", "10")
    assert [row["status"] for row in outcome.rows] == ["answered"] * 10, outcome.output


# 5. A sandbox ages while the episode's clock is paused: extended where the plan allows, else a clean end.
@pytest.fixture
def short_lived(fake_sdk, monkeypatch):  # noqa: F811
    """Sandboxes of an episode with a 1 s time limit and a 1 s margin (2 s), commands needing 0.5 s more."""
    from harness.sandboxes.e2b import plan, sandbox

    monkeypatch.setattr(plan, "LIFETIME_MARGIN_S", 1)
    monkeypatch.setattr(sandbox, "KEEP_ALIVE_MARGIN_S", 0.5)

    def make(max_lifetime_s: int) -> E2BSandbox:
        fake_sdk.max_lifetime_s = max_lifetime_s
        hobby = plan.Plan("hobby", max_lifetime_s, 20, 1.0)
        return E2BSandbox(fake_e2b, MINI_TEMPLATE, "key", "run", "ep", SandboxSettings(), 1, None, hobby)

    return make


def test_a_sandbox_outliving_its_first_lifetime_is_extended_before_the_next_command(short_lived, fake_sdk):  # noqa: F811
    """infra `api/internal/orchestrator/keep_alive.go`: set_timeout moves the end to now + timeout, capped at
    the plan's longest sandbox since its start; the service kills a sandbox at its end."""
    box = short_lived(60)
    box.start()
    try:
        assert box.execute("echo first", 1).stdout == "first\n"
        time.sleep(2.5)  # waiting for a connection slot: the agent's clock is paused, the sandbox's is not
        assert box.execute("echo alive", 1).stdout == "alive\n"
        assert fake_sdk.timeouts_set
    finally:
        box.close()


def test_a_sandbox_the_plan_cannot_keep_long_enough_ends_the_episode_before_it_dies(short_lived):
    box = short_lived(4)
    box.start()
    try:
        box.execute("true", 1)
        time.sleep(3.0)
        with pytest.raises(SandboxError, match="plan keeps a sandbox at most 4 s and this one has 1 s left"):
            box.execute("echo too late", 1)
    finally:
        box.close()


# 8. Start-up: setuid bits are stripped at build, not by a walk of the whole disk at each start.
def test_the_template_has_no_setuid_program_before_any_lock_down(collection, e2b_emulator, monkeypatch):
    """infra `orchestrator/pkg/template/build/phases/base/provision.sh` installs sudo (setuid) before our
    steps; the recipe's last step strips every such bit, so a start only checks known programs."""
    monkeypatch.setenv("E2B_API_KEY", "emulator-key")
    (collection / "tool.sh").write_text("#!/bin/sh\n")
    (collection / "tool.sh").chmod(0o6755)
    reference = build_template(e2b_emulator, "setuid", collection, TemplateResources(2, 4096), lambda line: None)
    raw = e2b_emulator.Sandbox.create(template=reference, allow_internet_access=False)
    try:
        found = raw.commands.run("find / -xdev -type f -perm /6000 2>/dev/null; true", user="root", timeout=60)
        assert found.stdout == "", found.stdout
    finally:
        raw.kill()


# 7. Network errors are sandbox errors; a resent create leaves no second sandbox running.
def test_an_api_timeout_at_creation_is_a_sandbox_error(mini, fake_sdk):  # noqa: F811
    """The SDK lets httpx's errors through unwrapped (e2b `retry.py` raises `httpx.TimeoutException`)."""
    fake_sdk.failures["create"] = httpx.ConnectTimeout("timed out")
    outcome = mini.run("--model", "oracle", "--sandbox", "e2b")
    [row] = outcome.rows
    assert row["status"] == "sandbox_error" and "ConnectTimeout" in row["detail"], row


def test_a_create_resent_after_a_lost_answer_leaves_no_sandbox_running(mini, fake_sdk):  # noqa: F811
    """e2b `retry.py` resends a create answered 502/503/504, which the API may already have served."""
    fake_sdk.lost_create_responses = 1
    outcome = mini.run("--model", "oracle", "--sandbox", "e2b")
    assert outcome.rows[0]["verdict"] == "correct", outcome.output
    assert all(created["idempotency_key"] for created in fake_sdk.created)
    assert fake_sdk.live == {}


def test_the_episodes_sweep_kills_a_duplicate_the_service_made_despite_the_key(mini, fake_sdk):  # noqa: F811
    """The open-source API (e2b-dev/infra, `api/internal/handlers/sandbox_create.go`) has no idempotency
    keys: a resent create makes a second sandbox, found by the episode's metadata when it ends."""
    fake_sdk.lost_create_responses = 1
    fake_sdk.by_idempotency_key = IgnoredKeys()
    outcome = mini.run("--model", "oracle", "--sandbox", "e2b")
    assert outcome.rows[0]["verdict"] == "correct", outcome.output
    assert len(fake_sdk.killed) == 3 and fake_sdk.live == {}  # the run's tool check's sandbox, then the two


class IgnoredKeys(dict):
    """A service that keeps no idempotency keys."""

    def __setitem__(self, key: str, value: object) -> None:
        pass


# 7 (the sweep across the run): what a start of the run leaves on any host is killed, and nothing of a shard's.
ELSEWHERE = "node-b:4242"
"""Another host's runner (a Ray node): `reap_orphans` never judges it, since its pid is not this host's."""


def leave_sandbox_elsewhere(mini, monkeypatch, sandbox_id: str, **changed: str) -> list[tuple[str, list[str]]]:
    """At the run's first episode sandbox, the service also holds `sandbox_id`: made by this start on another host
    (a Ray node, then lost), with the created sandbox's metadata but for `changed` (keys without `harness.`).
    Returns, for each episode sandbox created, its invocation and the starts the run folder named then."""
    create = fake_e2b.Sandbox.create
    seen: list[tuple[str, list[str]]] = []

    def create_and_leave(template=None, timeout=None, **options):
        labels = options.get("metadata") or {}
        if labels.get("harness.episode") != "tool-check":
            seen.append((labels["harness.invocation"], RunFolder(mini.results_dir / "run").read_invocations()))
            if not any(info.sandbox_id == sandbox_id for info in fake_e2b.RECORD.existing):
                metadata = labels | {f"harness.{key}": value for key, value in changed.items()}
                fake_e2b.RECORD.existing.append(fake_e2b.FakeSandboxInfo(sandbox_id, metadata))
        return create(template, timeout, **options)

    monkeypatch.setattr(fake_e2b.Sandbox, "create", create_and_leave)
    return seen


def shards_sandbox(run_id: str = "run") -> fake_e2b.FakeSandboxInfo:
    """A live sandbox of another shard of the same run id, started on another machine with its own folder."""
    return fake_e2b.FakeSandboxInfo(
        "shard-2",
        {
            "harness.app": "harness",
            "harness.run": run_id,
            "harness.invocation": "0" * 32,
            "harness.episode": "mini-t1",
            "harness.owner": "host-c:77",
        },
    )


def test_a_runs_end_kills_what_it_left_on_another_host_and_nothing_of_a_shard(mini, fake_sdk, monkeypatch):  # noqa: F811
    """infra `api/internal/handlers/sandboxes_list.go`: a list by metadata returns the whole team's sandboxes,
    whichever host made them; `sandbox_kill.go` kills by id. A Ray node lost mid-episode leaves its sandbox,
    owned by a runner on another host; a shard of the same run id elsewhere has a live one."""
    fake_sdk.existing.append(shards_sandbox())
    seen = leave_sandbox_elsewhere(mini, monkeypatch, "lost-on-node-b", owner=ELSEWHERE, episode="mini-t9")
    outcome = mini.run("--model", "oracle", "--sandbox", "e2b")
    assert outcome.rows[0]["verdict"] == "correct", outcome.output
    [(invocation, named)] = seen
    assert named == [invocation]  # named in the folder before its first sandbox: a kill -9 leaves it there
    assert "lost-on-node-b" in fake_sdk.killed and "shard-2" not in fake_sdk.killed
    assert [info.sandbox_id for info in fake_sdk.existing] == ["shard-2"]
    assert "e2b: killed 1 sandboxes the run left running: lost-on-node-b" in outcome.output
    assert RunFolder(outcome.run_dir).read_invocations() == []
    sandbox = json.loads((outcome.run_dir / "episodes" / "mini" / "t1.jsonl").read_text().splitlines()[1])
    assert sandbox["sandbox"]["invocation"] == invocation


def test_every_page_of_what_a_start_left_is_killed(fake_sdk):  # noqa: F811
    """infra `api/internal/handlers/sandboxes_list.go` answers 10 sandboxes a page, each page listed again from
    what runs then and started after the previous page's last (a cursor): killing while paging skips none."""
    left = {"harness.app": "harness", "harness.run": "run", "harness.invocation": "d" * 32, "harness.owner": ELSEWHERE}
    fake_sdk.existing += [fake_e2b.FakeSandboxInfo(f"left-{index:02d}", left) for index in range(25)]
    fake_sdk.existing.append(shards_sandbox())
    killed = kill_invocations(fake_e2b, "key", "run", ["d" * 32])
    assert sorted(killed) == [f"left-{index:02d}" for index in range(25)]
    assert [info.sandbox_id for info in fake_sdk.existing] == ["shard-2"]


def test_a_resume_kills_what_a_killed_start_left_on_every_host(mini, fake_sdk, monkeypatch):  # noqa: F811
    """What kill -9 of a runner leaves: its start named in the folder, its sandboxes running on the service
    (this host's, whose pid may be reused, and a lost node's). The next start holds the folder's lock, so the
    earlier one is dead: everything it made is killed before the first episode; the shard's sandbox lives."""
    first = mini.run("--model", "oracle", "--sandbox", "e2b", "--limit", "1")
    assert first.exit_code == 0, first.output
    folder = RunFolder(first.run_dir)
    killed_start = "f" * 32
    folder.write_invocations([killed_start])
    metadata = {"harness.app": "harness", "harness.run": "run", "harness.invocation": killed_start}
    fake_sdk.existing += [
        fake_e2b.FakeSandboxInfo("left-here", metadata | {"harness.owner": f"{socket.gethostname()}:{os.getpid()}"}),
        fake_e2b.FakeSandboxInfo("left-on-node-b", metadata | {"harness.owner": ELSEWHERE}),
        shards_sandbox(),
    ]
    fake_sdk.killed.clear()
    outcome = mini.run("--model", "oracle", "--sandbox", "e2b", "--redo")
    assert outcome.exit_code == 0, outcome.output
    assert {"left-here", "left-on-node-b"} <= set(fake_sdk.killed) and "shard-2" not in fake_sdk.killed
    assert folder.read_invocations() == []


def test_kill_9_of_a_runner_on_another_machine_then_a_resume_here_kills_what_it_left(mini, fake_sdk, tmp_path):  # noqa: F811
    """A runner on another machine (a shared results folder) killed with -9 mid-episode: its sandbox keeps
    running on the service (`SharedSandboxes`: one service for every process), owned by a host this one never
    judges. A resume here kills it before its first episode, from the start the folder names."""
    fake_sdk.shared = service = fake_e2b.SharedSandboxes(tmp_path / "service.jsonl")
    script = mini.script([{"bash": "sleep 4"}, "<answer>42</answer>"])
    arguments = [
        "--domain",
        "mini",
        *mini.folder_arguments("run"),
        "--model",
        script,
        "--sandbox",
        "e2b",
    ]
    runner = [
        sys.executable,
        "-m",
        "tests.helpers.fake_e2b_runner",
        str(service.path),
        str(mini.root / "collections" / "mini"),
        "node-b",
        "--",
        *arguments,
    ]
    process = subprocess.Popen(
        runner, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 60
        while not episode_sandboxes(service) and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        _, errors = process.communicate()
    [left] = episode_sandboxes(service)
    assert left.metadata["harness.owner"] == "node-b:4242", errors
    assert RunFolder(mini.results_dir / "run").read_invocations() == [left.metadata["harness.invocation"]]
    outcome = mini.run("--model", script, "--sandbox", "e2b")
    assert outcome.rows[0]["verdict"] == "correct", outcome.output
    assert left.sandbox_id in fake_sdk.killed and service.running() == []
    assert f"e2b: killed 1 sandboxes the run left running: {left.sandbox_id}" in outcome.output
    assert RunFolder(outcome.run_dir).read_invocations() == []


def episode_sandboxes(service: fake_e2b.SharedSandboxes) -> list[fake_e2b.FakeSandboxInfo]:
    return [info for info in service.running() if info.metadata.get("harness.episode") == "mini-t1"]


def test_a_sweep_the_service_fails_keeps_the_start_for_the_next_one(mini, fake_sdk, monkeypatch):  # noqa: F811
    """The API unreachable at the end (infra's list answers 5xx, or no answer): the start stays named in the
    folder and the next start kills what it left."""
    seen = leave_sandbox_elsewhere(mini, monkeypatch, "lost-on-node-b", owner=ELSEWHERE, episode="mini-t9")
    fake_sdk.failures["list"] = httpx.ConnectError("connection refused")
    outcome = mini.run("--model", "oracle", "--sandbox", "e2b")
    # the start-up reap failed too: the run refuses before any episode, and names no start
    assert outcome.exit_code == 2 and not seen
    del fake_sdk.failures["list"]
    listing = fake_e2b.Sandbox.list
    monkeypatch.setattr(fake_e2b.Sandbox, "list", failing_after_first_episode(listing, seen))
    outcome = mini.run("--model", "oracle", "--sandbox", "e2b")
    assert outcome.rows[0]["verdict"] == "correct", outcome.output
    [(invocation, _)] = seen
    assert "warning: e2b: cannot kill the sandboxes the run left running" in outcome.output
    assert RunFolder(outcome.run_dir).read_invocations() == [invocation]
    monkeypatch.setattr(fake_e2b.Sandbox, "list", listing)  # the API reachable again
    assert "lost-on-node-b" not in fake_sdk.killed
    again = mini.run("--model", "oracle", "--sandbox", "e2b")
    assert again.exit_code == 0, again.output
    assert "lost-on-node-b" in fake_sdk.killed and RunFolder(again.run_dir).read_invocations() == []


def failing_after_first_episode(listing, seen):
    """`Sandbox.list` answering until the first episode sandbox exists, then unreachable."""

    def listed(query=None, **options):
        if seen:
            raise httpx.ConnectError("connection refused")
        return listing(query, **options)

    return listed


def test_sandbox_cleanup_of_a_run_folder_kills_what_its_starts_left(mini, fake_sdk, monkeypatch):  # noqa: F811
    """`sandbox cleanup RUN` for a run the user will not resume; refused while a runner holds the folder, and a
    missing folder is one line, exit 2, before anything is killed."""
    from harness.cli.main import main

    first = mini.run("--model", "oracle", "--sandbox", "e2b")
    folder = RunFolder(first.run_dir)
    folder.write_invocations(["e" * 32])
    left = {"harness.app": "harness", "harness.run": "run", "harness.invocation": "e" * 32}
    fake_sdk.existing += [
        fake_e2b.FakeSandboxInfo("left-on-node-b", left | {"harness.owner": ELSEWHERE}),
        shards_sandbox(),
    ]
    fake_sdk.killed.clear()
    assert main(["sandbox", "cleanup", str(mini.results_dir / "nowhere")]) == 2
    assert "no run.yaml" in mini.capsys.readouterr().err and fake_sdk.killed == []
    with monkeypatch.context() as without_key:
        without_key.delenv("E2B_API_KEY")
        assert main(["sandbox", "cleanup", str(first.run_dir)]) == 2
        assert "E2B_API_KEY is not set" in mini.capsys.readouterr().err and fake_sdk.killed == []
    lock = folder.lock()
    try:
        assert main(["sandbox", "cleanup", str(first.run_dir)]) == 0
        assert "a runner holds it" in mini.capsys.readouterr().out and fake_sdk.killed == []
    finally:
        lock.release()
    assert main(["sandbox", "cleanup", str(first.run_dir)]) == 0
    output = mini.capsys.readouterr().out
    assert fake_sdk.killed == ["left-on-node-b"] and folder.read_invocations() == [], output
    assert main(["sandbox", "cleanup", str(first.run_dir)]) == 0
    assert "nothing left running" in mini.capsys.readouterr().out


def test_a_full_disk_at_the_runs_end_keeps_the_start_named_and_says_so(tmp_path, monkeypatch):
    """The end's sweep runs in a `finally`: a write it cannot make must not hide why the run is ending."""
    from rich.console import Console

    from harness.run.sandboxing.leftovers import Leftovers

    folder = RunFolder(tmp_path)
    folder.write_invocations(["a" * 32])
    monkeypatch.setattr(RunFolder, "write_invocations", no_space_left)
    console = Console(record=True, width=200)
    assert Leftovers(folder, "e2b", lambda invocations: ["left-1"]).sweep(console) == ["left-1"]
    assert "cannot write" in console.export_text() and folder.read_invocations() == ["a" * 32]


def no_space_left(folder: RunFolder, invocations: list[str]) -> None:
    raise OSError(28, "No space left on device")
