"""`tasks import mudabench --noise FRACTION --noise-seed N`: the paper's noise test (0.5 x |D| irrelevant documents
in each set), seeded and recorded, the set's gold untouched."""

from __future__ import annotations

import json
import math
from pathlib import Path

from harness.cli.main import main
from tests.inputs.test_mudabench_facts_import import project  # noqa: F401 (the fixture)


def tasks_of(root: Path, folder: str) -> dict[str, dict]:
    lines = (root / folder / "mudabench.jsonl").read_text(encoding="utf-8").splitlines()
    return {task["id"]: task for task in map(json.loads, lines)}


def imported(root: Path, capsys, tasks: str, *extra: str) -> tuple[int, str]:
    code = main(
        [
            *("tasks", "import", "mudabench", str(root / "simple.json"), str(root / "complex.json")),
            *("--pdf-dir", str(root / "pdfs"), "--domain", "mudabench"),
            *("--tasks-dir", str(root / tasks), "--collections-dir", str(root / f"collections-{tasks}")),
            *extra,
        ]
    )
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_noise_adds_half_a_set_of_other_documents_seeded_and_leaves_the_gold(project, capsys):  # noqa: F811
    imported(project, capsys, "plain")
    _, printed = imported(project, capsys, "noisy", "--noise", "0.5", "--noise-seed", "7")
    imported(project, capsys, "again", "--noise", "0.5", "--noise-seed", "7")
    plain, noisy, again = (tasks_of(project, name) for name in ("plain", "noisy", "again"))
    assert "irrelevant documents added (--noise, seed 7)" in printed
    assert noisy and {task_id: task["metadata"]["noise"] for task_id, task in noisy.items()} == {
        task_id: task["metadata"]["noise"] for task_id, task in again.items()
    }
    for task_id, task in noisy.items():
        noise = task["metadata"]["noise"]
        own = set(task["metadata"]["documents"])
        assert noise["fraction"] == 0.5 and noise["seed"] == 7
        assert len(noise["documents"]) == math.ceil(0.5 * len(own)) and not own & set(noise["documents"])
        folder = project / "collections-noisy" / task["collection"]
        files = {path.name for path in folder.iterdir()}
        assert files == {f"documents_{doc}.md" for doc in own | set(noise["documents"])} | {"documents_index.md"}
        index = (folder / "documents_index.md").read_text(encoding="utf-8")
        assert all(f"documents_{doc}.md" in index for doc in noise["documents"])
        if task_id in plain:  # the set's evidence and gold facts are the plain import's
            for field in ("evidence", "facts", "answer", "question"):
                assert task[field] == plain[task_id][field], field


def test_a_bad_noise_fraction_is_one_line_and_writes_nothing(project, capsys):  # noqa: F811
    code, printed = imported(project, capsys, "bad", "--noise", "half")
    assert code == 2 and "--noise: 'half' is not a fraction above 0" in printed
    assert not (project / "bad").exists()
