"""Sandbox backends by registry: a new one is one module and one line; an unknown name is refused in one line
everywhere; planning a run starts no sandbox and removes nothing."""

from __future__ import annotations

import dataclasses
import os
import uuid
from pathlib import Path

import pytest
import yaml

from harness.cli.main import main
from harness.inputs.config import RunConfig
from harness.sandboxes import registry
from harness.sandboxes.registry import register_backend
from tests.helpers.fake_backend import FakeBackend

DEAD_PID = 2**22 + 13
"""Above the largest pid_max Linux allows: no process has it, so its cgroup is a dead runner's."""


@pytest.fixture
def fake_registered(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """`fake` in the registry for this test only; the episode names of the sandboxes it started."""
    monkeypatch.setattr(registry, "_BACKENDS", dict(registry._BACKENDS))
    register_backend("fake", "tests.helpers.fake_backend:FakeBackend")
    FakeBackend.made.clear()
    return FakeBackend.made


def test_a_backend_from_one_module_and_one_registry_line_runs_an_episode_end_to_end(mini, fake_registered):
    script = mini.script([{"bash": "cat documents/ledger.md && echo note > run/x && cat run/x"}, "<answer>42</answer>"])
    outcome = mini.run("--model", script, "--sandbox", "fake")
    assert outcome.exit_code == 0, outcome.output
    assert (outcome.rows[0]["status"], outcome.rows[0]["verdict"]) == ("answered", "correct")
    observation = next(e for e in outcome.trajectory("t1") if e["event"] == "observation")
    assert "| 2020 | 40 |" in observation["stdout"] and observation["stdout"].endswith("note\n")
    recorded = yaml.safe_load((outcome.run_dir / "run.yaml").read_text())["sandbox"]
    assert recorded["backend"] == "fake" and set(recorded["tools"]) >= {"jq", "rg", "fd", "tree", "less"}
    assert fake_registered == ["tool-check", "mini-t1"]  # started with the run, then the episode


@pytest.mark.parametrize(
    ("command", "refusal"),
    [
        # a run checks it with every setting, in their one form (a settings file's is named with file and line)
        (["--model", "oracle", "--domain", "mini", "--sandbox", "nosuch"], "--sandbox: 'nosuch' is not one of"),
        (["sandbox", "build", "nosuch"], "sandbox build nosuch: no such sandbox backend (one of"),
        (
            ["sandbox", "cleanup", "--sandbox", "nosuch"],
            "sandbox cleanup --sandbox nosuch: no such sandbox backend (one of",
        ),
    ],
)
def test_an_unknown_backend_is_refused_in_one_line_everywhere(mini, capsys, monkeypatch, command, refusal):
    """No fall-through to another backend's code: run, `sandbox build` and `sandbox cleanup` refuse the name."""
    monkeypatch.chdir(mini.root)
    assert main(command) == 2
    captured = capsys.readouterr()
    [line] = [text for text in (captured.out + captured.err).splitlines() if text.strip()]
    assert refusal in line and "local, docker, e2b" in line
    assert not mini.results_dir.exists() and not (mini.root / "results").exists()


def test_the_local_backend_builds_nothing_in_one_line(capsys):
    assert main(["sandbox", "build", "local"]) == 2
    assert "the local backend has nothing to build" in capsys.readouterr().err


def test_planning_a_run_starts_no_sandbox_and_removes_nothing(mini, fake_registered, monkeypatch):
    """A dead runner's cgroup stays while planning (the run's start removes it), and neither the fake backend
    nor bubblewrap starts a sandbox (the tool check and the local privilege probe are the run's start's)."""
    from harness.run.planning.plan import plan_run
    from harness.run.runner import execute_run
    from harness.sandboxes.local import sandbox as local_sandbox

    stale = _stale_cgroup()
    config = RunConfig(
        model=mini.script(["<answer>42</answer>"]),
        domain="mini",
        tasks_dir=mini.tasks_dir,
        collections_dir=mini.root / "collections",
        results_dir=mini.results_dir,
        run_id="planned",
        sandbox="fake",
    )
    try:
        plan = plan_run(config)
        plan.lock.release()
        assert fake_registered == [] and stale.is_dir()
        with monkeypatch.context() as no_bwrap:
            no_bwrap.setattr(local_sandbox.BubblewrapSandbox, "start", _no_sandbox)
            local = plan_run(dataclasses.replace(config, sandbox="local", run_id="planned-local"))
            local.lock.release()
        assert stale.is_dir()
        execute_run(local, _quiet())
        assert not stale.exists()  # the run's start: a dead runner's cgroup freed
    finally:
        if stale.exists():
            stale.rmdir()


def test_a_tool_check_refusal_at_the_start_leaves_nothing_written(mini, fake_registered, monkeypatch):
    """The tool check moved from the plan to the run's start: its refusal still removes the folders made."""
    from harness.sandboxes import tools

    listed = tools.tools()
    monkeypatch.setattr(tools, "tools", lambda: (*listed, tools.Tool("nosuchtool", "no-such-package", "nosuchtool")))
    outcome = mini.run("--model", mini.script(["<answer>42</answer>"]), "--sandbox", "fake")
    assert outcome.exit_code == 2 and "the fake sandbox lacks nosuchtool" in outcome.output
    assert not mini.results_dir.exists()


def _stale_cgroup() -> Path:
    """A cgroup named for a dead runner beside this host's harness cgroups (made by a first local sandbox)."""
    from harness.sandboxes.limits import CGROUP_ROOT, ResourceLimits, apply_limits

    applied = apply_limits(ResourceLimits(), f"probe-{uuid.uuid4().hex[:8]}")
    try:
        [group, *_] = applied.cgroup_dirs
    except ValueError:
        pytest.fail(f"no cgroups on this host (euid {os.geteuid()}) under {CGROUP_ROOT}")
    stale = group.parent / f"{DEAD_PID}-mini-t1-{uuid.uuid4().hex[:8]}"
    stale.mkdir()
    applied.release()
    return stale


def _no_sandbox(self: object) -> None:
    pytest.fail("a sandbox was started while planning")


def _quiet():
    from rich.console import Console

    return Console(quiet=True)
