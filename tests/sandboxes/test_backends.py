"""Docker and E2B backends: labels, cleanup, SDK boundary, and the same observations on every backend."""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

import tests.helpers.fake_e2b as fake_e2b
from harness.records.trajectory import read_trajectory
from harness.sandboxes.base import SandboxSettings
from harness.sandboxes.docker.sandbox import LABEL_EPISODE, LABEL_OWNER, LABEL_RUN, DockerSandbox, cleanup_orphans
from harness.sandboxes.e2b.sandbox import LOCKED, E2BSandbox, reap_orphans
from harness.sandboxes.e2b.templates import TemplateResources, build_template, template_definition, template_name
from harness.sandboxes.remote_exec import KILL_AGENT_PROCESSES
from tests.conftest import REPO

DEAD_OWNER = f"{socket.gethostname()}:{2**22 + 12345}"  # above pid_max's default: never a live process
MINI_TEMPLATE = template_name("mini", TemplateResources(2, 4096))
"""The template name a run with the default limits uses (its tag is the hash of what was built)."""


@pytest.fixture
def fake_sdk(monkeypatch, mini, tmp_path):
    """The fake SDK installed as `e2b`, with the mini domain's template built through it, and an API key."""
    fake_e2b.RECORD = fake_e2b.Recorder(storage=tmp_path)
    monkeypatch.setitem(sys.modules, "e2b", fake_e2b)
    monkeypatch.setenv("E2B_API_KEY", "e2b-test-key")
    build_template(fake_e2b, "mini", mini.root / "collections" / "mini", TemplateResources(2, 4096), lambda _: None)
    fake_e2b.RECORD.builds.clear()
    return fake_e2b.RECORD


EPISODE = [
    {"bash": "ls documents"},
    {"bash": "cat documents/ledger.md"},
    {"bash": "grep 2099 documents/ledger.md"},
    {"bash": "python3 -c 'print(6 * 7)'; echo warning >&2; exit 3"},
    {"bash": "seq 1 100000"},
    {"bash": "cd documents && fd -e md | sort && tree --noreport . && rg -c 20 ledger.md && jq -n 6*7"},
    {"bash": "less documents/ledger.md | head -1"},
    {"bash": "sleep 30"},
    {"bash": "echo 2 > run/x; cat run/x; touch documents/y 2>&1 | sed 's/.*documents/documents/'"},
    "<answer>42</answer>",
]


def observations(run_dir: Path) -> list[tuple]:
    path = run_dir / "episodes" / "mini" / "t1.jsonl"
    events = read_trajectory(path)
    return [
        (e["exit_code"], e["stdout"], e["stderr"], e["timed_out"], e["truncated"], e["raw_bytes"])
        for e in events
        if e["event"] == "observation"
    ]


def test_one_episode_gives_identical_observations_on_local_docker_and_e2b(mini, docker_image, fake_sdk):
    script = mini.script(EPISODE)
    runs = {}
    for backend in ("local", "docker", "e2b"):
        outcome = mini.run("--model", script, "--sandbox", backend, "--command-timeout", "2", run_id=backend)
        assert outcome.exit_code == 0, outcome.output
        assert (outcome.rows[0]["status"], outcome.rows[0]["verdict"]) == ("answered", "correct")
        runs[backend] = observations(outcome.run_dir)
    assert runs["local"] == runs["docker"] == runs["e2b"]
    timed_out = runs["local"][7]
    assert timed_out[:1] == (None,) and timed_out[3] is True
    assert (
        runs["local"][5][1] == "decoy.md\nledger.md\n.\n├── decoy.md\n└── ledger.md\n2\n42\n"
    )  # fd, tree, rg, jq alike everywhere
    assert runs["local"][8][1] == "2\ndocuments/y': Read-only file system\n"


def test_e2b_sandboxes_are_created_offline_short_lived_labelled_and_killed(mini, fake_sdk):
    outcome = mini.run("--model", mini.script(EPISODE[:2] + EPISODE[-1:]), "--sandbox", "e2b", "--time-limit", "300")
    assert outcome.rows[0]["verdict"] == "correct"
    [created] = fake_sdk.episodes_created
    name, tag = created["template"].split(":")
    assert name == MINI_TEMPLATE == "harness-mini-2cpu-4096mb" and len(tag) == 16
    assert created["allow_internet_access"] is False
    assert created["timeout"] == 300 + 120
    assert created["metadata"][LABEL_RUN] == "run" and created["metadata"][LABEL_EPISODE] == "mini-t1"
    assert created["api_key"] == "e2b-test-key"
    assert "E2B_API_KEY" not in created["envs"] and "e2b-test-key" not in created["envs"].values()
    lockdown, *agent_commands = [command for command in fake_sdk.commands if command["episode"] == "mini-t1"]
    assert lockdown["cmd"].endswith(f"echo {LOCKED}") and lockdown["user"] == "root"  # before any agent command
    assert all(c["retain_output"] is False for c in agent_commands)
    commands = [c for c in agent_commands if " /usr/local/bin/harness-exec " in c["cmd"]]
    assert len(commands) == 2 and all(c["cwd"] == "/workspace" and c["user"] == "root" for c in commands)
    assert [(c["cmd"], c["user"]) for c in agent_commands[1::2]] == [(shlex.join(KILL_AGENT_PROCESSES), "agent")] * 2
    assert len(fake_sdk.killed) == 2 and fake_sdk.live == {}  # the tool check's sandbox and the episode's
    recorded = yaml.safe_load((outcome.run_dir / "run.yaml").read_text())
    assert recorded["sandbox"]["backend"] == "e2b" and recorded["sandbox"]["templates"] == {"mini": created["template"]}


def test_a_ray_node_takes_the_drivers_template_references_without_reading_its_collection(mini, fake_sdk, monkeypatch):
    """Tagging reads every file of the collection (the SDK hashes each); a node's collections are checked
    against the driver's hashes, so it takes the driver's references and only asks the service for them."""
    from harness.sandboxes.backend import BackendSetup
    from harness.sandboxes.e2b import templates
    from harness.sandboxes.registry import prepare_backend

    collections = {"mini": mini.root / "collections" / "mini"}
    setup = BackendSetup(settings=SandboxSettings(), run_id="run", collections=collections, time_limit_s=600)
    driver = prepare_backend("e2b", dataclasses.replace(setup, invocation="i"))
    monkeypatch.setattr(templates, "template_reference", lambda *arguments: pytest.fail("read the collection"))
    node = prepare_backend("e2b", dataclasses.replace(setup, invocation="i", templates=driver.facts["templates"]))
    assert node.facts["templates"] == driver.facts["templates"]
    assert driver.facts["templates"]["mini"].startswith(f"{MINI_TEMPLATE}:")


def test_a_later_e2b_start_from_the_same_build_starts_no_tool_check_sandbox(mini, fake_sdk):
    """The tools found in a template's build are kept by its build id: the next start takes them, and a new
    build of the same recipe (the tag moved to it) is checked again."""

    def tool_checks() -> int:
        return sum(created["metadata"][LABEL_EPISODE] == "tool-check" for created in fake_sdk.created)

    first = mini.run("--model", "oracle", "--sandbox", "e2b", run_id="first")
    assert first.exit_code == 0, first.output
    assert tool_checks() == 1
    second = mini.run("--model", "oracle", "--sandbox", "e2b", run_id="second")
    assert second.exit_code == 0, second.output
    assert tool_checks() == 1 and len(fake_sdk.episodes_created) == 2
    tools = [yaml.safe_load((run.run_dir / "run.yaml").read_text())["sandbox"]["tools"] for run in (first, second)]
    assert tools[0] == tools[1] and "rg" in tools[0]
    build_template(fake_e2b, "mini", mini.root / "collections" / "mini", TemplateResources(2, 4096), lambda _: None)
    third = mini.run("--model", "oracle", "--sandbox", "e2b", run_id="third")
    assert third.exit_code == 0, third.output
    assert tool_checks() == 2


def test_e2b_missing_template_says_how_to_build_it(mini, fake_sdk):
    fake_sdk.templates.clear()
    outcome = mini.run("--model", "oracle", "--sandbox", "e2b")
    assert outcome.exit_code == 2 and "sandbox build e2b --domain mini" in outcome.output


def test_e2b_orphans_of_dead_runs_are_reaped_through_list_by_metadata(fake_sdk):
    live = f"{socket.gethostname()}:{os.getpid()}"
    fake_sdk.existing = [
        fake_e2b.FakeSandboxInfo("dead-one", {"harness.app": "harness", LABEL_OWNER: DEAD_OWNER}),
        fake_e2b.FakeSandboxInfo("live-one", {"harness.app": "harness", LABEL_OWNER: live}),
        fake_e2b.FakeSandboxInfo("elsewhere", {"harness.app": "harness", LABEL_OWNER: "other-host:1"}),
    ]
    assert reap_orphans(fake_e2b, "key") == ["dead-one"]
    assert fake_sdk.killed == ["dead-one"]
    assert fake_sdk.listed[0]["query"].metadata == {"harness.app": "harness"}


def test_e2b_template_bakes_the_collection_in_read_only(tmp_path, mini, fake_sdk):
    import e2b

    template = template_definition(fake_e2b, tmp_path, mini.root / "collections" / "mini")
    steps = json.loads(e2b.Template.to_json(template))
    text = json.dumps(steps)
    assert '"debian:bookworm-slim"' in text or "debian:bookworm-slim" in text
    assert "/workspace/documents" in text
    assert "chmod -R a-w,a+rX,ug-s /workspace/documents" in text and "chown -R root:root" in text
    assert "requirements.txt" in text and "harness-exec" in text


def test_e2b_template_build_goes_through_the_sdk(tmp_path, mini, fake_sdk):
    resources = TemplateResources(2, 4096)
    reference = build_template(fake_e2b, "mini", mini.root / "collections" / "mini", resources, lambda line: None)
    [build] = fake_sdk.builds
    assert (build["name"], build["cpu_count"], build["memory_mb"]) == (MINI_TEMPLATE, 2, 4096)
    name, tag = reference.split(":")
    assert name == MINI_TEMPLATE and fake_sdk.templates[name].resolve(tag) is fake_sdk.templates[name].newest()


def build_e2b(mini, *arguments: str) -> tuple[int, str]:
    from harness.cli.main import main

    collections = str(mini.root / "collections")
    code = main(["sandbox", "build", "e2b", "--domain", "mini", "--collections-dir", collections, *arguments])
    captured = mini.capsys.readouterr()
    return code, captured.out + captured.err


def test_e2b_build_bakes_the_requested_cpus_and_memory_into_the_template(mini, fake_sdk):
    code, output = build_e2b(mini, "--cpus", "4", "--memory-mb", "8192")
    assert code == 0, output
    [build] = fake_sdk.builds
    assert (build["name"], build["cpu_count"], build["memory_mb"]) == ("harness-mini-4cpu-8192mb", 4, 8192)


@pytest.mark.parametrize(
    ("cpus", "memory_mb", "message", "requested"),
    [
        ("3", "4096", "--cpus 3: E2B gives 1 or an even number of whole CPUs", False),
        ("2", "1001", "--memory-mb 1001: E2B wants an even number of megabytes", False),
        ("16", "4096", "400: CPU count can't be higher than 8", True),
        ("2", "16384", "400: Memory can't be higher than 8192 MiB", True),
    ],
)
def test_e2b_build_refuses_sizes_e2b_does_not_offer_in_one_line(mini, fake_sdk, cpus, memory_mb, message, requested):
    code, output = build_e2b(mini, "--cpus", cpus, "--memory-mb", memory_mb)
    assert code == 2
    [line] = output.strip().splitlines()
    assert message in line
    assert len(fake_sdk.builds) == int(requested)


def test_e2b_run_uses_the_template_of_its_size_and_records_what_the_sandbox_reports(mini, fake_sdk):
    assert build_e2b(mini, "--cpus", "4", "--memory-mb", "8192")[0] == 0
    outcome = mini.run("--model", "oracle", "--sandbox", "e2b", "--cpus", "4", "--memory-mb", "8192")
    assert outcome.rows[0]["verdict"] == "correct", outcome.output
    applied = {"mechanism": "e2b template", "cpus": 4, "memory_mb": 8192}
    described = outcome.trajectory("t1")[0]["sandbox"]["limits"]
    assert described.items() >= applied.items() and described["pids"] == 512
    recorded = yaml.safe_load((outcome.run_dir / "run.yaml").read_text())
    assert recorded["sandbox"]["templates"]["mini"].startswith("harness-mini-4cpu-8192mb:")
    assert recorded["sandbox"]["limits"].items() >= applied.items()


def test_e2b_sandbox_smaller_than_its_template_name_says_is_a_sandbox_error(mini, fake_sdk):
    # A template of that name built by hand with less memory: the run must not claim 4096 MB for it.
    fake_sdk.templates[MINI_TEMPLATE].newest().memory_mb = 2048
    outcome = mini.run("--model", "oracle", "--sandbox", "e2b")
    # the first sandbox is the run's tool check: refused there, before any episode, in one line
    assert outcome.exit_code == 2 and outcome.rows == []
    assert "did not start to check its tools" in outcome.output
    assert "gives 2 CPUs and 2048 MB, not the 2 and 4096" in outcome.output


def test_e2b_run_with_limits_no_template_offers_says_which_to_build(mini, fake_sdk):
    outcome = mini.run("--model", "oracle", "--sandbox", "e2b", "--cpus", "4")
    assert outcome.exit_code == 2 and not outcome.run_dir.exists()
    assert "sandbox build e2b --domain mini --cpus 4 --memory-mb 4096" in outcome.output


def test_e2b_sandbox_kills_the_command_on_cancel(mini, fake_sdk):
    import threading

    cancel = threading.Event()
    cancel.set()
    box = E2BSandbox(fake_e2b, MINI_TEMPLATE, "key", "run", "ep", SandboxSettings(), 60, cancel)
    box.start()
    result = box.execute("echo hi", 10)
    box.close()
    assert result.exit_code is None


def test_docker_containers_carry_labels_and_are_removed_on_close(docker_image, tmp_path):
    client, image = docker_image
    box = DockerSandbox(client, image, tmp_path, "label-run", "label-episode", SandboxSettings())
    box.start()
    [container] = client.containers.list(filters={"label": f"{LABEL_RUN}=label-run"})
    assert container.labels[LABEL_EPISODE] == "label-episode"
    assert container.attrs["HostConfig"]["NetworkMode"] == "none"
    assert container.attrs["HostConfig"]["ReadonlyRootfs"] is True
    assert container.attrs["HostConfig"]["CapDrop"] == ["ALL"]
    assert "no-new-privileges" in container.attrs["HostConfig"]["SecurityOpt"]
    box.close()
    assert client.containers.list(all=True, filters={"label": f"{LABEL_RUN}=label-run"}) == []


def test_docker_cleanup_removes_orphans_of_dead_runs_only(docker_image, tmp_path, monkeypatch):
    import harness.sandboxes.docker.sandbox as docker_backend

    client, image = docker_image
    live = DockerSandbox(client, image, tmp_path, "cleanup-run", "live", SandboxSettings())
    live.start()
    monkeypatch.setattr(docker_backend, "owner_label", lambda: DEAD_OWNER)
    orphan = DockerSandbox(client, image, tmp_path, "cleanup-run", "orphan", SandboxSettings())
    orphan.start()
    try:
        removed = cleanup_orphans(client)
        left = client.containers.list(all=True, filters={"label": f"{LABEL_RUN}=cleanup-run"})
        assert len(removed) == 1 and [c.labels[LABEL_EPISODE] for c in left] == ["live"]
    finally:
        live.close()
        orphan.close()


def test_sigterm_mid_run_removes_the_docker_containers(mini, docker_image):
    script = mini.script([{"bash": "sleep 60"}])
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness",
            "--model",
            script,
            "--domain",
            "mini",
            "--sandbox",
            "docker",
            *mini.folder_arguments("term"),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    client, _ = docker_image
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not client.containers.list(filters={"label": f"{LABEL_RUN}=term"}):
        time.sleep(0.2)
    time.sleep(1)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert client.containers.list(all=True, filters={"label": f"{LABEL_RUN}=term"}) == []
    row = json.loads((mini.results_dir / "term" / "results.jsonl").read_text())
    assert row["status"] == "cancelled"


def test_docker_run_records_the_image_digest(mini, docker_image):
    outcome = mini.run("--model", "oracle", "--sandbox", "docker")
    assert outcome.rows[0]["verdict"] == "correct"
    recorded = yaml.safe_load((outcome.run_dir / "run.yaml").read_text())
    assert recorded["sandbox"]["backend"] == "docker"
    assert recorded["sandbox"]["image_id"].startswith("sha256:")
    assert recorded["collections"]["mini"]["hash"].startswith("sha256-tree:")


def test_a_later_docker_start_from_the_same_image_starts_no_probe_container(mini, docker_image, docker_starts):
    """The tools found in an image are kept by its id in the user's cache: the next run's start takes them."""
    first = mini.run("--model", "oracle", "--sandbox", "docker", run_id="first")
    assert first.exit_code == 0, first.output
    assert docker_starts == ["probe", "mini-t1"]
    docker_starts.clear()
    second = mini.run("--model", "oracle", "--sandbox", "docker", run_id="second")
    assert second.exit_code == 0, second.output
    assert docker_starts == ["mini-t1"]
    tools = [yaml.safe_load((run.run_dir / "run.yaml").read_text())["sandbox"]["tools"] for run in (first, second)]
    assert tools[0] == tools[1] and "rg" in tools[0]


def test_cleanup_removes_local_leftovers_of_dead_runs_only(capsys):
    from harness.cli.main import main
    from harness.sandboxes.limits import CGROUP_ROOT

    stale_cgroup = CGROUP_ROOT / "memory" / "harness" / f"{2**22 + 7}-mini-t1-0123abcd"
    if os.geteuid() == 0 and (CGROUP_ROOT / "memory" / "harness").is_dir():
        stale_cgroup.mkdir()
    assert main(["sandbox", "cleanup"]) == 0
    assert not stale_cgroup.exists()
    assert "local: removed" in capsys.readouterr().out
