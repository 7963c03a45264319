"""The import commands of docs/guide/findocmre.md and docs/guide/mudabench.md, read out of the guides and run as
written from a data folder (relative paths, the default tasks/ and collections/), so a guide and its command cannot
drift apart."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.inputs.tasks import load_task_file
from tests.inputs.test_mudabench_facts_import import FIXTURE, write_pdfs

GUIDES = Path(__file__).parents[2] / "docs" / "guide"
_COMMANDS = re.compile(r"```bash\n(.*?)```|`(python -m harness [^`\n]+)`", re.DOTALL)
"""A bash block, or a command written inline."""


def guide_command(guide: str, command: str) -> list[str]:
    """The arguments after `python -m harness` of the guide's first command (a bash block's or inline) running
    COMMAND."""
    for found in _COMMANDS.finditer((GUIDES / guide).read_text(encoding="utf-8")):
        block = found.group(1) or found.group(2)
        words = shlex.split(block.replace("\\\n", " "))
        if words[:3] == ["python", "-m", "harness"] and " ".join(words[3:]).startswith(command):
            return words[3:]
    raise AssertionError(f"{guide}: no bash block runs `python -m harness {command}`")


def run_in(folder: Path, arguments: list[str], monkeypatch: pytest.MonkeyPatch, capsys) -> tuple[int, str]:
    monkeypatch.chdir(folder)
    for variable in ("HARNESS_TASKS_DIR", "HARNESS_COLLECTIONS_DIR"):
        monkeypatch.delenv(variable, raising=False)
    code = main(arguments)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_the_findocmre_guides_import_runs_as_written(findocmre_set: Path, tmp_path: Path, monkeypatch, capsys):
    arguments = guide_command("findocmre.md", "tasks import findocmre")
    assert "pdfs/" in arguments  # relative, read against the working directory
    shutil.copy(findocmre_set / "findocmre.jsonl", tmp_path / "items.jsonl")
    shutil.copytree(findocmre_set / "pdfs", tmp_path / "pdfs")
    code, output = run_in(tmp_path, arguments, monkeypatch, capsys)
    assert code == 0, output
    assert "could not convert" not in output and "broken link" not in output
    tasks = load_task_file(tmp_path / "tasks" / "findocmre.jsonl")
    assert {task.collection for task in tasks} == {
        path.name for path in (tmp_path / "collections").iterdir() if path.is_dir()
    }
    assert len(tasks) == len((tmp_path / "items.jsonl").read_text(encoding="utf-8").splitlines())


@pytest.mark.slow
def test_the_mudabench_guides_import_runs_as_written(tmp_path: Path, monkeypatch, capsys):
    arguments = guide_command("mudabench.md", "tasks import mudabench")
    (tmp_path / "data").mkdir()
    for split in ("simple", "complex"):
        shutil.copy(FIXTURE / f"{split}.json", tmp_path / "data" / f"{split}.json")
    write_pdfs(tmp_path / "pdfs")
    code, output = run_in(tmp_path, arguments, monkeypatch, capsys)
    assert code == 1, output  # the fixture's one missing PDF costs its sets' tasks, nothing else
    assert "could not convert" not in output and "missing" in output
    assert load_task_file(tmp_path / "tasks" / "mudabench.jsonl")
    code, output = run_in(tmp_path, guide_command("mudabench.md", "leakage"), monkeypatch, capsys)
    assert code == 0 and "tasks checked: 0 with a leak" in output, output
