"""`tasks import mudabench --noise FRACTION --noise-seed N`: the paper's noise test (0.5 x |D| irrelevant documents
in each set), seeded and recorded, the set's gold untouched."""

from __future__ import annotations

import json
import math
from pathlib import Path

from harness.cli.main import main
from harness.inputs.importers.mudabench import MudaOptions, plan_import, read_items
from tests.inputs.test_mudabench_facts_import import project  # noqa: F401 (the fixture)


def imported(root: Path, capsys, *extra: str) -> tuple[int, str]:
    code = main(
        [
            *("tasks", "import", "mudabench", str(root / "simple.json"), str(root / "complex.json")),
            *("--pdf-dir", str(root / "pdfs"), "--domain", "mudabench"),
            *("--tasks-dir", str(root / "tasks"), "--collections-dir", str(root / "collections")),
            *extra,
        ]
    )
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_noise_adds_half_a_set_of_other_documents_seeded_and_leaves_the_gold(project, capsys):  # noqa: F811
    _, printed = imported(project, capsys, "--noise", "0.5", "--noise-seed", "7")
    lines = (project / "tasks" / "mudabench.jsonl").read_text(encoding="utf-8").splitlines()
    noisy = {task["id"]: task for task in map(json.loads, lines)}
    assert noisy and "irrelevant documents added (--noise, seed 7)" in printed
    for task in noisy.values():
        noise = task["metadata"]["noise"]
        own = set(task["metadata"]["documents"])
        assert noise["fraction"] == 0.5 and noise["seed"] == 7
        assert len(noise["documents"]) == math.ceil(0.5 * len(own)) and not own & set(noise["documents"])
        folder = project / "collections" / task["collection"]
        files = {path.name for path in folder.iterdir()}
        assert files == {f"documents_{doc}.md" for doc in own | set(noise["documents"])} | {"documents_index.md"}
        index = (folder / "documents_index.md").read_text(encoding="utf-8")
        assert all(f"documents_{doc}.md" in index for doc in noise["documents"])
    # the plan again (no conversion): the same seed draws the same documents; the gold is a plain import's
    items = [item for split in ("simple", "complex") for item in read_items(project / f"{split}.json")]
    plain = {task.id: task for task in plan_import("mudabench", items).tasks}
    again = {task.id: task for task in plan_import("mudabench", items, MudaOptions(noise="0.5", noise_seed=7)).tasks}
    for task_id, task in noisy.items():
        assert again[task_id].metadata["noise"] == task["metadata"]["noise"]
        assert again[task_id].evidence == plain[task_id].evidence == task["evidence"]
        assert again[task_id].facts == plain[task_id].facts and again[task_id].answer == plain[task_id].answer


def test_a_bad_noise_fraction_is_one_line_and_writes_nothing(project, capsys):  # noqa: F811
    code, printed = imported(project, capsys, "--noise", "half")
    assert code == 2 and "--noise: 'half' is not a fraction above 0" in printed
    assert not (project / "tasks").exists()
