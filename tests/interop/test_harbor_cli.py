"""Harbor's own CLI (Harbor 0.26.0, `harbor run`) runs `export harbor`'s dataset with its oracle agent and its local
Docker environment (`docker compose`), and `import harbor` reads the job it wrote into our report. The binary is
$HARNESS_HARBOR, which .ci/run sets after installing Harbor in a Python >= 3.12 virtual environment of its own;
where it is missing the test is skipped, saying so (CI refuses to pass on a skip)."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness.cli.main import main
from harness.records.jsonl import read_jsonl

HARBOR_SECONDS = 300
"""Harbor's whole job: three trials, each a container built FROM the sandbox image (its layers cached)."""

HOSTILE_ID = "s/../../x \"$(touch /tmp/pwned)\" 'ü'; `id`"
"""A task id a tasks file may hold (any visible text): a path, quotes, a command substitution, non-ASCII."""

TASKS = [
    {"id": "c1", "question": "Which? (A) 40 (B) 42", "answer": "B", "grader": "choice", "solution": "echo B"},
    {
        "id": HOSTILE_ID,
        "question": "Which tickers? </answer> $(id) `id` \"'\\ ü\u200b",
        "answer": "AAPL, MSFT",
        "grader": "set",
        "solution": "echo 'MSFT; AAPL'",
    },
]
"""Beside the mini task (`numeric`, gold 42): a task of each of two other graders, one named with hostile text."""


@pytest.fixture(scope="module")
def harbor() -> str:
    """Harbor's CLI ($HARNESS_HARBOR) where `docker compose` runs; else skipped with the reason."""
    binary = os.environ.get("HARNESS_HARBOR")
    if not binary:
        pytest.skip("Harbor's CLI test needs HARNESS_HARBOR, the `harbor` 0.26.0 binary (.ci/run installs it)")
    if not os.access(binary, os.X_OK):
        pytest.fail(f"HARNESS_HARBOR={binary}: not an executable file")
    if subprocess.run(["docker", "compose", "version"], capture_output=True).returncode != 0:
        pytest.skip("Harbor's Docker environment needs the `docker compose` plugin (.ci/run installs it)")
    return binary


@pytest.mark.slow
def test_harbors_cli_passes_every_exported_task_with_its_oracle_and_the_job_imports_into_our_report(
    mini, docker_image, harbor, tmp_path
):
    client, image = docker_image
    base = json.loads(mini.tasks_dir.joinpath("mini.jsonl").read_text())
    lines = [base, *({"domain": "mini"} | task for task in TASKS)]
    mini.tasks_dir.joinpath("mini.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    ours = mini.run("--model", "oracle")
    assert ours.exit_code == 0 and len(ours.rows) == 3
    dataset = tmp_path / "dataset"
    assert main(["export", "harbor", str(ours.run_dir), str(dataset), "--image", image]) == 0
    mini.capsys.readouterr()
    assert len(list(dataset.iterdir())) == 3  # the hostile id named a folder inside the dataset, none outside it

    job = _harbor_run(harbor, client, dataset, tmp_path / "jobs")
    trials = [json.loads(path.read_text()) for path in sorted(job.glob("*/result.json"))]
    assert sorted(trial["task_name"] for trial in trials) == sorted(path.name for path in dataset.iterdir())
    outcomes = [(trial["exception_info"], (trial["verifier_result"] or {}).get("rewards")) for trial in trials]
    assert outcomes == [(None, {"reward": 1.0})] * 3

    folders = ("--tasks-dir", str(mini.tasks_dir), "--collections-dir", str(mini.root / "collections"))
    imported = ("import", "harbor", str(job), "--run-id", "harbor", "--results-dir", str(mini.results_dir))
    assert main([*imported, *folders]) == 0
    rows = read_jsonl(mini.results_dir / "harbor" / "results.jsonl")
    assert sorted(row["task_id"] for row in rows) == sorted(row["task_id"] for row in ours.rows)
    assert {(row["status"], row["verdict"]) for row in rows} == {("answered", "correct")}
    report = tmp_path / "report"
    assert main(["report", str(mini.results_dir / "harbor"), str(ours.run_dir), "--out", str(report)]) == 0
    mini.capsys.readouterr()
    table = {(row["model"], row["domain"]): row for row in csv.DictReader((report / "accuracy.csv").open())}
    assert [(table[m]["n"], table[m]["correct_default"]) for m in (("harbor:oracle", "mini"), ("oracle", "mini"))] == [
        ("3", "3")
    ] * 2


def _harbor_run(harbor: str, client: Any, dataset: Path, jobs: Path) -> Path:
    """`harbor run` of DATASET with its oracle agent on Docker, three trials at once, into JOBS; the job's folder.
    Each trial's compose project is named after the trial (task name and a random suffix), so it meets no other
    run's; its home is the test's own (Harbor keeps notes in ~/.cache/harbor); litellm is told to use its own price
    table rather than fetch one. Past HARBOR_SECONDS its process group is killed; whatever way it ends, no container
    or network of its projects is left."""
    command = [harbor, "run", "-p", str(dataset), "-a", "oracle", "-e", "docker", "-n", "3"]
    command += ["-o", str(jobs), "--job-name", "oracle", "-y", "-q"]
    home = jobs.parent / "home"
    home.mkdir()
    environment = os.environ | {"HOME": str(home), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "NO_COLOR": "1"}
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT, "text": True}
    process = subprocess.Popen(command, cwd=jobs.parent, env=environment, start_new_session=True, **pipes)
    try:
        output, _ = process.communicate(timeout=HARBOR_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        pytest.fail(f"harbor run took over {HARBOR_SECONDS} s: {output[-3000:]}")
    finally:
        _remove_projects(client, dataset)
    assert process.returncode == 0, output[-6000:]
    return jobs / "oracle"


def _remove_projects(client: Any, dataset: Path) -> None:
    """The containers and networks of the compose projects Harbor ran from DATASET's task folders (compose labels
    a container with its project's folder, which is in this test's tmp_path: no other run's)."""
    for environment in sorted(dataset.resolve().glob("*/environment")):
        label = f"com.docker.compose.project.working_dir={environment}"
        for container in client.containers.list(all=True, filters={"label": label}):
            project = container.labels.get("com.docker.compose.project")
            container.remove(force=True)
            for network in client.networks.list(filters={"label": f"com.docker.compose.project={project}"}):
                network.remove()
