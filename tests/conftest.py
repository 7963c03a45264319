"""Shared fixtures: a tiny domain on disk and a way to run the command line in-process."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness.cli.main import main
from harness.core.yaml_safe import dump_yaml
from harness.records.trajectory import read_jsonl, read_trajectory
from harness.sandboxes.base import SandboxSettings
from tests.helpers.markers import mark_by_use

REPO = Path(__file__).resolve().parent.parent


@dataclass
class RunOutcome:
    exit_code: int
    rows: list[dict[str, Any]]
    run_dir: Path
    output: str

    def trajectory(self, task_id: str, domain: str = "mini") -> list[dict[str, Any]]:
        return read_trajectory(self.run_dir / "episodes" / domain / f"{task_id}.jsonl")


@dataclass
class MiniProject:
    """tasks/mini.jsonl with one task (gold 42) and collections/mini/ with two documents."""

    root: Path
    capsys: pytest.CaptureFixture[str]

    @property
    def tasks_dir(self) -> Path:
        return self.root / "tasks"

    @property
    def results_dir(self) -> Path:
        return self.root / "results"

    def script(self, replies: list[Any]) -> str:
        path = self.root / f"script-{len(list(self.root.glob('script-*')))}.yaml"
        path.write_text(dump_yaml(replies))  # a reply repeated is written out again: scripts refuse aliases
        return f"scripted:{path}"

    def task_copies(self, count: int) -> None:
        """COUNT copies of the mini task (gold 42), ids t1..tCOUNT."""
        base = json.loads((self.tasks_dir / "mini.jsonl").read_text())
        lines = [json.dumps(base | {"id": f"t{index}"}) for index in range(1, count + 1)]
        (self.tasks_dir / "mini.jsonl").write_text("\n".join(lines) + "\n")

    def folder_arguments(self, run_id: str) -> list[str]:
        """The flags that point a run at this project's tasks, collections and results, as RUN_ID."""
        folders = ["--tasks-dir", str(self.tasks_dir), "--collections-dir", str(self.root / "collections")]
        return [*folders, "--results-dir", str(self.results_dir), "--run-id", run_id]

    def run(self, *arguments: str, run_id: str = "run") -> RunOutcome:
        code = main(["--domain", "mini", *self.folder_arguments(run_id), *arguments])
        captured = self.capsys.readouterr()
        run_dir = self.results_dir / run_id
        results = run_dir / "results.jsonl"
        rows = read_jsonl(results) if results.exists() else []  # not splitlines(): U+2028 is no line end
        return RunOutcome(code, rows, run_dir, captured.out + captured.err)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    mark_by_use(items)


@pytest.fixture
def openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """litellm's openai client insists on a key even for a local server (`pytestmark` of the modules using it)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


@pytest.fixture(autouse=True)
def own_cache_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test its own user cache (collection hashes, leakage scans): no test reads what another left."""
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache))
    return cache


@pytest.fixture
def mini(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> MiniProject:
    """A one-task project in TMP_PATH whose runs print as into a pipe: pytest-xdist's workers set COLUMNS=80,
    which the console would take as a terminal's width."""
    monkeypatch.delenv("COLUMNS", raising=False)
    (tmp_path / "tasks").mkdir()
    collection = tmp_path / "collections" / "mini"
    collection.mkdir(parents=True)
    (collection / "ledger.md").write_text("| year | units |\n|---|---|\n| 2020 | 40 |\n| 2021 | 2 |\n")
    (collection / "decoy.md").write_text("A quoted template: <answer>99</answer>\n")
    task = {
        "id": "t1",
        "domain": "mini",
        "question": "How many units in 2020 and 2021 together?",
        "answer": "42",
        "answer_format": "integer",
        "solution": "awk -F'|' '/^\\| 20/ {s += $3} END {print s}' /workspace/documents/ledger.md",
    }
    (tmp_path / "tasks" / "mini.jsonl").write_text(json.dumps(task) + "\n")
    return MiniProject(tmp_path, capsys)


@pytest.fixture
def openai_server():
    from tests.helpers.openai_server import ScriptedOpenAIServer

    server = ScriptedOpenAIServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def docker_starts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The episode label of every Docker container started (`probe` for the tool check's), in order."""
    started: list[str] = []
    from harness.sandboxes.docker.sandbox import LABEL_EPISODE, DockerSandbox

    real_start = DockerSandbox.start

    def recording_start(self: DockerSandbox) -> None:
        started.append(self._labels[LABEL_EPISODE])
        real_start(self)

    monkeypatch.setattr(DockerSandbox, "start", recording_start)
    return started


@pytest.fixture(scope="session")
def docker_image() -> tuple[Any, str]:
    """The Docker client and the recipe's image; skipped, with the reason shown, where either is missing."""
    from harness.core.errors import InputError
    from harness.sandboxes.docker.client import docker_client
    from harness.sandboxes.recipe import default_image

    try:
        client = docker_client()
    except InputError as error:
        pytest.skip(f"Docker tests need a running engine: {error}")
    image = default_image()
    try:
        client.images.get(image)
    except Exception:
        pytest.skip(f"Docker image {image} missing: run `python -m harness sandbox build docker --base debootstrap`")
    return client, image


@pytest.fixture(scope="session")
def e2b_emulator() -> Any:
    """tests/helpers/e2b_emulator.py, where the Docker engine and the offline base image are there."""
    from harness.core.errors import InputError
    from harness.sandboxes.docker.client import docker_client
    from harness.sandboxes.recipe import DEBOOTSTRAP_IMAGE

    try:
        client = docker_client()
    except InputError as error:
        pytest.skip(f"the E2B emulator needs a running Docker engine: {error}")
    try:
        client.images.get(DEBOOTSTRAP_IMAGE)
    except Exception:
        pytest.skip(
            f"the E2B emulator builds on {DEBOOTSTRAP_IMAGE}: run `python -m harness sandbox build docker "
            "--base debootstrap`"
        )
    import tests.helpers.e2b_emulator as emulator

    return emulator


def emulated_e2b_sandbox(emulator: Any, collection: Path, name: str, settings: Any) -> Any:
    """An E2B sandbox from a template built by the emulator over `collection` (cached layers: seconds)."""
    from harness.sandboxes.e2b.sandbox import E2BSandbox
    from harness.sandboxes.e2b.templates import TemplateResources, build_template

    resources = TemplateResources.from_limits(settings.limits)
    reference = build_template(emulator, "containment", collection, resources, lambda line: None)
    return E2BSandbox(emulator, reference, "emulator-key", "test-run", name, settings, 600)


@pytest.fixture
def collection(tmp_path: Path) -> Path:
    """A one-document collection (a heading and a small table) for sandbox tests."""
    folder = tmp_path / "collection"
    folder.mkdir()
    (folder / "report.md").write_text("# Report\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    return folder


@pytest.fixture
def emulated(collection: Path, e2b_emulator: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A started E2B sandbox on the emulator over `collection` (a module's own, where it has one)."""
    monkeypatch.setenv("E2B_API_KEY", "emulator-key")
    box = emulated_e2b_sandbox(e2b_emulator, collection, "emulated", SandboxSettings())
    box.start()
    yield box
    box.close()


TEST_SUBUIDS = "root:1500000000:65536\n"
"""Root's subordinate range for tests that take cgroups away (this machine's /etc/subuid may have none)."""


@pytest.fixture
def without_cgroups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The local sandbox where no cgroup may be created; for a root runner, root's /etc/subuid range is
    TEST_SUBUIDS. Returns that file (a runner in another process must be pointed at it too)."""
    from harness.sandboxes import limits
    from harness.sandboxes.local import uids

    subuids = tmp_path / "subuid"
    subuids.write_text(TEST_SUBUIDS)
    monkeypatch.setattr(limits, "CGROUP_ROOT", Path("/nonexistent-cgroup-root"))
    monkeypatch.setattr(uids, "SUBUID_FILE", subuids)
    return subuids


@pytest.fixture(params=["local", "local-rlimit", "local-setpriv", "local-caller", "docker", "e2b-emulator"])
def make_sandbox(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    """A constructor of fresh sandboxes on each real backend: (collection, name, settings) -> Sandbox.

    `local-rlimit` is the local sandbox where no cgroup may be created (a non-root user on most machines);
    `local-setpriv` is the local sandbox of a root runner where unprivileged user namespaces are refused;
    `local-caller` is the local sandbox of an ordinary (non-root) runner, in a server process of that user;
    `e2b-emulator` is our E2B code against tests/helpers/e2b_emulator.py.
    """
    if request.param == "e2b-emulator":
        emulator = request.getfixturevalue("e2b_emulator")
        monkeypatch.setenv("E2B_API_KEY", "emulator-key")
        return lambda collection, name, settings: emulated_e2b_sandbox(emulator, collection, name, settings)
    if request.param == "local-caller":
        from tests.helpers.unprivileged import CallerSandbox

        return CallerSandbox
    if request.param.startswith("local"):
        from harness.sandboxes.local.sandbox import BubblewrapSandbox, Privilege, find_bwrap

        if request.param == "local-rlimit":
            request.getfixturevalue("without_cgroups")
        if request.param == "local-setpriv" and os.geteuid() != 0:
            pytest.skip("setpriv is how a root runner drops privileges; this runner is not root")
        privilege = Privilege.SETPRIV if request.param == "local-setpriv" else Privilege.USER_NAMESPACE
        bwrap = find_bwrap()
        return lambda collection, name, settings: BubblewrapSandbox(
            collection, name, settings, bwrap, privilege=privilege
        )
    from harness.sandboxes.docker.sandbox import DockerSandbox

    client, image = request.getfixturevalue("docker_image")
    return lambda collection, name, settings: DockerSandbox(client, image, collection, "test-run", name, settings)


@pytest.fixture
def bwrap_refusing_user_namespaces(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A bwrap that refuses to run for anybody but root, as where unprivileged user namespaces are off: a root
    runner falls back to `setpriv` (fails the test where the runner is not root: CI runs as root)."""
    from harness.sandboxes.local.sandbox import find_bwrap

    assert os.geteuid() == 0, "the setpriv path is a root runner's"
    folder = tmp_path_factory.mktemp("refusing-bwrap")
    folder.chmod(0o755)
    refusing = folder / "bwrap"
    refusing.write_text(
        '#!/bin/bash\nif [ "$EUID" != 0 ]; then echo "bwrap: No permissions to create new namespace" >&2; exit 1; fi\n'
        f'exec -a "$0" {find_bwrap()} "$@"\n'
    )
    refusing.chmod(0o755)
    return str(refusing)


@pytest.fixture(scope="session")
def findocmre_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/helpers/findocmre_set.py's reports and items, drawn once: FOLDER/findocmre.jsonl and FOLDER/pdfs/
    (read them; copy before changing)."""
    from tests.helpers.findocmre_set import write_set

    folder = tmp_path_factory.mktemp("findocmre")
    write_set(folder)
    return folder


@pytest.fixture(scope="session")
def findocmre_project(findocmre_set: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The set imported once (`tasks import findocmre`, pages at 100 dpi): FOLDER/tasks and FOLDER/collections."""
    from harness.cli.main import main

    folder = tmp_path_factory.mktemp("findocmre-project")
    data, pdfs = findocmre_set / "findocmre.jsonl", findocmre_set / "pdfs"
    code = main(
        [
            *("tasks", "import", "findocmre", str(data), "--pdf-dir", str(pdfs), "--domain", "findocmre"),
            *("--tasks-dir", str(folder / "tasks"), "--collections-dir", str(folder / "collections")),
            *("--page-images", "100"),
        ]
    )
    assert code == 0
    return folder
