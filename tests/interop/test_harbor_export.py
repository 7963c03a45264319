"""`export harbor`: the tasks a run ran as Harbor task folders, run here as Harbor's trial runs them, on the real
Docker engine: the environment built from its Dockerfile, the oracle's solve.sh, then tests/ copied in and
test.sh run, its reward read from /logs/verifier (Harbor 0.26.0's `Trial`, `OracleAgent` and `Verifier`)."""

from __future__ import annotations

import io
import json
import re
import tarfile
from pathlib import Path

import pytest
import tomllib

from harness.cli.main import main


def _tar(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        archive.add(folder, arcname=folder.name)
    return buffer.getvalue()


def _trial(client, image, task: Path, answer: str | None) -> tuple[str, dict, bool]:
    """Harbor's trial, step by step, in a container of the task's environment IMAGE: the reward, the grade, and
    whether /tests was there before the verifier copied it in."""
    container = client.containers.run(image.id, "sleep 300", detach=True, network_mode="none")
    try:
        tests_before = container.exec_run("test -e /tests").exit_code == 0
        if answer is None:
            container.put_archive("/", _tar(task / "solution"))
            assert container.exec_run("bash /solution/solve.sh").exit_code == 0
        elif answer:
            container.exec_run(["sh", "-c", f"printf '%s' '{answer}' > /workspace/answer.txt"])
        container.put_archive("/", _tar(task / "tests"))
        result = container.exec_run("bash /tests/test.sh")
        assert result.exit_code == 0, result.output
        reward = container.exec_run("cat /logs/verifier/reward.txt").output.decode()
        grade = json.loads(container.exec_run("cat /logs/verifier/grade.json").output)
        return reward, grade, tests_before
    finally:
        container.remove(force=True)


@pytest.mark.usefixtures("docker_image")
def test_export_harbor_grades_with_our_grader_in_the_tasks_own_container(mini, docker_image):
    client, image = docker_image
    run = mini.run("--model", "oracle")
    assert run.exit_code == 0
    out = mini.root / "harbor"
    assert main(["export", "harbor", str(run.run_dir), str(out), "--image", image]) == 0
    mini.capsys.readouterr()
    [task] = sorted(out.iterdir())
    assert task.name == "mini__t1"
    config = tomllib.loads((task / "task.toml").read_text())
    assert config["metadata"] == {"source": "harness", "domain": "mini", "task_id": "t1", "grader": "numeric"}
    assert (task / "environment" / "Dockerfile").read_text().startswith(f"FROM {image}\n")
    assert sorted(p.name for p in (task / "environment" / "documents").iterdir()) == ["decoy.md", "ledger.md"]
    agent_sees = [task / "instruction.md", *(task / "environment").rglob("*.*")]
    assert not any('"42"' in path.read_text() or ">42<" in path.read_text() for path in agent_sees)
    assert "How many units" in (task / "instruction.md").read_text()

    built, _ = client.images.build(path=str(task / "environment"), rm=True)
    try:
        assert built.attrs["Config"]["StopSignal"] == "SIGKILL"  # Harbor's `sleep` would hold each teardown 10 s
        reward, grade, tests_before = _trial(client, built, task, None)  # Harbor's oracle agent: the task's solution
        assert (reward, grade["verdict"], grade["submission"].strip(), tests_before) == (
            "1",
            "correct",
            "<answer>42</answer>",
            False,
        )
        reward, grade, _ = _trial(client, built, task, "<answer>41</answer>")
        assert (reward, grade["verdict"], grade["reasons"]) == ("0", "wrong_value", [])
        reward, grade, _ = _trial(client, built, task, "")  # the agent wrote no answer file
        assert (reward, grade["verdict"], grade["submission"]) == ("0", "no_answer", None)

    finally:
        client.images.remove(built.id, force=True)


def test_export_harbor_refuses_an_existing_folder_and_writes_nothing(mini):
    run = mini.run("--model", "oracle")
    out = mini.root / "harbor"
    out.mkdir()
    assert main(["export", "harbor", str(run.run_dir), str(out), "--image", "x"]) == 2
    assert "exists" in mini.capsys.readouterr().err and list(out.iterdir()) == []


def test_any_task_id_names_one_folder_of_the_dataset_whose_name_docker_takes(mini):
    """Harbor names a trial's image and compose project after the task's folder: a path, a quote or a run of
    separators in an id must neither leave the dataset nor make a name Docker refuses."""
    ids = ["../../escaped", "a___b", "-x-", "Ünï 'q' $(id)", "t.1", ".", "a_-b", "demo-001"]
    base = json.loads((mini.tasks_dir / "mini.jsonl").read_text())
    mini.tasks_dir.joinpath("mini.jsonl").write_text("".join(json.dumps(base | {"id": i}) + "\n" for i in ids))
    run = mini.run("--model", "oracle")
    out = mini.root / "dataset" / "harbor"
    assert main(["export", "harbor", str(run.run_dir), str(out), "--image", "x"]) == 0
    mini.capsys.readouterr()
    names = sorted(path.name for path in out.iterdir())
    assert len(names) == len(ids) and sorted(p.name for p in (mini.root / "dataset").iterdir()) == ["harbor"]
    assert all(re.fullmatch(r"[a-z0-9]+(?:(?:__|[._]|-+)[a-z0-9]+)*", name.lower()) for name in names), names
    assert "mini__demo-001" in names
